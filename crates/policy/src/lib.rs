//! Cache replacement policies behind one trait.
//!
//! This crate knows nothing about time, files or threads. The replay engine, the
//! discrete-event simulator, the real buffer pool and the Dust fingerprinting targets all
//! drive the *same* policy code, so what you simulate is what you run.
//!
//! # The shape of the interface
//!
//! A [`Policy`] never sees the cache's contents and never owns the key-to-frame map. The
//! caller (a *driver*, such as [`Cache`]) owns that map and hands the policy dense
//! [`FrameId`]s: small integers that index the policy's preallocated per-frame arrays. This
//! keeps every policy allocation-free on the hot path and lets the real pool reuse the same
//! code with its own frame table. The calls mirror the life of a cached page:
//!
//! * [`Policy::on_hit`] — a resident frame was accessed again.
//! * [`Policy::evict`] — the driver needs room for `incoming`; the policy picks a resident
//!   frame that the caller's predicate allows (pinned, in-flight or dirty frames may be
//!   refused) and forgets it (possibly keeping its key in a ghost history). The incoming
//!   request is passed because several policies (ARC, CAR, 2Q, LIRS, CLOCK-Pro, W-TinyLFU)
//!   decide *where* to evict from by what they remember about the newcomer.
//! * [`Policy::on_insert`] — the newcomer now occupies a frame. Separate from `evict`
//!   because a cache that is not full inserts without evicting, and because a driver with
//!   variable-size objects may evict several frames for one insertion.
//! * [`Policy::remove`] — explicit invalidation (file deleted, page truncated). It never
//!   leaves ghost history: the key is gone, not merely cold.
//! * [`Policy::victims`] — the next `n` frames that `evict` would return, in order, without
//!   changing state: Burnett's victim list (thesis ch.3), used by InfoReplace, Dust and the
//!   pool's information interface.
//!
//! Sizes are in abstract *units* (1 per object, or bytes): a policy's capacity and every
//! partition inside it (2Q's A1in, S3-FIFO's small queue, ARC's target `p`) are measured in
//! the same units as [`Access::size`].
//!
//! # Example
//!
//! ```
//! use policy::{Access, Cache, Lru, Outcome};
//!
//! let mut cache = Cache::new(Lru::new(2), 2);
//! let keys = [1, 2, 1, 3, 2];
//! let outcomes: Vec<bool> = keys
//!     .iter()
//!     .enumerate()
//!     .map(|(t, &k)| cache.access(&Access::unit(k, t as u64)).is_hit())
//!     .collect();
//! // 1 and 2 miss, 1 hits, 3 evicts 2 (least recently used), 2 misses again.
//! assert_eq!(outcomes, [false, false, true, false, false]);
//! assert!(matches!(cache.access(&Access::unit(1, 5)), Outcome::Miss { .. }));
//! ```

// The public surface is what drivers and users of policies need: the trait and its
// vocabulary (`Policy`, `Access`, `FrameId`, `HitPath`), the registry (`AnyPolicy`,
// `POLICIES`, `PolicySpec`, `registry::PolicyVisitor`), the replay driver `Cache` with its
// key indexes, and each policy's type. The building blocks policies are made of (lists,
// ghost histories, key maps) are this crate's own; the fixed key hash is `bufcache-core`.
pub mod admit;
mod cache;
mod climber;
mod doorkeeper;
mod draws;
pub(crate) mod ghost;
pub(crate) mod heap;
mod history;
mod index;
pub(crate) mod keymap;
pub(crate) mod list;
mod params;
pub mod prefetch;
pub(crate) mod recency;
mod resident;
mod sketch;
#[macro_use]
pub mod registry;
// Test helpers for this crate's tests and, through the `testkit` feature, other crates'.
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;

pub use admit::{AdmissionSpec, Admitter, ADMITTERS};
pub use cache::{Cache, DenseIndex, HashIndex, KeyIndex, Outcome, Vacant};
pub use lirs::LirsVariant;
pub use params::{ConfigError, ParamInfo, Params};
pub use prefetch::{PrefetchSpec, PrefetchStats, Prefetcher, Successors, PREFETCHERS};
pub use registry::{BuildContext, Miniature, NamedPolicy, PolicyInfo, PolicySpec};
pub use s3fifo::S3FifoVariant;
pub use sampled::Rank as SampledRank;
pub use wtinylfu::WTinyLfuVariant;

// Every policy: its module, its type, and its place in `AnyPolicy` and `POLICIES`. This
// list is the one place a new policy is registered (`docs/ADDING_A_POLICY.md`).
policies! {
    Fifo => fifo::Fifo,
    Lru => lru::Lru,
    Mru => mru::Mru,
    Lfu => lfu::Lfu,
    Random => random::RandomPolicy,
    Clock => clock::Clock,
    Clock2Hand => clock2hand::Clock2Hand,
    GClock => gclock::GClock,
    SFifo => sfifo::SFifo,
    TwoQ => twoq::TwoQ,
    LruK => lruk::LruK,
    Arc => arc::Arc,
    Car => car::Car,
    Lirs => lirs::Lirs,
    ClockPro => clockpro::ClockPro,
    S3Fifo => s3fifo::S3Fifo,
    Sieve => sieve::Sieve,
    WTinyLfu => wtinylfu::WTinyLfu,
    Hyperbolic => hyperbolic::Hyperbolic,
    Slru => slru::Slru,
    S4Lru => s4lru::S4Lru,
    Lfuda => lfuda::Lfuda,
    Gdsf => pub gdsf::Gdsf,
    LruProb => lruprob::LruProb,
    // issue 19, part C
    Mq => mq::Mq,
    Lrfu => lrfu::Lrfu,
    LeCaR => lecar::LeCaR,
    Cacheus => cacheus::Cacheus,
    // issue 19, part D
    Sampled => sampled::Sampled,
    Size => size::Size,
    Qdlp => qdlp::Qdlp,
    FifoMerge => fifo_merge::FifoMerge,
    // issue 19, part E
    TinyUfo => pub tinyufo::TinyUfo,
    Lhd => lhd::Lhd,
    // issue 19, the rest
    Clock2QPlus => clock2qplus::Clock2QPlus,
    Toss => toss::Toss,
    Linux => linux::Linux,
    PinRange => pinrange::PinRange,
    Belady => belady::Belady,
}

/// A dense frame number chosen by the driver. Policies index their per-frame arrays with it.
///
/// Frames are recycled: after a frame is evicted or removed, the driver may hand the same
/// number to the next insertion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FrameId(pub u32);

impl FrameId {
    /// The frame number as an array index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// `next_access` value meaning "never accessed again" (or unknown).
pub const NEVER: u64 = u64::MAX;

/// What a policy is told about one request.
///
/// Only `key` and `size` matter to most policies; `time` is the request's logical index
/// (position in the trace), `next_access` the logical time of the same key's next request
/// (for Belady/OPT), and `stream` identifies the process or file stream that issued it (for
/// toss-immediately, which keeps each stream's most recent block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The object's identity.
    pub key: u64,
    /// Size in capacity units (1 when every object counts as one unit).
    pub size: u32,
    /// Logical time: the request's position in the trace.
    pub time: u64,
    /// Logical time of this key's next request, or [`NEVER`].
    pub next_access: u64,
    /// The issuing stream (process, file handle); 0 when unknown.
    pub stream: u32,
}

impl Access {
    /// A request for one unit-sized object with no future knowledge.
    #[inline]
    pub fn unit(key: u64, time: u64) -> Self {
        Access {
            key,
            size: 1,
            time,
            next_access: NEVER,
            stream: 0,
        }
    }

    /// The request assumed by [`Policy::victims`]: a key the policy has never seen.
    #[inline]
    pub fn phantom() -> Self {
        Access {
            key: u64::MAX,
            size: 1,
            time: u64::MAX,
            next_access: NEVER,
            stream: u32::MAX,
        }
    }
}

/// A replacement policy. See the [crate documentation](crate) for why it is shaped this way.
///
/// # Contract
///
/// * The driver calls `on_insert` only for a frame that is not resident, `on_hit`,
///   `remove` only for resident frames, and never lets the total size of resident frames
///   exceed the capacity the policy was built with.
/// * `evict` returns a resident frame `f` with `evictable(f) == true` and afterwards treats
///   `f` as not resident; it returns `None` only when no resident frame is evictable. It
///   must terminate: every scan is bounded.
/// * `victims(n, ..)` lists exactly the frames that `n` consecutive calls of `evict` with
///   [`Access::phantom`] and the same predicate would return, and changes nothing.
pub trait Policy {
    /// The short name used on the command line and in reports (`lru`, `s3fifo`).
    fn name(&self) -> &'static str;

    /// Number of resident frames.
    fn len(&self) -> usize;

    /// True when no frame is resident.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A resident frame was accessed.
    fn on_hit(&mut self, frame: FrameId, access: &Access);

    /// `access` missed and now occupies the non-resident `frame`.
    fn on_insert(&mut self, frame: FrameId, access: &Access);

    /// Choose and forget a resident frame for which `evictable` holds, to make room for
    /// `incoming`.
    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId>;

    /// Forget a resident frame explicitly (invalidation). No ghost history is kept for it.
    fn remove(&mut self, frame: FrameId);

    /// Append to `out` the frames the next `n` evictions would choose, in order.
    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>);

    /// True when the policy needs [`Access::next_access`] (offline policies such as Belady).
    fn needs_future(&self) -> bool {
        false
    }

    /// What the policy does with hits, and so how a concurrent driver (the buffer pool) may
    /// report them. The default, [`HitPath::Ordered`], is exact for every online policy;
    /// a policy whose hits only set a bit or raise a capped counter says so, and the pool
    /// then records its hits without any lock (`tests/hit_path.rs` holds every policy to
    /// what it declares).
    fn hit_path(&self) -> HitPath {
        if self.needs_future() {
            HitPath::Offline
        } else {
            HitPath::Ordered
        }
    }

    /// True when the policy may turn a newcomer away after comparing it with its victim
    /// ([`Policy::contest`]). Drivers skip the contest for every policy that answers
    /// false (all but TinyUFO), so the others pay one predictable branch per eviction.
    fn contests(&self) -> bool {
        false
    }

    /// Admission by contest (TinyUFO's TinyLFU check): `evict` has just chosen `victim`,
    /// the only frame that must leave to make room for `incoming`. The policy compares the
    /// two and answers [`Verdict::KeepVictim`] to turn the newcomer away: `victim` is then
    /// resident again in the policy's eyes (placed wherever the policy puts a survivor),
    /// the driver keeps its key and size, and `on_insert` is not called for `incoming`.
    /// [`Verdict::AdmitNewcomer`] changes nothing: the driver goes on as without a contest.
    ///
    /// Only a driver that may serve a miss without caching it asks (the replay's
    /// [`Cache`]); the buffer pool and the simulator's buffer cache must hold every page
    /// they serve, so they never ask, and a contesting policy then behaves as its
    /// always-admit form (pingora's `force_put`). Called only when [`Policy::contests`]
    /// is true; the default admits.
    fn contest(&mut self, incoming: &Access, victim: FrameId) -> Verdict {
        let _ = (incoming, victim);
        Verdict::AdmitNewcomer
    }

    /// The driver's capacity changed to `capacity` units (the buffer pool was resized).
    /// A driver that shrinks calls this *after* evicting down to the new capacity, and
    /// one that grows *before* inserting beyond the old one, so the contract above holds
    /// with the capacity last told. The default does nothing, which is exact for every
    /// policy whose decisions do not depend on its capacity (FIFO, LRU, Clock, SIEVE, LFU,
    /// ...). Policies with capacity-sized partitions or histories recompute them here
    /// (ARC, CAR, 2Q, S3-FIFO, SFIFO, SLRU, LIRS, PinRange, LRU-K, CLOCK-Pro, LeCaR,
    /// Cacheus, Clock2Q+), and their sketches and lifetimes (W-TinyLFU, MQ, TinyUFO);
    /// `docs/policies.md`, "Resizing", says what each keeps.
    fn set_capacity(&mut self, capacity: u64) {
        let _ = capacity;
    }

    /// Wall-clock time has reached `now_ms` milliseconds since the driver started.
    /// [`Access::time`] stays logical (a request's place in the trace, which policies
    /// such as LRU-K order by); this separate clock is for policies that model
    /// something a real system does on a timer (the `linux` policy's `stats_ms`: the
    /// kernel's periodic statistics flush). Drivers with real time (the server's mirror,
    /// the replay of its request log) call it before each request; others never do. The
    /// default ignores it.
    fn set_wall_clock(&mut self, now_ms: u64) {
        let _ = now_ms;
    }

    /// The request about to be served is the whole trace's request number `position`
    /// (0-based, deletes not counted). A miniature simulation serves a spatial sample of
    /// the trace and calls this before each request, so that a policy built as a
    /// miniature ([`BuildContext::miniature`]) can pace what it does every so many
    /// requests by the trace rather than by the sample (W-TinyLFU's sketch resets and
    /// hill-climbing periods); [`Access::time`] stays the position in the sampled
    /// stream. Other drivers never call it. The default ignores it.
    fn set_trace_clock(&mut self, position: u64) {
        let _ = position;
    }

    /// How many times the driver's minimum of sampled objects a miniature of this policy
    /// needs (`bufcache mrc --min-sampled`): a miniature simulation raises the sampling
    /// rate of small sizes until their caches hold that many sampled objects, and a policy
    /// whose decisions rest on more than the cache's contents asks for more (W-TinyLFU's
    /// hill climber, which compares the hit rates of successive periods). The default, 1.
    fn miniature_samples(&self) -> u64 {
        1
    }

    /// The system being modelled has just refreshed the statistics it decides from (the
    /// kernel flushed its memory-cgroup statistics, seen by the server through a
    /// tracepoint): for policies that model decisions on stale statistics (the `linux`
    /// policy's `stats_events`), observed rather than timed flushes. The default ignores
    /// it.
    fn flush_stats(&mut self) {}

    /// Whether the policy's statistics are refreshed only by [`Policy::flush_stats`] (the
    /// `linux` policy's `stats_events`): a driver that never calls it would run a model
    /// whose statistics never change, so drivers refuse such a policy unless they observe
    /// the flushes. The default is false.
    fn wants_flush_events(&self) -> bool {
        false
    }
}

/// The outcome of [`Policy::contest`]: which of a newcomer and its victim stays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The victim leaves and the newcomer is inserted, as without a contest.
    AdmitNewcomer,
    /// The newcomer is served without being cached and the victim stays.
    KeepVictim,
}

/// How a policy uses hits: what a driver that sees hits from many threads must do so
/// that the policy runs exactly as written. Declared by each policy
/// ([`Policy::hit_path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitPath {
    /// Hits change nothing (FIFO, Random): they need not be reported at all.
    Ignore,
    /// A hit sets a reference bit or raises a counter that saturates at `cap`, and the
    /// policy only ever looks at how many hits (up to `cap`) a frame had since it last
    /// looked: between two misses, the order of hits and repeats beyond `cap` make no
    /// difference. A driver may count hits per frame without a lock and report them in a
    /// batch before it evicts.
    Counter {
        /// Hits beyond this many (since the policy last looked) change nothing.
        cap: u8,
    },
    /// Hits reorder the policy's state (an LRU list, ARC's lists, LIRS's stack): each
    /// hit must be reported, in order (the pool queues them, BP-Wrapper style).
    Ordered,
    /// The policy needs the future ([`Access::next_access`]): only a trace replay, which
    /// knows it, can run the policy.
    Offline,
}

/// Lists victims by running `evict` on a clone: always agrees with `evict`, costs a copy
/// of the policy's state. Policies use it where a cheaper walk would have to duplicate the
/// eviction logic (Clock's second chances, ARC's adaptation, a seeded RNG).
pub(crate) fn victims_by_simulation<P: Policy + Clone>(
    policy: &P,
    n: usize,
    evictable: &dyn Fn(FrameId) -> bool,
    out: &mut Vec<FrameId>,
) {
    let mut copy = policy.clone();
    let phantom = Access::phantom();
    for _ in 0..n {
        match copy.evict(&phantom, evictable) {
            Some(f) => out.push(f),
            None => break,
        }
    }
}

/// Upper bound on the frames a policy preallocates arrays for. Unit-mode caches up to this
/// size never allocate after construction; larger ones, and byte-mode caches (whose
/// capacity counts bytes, not objects), grow their arrays on demand with [`ensure_slot`],
/// which reaches a steady state after warm-up. Small under `cfg(test)` so that unit tests
/// exercise the growth path.
#[cfg(not(test))]
const PREALLOC_FRAMES_MAX: u64 = 1 << 20;
#[cfg(test)]
const PREALLOC_FRAMES_MAX: u64 = 16;

/// How many frames to preallocate for `capacity` units (memory only, never behaviour).
#[inline]
pub(crate) fn prealloc_frames(capacity: u64) -> usize {
    capacity.min(PREALLOC_FRAMES_MAX) as usize
}

/// A bound on entry counts derived from a capacity in units (ghost lists, histories,
/// sketches): the capacity itself, capped at 2^24 so that byte-mode capacities do not ask
/// for billions of entries. Structures using it must allocate lazily.
#[inline]
pub(crate) fn entry_bound(capacity: u64) -> usize {
    capacity.min(1 << 24) as usize
}

/// Grows a per-frame array so that `frame` indexes it. Policies size their arrays for the
/// expected number of frames at construction; this only allocates when a driver with
/// variable-size objects uses more frames than expected.
#[inline]
pub(crate) fn ensure_slot<T: Clone>(v: &mut Vec<T>, frame: FrameId, fill: T) {
    if frame.index() >= v.len() {
        v.resize(frame.index() + 1, fill);
    }
}

#[cfg(test)]
mod growth_tests {
    use crate::testkit::{check_run, Step};
    use crate::{BuildContext, PolicySpec, POLICIES};
    use testutil::{Rng, TestRng};

    /// Under `cfg(test)` policies preallocate only 16 frames, so a cache of 200 unit-sized
    /// objects forces every per-frame array, ghost list and history to grow on demand.
    /// Explores: fresh steps each run unless `BUFCACHE_SEED` is set.
    #[test]
    fn every_policy_grows_past_its_preallocation() {
        testutil::explore(|seed| grows_past_preallocation(&mut seed.rng()));
    }

    fn grows_past_preallocation(rng: &mut TestRng) {
        let steps: Vec<Step> = (0..4000)
            .map(|_| match rng.gen_range(0..20) {
                0 => Step::Remove(rng.gen_range(0..600)),
                1 => Step::Pin(rng.gen_range(0..600)),
                2 => Step::Unpin(rng.gen_range(0..600)),
                _ => Step::Access {
                    key: rng.gen_range(0..600),
                    size: rng.gen_range(1..=3),
                },
            })
            .collect();
        for info in POLICIES {
            let ctx = BuildContext::new(200, 1);
            let policy = PolicySpec::parse(info.name).unwrap().build(&ctx).unwrap();
            check_run(policy, 200, &steps);
        }
    }
}
