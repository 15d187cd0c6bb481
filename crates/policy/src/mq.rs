//! MQ: the Multi-Queue replacement algorithm.
//!
//! Zhou, Philbin & Li, "The Multi-Queue Replacement Algorithm for Second Level Buffer
//! Caches", USENIX ATC 2001.
//!
//! A second-level cache (a storage server's, below the clients' own caches) sees the
//! first level's misses: re-references are far apart, so plain recency keeps the wrong
//! blocks, and plain frequency never forgets. MQ keeps blocks that were referenced more
//! often for longer, and still lets an idle block age out.
//!
//! # Algorithm
//!
//! `m` LRU queues `Q0 .. Q(m-1)`. A block referenced `f` times lives in queue
//! `min(floor(log2 f), m - 1)`: the 2nd and 3rd reference put it in `Q1`, the 4th to 7th in
//! `Q2`, and so on. Every reference sets the block's `expire` to `now + lifetime` and puts
//! it at its queue's most recent end; `now` counts requests.
//!
//! * After every request, each queue `Qk` (`k >= 1`) whose least recent block has expired
//!   (`expire < now`) moves that one block to the most recent end of `Q(k-1)` with a fresh
//!   `expire`: a block that stops being referenced sinks one level per `lifetime`.
//! * A miss evicts the least recent block of the lowest non-empty queue and remembers its
//!   key and count in `Qout`, a FIFO history of bounded size. A block found in `Qout`
//!   comes back with its remembered count plus one; any other starts at 1.
//!
//! # Parameters
//!
//! * `queues` (8): `m`, the paper's choice.
//! * `lifetime` (`online`): requests a block may stay unreferenced at the least recent end
//!   of its queue before it sinks a level. The paper finds the best value at the *peak
//!   temporal distance* (the most common number of requests between two references to a
//!   block) and has MQ keep statistics of the temporal distances it sees to set lifeTime
//!   to that peak as it runs; `online` does that (below), starting from the capacity.
//!   `auto` keeps the capacity fixed: how long a block referenced once lasts in an LRU
//!   cache of the same size under misses. A number keeps that number fixed.
//! * `out` (4.0): `Qout`'s entries as a multiple of the capacity, the paper's four times
//!   the cache's blocks.
//!
//! # Deviations and choices
//!
//! * `online`: the paper gives the rule (lifeTime follows the peak of the temporal
//!   distance histogram) but not its granularity. Here a distance is measured on every
//!   hit (since the block's last reference) and on every return from `Qout` (since the
//!   block's last reference before eviction); the histogram has one bucket per power of
//!   two (distances of every scale in one small array); every `capacity` requests (at
//!   least 64) lifeTime becomes the middle of the fullest bucket and every count is
//!   halved, so the peak follows a workload that changes while older evidence fades.
//! * Pinned blocks are skipped in place: eviction takes the least recent evictable block
//!   of the lowest queue that has one.
//! * Sizes: capacity counts units, `Qout` and `lifetime` are derived from it; a block's
//!   size does not change its queue.
//!
//! # Cost
//!
//! O(1) per hit and insertion plus at most `m - 1` expiry checks; eviction looks at the
//! `m` queue tails (O(m)) and does one history insert; a miss does one history lookup.
//! `victims` walks the queues without copying. Memory per frame: 8 (links) + 8 (key) +
//! 8 (expire) + 4 (count) + 1 (queue) = 29 bytes, plus `Qout` (a ghost list: 16 bytes an
//! entry, up to twice its bound, and its key map). `online` adds 8 bytes per frame (the
//! last reference), a key map of `Qout`'s eviction times and 64 counters; its recount is
//! O(64) every `capacity` requests.

use crate::ghost::GhostList;
use crate::keymap::KeyMap;
use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Most queues accepted: a count reaches queue 31 only after 2^31 references.
const QUEUES_MAX: u64 = 32;

/// MQ. Each queue's head is its most recent end; its tail is the next to leave.
#[derive(Clone, Debug)]
pub struct Mq {
    links: Links,
    queues: Vec<List>,
    queue_of: Vec<u8>,
    count: Vec<u32>,
    expire: Vec<u64>,
    keys: Vec<u64>,
    /// `Qout`: evicted keys with their reference counts (in the ghost list's size field).
    out: GhostList,
    /// `Qout`'s bound, in entries.
    out_bound: usize,
    lifetime: u64,
    /// Requests seen (the paper's `currentTime`).
    now: u64,
    resident: usize,
    /// `lifetime=online`: the temporal distances seen, which set `lifetime`.
    online: Option<PeakDistance>,
    /// How the registry derived the sizes from the capacity, for `set_capacity` (`None`
    /// for an `Mq` built with explicit sizes by [`Mq::new`]: it keeps them).
    sizing: Option<Sizing>,
}

/// What the capacity sets: `Qout`'s bound (the `out` multiple) and, for `lifetime=auto`
/// and `online`, the lifetime.
#[derive(Clone, Copy, Debug)]
struct Sizing {
    out: f64,
    lifetime_is_capacity: bool,
}

/// The statistics of `lifetime=online`: a histogram of temporal distances by power of two
/// and what it needs to measure them (each resident's last reference, `Qout` entries'
/// eviction times).
#[derive(Clone, Debug)]
struct PeakDistance {
    /// `buckets[b]` counts distances in `[2^b, 2^(b+1))`.
    buckets: [u32; 64],
    /// Requests between two recounts.
    period: u64,
    /// A recount has set the lifetime (it no longer follows the capacity).
    adapted: bool,
    /// Per frame: the request of its last reference.
    last_ref: Vec<u64>,
    /// `Qout`'s keys: the last reference before eviction, modulo 2^32 (a distance beyond
    /// 2^32 requests lands in the top bucket anyway).
    out_times: KeyMap,
}

impl PeakDistance {
    fn new(period: u64, frames: usize, key_space: Option<u64>, out_entries: usize) -> Self {
        PeakDistance {
            buckets: [0; 64],
            period: period.max(64),
            adapted: false,
            last_ref: vec![0; frames],
            out_times: KeyMap::for_keys(key_space, out_entries.min(1 << 16)),
        }
    }

    #[inline]
    fn observe(&mut self, distance: u64) {
        let b = distance.max(1).ilog2() as usize;
        self.buckets[b] = self.buckets[b].saturating_add(1);
    }

    /// The middle of the fullest bucket (the smallest distance on a tie), or `None`
    /// before anything was observed; every count is then halved.
    fn recount(&mut self) -> Option<u64> {
        let (peak, &most) = self
            .buckets
            .iter()
            .enumerate()
            .max_by(|(i, a), (j, b)| a.cmp(b).then(j.cmp(i)))?;
        for c in &mut self.buckets {
            *c /= 2;
        }
        (most > 0).then(|| (1u64 << peak) + ((1u64 << peak) >> 1))
    }
}

impl Mq {
    /// MQ expecting about `frames` residents, with `queues` queues, `lifetime` requests and
    /// a history of `out_entries` keys.
    pub fn new(frames: usize, queues: usize, lifetime: u64, out_entries: usize) -> Self {
        assert!((1..=QUEUES_MAX as usize).contains(&queues), "1..=32 queues");
        Mq {
            links: Links::with_capacity(frames),
            queues: vec![List::new(); queues],
            queue_of: vec![0; frames],
            count: vec![0; frames],
            expire: vec![0; frames],
            keys: vec![0; frames],
            out: GhostList::new(out_entries),
            out_bound: out_entries,
            lifetime,
            now: 0,
            resident: 0,
            online: None,
            sizing: None,
        }
    }

    /// Let `lifetime` follow the peak temporal distance (`lifetime=online`), recounted
    /// every `period` requests (at least 64); `lifetime` is where it starts. Call before
    /// first use, with the key space the policy's keys come from.
    pub fn adapt_lifetime(&mut self, period: u64, key_space: Option<u64>) {
        let frames = self.keys.len();
        let out_entries = self.out_bound;
        self.online = Some(PeakDistance::new(period, frames, key_space, out_entries));
    }

    /// The current lifetime, in requests.
    pub fn lifetime(&self) -> u64 {
        self.lifetime
    }

    /// Each queue from `Q0` up, its keys from most to least recent (for tests).
    pub fn queues(&self) -> Vec<Vec<u64>> {
        self.queues
            .iter()
            .map(|q| {
                let frames = self.links.iter_from_head(q);
                frames.map(|f| self.keys[f.index()]).collect()
            })
            .collect()
    }

    /// The queue a block referenced `count` times belongs in.
    #[inline]
    fn queue_for(&self, count: u32) -> usize {
        (count.max(1).ilog2() as usize).min(self.queues.len() - 1)
    }

    /// A reference to `frame` (already off every queue) with its new `count`: place it,
    /// let expired blocks sink, advance the clock.
    #[inline]
    fn referenced(&mut self, frame: FrameId, count: u32) {
        let i = frame.index();
        let k = self.queue_for(count);
        self.count[i] = count;
        self.queue_of[i] = k as u8;
        self.expire[i] = self.now + self.lifetime;
        self.links.push_front(&mut self.queues[k], frame);
        self.adjust();
        if let Some(online) = &mut self.online {
            ensure_slot(&mut online.last_ref, frame, 0);
            online.last_ref[i] = self.now;
            if (self.now + 1).is_multiple_of(online.period) {
                if let Some(peak) = online.recount() {
                    self.lifetime = peak;
                    online.adapted = true;
                }
            }
        }
        self.now += 1;
    }

    /// The paper's `Adjust`: at most one expired block per queue sinks one level.
    #[inline]
    fn adjust(&mut self) {
        for k in 1..self.queues.len() {
            let Some(oldest) = self.queues[k].tail() else {
                continue;
            };
            if self.expire[oldest.index()] < self.now {
                let (lower, upper) = self.queues.split_at_mut(k);
                self.links.unlink(&mut upper[0], oldest);
                self.links.push_front(&mut lower[k - 1], oldest);
                self.queue_of[oldest.index()] = (k - 1) as u8;
                self.expire[oldest.index()] = self.now + self.lifetime;
            }
        }
    }

    /// Resident frames in eviction order: queues from `Q0` up, least recent first.
    fn eviction_order(&self) -> impl Iterator<Item = FrameId> + '_ {
        self.queues
            .iter()
            .flat_map(move |q| self.links.iter_from_tail(q))
    }
}

impl Policy for Mq {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.resident
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let i = frame.index();
        let k = self.queue_of[i] as usize;
        self.links.unlink(&mut self.queues[k], frame);
        if let Some(online) = &mut self.online {
            online.observe(self.now - online.last_ref[i]);
        }
        let count = self.count[i].saturating_add(1);
        self.referenced(frame, count);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.queue_of, frame, 0);
        ensure_slot(&mut self.count, frame, 0);
        ensure_slot(&mut self.expire, frame, 0);
        ensure_slot(&mut self.keys, frame, 0);
        self.keys[frame.index()] = access.key;
        self.resident += 1;
        let count = match self.out.take(access.key) {
            Some(remembered) => {
                if let Some(online) = &mut self.online {
                    if let Some(t) = online.out_times.remove(access.key) {
                        online.observe(u64::from((self.now as u32).wrapping_sub(t)));
                    }
                }
                remembered.saturating_add(1)
            }
            None => 1,
        };
        self.referenced(frame, count);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self.eviction_order().find(|&f| evictable(f))?;
        let i = victim.index();
        self.links
            .unlink(&mut self.queues[self.queue_of[i] as usize], victim);
        let dropped = self.out.push_front(self.keys[i], self.count[i]);
        if let Some(online) = &mut self.online {
            if let Some(old) = dropped {
                online.out_times.forget(old);
            }
            if self.out.contains(self.keys[i]) {
                online.out_times.insert(self.keys[i], online.last_ref[i] as u32);
            }
        }
        self.resident -= 1;
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        let k = self.queue_of[frame.index()] as usize;
        self.links.unlink(&mut self.queues[k], frame);
        self.resident -= 1;
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // Exact: eviction only takes from the order, never reorders it.
        out.extend(self.eviction_order().filter(|&f| evictable(f)).take(n));
    }

    /// Recomputes what construction derives from the capacity: `Qout`'s bound (the oldest
    /// entries beyond a smaller one are forgotten now), the lifetime under `auto`, and
    /// under `online` the recount period and, until a recount has measured a peak, the
    /// starting lifetime. A measured peak is a property of the workload (requests between
    /// references), not of the cache's size, so it is kept; so is a lifetime given as a
    /// number. Residents keep their queues and expiry times.
    fn set_capacity(&mut self, capacity: u64) {
        let Some(sizing) = self.sizing else { return };
        self.out_bound = (crate::entry_bound(capacity) as f64 * sizing.out) as usize;
        self.out.set_capacity(self.out_bound);
        let adapted = match &mut self.online {
            Some(online) => {
                online.period = capacity.max(64);
                online.adapted
            }
            None => false,
        };
        if sizing.lifetime_is_capacity && !adapted {
            self.lifetime = capacity.max(1);
        }
    }
}

impl NamedPolicy for Mq {
    const NAME: &'static str = "mq";
    const SUMMARY: &'static str =
        "multi-queue: LRU queues by log2 of the reference count, expiry, history Qout (Zhou et al. 2001)";
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "queues",
            default: "8",
            help: "number of LRU queues m, 1..=32",
        },
        ParamInfo {
            name: "lifetime",
            default: "online",
            help: "requests before an unreferenced block sinks a queue: online = the peak \
                   temporal distance seen (the paper), auto = the capacity, or a number",
        },
        ParamInfo {
            name: "out",
            default: "4.0",
            help: "history Qout's entries as a multiple of the capacity, 0..=64",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let queues = params.integer("queues", 1, QUEUES_MAX)? as usize;
        let online = params.raw("lifetime") == "online";
        let given = if online {
            None
        } else {
            params.integer_or_auto("lifetime", 1, u64::MAX / 4)?
        };
        let lifetime = given.unwrap_or(ctx.capacity.max(1));
        let out = params.fraction("out", 0.0, 64.0)?;
        let out_entries = (crate::entry_bound(ctx.capacity) as f64 * out) as usize;
        let frames = crate::prealloc_frames(ctx.capacity);
        let mut mq = Mq::new(frames, queues, lifetime, out_entries);
        mq.sizing = Some(Sizing {
            out,
            lifetime_is_capacity: given.is_none(),
        });
        mq.out.set_key_space(ctx.key_space);
        if online {
            mq.adapt_lifetime(ctx.capacity, ctx.key_space);
        }
        Ok(mq)
    }
}

#[cfg(test)]
mod tests {
    use super::Mq;
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Cache};

    #[test]
    fn counts_choose_queues_and_the_lowest_queue_is_evicted() {
        // c = 3, 8 queues, lifetime 100 (nothing expires), Qout 8.
        // 1 1 1 1: 1 has count 4 -> Q2. 2 2: count 2 -> Q1. 3: Q0.
        // 4: evicts Q0's only block 3 (Qout remembers 3 with count 1); 4 in Q0.
        // 3: evicts 4 (Q0); 3 comes back with 1 + 1 = 2 -> Q1 (more recent than 2).
        // 5: Q0 is empty: evicts Q1's least recent, 2.
        let trace = [1, 1, 1, 1, 2, 2, 3, 4, 3, 5];
        let mq = || Mq::new(3, 8, 100, 8);
        assert_eq!(
            hits(mq(), 3, &trace),
            [false, true, true, true, false, true, false, false, false, false]
        );
        let expected: [&[u64]; 10] = [&[], &[], &[], &[], &[], &[], &[], &[3], &[4], &[2]];
        assert_eq!(evictions(mq(), 3, &trace), expected);
        let mut cache = Cache::new(mq(), 3);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        let queues = cache.policy().queues();
        assert_eq!(queues[..3], [vec![5], vec![3], vec![1]]);
        assert_eq!(resident_after(mq(), 3, &trace), [5, 3, 1]);
    }

    #[test]
    fn idle_blocks_sink_one_queue_per_lifetime() {
        // c = 3, lifetime 2. 1 1 (t = 0, 1): 1 in Q1, expire 1 + 2 = 3.
        // 2 (t = 2), 3 (t = 3): 1 not yet expired (3 < 3 is false).
        // 2 (t = 4, hit): 2 -> Q1 with expire 6; Adjust: Q1's least recent is 1 with
        //   expire 3 < 4: 1 sinks to Q0 (most recent end), expire 6. Q0 [1 3] (3 oldest).
        // 4 (t = 5): evicts Q0's least recent, 3. 5 (t = 6): evicts Q0's least recent: 1.
        // Without the lifetime (lifetime 100), 5 would evict 4 instead.
        let trace = [1, 1, 2, 3, 2, 4, 5];
        let expected: [&[u64]; 7] = [&[], &[], &[], &[], &[], &[3], &[1]];
        assert_eq!(evictions(Mq::new(3, 8, 2, 8), 3, &trace), expected);
        assert_eq!(evictions(Mq::new(3, 8, 100, 8), 3, &trace)[6], [4]);
    }

    /// Replays `trace` into `spec` built for `capacity`; the policy afterwards.
    fn after(spec: &str, capacity: u64, trace: &[u64]) -> Mq {
        let ctx = crate::BuildContext::new(capacity, 1);
        let crate::AnyPolicy::Mq(mq) = crate::PolicySpec::parse(spec).unwrap().build(&ctx).unwrap()
        else {
            unreachable!("mq builds an Mq")
        };
        let mut cache = Cache::new(mq, capacity);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        cache.policy().clone()
    }

    #[test]
    fn online_lifetime_follows_the_peak_distance_of_hits() {
        // capacity 200 (recount every 200 requests): a loop over 100 keys. From the second
        // pass on every request hits 100 requests after the key's last reference: bucket
        // [64, 128), whose middle is 96. Before the first recount the lifetime is the
        // capacity; `auto` keeps it there.
        let trace: Vec<u64> = (0..1_000u64).map(|i| i % 100).collect();
        assert_eq!(after("mq", 200, &trace[..150]).lifetime(), 200);
        assert_eq!(after("mq", 200, &trace).lifetime(), 96);
        assert_eq!(after("mq:lifetime=auto", 200, &trace).lifetime(), 200);
        assert_eq!(after("mq:lifetime=7", 200, &trace).lifetime(), 7);
    }

    #[test]
    fn online_lifetime_measures_returns_from_qout() {
        // capacity 10 (recount every 64 requests), Qout 40 keys: a loop over 40 keys
        // never hits, but from request 40 on every key returns from Qout 40 requests
        // after its last reference: bucket [32, 64), middle 48, set at request 64.
        let trace: Vec<u64> = (0..400u64).map(|i| i % 40).collect();
        assert_eq!(after("mq", 10, &trace[..63]).lifetime(), 10);
        assert_eq!(after("mq", 10, &trace[..64]).lifetime(), 48);
        // Halving keeps the peak where the evidence is: a later phase of hits 3 requests
        // apart (bucket [2, 4), middle 3) takes over once it outweighs the old counts.
        let mut phased = trace.clone();
        phased.extend((0..600u64).map(|i| 1000 + i % 3));
        assert_eq!(after("mq", 10, &phased).lifetime(), 3);
    }

    #[test]
    fn a_resize_recomputes_what_the_capacity_set() {
        use crate::Policy;
        let trace: Vec<u64> = (0..1_000u64).map(|i| i % 100).collect();
        // Before the first recount an online lifetime is still the capacity: it follows.
        let mut mq = after("mq", 200, &trace[..150]);
        mq.set_capacity(400);
        assert_eq!(mq.lifetime(), 400);
        assert_eq!(mq.online.as_ref().map(|o| o.period), Some(400));
        // A measured peak (96) stays; `auto` follows the capacity; a number stays.
        for (spec, lifetime) in [("mq", 96), ("mq:lifetime=auto", 400), ("mq:lifetime=7", 7)] {
            let mut mq = after(spec, 200, &trace);
            mq.set_capacity(400);
            assert_eq!(mq.lifetime(), lifetime, "{spec}");
        }
        // Qout (bound 40): 40 keys looping through 10 frames. Requests 10-39 evict 0-29
        // from Q0; 40-49 bring 0-9 back into Q1 and evict 30-39; 50-62 bring 10-22 back
        // and evict 0-12 from Q1. Qout, oldest first: 23-29, 30-39, 0-12 (30 keys). At
        // capacity 5 the bound is 20: 23-29 and 30-32 go now.
        let looped: Vec<u64> = (0..63u64).map(|i| i % 40).collect();
        let mut mq = after("mq", 10, &looped);
        assert_eq!((mq.out.len(), mq.out_bound), (30, 40));
        mq.set_capacity(5);
        assert_eq!((mq.out.len(), mq.out_bound), (20, 20));
        assert!(!mq.out.contains(32) && mq.out.contains(33) && mq.out.contains(0));
    }

    #[test]
    fn one_queue_is_lru() {
        let trace: Vec<u64> = (0..3000u64).map(|i| (i * 7 + i / 13) % 40).collect();
        assert_eq!(
            hits(Mq::new(10, 1, 5, 40), 10, &trace),
            hits(crate::Lru::new(10), 10, &trace)
        );
    }
}
