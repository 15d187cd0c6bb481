//! The pool's side of the pool benchmark: a [`PoolReader`] is a buffer pool with one
//! open file, built cached, evicting or empty for a scan, with the read and pin loops the
//! benchmarks time.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::options::{IoKind, Plan, Scheme};
use super::readers::{random_reads, CachedRead};
use super::row::Measured;
use super::timing::{timed, until_stopped, SplitMix};
use super::PAGE_BYTES;
use crate::error::{BenchError, ErrorKind};

/// The pool's two lookup schemes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    Mapped,
    Hashed,
}

impl Lookup {
    /// The lookups `plan` measures, mapped first.
    pub fn selected(plan: &Plan) -> Vec<Lookup> {
        [
            (Scheme::Mapped, Lookup::Mapped),
            (Scheme::Hashed, Lookup::Hashed),
        ]
        .into_iter()
        .filter(|&(s, _)| plan.measures(s))
        .map(|(_, l)| l)
        .collect()
    }

    /// The scheme's name in reports.
    pub fn scheme(self) -> &'static str {
        match self {
            Lookup::Mapped => "mapped",
            Lookup::Hashed => "hashed",
        }
    }

    fn to_pool(self) -> pool::Lookup {
        match self {
            Lookup::Mapped => pool::Lookup::Mapped,
            Lookup::Hashed => pool::Lookup::Hashed,
        }
    }
}

/// A pool with one open file.
pub(crate) struct PoolReader {
    pool: Arc<pool::BufferPool>,
    file: pool::FileHandle,
    /// The pool's size.
    pub pool_bytes: u64,
}

impl PoolReader {
    fn build(
        path: &Path,
        capacity_frames: usize,
        lookup: Lookup,
        io: IoKind,
        read_ahead: u32,
    ) -> Result<PoolReader, BenchError> {
        let pool = pool::BufferPool::builder()
            .capacity_frames(capacity_frames)
            .page_size(PAGE_BYTES)
            .policy("clock")
            .lookup(lookup.to_pool())
            .read_ahead(read_ahead as usize)
            .io_mode(match io {
                IoKind::Direct => pool::IoMode::Direct,
                IoKind::Buffered => pool::IoMode::Buffered,
            })
            .build()
            .map_err(|e| BenchError::pool("cannot build the pool", e))?;
        let file = pool
            .open(path)
            .map_err(|e| BenchError::pool(format!("pool cannot open {}", path.display()), e))?;
        Ok(PoolReader {
            pool: Arc::new(pool),
            file,
            pool_bytes: capacity_frames as u64 * PAGE_BYTES as u64,
        })
    }

    /// A pool that holds all of `path` (plus slack, so that no background freeing of
    /// frames can touch it), with every page loaded.
    pub fn cached(path: &Path, file_bytes: u64, lookup: Lookup) -> Result<PoolReader, BenchError> {
        let pages = file_bytes.div_ceil(PAGE_BYTES as u64) as usize;
        let r = PoolReader::build(path, pages + pages / 4 + 64, lookup, IoKind::Buffered, 0)?;
        r.load_first(pages as u64)?;
        Ok(r)
    }

    /// A pool of `pool_bytes` over `path`, filled with its first pages.
    pub fn evicting(
        path: &Path,
        pool_bytes: u64,
        lookup: Lookup,
        io: IoKind,
    ) -> Result<PoolReader, BenchError> {
        let frames = (pool_bytes / PAGE_BYTES as u64) as usize;
        let r = PoolReader::build(path, frames, lookup, io, 0)?;
        r.load_first(frames as u64)?;
        Ok(r)
    }

    /// An empty pool for a scan.
    pub fn scanning(
        path: &Path,
        pool_bytes: u64,
        lookup: Lookup,
        read_ahead: u32,
    ) -> Result<PoolReader, BenchError> {
        let frames = (pool_bytes / PAGE_BYTES as u64) as usize;
        PoolReader::build(path, frames, lookup, IoKind::Direct, read_ahead)
    }

    /// Read the first `pages` pages, so that they are resident.
    fn load_first(&self, pages: u64) -> Result<(), BenchError> {
        let mut buf = [0u8; PAGE_BYTES];
        for p in 0..pages {
            self.read_page(p, &mut buf)?;
        }
        Ok(())
    }

    /// Read page `page` into `buf`.
    #[inline]
    pub fn read_page(&self, page: u64, buf: &mut [u8; PAGE_BYTES]) -> Result<(), BenchError> {
        self.read_at(page * PAGE_BYTES as u64, buf)
    }

    /// Pin page `page` and unpin it at once.
    ///
    /// The page's address goes to `black_box`, as vmcache's loop hands `fixS`'s pointer to
    /// an empty `asm volatile` (`scripts/vmcache/micro.cpp`): `black_box(&guard)` made the
    /// guard itself live in memory, and the loop then copied it between stack slots with
    /// loads wider than the stores that wrote it (store-forwarding stalls), which is no
    /// part of a pin and which vmcache's loop does not pay.
    #[inline]
    pub fn pin_unpin(&self, page: u64) -> Result<(), BenchError> {
        let guard = self
            .pool
            .pin(self.file, page)
            .map_err(|e| BenchError::pool("pin failed", e))?;
        black_box(guard.as_ptr());
        Ok(())
    }

    /// One hint per page of the file's first `pages` pages, each filled by a hinted read
    /// (the pages are resident: no miss), as an index that holds swizzled pointers, or
    /// vmcache's page ids, holds one per child page.
    pub fn hints(&self, pages: u64) -> Result<Vec<pool::PageHint>, BenchError> {
        (0..pages)
            .map(|p| {
                let mut h = self
                    .pool
                    .hint(self.file, p)
                    .map_err(|e| BenchError::pool("hint failed", e))?;
                let n = self.pool.read_hinted(&mut h, 0, &mut [0u8; 8]);
                whole_read(n, p * PAGE_BYTES as u64, 8)?;
                Ok(h)
            })
            .collect()
    }

    /// [`PoolReader::pin_unpin`] through the page's hint (`BufferPool::pin_hinted`).
    #[inline]
    pub fn pin_unpin_hinted(&self, hint: &mut pool::PageHint) -> Result<(), BenchError> {
        let guard = self
            .pool
            .pin_hinted(hint)
            .map_err(|e| BenchError::pool("pin failed", e))?;
        black_box(guard.as_ptr());
        Ok(())
    }

    /// Fill `buf` from byte `in_page` of the hinted page (`BufferPool::read_hinted`).
    #[inline]
    pub fn read_hinted(
        &self,
        hint: &mut pool::PageHint,
        in_page: usize,
        buf: &mut [u8],
    ) -> Result<(), BenchError> {
        let n = self.pool.read_hinted(hint, in_page, buf);
        whole_read(
            n,
            hint.page() * PAGE_BYTES as u64 + in_page as u64,
            buf.len(),
        )
    }

    /// Random page reads over `file_bytes`, `depth` reads in flight per thread (see
    /// `--in-flight`); misses and reads counted by the pool.
    pub fn measure_random(
        &self,
        file_bytes: u64,
        threads: usize,
        depth: usize,
        plan: &Plan,
    ) -> Result<Measured, BenchError> {
        let before = self.pool.stats();
        let t0 = Instant::now();
        let ops_per_s = if depth == 1 {
            random_reads(self, file_bytes, PAGE_BYTES, threads, plan)?
        } else {
            self.prefetched_reads(file_bytes, threads, 2 * depth, plan)?
        };
        let secs = t0.elapsed().as_secs_f64();
        let after = self.pool.stats();
        let lookups = (after.misses - before.misses) + (after.hits - before.hits);
        let pages_read = after.pages_read - before.pages_read;
        let calls = after.read_calls - before.read_calls;
        Ok(Measured {
            ops_per_s,
            reads_per_s: Some(pages_read as f64 / secs),
            miss_ratio: (lookups > 0).then(|| pages_read as f64 / lookups as f64),
            reads_per_call: (calls > 0).then(|| pages_read as f64 / calls as f64),
        })
    }

    /// Batches of `batch` random pages: prefetch them (the misses' reads in flight
    /// together), then read each.
    fn prefetched_reads(
        &self,
        file_bytes: u64,
        threads: usize,
        batch: usize,
        plan: &Plan,
    ) -> Result<f64, BenchError> {
        let pages = file_bytes / PAGE_BYTES as u64;
        timed(threads, plan.duration, |i, stop| {
            let mut rng = SplitMix::new(plan.seed, i);
            let mut list = vec![0u64; batch];
            let mut buf = [0u8; PAGE_BYTES];
            let batches = until_stopped(stop, || {
                list.iter_mut().for_each(|p| *p = rng.below(pages));
                self.pool
                    .prefetch(self.file, &list)
                    .map_err(|e| BenchError::pool("prefetch failed", e))?;
                for &p in &list {
                    self.read_page(p, &mut buf)?;
                    black_box(&buf);
                }
                Ok(())
            })?;
            Ok(batches * batch as u64)
        })
    }
}

impl CachedRead for PoolReader {
    #[inline]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), BenchError> {
        let n = self.pool.read(self.file, offset, buf);
        whole_read(n, offset, buf.len())
    }
}

/// The same pool read optimistically (`BufferPool::read_optimistic`: a version-checked
/// copy, no pin).
pub(crate) struct Optimistic<'a>(pub &'a PoolReader);

impl CachedRead for Optimistic<'_> {
    #[inline]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), BenchError> {
        let n = self.0.pool.read_optimistic(self.0.file, offset, buf);
        whole_read(n, offset, buf.len())
    }
}

/// A pool read's result, as the benchmark wants it: all `wanted` bytes.
#[inline]
fn whole_read(
    n: Result<usize, pool::PoolError>,
    offset: u64,
    wanted: usize,
) -> Result<(), BenchError> {
    let n = n.map_err(|e| BenchError::pool("pool read failed", e))?;
    if n != wanted {
        return Err(ErrorKind::ShortRead {
            offset,
            read: n,
            wanted,
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::data::DataDir;

    #[test]
    fn a_cached_pool_reads_the_file_and_pins_without_missing() {
        let d = DataDir::new(None).unwrap();
        let bytes = 16 * PAGE_BYTES as u64;
        let p = d.file("x", bytes).unwrap();
        for lookup in [Lookup::Mapped, Lookup::Hashed] {
            let r = PoolReader::cached(&p, bytes, lookup).unwrap();
            let misses = r.pool.stats().misses;
            let mut buf = [0u8; PAGE_BYTES];
            r.read_page(5, &mut buf).unwrap();
            assert_eq!(u64::from_le_bytes(buf[..8].try_into().unwrap()), 5 * 4096);
            r.pin_unpin(15).unwrap();
            assert_eq!(r.pool.stats().misses, misses, "{lookup:?}");
        }
    }

    #[test]
    fn reading_past_the_end_is_a_short_read() {
        let d = DataDir::new(None).unwrap();
        let bytes = 4 * PAGE_BYTES as u64;
        let p = d.file("x", bytes).unwrap();
        let r = PoolReader::cached(&p, bytes, Lookup::Hashed).unwrap();
        let mut buf = [0u8; 16];
        let e = r.read_at(bytes - 8, &mut buf).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::ShortRead { read: 8, .. }),
            "{e}"
        );
    }
}
