//! scan: one sequential pass over a cold file in 4 KiB reads through a pool a quarter of
//! its size, with and without read-ahead, next to `pread` with `O_DIRECT` (no read-ahead
//! at all) and buffered `pread` (the kernel's read-ahead).

use std::hint::black_box;
use std::time::Instant;

use super::data::DataDir;
use super::options::{IoKind, Plan, PoolBench, Scheme};
use super::pool_reader::{Lookup, PoolReader};
use super::readers::RawReader;
use super::row::{Measured, PoolRow};
use super::timing::best_of;
use super::PAGE_BYTES;
use crate::error::BenchError;
use crate::os::{self, AlignedPage};

/// Measure scan into `rows`.
pub(crate) fn run(plan: &Plan, data: &DataDir, rows: &mut Vec<PoolRow>) -> Result<(), BenchError> {
    let (file_bytes, pool_bytes) = sizes(plan.scan_bytes);
    let path = data.file("scan.dat", file_bytes)?;
    let pages = file_bytes / PAGE_BYTES as u64;
    let mut push = |scheme: &'static str, io: IoKind, ra: Option<u32>, pool: bool, m: Measured| {
        let mut row = PoolRow::new(
            PoolBench::Scan,
            (scheme, io.name()),
            PAGE_BYTES as u64,
            1,
            m,
            plan,
        );
        row.working_set_bytes = file_bytes;
        row.read_ahead_pages = ra;
        row.pool_bytes = pool.then_some(pool_bytes);
        rows.push(row);
    };
    for ra in [0, plan.read_ahead_pages] {
        for lookup in Lookup::selected(plan) {
            let m = best_of(plan, || {
                os::drop_from_page_cache(&path)?;
                let reader = PoolReader::scanning(&path, pool_bytes, lookup, ra)?;
                timed_pass(pages, |p, buf| reader.read_page(p, buf))
            })?;
            push(lookup.scheme(), IoKind::Direct, Some(ra), true, m);
        }
    }
    let pread = plan.measures(Scheme::Pread);
    for &io in plan.ios.iter().filter(|_| pread) {
        let m = best_of(plan, || {
            os::drop_from_page_cache(&path)?;
            let raw = RawReader::open(&path, io)?;
            let mut page = AlignedPage::boxed();
            timed_pass(pages, |p, _| raw.read_page(p, &mut page))
        })?;
        push("pread", io, None, false, m);
    }
    Ok(())
}

/// `(file, pool)` bytes of a scan of `scan_bytes`: the file in whole pages, the pool a
/// quarter of it and at least four pages.
fn sizes(scan_bytes: u64) -> (u64, u64) {
    let file_bytes = scan_bytes / PAGE_BYTES as u64 * PAGE_BYTES as u64;
    (file_bytes, (file_bytes / 4).max(4 * PAGE_BYTES as u64))
}

/// Time one sequential pass over `pages` pages.
fn timed_pass(
    pages: u64,
    mut read: impl FnMut(u64, &mut [u8; PAGE_BYTES]) -> Result<(), BenchError>,
) -> Result<Measured, BenchError> {
    let mut buf = [0u8; PAGE_BYTES];
    let t0 = Instant::now();
    for p in 0..pages {
        read(p, &mut buf)?;
        black_box(&buf);
    }
    let secs = t0.elapsed().as_secs_f64().max(1e-9);
    Ok(Measured::ops(pages as f64 / secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_is_a_quarter_of_the_file_in_whole_pages() {
        assert_eq!(sizes(1 << 20), (1 << 20, 1 << 18));
        // A partial page at the end is not scanned; a tiny file still gets four frames.
        assert_eq!(sizes(5 * 4096 + 100), (5 * 4096, 4 * 4096));
    }

    #[test]
    fn a_pass_reads_every_page_once_in_order() {
        let mut seen = Vec::new();
        let m = timed_pass(5, |p, _| {
            seen.push(p);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [0, 1, 2, 3, 4]);
        assert!(m.ops_per_s > 0.0);
    }
}
