//! The results of the pool benchmark: one [`PoolRow`] per measurement (a JSON line or a
//! table row), built from a [`Measured`] run, and the arithmetic on them.

use serde::Serialize;

use super::options::{Plan, PoolBench};

/// One measurement. Field names and order are those of `bufcache bench pool --json`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct PoolRow {
    /// The benchmark's name.
    pub bench: &'static str,
    /// mapped, hashed (the pool with that lookup), pread, mmap.
    pub scheme: &'static str,
    /// How the data reaches the reader: `cached` (resident before the run), `direct`
    /// (O_DIRECT, from the device), `buffered` (through the OS page cache).
    pub io: &'static str,
    /// How the scheme did it where the pool has several ways: `pin` (pin and unpin),
    /// `optimistic` (a version-checked copy, no pin: `BufferPool::read_optimistic`), and
    /// either through a page hint held per page (`pin-hinted`, `optimistic-hinted`:
    /// `BufferPool::pin_hinted`, `BufferPool::read_hinted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<&'static str>,
    /// Bytes per operation.
    pub transfer_bytes: u64,
    /// Threads measured together.
    pub threads: usize,
    /// random-evict: reads in flight each thread asked for (`--in-flight`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<usize>,
    /// random-evict: device reads per read call the scheme actually issued (raw `pread`:
    /// one per thread; the pool: pages per prefetch submission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads_per_call: Option<f64>,
    /// Operations per second, all threads together.
    pub ops_per_s: f64,
    /// Wall time of one operation on one thread.
    pub ns_per_op: f64,
    /// Bytes copied per second (0 where nothing is copied).
    pub bytes_per_s: f64,
    /// Bytes of file the operations are spread over.
    pub working_set_bytes: u64,
    /// The pool's size, for the pool's schemes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_bytes: Option<u64>,
    /// scan: the pool's read-ahead depth, pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_pages: Option<u32>,
    /// Fraction of the pool's page lookups that missed (random-evict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub miss_ratio: Option<f64>,
    /// Device (or page-cache) reads per second the scheme issued (random-evict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads_per_s: Option<f64>,
    /// The measurement `ratio` compares with, as `scheme/io`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to: Option<String>,
    /// This measurement over `ratio_to`: operations per second for xmf-read; for
    /// random-evict the median over runs of the pool's reads per second over raw `pread`'s
    /// in the run just before (how close the pool's miss path comes to the raw file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// random-evict: each run's ratio (pool reads/s over the raw reads/s of the run just
    /// before it); `ratio` is their median.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ratio_runs: Vec<f64>,
    /// Runs measured; the best is reported.
    pub runs: u32,
    /// Seed of the random offsets.
    pub seed: u64,
}

impl PoolRow {
    /// A row of `bench` for `scheme` over `io`, from the best run `m`; the fields only
    /// some benchmarks have are left empty for the caller to fill.
    pub(crate) fn new(
        bench: PoolBench,
        (scheme, io): (&'static str, &'static str),
        transfer_bytes: u64,
        threads: usize,
        m: Measured,
        plan: &Plan,
    ) -> PoolRow {
        PoolRow {
            bench: bench.name(),
            scheme,
            io,
            variant: None,
            transfer_bytes,
            threads,
            in_flight: None,
            reads_per_call: m.reads_per_call,
            ops_per_s: m.ops_per_s,
            ns_per_op: if m.ops_per_s > 0.0 {
                threads as f64 * 1e9 / m.ops_per_s
            } else {
                f64::INFINITY
            },
            bytes_per_s: m.ops_per_s * transfer_bytes as f64,
            working_set_bytes: 0,
            pool_bytes: None,
            read_ahead_pages: None,
            miss_ratio: None,
            reads_per_s: None,
            ratio_to: None,
            ratio: None,
            ratio_runs: Vec::new(),
            runs: plan.repeat,
            seed: plan.seed,
        }
    }
}

/// Result of one timed run (or the best of several).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Measured {
    pub ops_per_s: f64,
    /// Device or page-cache reads per second, where the scheme can count them.
    pub reads_per_s: Option<f64>,
    pub miss_ratio: Option<f64>,
    pub reads_per_call: Option<f64>,
}

impl Measured {
    /// A run that only counted operations.
    pub fn ops(ops_per_s: f64) -> Measured {
        Measured {
            ops_per_s,
            ..Measured::default()
        }
    }

    /// The faster of two runs (the earlier one on a tie).
    pub fn best(self, other: Measured) -> Measured {
        if other.ops_per_s > self.ops_per_s {
            other
        } else {
            self
        }
    }
}

/// The median of `xs` (the mean of the middle two for an even count); `None` when empty.
pub(crate) fn median(xs: &[f64]) -> Option<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::options::{options, Scale};

    fn plan() -> Plan {
        let mut o = options(Scale::Tiny);
        o.seed = 9;
        o.repeat = Some(4);
        Plan::new(&o).unwrap()
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[0.7]), Some(0.7));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn best_keeps_the_faster_run_and_the_first_on_a_tie() {
        let a = Measured {
            ops_per_s: 10.0,
            miss_ratio: Some(0.5),
            ..Measured::default()
        };
        let b = Measured::ops(20.0);
        assert_eq!(a.best(b), b);
        assert_eq!(b.best(a), b);
        let tie = Measured::ops(10.0);
        assert_eq!(a.best(tie), a);
    }

    #[test]
    fn a_row_derives_time_per_operation_and_bandwidth() {
        // 2 threads together at 4 M ops/s: each operation takes 500 ns of one thread;
        // 64 bytes each is 256 MB/s.
        let r = PoolRow::new(
            PoolBench::XmfRead,
            ("mapped", "cached"),
            64,
            2,
            Measured::ops(4e6),
            &plan(),
        );
        assert_eq!(r.bench, "xmf-read");
        assert_eq!(r.ns_per_op, 500.0);
        assert_eq!(r.bytes_per_s, 256e6);
        assert_eq!((r.runs, r.seed), (4, 9));
        let none = PoolRow::new(
            PoolBench::Scan,
            ("pread", "direct"),
            4096,
            1,
            Measured::default(),
            &plan(),
        );
        assert_eq!(none.ns_per_op, f64::INFINITY);
    }

    #[test]
    fn json_leaves_out_the_fields_a_benchmark_does_not_have() {
        let mut r = PoolRow::new(
            PoolBench::PinHit,
            ("hashed", "cached"),
            4096,
            1,
            Measured::ops(1e6),
            &plan(),
        );
        r.working_set_bytes = 8192;
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            concat!(
                r#"{"bench":"pin-hit","scheme":"hashed","io":"cached","transfer_bytes":4096,"#,
                r#""threads":1,"ops_per_s":1000000.0,"ns_per_op":1000.0,"#,
                r#""bytes_per_s":4096000000.0,"working_set_bytes":8192,"runs":4,"seed":9}"#
            )
        );
    }
}
