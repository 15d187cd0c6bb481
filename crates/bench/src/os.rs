//! The few operating-system calls the pool benchmark needs that the standard library does
//! not offer: opening a file for `O_DIRECT`, telling the kernel to drop a file from its
//! page cache, and mapping a file into memory. The one `unsafe` block of the benchmarks
//! lives here, next to the reason it is sound.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::BenchError;

/// One page-aligned 4 KiB buffer: `O_DIRECT` wants the memory, the offset and the length
/// of a read aligned to the logical block size, and 4096 covers every common device.
#[repr(C, align(4096))]
pub struct AlignedPage(pub [u8; 4096]);

impl AlignedPage {
    /// A zeroed page on the heap (4 KiB on a worker's stack is fine, but a `Box` keeps
    /// the alignment obvious when it is moved into a thread).
    pub fn boxed() -> Box<AlignedPage> {
        Box::new(AlignedPage([0; 4096]))
    }
}

/// Open `path` read-only with `O_DIRECT`: reads go to the device, never through (or into)
/// the OS page cache.
pub fn open_direct(path: &Path) -> Result<File, BenchError> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| BenchError::io(format!("cannot open {} with O_DIRECT", path.display()), e))
}

/// Ask the kernel to drop every cached page of `path` (`posix_fadvise(DONTNEED)`), after
/// writing back any dirty ones: dirty pages would otherwise stay cached.
pub fn drop_from_page_cache(path: &Path) -> Result<(), BenchError> {
    let f = open(path)?;
    // Data must be on the device first, or the kernel keeps the dirty pages.
    f.sync_all()
        .map_err(|e| BenchError::io(format!("cannot sync {}", path.display()), e))?;
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).map_err(|e| {
        BenchError::io(
            format!("posix_fadvise(DONTNEED) on {}", path.display()),
            e.into(),
        )
    })
}

/// Open `path` read-only, the error naming it.
pub fn open(path: &Path) -> Result<File, BenchError> {
    File::open(path).map_err(|e| BenchError::io(format!("cannot open {}", path.display()), e))
}

/// A read-only mapping of a whole file, faulted in at creation (`MAP_POPULATE`), so that
/// copying from it measures a copy and not page faults.
pub fn map_populated(file: &File) -> Result<memmap2::Mmap, BenchError> {
    #[allow(unsafe_code)]
    // SAFETY: `Mmap::map` is unsafe because another process could truncate or rewrite
    // the file while it is mapped (a truncation turns accesses into SIGBUS). The file is
    // one the benchmark created in its own temporary directory and never writes again
    // after creating it, and nothing else knows its name.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(file) };
    map.map_err(|e| BenchError::io("cannot mmap the data file", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    #[test]
    fn aligned_page_is_aligned() {
        let p = AlignedPage::boxed();
        assert_eq!(p.0.as_ptr() as usize % 4096, 0);
        assert_eq!(std::mem::size_of::<AlignedPage>(), 4096);
    }

    #[test]
    fn direct_read_and_map_see_the_written_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let bytes: Vec<u8> = (0..3 * 4096u32).map(|i| (i % 251) as u8).collect();
        std::fs::File::create(&path)
            .unwrap()
            .write_all(&bytes)
            .unwrap();
        drop_from_page_cache(&path).unwrap();
        let map = map_populated(&File::open(&path).unwrap()).unwrap();
        assert_eq!(&map[..], &bytes[..]);
        // Some file systems (tmpfs) refuse O_DIRECT; the benchmark reports that as an
        // error, and here it only means there is nothing more to check.
        if let Ok(f) = open_direct(&path) {
            let mut page = AlignedPage::boxed();
            f.read_exact_at(&mut page.0, 4096).unwrap();
            assert_eq!(&page.0[..], &bytes[4096..8192]);
        }
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let e = drop_from_page_cache(Path::new("/nonexistent/bufcache-x")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/bufcache-x"), "{e}");
    }
}
