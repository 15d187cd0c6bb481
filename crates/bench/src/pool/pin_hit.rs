//! pin-hit: pin and unpin a random resident page, nothing copied: the pool's hit path
//! alone (vmcache's `fixS`/`unfixS`), for each lookup and thread count; then an
//! optimistic read of 8 bytes of a random resident page (`read_optimistic`: no pin, as
//! vmcache's optimistic read of 8 bytes in its `pinhit` mode). Each also through page
//! hints (`pin_hinted`, `read_hinted`), with one hint per page held by each thread in an
//! array indexed by the page number, as an index holding swizzled pointers (or vmcache's
//! page ids) would: the page's frame is then found with no (file, offset) translation.

use std::hint::black_box;
use std::sync::Mutex;

use super::data::{warm_page_cache, DataDir};
use super::options::{Plan, PoolBench};
use super::pool_reader::{Lookup, Optimistic, PoolReader};
use super::readers::random_reads;
use super::row::{Measured, PoolRow};
use super::timing::{best_of, timed, until_stopped, SplitMix};
use super::PAGE_BYTES;
use crate::error::BenchError;

// Each loop is written out with `best_of` and `timed` around it, not through one helper
// taking the worker by reference: with such a helper the compiler stopped inlining the
// hinted read into its loop, which then counted 147 instructions an operation instead
// of 107 (`scripts/vmcache/loop_instructions.py`), and the loops are what is measured.

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
        let row = |threads, transfer: usize, variant, m| {
            let mut row = PoolRow::new(
                PoolBench::PinHit,
                (lookup.scheme(), "cached"),
                transfer as u64,
                threads,
                m,
                plan,
            );
            row.variant = Some(variant);
            row.working_set_bytes = bytes;
            row.pool_bytes = Some(reader.pool_bytes);
            row
        };
        // One array of hints per thread (a hint is the caller's, and `&mut` on use),
        // filled before the timed runs.
        let most = plan.threads.iter().copied().max().unwrap_or(1);
        let hints: Vec<Mutex<Vec<pool::PageHint>>> = (0..most)
            .map(|_| reader.hints(pages).map(Mutex::new))
            .collect::<Result<_, _>>()?;
        let thread_hints = |i: u64| {
            hints[(i % 1024) as usize % most]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        };
        for &threads in &plan.threads {
            let m = best_of(plan, || {
                let ops_per_s = timed(threads, plan.duration, |i, stop| {
                    let mut rng = SplitMix::new(plan.seed, i);
                    until_stopped(stop, || reader.pin_unpin(rng.below(pages)))
                })?;
                Ok(Measured::ops(ops_per_s))
            })?;
            // Nothing is copied: bytes/s would mislead.
            let mut r = row(threads, PAGE_BYTES, "pin", m);
            r.bytes_per_s = 0.0;
            rows.push(r);
        }
        for &threads in &plan.threads {
            let m = best_of(plan, || {
                let ops_per_s = timed(threads, plan.duration, |i, stop| {
                    let mut rng = SplitMix::new(plan.seed, i);
                    let mut mine = thread_hints(i);
                    until_stopped(stop, || {
                        reader.pin_unpin_hinted(&mut mine[rng.below(pages) as usize])
                    })
                })?;
                Ok(Measured::ops(ops_per_s))
            })?;
            let mut r = row(threads, PAGE_BYTES, "pin-hinted", m);
            r.bytes_per_s = 0.0;
            rows.push(r);
        }
        for &threads in &plan.threads {
            let optimistic = Optimistic(&reader);
            let m = best_of(plan, || {
                let ops = random_reads(&optimistic, bytes, OPTIMISTIC_BYTES, threads, plan)?;
                Ok(Measured::ops(ops))
            })?;
            rows.push(row(threads, OPTIMISTIC_BYTES, "optimistic", m));
        }
        for &threads in &plan.threads {
            // The same draw as `random_reads`: one number, a word of the file.
            let words = bytes / OPTIMISTIC_BYTES as u64;
            let m = best_of(plan, || {
                let ops_per_s = timed(threads, plan.duration, |i, stop| {
                    let mut rng = SplitMix::new(plan.seed, i);
                    let mut mine = thread_hints(i);
                    let mut buf = vec![0u8; OPTIMISTIC_BYTES];
                    until_stopped(stop, || {
                        let offset = rng.below(words) * OPTIMISTIC_BYTES as u64;
                        let page = (offset / PAGE_BYTES as u64) as usize;
                        let in_page = (offset % PAGE_BYTES as u64) as usize;
                        reader.read_hinted(&mut mine[page], in_page, &mut buf)?;
                        black_box(buf.as_ptr());
                        Ok(())
                    })
                })?;
                Ok(Measured::ops(ops_per_s))
            })?;
            rows.push(row(threads, OPTIMISTIC_BYTES, "optimistic-hinted", m));
        }
    }
    Ok(())
}
