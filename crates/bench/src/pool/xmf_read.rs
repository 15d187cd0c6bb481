//! xmf-read: XMF's micro-benchmark (Braunstein, Riley, Wilkes 1989, §5), the cost of
//! reading data already cached, for every transfer size and thread count and each scheme;
//! then each scheme's rate over `pread`'s at the same transfer and threads. The pool is
//! measured twice: with `read` (a pin around the copy) and `read_optimistic` (a
//! version-checked copy, no pin; variant `optimistic`).

use super::data::{warm_page_cache, DataDir};
use super::options::{Plan, PoolBench, Scheme};
use super::pool_reader::{Lookup, Optimistic, PoolReader};
use super::readers::{random_reads, MmapCopy, Pread};
use super::row::{Measured, PoolRow};
use super::timing::best_of;
use crate::error::BenchError;
use crate::os;

/// Measure xmf-read into `rows`.
pub(crate) fn run(plan: &Plan, data: &DataDir, rows: &mut Vec<PoolRow>) -> Result<(), BenchError> {
    let bytes = plan.cached_bytes;
    let path = data.file("cached.dat", bytes)?;
    warm_page_cache(&path)?;
    let first = rows.len();
    let mut record = |scheme,
                      variant,
                      reader: &dyn Fn(usize, usize) -> Result<f64, BenchError>|
     -> Result<(), BenchError> {
        for &transfer in &plan.transfers {
            for &threads in &plan.threads {
                let m = best_of(plan, || Ok(Measured::ops(reader(transfer, threads)?)))?;
                let mut row = PoolRow::new(
                    PoolBench::XmfRead,
                    (scheme, "cached"),
                    transfer as u64,
                    threads,
                    m,
                    plan,
                );
                row.working_set_bytes = bytes;
                row.variant = variant;
                rows.push(row);
            }
        }
        Ok(())
    };
    for lookup in Lookup::selected(plan) {
        let reader = PoolReader::cached(&path, bytes, lookup)?;
        record(lookup.scheme(), None, &|t, n| {
            random_reads(&reader, bytes, t, n, plan)
        })?;
        let optimistic = Optimistic(&reader);
        record(lookup.scheme(), Some("optimistic"), &|t, n| {
            random_reads(&optimistic, bytes, t, n, plan)
        })?;
    }
    let file = os::open(&path)?;
    if plan.measures(Scheme::Pread) {
        let pread = Pread(
            file.try_clone()
                .map_err(|e| BenchError::io("cannot duplicate the file handle", e))?,
        );
        record("pread", None, &|t, n| {
            random_reads(&pread, bytes, t, n, plan)
        })?;
    }
    if plan.measures(Scheme::Mmap) {
        let map = MmapCopy(os::map_populated(&file)?);
        record("mmap", None, &|t, n| random_reads(&map, bytes, t, n, plan))?;
    }
    ratios_to_pread(&mut rows[first..]);
    Ok(())
}

/// Every scheme's rate over `pread`'s at the same transfer and thread count, where
/// `pread` was measured.
fn ratios_to_pread(rows: &mut [PoolRow]) {
    let base: Vec<PoolRow> = rows
        .iter()
        .filter(|r| r.scheme == "pread")
        .cloned()
        .collect();
    for r in rows.iter_mut().filter(|r| r.scheme != "pread") {
        if let Some(b) = base
            .iter()
            .find(|b| b.transfer_bytes == r.transfer_bytes && b.threads == r.threads)
        {
            r.ratio_to = Some("pread/cached".to_string());
            r.ratio = Some(r.ops_per_s / b.ops_per_s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::options::{options, Scale};

    fn row(plan: &Plan, scheme: &'static str, transfer: u64, threads: usize, ops: f64) -> PoolRow {
        PoolRow::new(
            PoolBench::XmfRead,
            (scheme, "cached"),
            transfer,
            threads,
            Measured::ops(ops),
            plan,
        )
    }

    #[test]
    fn ratios_pair_each_scheme_with_pread_at_the_same_transfer_and_threads() {
        let plan = Plan::new(&options(Scale::Tiny)).unwrap();
        let mut rows = vec![
            row(&plan, "mapped", 4, 1, 30.0),
            row(&plan, "mapped", 64, 2, 10.0),
            row(&plan, "mmap", 4, 2, 9.0),
            row(&plan, "pread", 4, 1, 10.0),
            row(&plan, "pread", 64, 2, 40.0),
        ];
        ratios_to_pread(&mut rows);
        assert_eq!(rows[0].ratio, Some(3.0));
        assert_eq!(rows[1].ratio, Some(0.25));
        assert_eq!(rows[1].ratio_to.as_deref(), Some("pread/cached"));
        // No pread at 4 bytes on 2 threads: nothing to compare with.
        assert_eq!(rows[2].ratio, None);
        assert_eq!(rows[3].ratio, None);
    }
}
