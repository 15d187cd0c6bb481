//! Single-threaded throughput: how many requests per second a policy serves, and how fast
//! a trace file can be read.
//!
//! Replay throughput is measured on one thread over a trace already in memory, so it
//! shows the cost of the policy and of [`policy::Cache`]'s map, not of I/O or of rayon.
//! Each measurement first warms up (a throwaway replay of the first tenth of the trace, at
//! most [`WARMUP_MAX`] requests, to fault in the trace's pages and train caches and branch
//! predictors), then times one full replay into a fresh cache. Timings are reported, never
//! asserted.

use std::path::Path;
use std::time::Instant;

use policy::registry::PolicyVisitor;
use policy::{BuildContext, Cache, Policy, PolicySpec};

use trace::{Format, ReadOptions, Request, TraceError};

use crate::compact::CompactTrace;
use crate::replay::{serve, Counts, ReplayError};

/// Default number of requests of the benchmark workload.
pub const DEFAULT_REQUESTS: u64 = 20_000_000;
/// Default number of distinct keys of the benchmark workload.
pub const DEFAULT_KEYS: u64 = 1_000_000;
/// Default Zipf exponent of the benchmark workload.
pub const DEFAULT_ALPHA: f64 = 1.0;
/// Default seed of the benchmark workload.
pub const DEFAULT_SEED: u64 = 42;
/// Default cache size as a fraction of the distinct keys.
pub const DEFAULT_FRACTION: f64 = 0.1;
/// Upper bound on warm-up requests.
pub const WARMUP_MAX: usize = 2_000_000;

/// One policy's replay throughput.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    /// The policy as written.
    pub policy: String,
    /// Cache size in units.
    pub capacity: u64,
    /// Requests timed.
    pub requests: u64,
    /// Seconds of the timed replay.
    pub seconds: f64,
    /// `requests / seconds`.
    pub requests_per_s: f64,
    /// Miss ratio of the timed replay.
    pub miss_ratio: f64,
}

struct Timed<'a> {
    trace: &'a CompactTrace,
    capacity: u64,
    ignore_size: bool,
}

impl PolicyVisitor for Timed<'_> {
    type Output = (Counts, f64);
    fn visit<P: Policy + Clone + Send>(self, policy: P) -> (Counts, f64) {
        let future = policy.needs_future().then(|| self.trace.next_access());
        let warm = (self.trace.len() / 10).min(WARMUP_MAX);
        let mut scratch =
            Cache::with_index(policy.clone(), self.capacity, self.trace.dense_index());
        let mut ignored = Counts::default();
        serve(
            &mut scratch,
            self.trace,
            0..warm,
            self.ignore_size,
            future,
            &mut ignored,
            &|_| {},
        );
        drop(scratch);
        let mut cache = Cache::with_index(policy, self.capacity, self.trace.dense_index());
        let mut counts = Counts::default();
        let start = Instant::now();
        serve(
            &mut cache,
            self.trace,
            0..self.trace.len(),
            self.ignore_size,
            future,
            &mut counts,
            &|_| {},
        );
        (counts, start.elapsed().as_secs_f64())
    }
}

/// Time one policy over `trace` on the calling thread.
pub fn replay_throughput(
    trace: &CompactTrace,
    spec: &PolicySpec,
    capacity: u64,
    ignore_size: bool,
    seed: u64,
) -> Result<BenchResult, ReplayError> {
    let built = spec
        .build(&BuildContext::new(capacity, seed).with_key_space(trace.key_space() as u64))
        .map_err(|error| ReplayError::Policy {
            policy: spec.label(),
            size: capacity.to_string(),
            error,
        })?;
    let (counts, seconds) = built.visit(Timed {
        trace,
        capacity,
        ignore_size,
    });
    Ok(BenchResult {
        policy: spec.label(),
        capacity,
        requests: counts.requests,
        seconds,
        requests_per_s: per_second(counts.requests, seconds),
        miss_ratio: counts.miss_ratio(),
    })
}

/// How fast a trace file reads.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadResult {
    /// Records read.
    pub records: u64,
    /// Seconds.
    pub seconds: f64,
    /// `records / seconds`.
    pub records_per_s: f64,
}

/// Read `path` start to end in batches, twice (the first pass warms the OS page cache and
/// is not timed), and time the second pass.
pub fn read_throughput(
    path: &Path,
    format: Option<Format>,
    options: &ReadOptions,
) -> Result<ReadResult, TraceError> {
    let mut batch = vec![Request::default(); 4096];
    let mut pass = || -> Result<(u64, f64), TraceError> {
        let start = Instant::now();
        let mut reader = trace::open(path, format, options)?;
        let mut records = 0u64;
        loop {
            let n = reader.read_batch(&mut batch)?;
            if n == 0 {
                break;
            }
            records += n as u64;
        }
        Ok((records, start.elapsed().as_secs_f64()))
    };
    pass()?;
    let (records, seconds) = pass()?;
    Ok(ReadResult {
        records,
        seconds,
        records_per_s: per_second(records, seconds),
    })
}

fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_a_plain_replay() {
        // Throughput numbers are not asserted; the miss ratio and request count are.
        let reqs: Vec<Request> = (0..10_000u64)
            .map(|i| Request {
                key: (i * 7) % 100,
                size: 1,
                ..Request::default()
            })
            .collect();
        let t = CompactTrace::from_requests(&reqs);
        let lru = PolicySpec::parse("lru").unwrap();
        let b = replay_throughput(&t, &lru, 50, true, 0).unwrap();
        let r = crate::replay(
            &t,
            std::slice::from_ref(&lru),
            &[crate::CacheSize::units(50)],
            crate::ReplayOptions {
                ignore_size: true,
                seed: 0,
            },
            &|_| {},
        )
        .unwrap();
        assert_eq!(b.requests, 10_000);
        assert_eq!(b.miss_ratio, r[0].miss_ratio());
        // A cyclic scan over 100 keys in a 50-object LRU misses every time.
        assert_eq!(b.miss_ratio, 1.0);
    }
}

/// Throughput of the discrete-event simulator on one case.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DesBenchResult {
    /// The case's name.
    pub case: String,
    /// Events handled in one run.
    pub events: u64,
    /// Seconds of the fastest of the runs.
    pub seconds: f64,
    /// Events per second of the fastest run, one thread.
    pub events_per_s: f64,
}

/// The simulator's benchmark cases, scaled by `scale` (1 = default size): Burnett's
/// TPC-B-like transactions with asynchronous graphs (the ordering machinery), Kotz & Ellis
/// `gw` with quarter-block records under WriteFull (many small writes, 20 processes, 20
/// disks), `lw1` under WriteBack (the scan cleaner at work), and the XMF temporary-file
/// workload with the clock daemon.
pub fn des_cases(
    scale: u64,
) -> Vec<(
    String,
    crate::des::config::SystemConfig,
    crate::des::ops::Workload,
)> {
    use crate::des::config::WritePolicy;
    use crate::des::kotz::{KotzWorkload, Pattern};
    use crate::experiments::{kotz_ellis, xmf_cleaning};
    let blocks = 40_000 * scale;
    let gw = KotzWorkload {
        pattern: Pattern::Gw,
        record_blocks: 0.25,
        total_blocks: blocks,
        ..Default::default()
    };
    let lw1 = KotzWorkload {
        pattern: Pattern::Lw1,
        total_blocks: blocks,
        ..Default::default()
    };
    let xmf = crate::des::xmf::XmfWorkload {
        jobs: (20 * scale) as u32,
        ..Default::default()
    };
    let tpcb = crate::des::tpcb::TpcbWorkload {
        mechanism: crate::des::tpcb::Mechanism::Graph,
        transactions: 10_000 * scale as u32,
        ..Default::default()
    };
    vec![
        (
            format!(
                "burnett tpc-b graphs c-look, {} transactions",
                tpcb.transactions
            ),
            crate::experiments::burnett_ordering::system(
                crate::experiments::burnett_ordering::CACHE_PAGES,
                crate::des::disk::Scheduler::Clook,
                &tpcb,
            ),
            tpcb.build(),
        ),
        (
            format!("kotz gw writefull 1/4-block records, {blocks} blocks"),
            kotz_ellis::base_system(80, WritePolicy::WriteFull),
            gw.build(),
        ),
        (
            format!("kotz lw1 writeback, {blocks} blocks"),
            kotz_ellis::base_system(80, WritePolicy::WriteBack),
            lw1.build(),
        ),
        (
            format!(
                "xmf clock daemon, 768 buffers, {} jobs x 8 processes",
                xmf.jobs
            ),
            xmf_cleaning::system(768, "clock", crate::des::config::Cleaner::Daemon),
            xmf.build(),
        ),
    ]
}

/// Run one simulator case `runs` times and keep the fastest.
pub fn des_throughput(
    case: &str,
    system: &crate::des::config::SystemConfig,
    workload: &crate::des::ops::Workload,
    runs: u32,
) -> Result<DesBenchResult, crate::des::RunError> {
    let mut best = f64::INFINITY;
    let mut events = 0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let report = crate::des::simulate(system, workload, DEFAULT_SEED)?;
        best = best.min(start.elapsed().as_secs_f64());
        events = report.events;
    }
    Ok(DesBenchResult {
        case: case.to_string(),
        events,
        seconds: best,
        events_per_s: events as f64 / best,
    })
}
