//! `bufcache bench pool`: the speed of the real buffer pool (`bufcache-pool`) against the
//! operating system's own ways of reading a file.
//!
//! Four benchmarks, each a family of measurements (one [`PoolRow`] each):
//!
//! - **xmf-read** — XMF's micro-benchmark (Braunstein, Riley, Wilkes 1989, §5): the cost
//!   of reading data that is already cached, for transfers of 4 B to 64 KiB at random
//!   aligned offsets of a file that fits in the cache. Schemes: the pool with the `Mapped`
//!   lookup (a per-file translation table, XMF's address arithmetic), the pool with the
//!   `Hashed` lookup, `pread` of the file from the OS page cache, and a copy out of an
//!   `mmap` of it. The first two isolate the lookup; the last two are what an application
//!   would use without a pool. The pool's schemes are measured with `read` and again with
//!   `read_optimistic` (variant `optimistic`).
//! - **pin-hit** — pin and unpin a random resident page, nothing copied: the pool's hit
//!   path alone (vmcache's `fixS`/`unfixS`; variant `pin`); then an optimistic read of 8
//!   bytes (`read_optimistic`, no pin: vmcache's optimistic read; variant `optimistic`).
//!   Each also through page hints held one per page by each thread (`pin_hinted`,
//!   `read_hinted`: variants `pin-hinted` and `optimistic-hinted`), as an index holding
//!   swizzled pointers would: what compares with vmcache's reads by page id.
//! - **random-evict** — random 4 KiB reads over a file twice the pool, so about half the
//!   reads miss and every miss evicts. (a) `O_DIRECT` from a file dropped from the page
//!   cache, compared with plain `O_DIRECT` `pread` of the same file by the same number of
//!   threads in the same run (the device's rate at that many reads in flight); (b) buffered,
//!   from a file in the page cache, compared with buffered `pread`.
//! - **scan** — one sequential pass over a cold file in 4 KiB reads through a pool a
//!   quarter of its size, with and without read-ahead, next to `pread` with `O_DIRECT`
//!   (no read-ahead at all) and buffered `pread` (the kernel's read-ahead).
//!
//! How it measures (`timing`): every worker thread runs its loop until a stop flag is
//! raised after a fixed duration, and counts its operations; a run's rate is the sum over
//! threads of each thread's operations over its own elapsed time. Each measurement is the
//! best of `repeat` runs, because the machine may be shared and interference only ever
//! slows a run down. Random offsets come from a seeded SplitMix64 stream per thread, turned
//! into a slot number by a multiply-shift (a 64-bit division would cost as much as a
//! pin-hit). Data files live in a temporary directory (`data`; the caller chooses where it
//! is made) and are removed at the end.
//!
//! The modules: [`options`](mod@options) (what to run, checked), `row` (results),
//! `timing`, `data`, `readers` (the OS's ways of reading), `pool_reader` (the pool's), and
//! one module per benchmark.

mod data;
mod options;
mod pin_hit;
mod pool_reader;
mod random_evict;
mod readers;
mod row;
mod scan;
mod timing;
mod xmf_read;

use std::path::Path;

pub use options::{IoKind, OptionsError, Plan, PoolBench, PoolBenchOptions, Scale, Scheme};
pub use row::PoolRow;

use crate::error::BenchError;

/// Page size of every pool in these benchmarks (the pool's default, and the unit XMF,
/// vmcache and the OS page cache all use).
pub const PAGE_BYTES: usize = 4096;
/// One mebibyte: the unit of the size options.
pub const MIB: u64 = 1 << 20;

/// Run every benchmark of `plan` in order, with the data files in a temporary directory
/// made in `dir` (or the system's), calling `on_start` as each benchmark begins.
pub fn run(
    plan: &Plan,
    dir: Option<&Path>,
    mut on_start: impl FnMut(PoolBench),
) -> Result<Vec<PoolRow>, BenchError> {
    let data = data::DataDir::new(dir)?;
    let mut rows = Vec::new();
    for &bench in &plan.benches {
        on_start(bench);
        match bench {
            PoolBench::XmfRead => xmf_read::run(plan, &data, &mut rows)?,
            PoolBench::PinHit => pin_hit::run(plan, &data, &mut rows)?,
            PoolBench::RandomEvict => random_evict::run(plan, &data, &mut rows)?,
            PoolBench::Scan => scan::run(plan, &data, &mut rows)?,
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest whole run: every benchmark of the tiny scale, one thread, one depth,
    /// buffered I/O (tmpfs refuses O_DIRECT); what is checked is the shape of the rows,
    /// never their speed.
    #[test]
    fn a_tiny_run_measures_each_selected_case_once() {
        let mut o = options::options(Scale::Tiny);
        o.threads = vec![1];
        o.in_flight = vec![1];
        o.transfers = vec![64];
        o.ios = vec![IoKind::Buffered];
        o.schemes = vec![Scheme::Mapped, Scheme::Pread];
        o.benches = vec![
            PoolBench::XmfRead,
            PoolBench::PinHit,
            PoolBench::RandomEvict,
        ];
        let plan = Plan::new(&o).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut started = Vec::new();
        let rows = run(&plan, Some(dir.path()), |b| started.push(b)).unwrap();
        assert_eq!(started, plan.benches);
        let described: Vec<(&str, &str, Option<&str>, &str, u64)> = rows
            .iter()
            .map(|r| (r.bench, r.scheme, r.variant, r.io, r.transfer_bytes))
            .collect();
        assert_eq!(
            described,
            [
                ("xmf-read", "mapped", None, "cached", 64),
                ("xmf-read", "mapped", Some("optimistic"), "cached", 64),
                ("xmf-read", "pread", None, "cached", 64),
                ("pin-hit", "mapped", Some("pin"), "cached", 4096),
                ("pin-hit", "mapped", Some("pin-hinted"), "cached", 4096),
                ("pin-hit", "mapped", Some("optimistic"), "cached", 8),
                ("pin-hit", "mapped", Some("optimistic-hinted"), "cached", 8),
                ("random-evict", "mapped", None, "buffered", 4096),
                ("random-evict", "pread", None, "buffered", 4096),
            ]
        );
        assert!(rows.iter().all(|r| r.ops_per_s > 0.0 && r.seed == 42));
        // The mapped xmf-read is compared with pread at the same transfer and threads.
        assert_eq!(rows[0].ratio_to.as_deref(), Some("pread/cached"));
        // The data directory is gone.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
