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
    PolicySpec, NEVER,
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
        /// Why (in the message, not as a separate source, so it is printed once).
        error: ConfigError,
    },
    /// The admission filter could not be built.
    #[error("admission `{admission}`: {error}")]
    Admission {
        /// The filter as written.
        admission: String,
        /// Why.
        error: ConfigError,
    },
    /// A size could not be resolved.
    #[error(transparent)]
    Size(#[from] SizeError),
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
    /// Counters.
    pub counts: Counts,
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
            time: i as u64,
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

/// Runs one whole replay on the concrete policy type handed over by [`AnyPolicy::visit`].
///
/// [`AnyPolicy::visit`]: policy::AnyPolicy::visit
struct WholeRun<'a> {
    trace: &'a CompactTrace,
    capacity: u64,
    admission: Admitter,
    ignore_size: bool,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl PolicyVisitor for WholeRun<'_> {
    type Output = Counts;
    fn visit<P: Policy + Clone + Send>(self, policy: P) -> Counts {
        let future = policy.needs_future().then(|| self.trace.next_access());
        let mut cache = Cache::with_index(policy, self.capacity, self.trace.dense_index())
            .with_admission(self.admission);
        let mut counts = Counts::default();
        serve(
            &mut cache,
            self.trace,
            0..self.trace.len(),
            self.ignore_size,
            future,
            &mut counts,
            self.progress,
        );
        counts
    }
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
    let mut jobs = Vec::with_capacity(policies.len() * sizes.len());
    for spec in policies {
        for size in sizes {
            let capacity = size.resolve(options.ignore_size, trace.working_set())?;
            let ctx =
                BuildContext::new(capacity, options.seed).with_key_space(trace.key_space() as u64);
            let built = spec.build(&ctx).map_err(|error| ReplayError::Policy {
                policy: spec.label(),
                size: size.text.clone(),
                error,
            })?;
            let filter = admission
                .build(&ctx)
                .map_err(|error| ReplayError::Admission {
                    admission: admission.label(),
                    error,
                })?;
            jobs.push((spec.label(), size.text.clone(), capacity, built, filter));
        }
    }
    Ok(jobs
        .into_par_iter()
        .map(|(policy, size, capacity, built, filter)| {
            let start = Instant::now();
            let counts = built.visit(WholeRun {
                trace,
                capacity,
                admission: filter,
                ignore_size: options.ignore_size,
                progress,
            });
            RunResult {
                policy,
                size,
                capacity,
                counts,
                wall_s: start.elapsed().as_secs_f64(),
            }
        })
        .collect())
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
        let t = trace_of(&[
            (1, 100, Op::Read),
            (2, 200, Op::Read),
            (1, 100, Op::Read),
            (3, 300, Op::Read),
            (1, 100, Op::Read),
            (2, 200, Op::Read),
        ]);
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
