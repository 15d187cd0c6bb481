//! The operating system's ways of reading a file, as the pool benchmark measures them
//! next to the pool: `pread` and a copy out of an `mmap` of cached data ([`CachedRead`]),
//! and page reads with or without `O_DIRECT` ([`RawReader`]); and the random-read loops
//! all schemes share.

use std::fs::File;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::options::{IoKind, Plan};
use super::timing::{timed, until_stopped, SplitMix};
use super::PAGE_BYTES;
use crate::error::{BenchError, ErrorKind};
use crate::os::{self, AlignedPage};

/// Something that copies cached file data into a buffer: the pool, `pread`, `mmap`.
pub(crate) trait CachedRead: Sync {
    /// Fill `buf` from byte `offset` of the file.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), BenchError>;
}

/// `pread` on a file the OS has cached.
pub(crate) struct Pread(pub File);

impl CachedRead for Pread {
    #[inline]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), BenchError> {
        self.0
            .read_exact_at(buf, offset)
            .map_err(|e| BenchError::io("pread failed", e))
    }
}

/// Copy out of a mapping of the file.
pub(crate) struct MmapCopy(pub memmap2::Mmap);

impl CachedRead for MmapCopy {
    #[inline]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), BenchError> {
        let start = offset as usize;
        let src = self
            .0
            .get(start..start + buf.len())
            .ok_or(ErrorKind::PastMapping)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// Random reads of `transfer` bytes at offsets aligned to `transfer` within `file_bytes`.
///
/// Each read's bytes go to `black_box` by their address, as vmcache's loop hands
/// `buf.data()` to an empty `asm volatile` (`scripts/vmcache/micro.cpp`): the bytes must
/// still be written, but `black_box(&buf)` also made the `Vec` itself (pointer, length)
/// live in memory, stored and reloaded on every read, which is no part of a read.
pub(crate) fn random_reads<R: CachedRead>(
    reader: &R,
    file_bytes: u64,
    transfer: usize,
    threads: usize,
    plan: &Plan,
) -> Result<f64, BenchError> {
    let slots = file_bytes / transfer as u64;
    timed(threads, plan.duration, |i, stop| {
        let mut rng = SplitMix::new(plan.seed, i);
        let mut buf = vec![0u8; transfer];
        until_stopped(stop, || {
            let offset = rng.below(slots) * transfer as u64;
            reader.read_at(offset, &mut buf)?;
            black_box(buf.as_ptr());
            Ok(())
        })
    })
}

/// A file opened for `pread`, with `O_DIRECT` or without.
pub(crate) struct RawReader {
    file: File,
}

impl RawReader {
    /// Open `path` for reads of kind `io`.
    pub fn open(path: &Path, io: IoKind) -> Result<RawReader, BenchError> {
        let file = match io {
            IoKind::Direct => os::open_direct(path)?,
            IoKind::Buffered => os::open(path)?,
        };
        Ok(RawReader { file })
    }

    /// Read page `page` into `buf`.
    #[inline]
    pub fn read_page(&self, page: u64, buf: &mut AlignedPage) -> Result<(), BenchError> {
        self.file
            .read_exact_at(&mut buf.0, page * PAGE_BYTES as u64)
            .map_err(|e| BenchError::io(format!("pread of page {page} failed"), e))
    }
}

/// Random page reads straight from the file (no pool), `threads` at a time.
pub(crate) fn random_pages(
    raw: &RawReader,
    file_bytes: u64,
    threads: usize,
    plan: &Plan,
) -> Result<f64, BenchError> {
    let pages = file_bytes / PAGE_BYTES as u64;
    timed(threads, plan.duration, |i, stop| {
        let mut rng = SplitMix::new(plan.seed, i);
        let mut page = AlignedPage::boxed();
        until_stopped(stop, || {
            raw.read_page(rng.below(pages), &mut page)?;
            black_box(&page.0);
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::data::DataDir;

    #[test]
    fn mmap_and_pread_read_the_same_bytes() {
        let d = DataDir::new(None).unwrap();
        let p = d.file("x", 8 * 4096).unwrap();
        let f = File::open(&p).unwrap();
        let map = MmapCopy(os::map_populated(&f).unwrap());
        let pread = Pread(f);
        let (mut a, mut b) = (vec![0u8; 64], vec![0u8; 64]);
        map.read_at(4096 + 64, &mut a).unwrap();
        pread.read_at(4096 + 64, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(u64::from_le_bytes(a[..8].try_into().unwrap()), 4096 + 64);
        assert!(map.read_at(8 * 4096 - 8, &mut a).is_err());
        assert!(pread.read_at(8 * 4096 - 8, &mut a).is_err());
    }

    #[test]
    fn a_raw_page_read_returns_that_page() {
        let d = DataDir::new(None).unwrap();
        let p = d.file("x", 4 * 4096).unwrap();
        let raw = RawReader::open(&p, IoKind::Buffered).unwrap();
        let mut page = AlignedPage::boxed();
        raw.read_page(2, &mut page).unwrap();
        assert_eq!(
            u64::from_le_bytes(page.0[..8].try_into().unwrap()),
            2 * 4096
        );
        let e = raw.read_page(4, &mut page).unwrap_err();
        assert!(e.to_string().contains("page 4"), "{e}");
    }
}
