//! pin-hit: pin and unpin a random resident page, nothing copied: the pool's hit path
//! alone (vmcache's `fixS`/`unfixS`), for each lookup and thread count; then an
//! optimistic read of 8 bytes of a random resident page (`read_optimistic`: no pin, as
//! vmcache's optimistic read of 8 bytes in its `pinhit` mode).

use super::data::{warm_page_cache, DataDir};
use super::options::{Plan, PoolBench};
use super::pool_reader::{Lookup, Optimistic, PoolReader};
use super::readers::random_reads;
use super::row::{Measured, PoolRow};
use super::timing::{best_of, timed, until_stopped, SplitMix};
use super::PAGE_BYTES;
use crate::error::BenchError;

/// Bytes an optimistic read copies (vmcache's `pinhit` mode reads 8).
const OPTIMISTIC_BYTES: usize = 8;

/// Measure pin-hit into `rows`.
pub(crate) fn run(plan: &Plan, data: &DataDir, rows: &mut Vec<PoolRow>) -> Result<(), BenchError> {
    let bytes = plan.cached_bytes;
    let path = data.file("pinned.dat", bytes)?;
    warm_page_cache(&path)?;
    let pages = bytes / PAGE_BYTES as u64;
    for lookup in Lookup::selected(plan) {
        let reader = PoolReader::cached(&path, bytes, lookup)?;
        for &threads in &plan.threads {
            let m = best_of(plan, || {
                let ops_per_s = timed(threads, plan.duration, |i, stop| {
                    let mut rng = SplitMix::new(plan.seed, i);
                    until_stopped(stop, || reader.pin_unpin(rng.below(pages)))
                })?;
                Ok(Measured::ops(ops_per_s))
            })?;
            let mut row = PoolRow::new(
                PoolBench::PinHit,
                (lookup.scheme(), "cached"),
                PAGE_BYTES as u64,
                threads,
                m,
                plan,
            );
            // Nothing is copied: bytes/s would mislead.
            row.bytes_per_s = 0.0;
            row.variant = Some("pin");
            row.working_set_bytes = bytes;
            row.pool_bytes = Some(reader.pool_bytes);
            rows.push(row);
        }
        for &threads in &plan.threads {
            let optimistic = Optimistic(&reader);
            let m = best_of(plan, || {
                let ops = random_reads(&optimistic, bytes, OPTIMISTIC_BYTES, threads, plan)?;
                Ok(Measured::ops(ops))
            })?;
            let mut row = PoolRow::new(
                PoolBench::PinHit,
                (lookup.scheme(), "cached"),
                OPTIMISTIC_BYTES as u64,
                threads,
                m,
                plan,
            );
            row.variant = Some("optimistic");
            row.working_set_bytes = bytes;
            row.pool_bytes = Some(reader.pool_bytes);
            rows.push(row);
        }
    }
    Ok(())
}
