//! Replay a trace through many (policy, cache size) pairs at once.
//!
//! The trace is loaded once into a [`CompactTrace`] and shared read-only by every run; the
//! runs themselves are independent and go to rayon's pool, one (policy, size) pair per
//! task, so a sweep uses every core. Inside a run the loop is monomorphic: the policy is
//! unwrapped from [`AnyPolicy`](policy::AnyPolicy) once through [`PolicyVisitor`], so no request pays for an
//! enum dispatch.
//!
//! # Units
//!
//! In *unit mode* (`ignore_size`) every object occupies one unit and cache sizes count
//! objects; in *byte mode* an object occupies its size in bytes (a size of 0 occupies one
//! unit, see [`policy::Cache`]) and sizes count bytes. Byte counts (`bytes_missed`) are
//! reported in both modes from the trace's own sizes.
//!
//! # Deletes
//!
//! A delete invalidates the object ([`Cache::remove`]) and is not a request: it is counted
//! neither as a hit nor as a miss, so miss ratios are comparable with traces that have no
//! deletes. Its position still advances logical time, so next-access times stay positions
//! in the trace.
//!
//! # Determinism
//!
//! Each run depends only on the trace, the policy spec, the capacity and the seed; results
//! come back in the order of the jobs (policy-major, then size) whatever the thread timing.
//! Only `wall_s` varies between runs.

use std::ops::Range;
use std::time::Instant;

use policy::registry::PolicyVisitor;
use policy::{
    Access, AdmissionSpec, Admitter, BuildContext, Cache, ConfigError, KeyIndex, Policy,
    PolicySpec, PrefetchSpec, PrefetchStats, Prefetcher, Successors, NEVER,
};
use rayon::prelude::*;
use thiserror::Error;

use crate::compact::CompactTrace;
use crate::size::{CacheSize, SizeError};

/// How often (in requests) a run reports progress.
pub const PROGRESS_EVERY: usize = 1 << 16;

/// Why a replay could not start.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// A policy could not be built at a size.
    #[error("policy `{policy}` at size {size}: {error}")]
    Policy {
        /// The policy as written.
        policy: String,
        /// The size as written.
        size: String,
        /// Why (in the message, not as a separate source, so it is printed once); boxed,
        /// so that results carrying this error stay small.
        error: Box<ConfigError>,
    },
    /// A size could not be resolved.
    #[error(transparent)]
    Size(#[from] SizeError),
    /// The prefetcher could not be built, or cannot run here.
    #[error("prefetcher `{prefetch}`: {reason}")]
    Prefetch {
        /// The spec as written.
        prefetch: String,
        /// Why.
        reason: String,
    },
    /// The admission filter could not be built.
    #[error("admission `{admission}`: {error}")]
    Admission {
        /// The filter as written.
        admission: String,
        /// Why (boxed, as the policy's error).
        error: Box<ConfigError>,
    },
    /// An offline policy in a replay that does not keep next-access times (streaming).
    #[error("policy `{policy}` needs every request's next access, which a streaming replay does not keep: replay it in memory (without --stream)")]
    NeedsFuture {
        /// The policy as written.
        policy: String,
    },
}

/// Replay settings shared by every run.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplayOptions {
    /// Unit mode: every object counts as one unit.
    pub ignore_size: bool,
    /// Root seed handed to every policy.
    pub seed: u64,
}

/// Hit and miss counters of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Reads and writes served.
    pub requests: u64,
    /// Of which hits.
    pub hits: u64,
    /// Bytes requested (from the trace's sizes, in both modes).
    pub bytes_requested: u64,
    /// Bytes of the requests that missed.
    pub bytes_missed: u64,
}

impl Counts {
    /// Requests that missed.
    pub fn misses(&self) -> u64 {
        self.requests - self.hits
    }

    /// Misses over requests (0 for no requests).
    pub fn miss_ratio(&self) -> f64 {
        ratio(self.misses(), self.requests)
    }

    /// Missed bytes over requested bytes (0 when nothing was requested).
    pub fn byte_miss_ratio(&self) -> f64 {
        ratio(self.bytes_missed, self.bytes_requested)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The result of one (policy, size) run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// The policy as written (`s3fifo:small=0.1`).
    pub policy: String,
    /// The size as the user wrote it.
    pub size: String,
    /// The capacity it resolved to, in units (objects, or bytes in byte mode).
    pub capacity: u64,
    /// Counters after the warm-up.
    pub counts: Counts,
    /// Counters of each interval of the [`Schedule`] (empty without one).
    pub intervals: Vec<Counts>,
    /// What the prefetcher did after the warm-up (zeros without one).
    pub prefetch: PrefetchStats,
    /// Wall-clock seconds of this run alone.
    pub wall_s: f64,
}

impl RunResult {
    /// Requests that missed.
    pub fn misses(&self) -> u64 {
        self.counts.misses()
    }
    /// Misses over requests.
    pub fn miss_ratio(&self) -> f64 {
        self.counts.miss_ratio()
    }
    /// Missed bytes over requested bytes.
    pub fn byte_miss_ratio(&self) -> f64 {
        self.counts.byte_miss_ratio()
    }
}

/// Serve `trace.items()[range]` through `cache`, adding to `counts`.
///
/// This is the hot loop every run uses; it is public so that benchmarks and the allocation
/// test exercise exactly the code that replay runs. `future` is the trace's
/// [`CompactTrace::next_access`] when the policy needs it. `progress` is called with the
/// number of requests done since its last call, every [`PROGRESS_EVERY`] operations.
pub fn serve<P: Policy, I: KeyIndex>(
    cache: &mut Cache<P, I>,
    trace: &CompactTrace,
    range: Range<usize>,
    ignore_size: bool,
    future: Option<&[u64]>,
    counts: &mut Counts,
    progress: &(dyn Fn(u64) + Sync),
) {
    let items = trace.items();
    let deletes = trace.deletes();
    let base = trace.base();
    // The first delete at or after the start of the range.
    let mut d = deletes.partition_point(|&p| p < range.start);
    let mut next_delete = deletes.get(d).copied().unwrap_or(usize::MAX);
    let mut since_report = 0u64;
    for i in range {
        let item = items[i];
        if i == next_delete {
            cache.remove(item.key);
            d += 1;
            next_delete = deletes.get(d).copied().unwrap_or(usize::MAX);
            continue;
        }
        let access = Access {
            key: item.key,
            size: if ignore_size { 1 } else { item.size },
            time: base + i as u64,
            next_access: future.map_or(NEVER, |f| f[i]),
            stream: item.stream,
        };
        counts.requests += 1;
        counts.bytes_requested += u64::from(item.size);
        if cache.access(&access).is_hit() {
            counts.hits += 1;
        } else {
            counts.bytes_missed += u64::from(item.size);
        }
        since_report += 1;
        if since_report as usize == PROGRESS_EVERY {
            progress(since_report);
            since_report = 0;
        }
    }
    if since_report > 0 {
        progress(since_report);
    }
}

/// When counting starts and how results are cut into intervals, in positions of the
/// trace (operations, deletes included).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Operations served before counting starts (they warm the cache up).
    pub warmup: u64,
    /// Where intervals end. Intervals cover the whole trace, warm-up included, so a plot
    /// shows the cache warming.
    pub interval: Intervals,
}

/// How a run's counts are cut into intervals, in positions of the trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Intervals {
    /// No intervals: only the total.
    #[default]
    None,
    /// One interval every this many operations (at least 1).
    Every(u64),
    /// Intervals ending just before these positions (increasing): spans of trace time
    /// turned into positions ([`crate::trace_time::TimeMarks`]), which are not evenly
    /// spaced. The last interval runs to the end of the trace.
    Ends(std::sync::Arc<[u64]>),
}

impl Intervals {
    /// Whether counts are cut at all.
    pub fn is_some(&self) -> bool {
        !matches!(self, Intervals::None)
    }

    /// The first interval end after `pos`, if any.
    fn next_end(&self, pos: u64) -> Option<u64> {
        match self {
            Intervals::None => None,
            Intervals::Every(n) => Some((pos / n + 1) * n),
            Intervals::Ends(ends) => ends.get(ends.partition_point(|&e| e <= pos)).copied(),
        }
    }

    /// Whether an interval ends just before `pos`.
    fn ends_at(&self, pos: u64) -> bool {
        match self {
            Intervals::None => false,
            Intervals::Every(n) => pos.is_multiple_of(*n),
            Intervals::Ends(ends) => ends.binary_search(&pos).is_ok(),
        }
    }
}

/// One (policy, size) run that is fed its trace a chunk at a time: the whole in-memory
/// trace at once, or the pieces of a streamed one. Object-safe, so runs of different
/// policy types sit in one list; inside, the hot loop ([`serve`]) is monomorphic.
pub trait ChunkRun: Send {
    /// Serves the next chunk (its [`CompactTrace::base`] says where it starts).
    fn serve_chunk(&mut self, chunk: &CompactTrace, progress: &(dyn Fn(u64) + Sync));
    /// The counters after warm-up, those of each interval (the last may be partial), and
    /// the prefetcher's after warm-up.
    fn finish(self: Box<Self>) -> (Counts, Vec<Counts>, PrefetchStats);
}

struct Runner<P: Policy> {
    cache: Cache<P, policy::DenseIndex>,
    ignore_size: bool,
    schedule: Schedule,
    /// Next-access times of the whole trace, for offline policies (in memory only).
    future: Option<std::sync::Arc<[u64]>>,
    total: Counts,
    intervals: Vec<Counts>,
    current: Counts,
    /// The prefetcher's counts when warm-up ended.
    prefetch_at_warmup: PrefetchStats,
}

impl<P: Policy + Send> ChunkRun for Runner<P> {
    fn serve_chunk(&mut self, chunk: &CompactTrace, progress: &(dyn Fn(u64) + Sync)) {
        let base = chunk.base();
        let end = base + chunk.len() as u64;
        let mut pos = base;
        while pos < end {
            // The next place where counting changes: warm-up's end or an interval's end.
            let mut stop = end;
            if pos < self.schedule.warmup {
                stop = stop.min(self.schedule.warmup);
            }
            if let Some(next) = self.schedule.interval.next_end(pos) {
                stop = stop.min(next);
            }
            if pos == self.schedule.warmup {
                self.prefetch_at_warmup = self.cache.prefetch_stats();
            }
            let mut piece = Counts::default();
            let range = (pos - base) as usize..(stop - base) as usize;
            let future = self.future.as_deref();
            serve(
                &mut self.cache,
                chunk,
                range,
                self.ignore_size,
                future,
                &mut piece,
                progress,
            );
            if pos >= self.schedule.warmup {
                self.total.add(&piece);
            }
            self.current.add(&piece);
            pos = stop;
            if self.schedule.interval.ends_at(pos) {
                self.intervals.push(std::mem::take(&mut self.current));
            }
        }
    }

    fn finish(self: Box<Self>) -> (Counts, Vec<Counts>, PrefetchStats) {
        let prefetch = self.cache.prefetch_stats().since(&self.prefetch_at_warmup);
        let mut intervals = self.intervals;
        if self.schedule.interval.is_some() && self.current.requests > 0 {
            intervals.push(self.current);
        }
        (self.total, intervals, prefetch)
    }
}

/// Builds a [`Runner`] for the concrete policy type handed over by [`AnyPolicy::visit`].
///
/// [`AnyPolicy::visit`]: policy::AnyPolicy::visit
struct MakeRunner {
    admission: Admitter,
    prefetcher: Option<Prefetcher>,
    capacity: u64,
    key_space: usize,
    ignore_size: bool,
    schedule: Schedule,
    future: Option<std::sync::Arc<[u64]>>,
}

impl PolicyVisitor for MakeRunner {
    type Output = Box<dyn ChunkRun>;
    fn visit<P: Policy + Clone + Send + 'static>(self, policy: P) -> Box<dyn ChunkRun> {
        let future = if policy.needs_future() {
            self.future
        } else {
            None
        };
        let mut cache = Cache::with_index(
            policy,
            self.capacity,
            policy::DenseIndex::new(self.key_space),
        )
        .with_admission(self.admission);
        if let Some(p) = self.prefetcher {
            cache = cache.with_prefetch(p);
        }
        Box::new(Runner {
            cache,
            ignore_size: self.ignore_size,
            schedule: self.schedule,
            future,
            total: Counts::default(),
            intervals: Vec::new(),
            current: Counts::default(),
            prefetch_at_warmup: PrefetchStats::default(),
        })
    }
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.requests += o.requests;
        self.hits += o.hits;
        self.bytes_requested += o.bytes_requested;
        self.bytes_missed += o.bytes_missed;
    }
}

/// What a replay runs: every policy at every size, each run behind its own admission
/// filter built from one spec (and one seed, so runs stay independent and repeatable),
/// counted on one schedule.
#[derive(Clone)]
pub struct Grid<'a> {
    /// The policies, in output order.
    pub policies: &'a [PolicySpec],
    /// The sizes, in output order within each policy.
    pub sizes: &'a [CacheSize],
    /// The admission filter in front of every run (`always` admits everything).
    pub admission: &'a AdmissionSpec,
    /// The prefetcher beside every run, if any.
    pub prefetch: Option<&'a PrefetchSpec>,
    /// Sizes or units, and the seed.
    pub options: ReplayOptions,
    /// Warm-up and intervals.
    pub schedule: Schedule,
}

/// One job of a replay before it runs.
pub struct Job {
    /// The policy as written.
    pub policy: String,
    /// The size as written.
    pub size: String,
    /// Resolved capacity in units.
    pub capacity: u64,
    run: Box<dyn ChunkRun>,
    wall_s: f64,
}

/// Builds every (policy, size) run over a trace of this working set and key space, so a
/// bad parameter or size fails before any request is served. `future` is the trace's
/// next-access times, needed by offline policies: `None` refuses them
/// ([`ReplayError::NeedsFuture`]). `originals` are the original keys of the dense ids,
/// which a prefetcher needs to know what comes next.
pub fn plan(
    grid: &Grid<'_>,
    working_set: crate::size::WorkingSet,
    key_space: usize,
    future: Option<&dyn Fn() -> std::sync::Arc<[u64]>>,
    originals: &[u64],
) -> Result<Vec<Job>, ReplayError> {
    let Grid {
        policies,
        sizes,
        admission,
        prefetch,
        options,
        ref schedule,
    } = *grid;
    let prefetcher = match prefetch {
        None => None,
        Some(spec) => {
            let refuse = |reason: String| ReplayError::Prefetch {
                prefetch: spec.label(),
                reason,
            };
            let built = spec.build().map_err(|e| refuse(e.to_string()))?;
            let table = Successors::from_originals(originals, built.depth());
            Some((built, std::sync::Arc::new(table)))
        }
    };
    // Prefetched objects the trace never requests need ids of their own.
    let key_space = prefetcher
        .as_ref()
        .map_or(key_space, |(_, t)| t.key_space().max(key_space));
    let mut jobs = Vec::with_capacity(policies.len() * sizes.len());
    let mut shared_future: Option<std::sync::Arc<[u64]>> = None;
    for spec in policies {
        for size in sizes {
            let capacity = size.resolve(options.ignore_size, working_set)?;
            let ctx = BuildContext::new(capacity, options.seed).with_key_space(key_space as u64);
            let built = spec.build(&ctx).map_err(|error| ReplayError::Policy {
                policy: spec.label(),
                size: size.text.clone(),
                error: Box::new(error),
            })?;
            let filter = admission
                .build(&ctx)
                .map_err(|error| ReplayError::Admission {
                    admission: admission.label(),
                    error: Box::new(error),
                })?;
            let needs = built.needs_future();
            if needs && shared_future.is_none() {
                let f = future.ok_or_else(|| ReplayError::NeedsFuture {
                    policy: spec.label(),
                })?;
                shared_future = Some(f());
            }
            let run = built.visit(MakeRunner {
                admission: filter,
                prefetcher: prefetcher
                    .as_ref()
                    .map(|(p, t)| p.clone().with_successors(t.clone())),
                capacity,
                key_space,
                ignore_size: options.ignore_size,
                schedule: schedule.clone(),
                future: if needs { shared_future.clone() } else { None },
            });
            jobs.push(Job {
                policy: spec.label(),
                size: size.text.clone(),
                capacity,
                run,
                wall_s: 0.0,
            });
        }
    }
    Ok(jobs)
}

/// Serves one chunk through every job, in parallel.
pub fn feed(jobs: &mut [Job], chunk: &CompactTrace, progress: &(dyn Fn(u64) + Sync)) {
    jobs.par_iter_mut().for_each(|j| {
        let start = Instant::now();
        j.run.serve_chunk(chunk, progress);
        j.wall_s += start.elapsed().as_secs_f64();
    });
}

/// The results of the jobs, in their order.
pub fn results(jobs: Vec<Job>) -> Vec<RunResult> {
    jobs.into_iter()
        .map(|j| {
            let (counts, intervals, prefetch) = j.run.finish();
            RunResult {
                policy: j.policy,
                size: j.size,
                capacity: j.capacity,
                counts,
                intervals,
                prefetch,
                wall_s: j.wall_s,
            }
        })
        .collect()
}

/// Replay `trace` through every policy at every size, in parallel; results in job order
/// (for each policy, every size). Every policy is built before any run starts, so a bad
/// parameter or size fails fast.
pub fn replay(
    trace: &CompactTrace,
    policies: &[PolicySpec],
    sizes: &[CacheSize],
    options: ReplayOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RunResult>, ReplayError> {
    let always = AdmissionSpec::parse("always").expect("`always` parses");
    replay_admitted(trace, policies, sizes, &always, options, progress)
}

/// [`replay()`] with an admission filter in front of every policy; each run gets its own
/// filter, built from the same seed, so runs stay independent.
pub fn replay_admitted(
    trace: &CompactTrace,
    policies: &[PolicySpec],
    sizes: &[CacheSize],
    admission: &AdmissionSpec,
    options: ReplayOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RunResult>, ReplayError> {
    let grid = Grid {
        policies,
        sizes,
        admission,
        prefetch: None,
        options,
        schedule: Schedule::default(),
    };
    replay_scheduled(trace, &grid, progress)
}

/// The general in-memory replay: [`replay_admitted`] with a warm-up and intervals.
pub fn replay_scheduled(
    trace: &CompactTrace,
    grid: &Grid<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RunResult>, ReplayError> {
    let future = || std::sync::Arc::<[u64]>::from(trace.next_access());
    let mut jobs = plan(
        grid,
        trace.working_set(),
        trace.key_space(),
        Some(&future),
        trace.originals(),
    )?;
    feed(&mut jobs, trace, progress);
    Ok(results(jobs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::{Op, Request};

    fn trace_of(keys: &[(u64, u32, Op)]) -> CompactTrace {
        let reqs: Vec<Request> = keys
            .iter()
            .map(|&(key, size, op)| Request {
                key,
                size,
                op,
                ..Request::default()
            })
            .collect();
        CompactTrace::from_requests(&reqs)
    }

    /// Keys 1 2 1 3 1 2, key k of size k * `unit` bytes.
    fn one_two_one_three(unit: u32) -> CompactTrace {
        let keys: Vec<(u64, u32, Op)> = [1u64, 2, 1, 3, 1, 2]
            .iter()
            .map(|&k| (k, k as u32 * unit, Op::Read))
            .collect();
        trace_of(&keys)
    }

    fn specs(names: &[&str]) -> Vec<PolicySpec> {
        names
            .iter()
            .map(|n| PolicySpec::parse(n).unwrap())
            .collect()
    }

    #[test]
    fn lru_and_fifo_by_hand_in_unit_mode() {
        // Capacity 2: 1 2 1 3 1 2.
        // LRU: m m h m(evict 2) h m(evict 3)          -> 2 hits.
        // FIFO: m m h m(evict 1) m(evict 2) m(evict 3) -> 1 hit.
        let t = one_two_one_three(100);
        let opts = ReplayOptions {
            ignore_size: true,
            seed: 1,
        };
        let r = replay(
            &t,
            &specs(&["lru", "fifo"]),
            &[CacheSize::units(2)],
            opts,
            &|_| {},
        )
        .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].policy.as_str(), r[0].counts.hits), ("lru", 2));
        assert_eq!(r[0].counts.bytes_missed, 100 + 200 + 300 + 200);
        assert_eq!(r[0].counts.bytes_requested, 1000);
        assert_eq!((r[1].policy.as_str(), r[1].counts.hits), ("fifo", 1));
        assert_eq!(r[1].counts.bytes_missed, 900);
        assert_eq!(r[1].misses(), 5);
    }

    #[test]
    fn byte_mode_counts_bytes_and_deletes_are_not_requests() {
        // Capacity 300 bytes, LRU. 1(100) 2(200) 1 del(1) 1 3(100) 2
        // 1 m, 2 m (300 used), 1 h, delete 1 (200 used), 1 m (300), 3 m evicts LRU=2... order
        // after "1 m": LRU order oldest-first 2,1 -> 3 needs 100, evicts 2 -> 2 then misses.
        let t = trace_of(&[
            (1, 100, Op::Read),
            (2, 200, Op::Read),
            (1, 100, Op::Read),
            (1, 100, Op::Delete),
            (1, 100, Op::Read),
            (3, 100, Op::Read),
            (2, 200, Op::Read),
        ]);
        let opts = ReplayOptions::default();
        let r = replay(
            &t,
            &specs(&["lru"]),
            &[CacheSize::units(300)],
            opts,
            &|_| {},
        )
        .unwrap();
        let c = r[0].counts;
        assert_eq!(c.requests, 6);
        assert_eq!(c.hits, 1);
        assert_eq!(c.bytes_missed, 100 + 200 + 100 + 100 + 200);
        assert_eq!(r[0].capacity, 300);
    }

    #[test]
    fn fractions_resolve_and_bad_inputs_fail_before_running() {
        let t = trace_of(&[
            (1, 1, Op::Read),
            (2, 1, Op::Read),
            (3, 1, Op::Read),
            (4, 1, Op::Read),
        ]);
        let opts = ReplayOptions {
            ignore_size: true,
            seed: 0,
        };
        let half = CacheSize::parse("0.5").unwrap();
        let r = replay(
            &t,
            &specs(&["lru"]),
            std::slice::from_ref(&half),
            opts,
            &|_| {},
        )
        .unwrap();
        assert_eq!((r[0].capacity, r[0].size.as_str()), (2, "0.5"));
        assert!(matches!(
            replay(
                &t,
                &specs(&["nosuch"]),
                std::slice::from_ref(&half),
                opts,
                &|_| {}
            ),
            Err(ReplayError::Policy { .. })
        ));
        let bytes = CacheSize::parse("1MiB").unwrap();
        assert!(matches!(
            replay(&t, &specs(&["lru"]), &[bytes], opts, &|_| {}),
            Err(ReplayError::Size(SizeError::BytesInUnitMode { .. }))
        ));
    }

    #[test]
    fn warmup_and_intervals_by_hand() {
        // LRU at 2 over 1 2 1 3 1 2: m m h m h m (sizes do not matter in unit mode).
        let t = one_two_one_three(1);
        let opts = ReplayOptions {
            ignore_size: true,
            seed: 0,
        };
        let schedule = Schedule {
            warmup: 2,
            interval: Intervals::Every(4),
        };
        let always = AdmissionSpec::parse("always").unwrap();
        let grid = Grid {
            policies: &specs(&["lru"]),
            sizes: &[CacheSize::units(2)],
            admission: &always,
            prefetch: None,
            options: opts,
            schedule,
        };
        let r = replay_scheduled(&t, &grid, &|_| {}).unwrap();
        // Counted after the first two: h m h m.
        assert_eq!((r[0].counts.requests, r[0].counts.hits), (4, 2));
        // Intervals [0, 4): m m h m; [4, 6): h m.
        let iv: Vec<(u64, u64)> = r[0]
            .intervals
            .iter()
            .map(|c| (c.requests, c.hits))
            .collect();
        assert_eq!(iv, [(4, 1), (2, 1)]);
        // No schedule: the whole trace, no intervals.
        let r = replay(&t, &specs(&["lru"]), &[CacheSize::units(2)], opts, &|_| {}).unwrap();
        assert_eq!((r[0].counts.requests, r[0].counts.hits), (6, 2));
        assert!(r[0].intervals.is_empty());
    }

    #[test]
    fn progress_adds_up_to_the_requests() {
        let reqs: Vec<Request> = (0..200_000u64)
            .map(|i| Request {
                key: i % 1000,
                size: 1,
                ..Request::default()
            })
            .collect();
        let t = CompactTrace::from_requests(&reqs);
        let done = std::sync::atomic::AtomicU64::new(0);
        let sizes = [CacheSize::units(10), CacheSize::units(100)];
        let opts = ReplayOptions::default();
        replay(&t, &specs(&["lru", "fifo"]), &sizes, opts, &|n| {
            done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(done.into_inner(), 4 * 200_000);
    }
}
