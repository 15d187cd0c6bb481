//! random-evict: random 4 KiB reads over a file twice the pool, so about half the reads
//! miss and every miss evicts: (a) `O_DIRECT` from a file dropped from the page cache,
//! (b) buffered, from a file in the page cache. Each pool run is next to raw `pread` with
//! the same I/O mode and file, interleaved run by run so both see the same load.

use std::path::Path;

use super::data::{warm_page_cache, DataDir};
use super::options::{IoKind, Plan, PoolBench};
use super::pool_reader::{Lookup, PoolReader};
use super::readers::{random_pages, RawReader};
use super::row::{median, Measured, PoolRow};
use super::PAGE_BYTES;
use crate::error::BenchError;
use crate::os;

/// Measure random-evict into `rows`.
pub(crate) fn run(plan: &Plan, data: &DataDir, rows: &mut Vec<PoolRow>) -> Result<(), BenchError> {
    for &io in &plan.ios {
        let pool_bytes = pool_bytes(plan, io);
        let file_bytes = 2 * pool_bytes;
        let path = data.file(&format!("evict-{}.dat", io.name()), file_bytes)?;
        match io {
            IoKind::Direct => os::drop_from_page_cache(&path)?,
            IoKind::Buffered => warm_page_cache(&path)?,
        }
        let raw = RawReader::open(&path, io)?;
        for &threads in &plan.threads {
            for &depth in &plan.in_flight {
                let point = Point {
                    path: &path,
                    raw: &raw,
                    io,
                    pool_bytes,
                    threads,
                    depth,
                };
                point.measure(plan, rows)?;
            }
        }
    }
    Ok(())
}

/// The pool's size for `io`, in whole pages.
fn pool_bytes(plan: &Plan, io: IoKind) -> u64 {
    let bytes = match io {
        IoKind::Direct => plan.direct_pool_bytes,
        IoKind::Buffered => plan.buffered_pool_bytes,
    };
    bytes / PAGE_BYTES as u64 * PAGE_BYTES as u64
}

/// One random-evict point: `threads` pool threads at `depth` reads in flight each, next
/// to raw `pread` on `threads × depth` threads.
struct Point<'a> {
    path: &'a Path,
    raw: &'a RawReader,
    io: IoKind,
    pool_bytes: u64,
    threads: usize,
    depth: usize,
}

impl Point<'_> {
    fn measure(&self, plan: &Plan, rows: &mut Vec<PoolRow>) -> Result<(), BenchError> {
        let file_bytes = 2 * self.pool_bytes;
        let raw_threads = self.threads * self.depth;
        let mut raw_best = Measured::default();
        let lookups = Lookup::selected(plan);
        let mut pool_best = vec![Measured::default(); lookups.len()];
        // The device's rate drifts from run to run by more than the effect measured, so
        // each pool run is compared with the raw run right before it, and the reported
        // ratio is the median of those paired ratios.
        let mut paired: Vec<Vec<f64>> = vec![Vec::new(); lookups.len()];
        for _ in 0..plan.repeat {
            let ops = random_pages(self.raw, file_bytes, raw_threads, plan)?;
            raw_best = raw_best.best(Measured {
                ops_per_s: ops,
                reads_per_s: Some(ops),
                miss_ratio: None,
                reads_per_call: Some(1.0),
            });
            for (k, &lookup) in lookups.iter().enumerate() {
                let m = PoolReader::evicting(self.path, self.pool_bytes, lookup, self.io)?
                    .measure_random(file_bytes, self.threads, self.depth, plan)?;
                if let Some(reads) = m.reads_per_s {
                    paired[k].push(reads / ops);
                }
                pool_best[k] = pool_best[k].best(m);
            }
        }
        let mut raw_row = PoolRow::new(
            PoolBench::RandomEvict,
            ("pread", self.io.name()),
            PAGE_BYTES as u64,
            raw_threads,
            raw_best,
            plan,
        );
        raw_row.working_set_bytes = file_bytes;
        raw_row.reads_per_s = raw_best.reads_per_s;
        raw_row.in_flight = Some(1);
        for (k, &lookup) in lookups.iter().enumerate() {
            let m = pool_best[k];
            let mut row = PoolRow::new(
                PoolBench::RandomEvict,
                (lookup.scheme(), self.io.name()),
                PAGE_BYTES as u64,
                self.threads,
                m,
                plan,
            );
            row.in_flight = Some(self.depth);
            row.working_set_bytes = file_bytes;
            row.pool_bytes = Some(self.pool_bytes);
            row.miss_ratio = m.miss_ratio;
            row.reads_per_s = m.reads_per_s;
            row.ratio_to = Some(format!("pread/{}", self.io.name()));
            row.ratio = median(&paired[k]);
            row.ratio_runs = paired[k].clone();
            rows.push(row);
        }
        rows.push(raw_row);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::options::{options, Scale};

    #[test]
    fn pools_are_whole_pages_of_the_size_for_their_io_mode() {
        let mut plan = Plan::new(&options(Scale::Quick)).unwrap();
        assert_eq!(pool_bytes(&plan, IoKind::Direct), 8 << 20);
        assert_eq!(pool_bytes(&plan, IoKind::Buffered), 32 << 20);
        plan.direct_pool_bytes = 5 * 4096 + 1;
        assert_eq!(pool_bytes(&plan, IoKind::Direct), 5 * 4096);
    }
}
