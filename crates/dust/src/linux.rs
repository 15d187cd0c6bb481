//! The Linux page cache, probed through one file.
//!
//! * `read` times a one-byte `pread` at the start of the block (wall clock,
//!   `std::time::Instant`), and asks beforehand whether the page was resident: the ground
//!   truth. Where the kernel has it (Linux 6.5 and later) that is `cachestat(2)` over the
//!   one page, a question about the file's page cache that needs no mapping; elsewhere
//!   `mincore(2)` on a `PROT_READ` mapping of the file that is never touched (so it maps
//!   nothing and cannot keep pages alive). [`LinuxTarget::truth`] says which is used.
//! * `reset` is `posix_fadvise(POSIX_FADV_DONTNEED)` over the whole file: clean, unmapped
//!   pages are dropped at once.
//! * The file is opened with `POSIX_FADV_RANDOM`, which turns read-ahead off for it:
//!   otherwise one miss would bring in its neighbours and Dust's sequential set-up reads
//!   would be mostly read-ahead hits.
//!
//! Blocks are pages (`sysconf(_SC_PAGESIZE)`, 4 KiB on x86-64).
//!
//! The page cache is not a fixed-size cache: it grows into all free memory and shrinks
//! under pressure from anything else. Dust therefore only sees replacement when the file's
//! pages compete for a bounded amount of memory: run it in a memory cgroup with a limit
//! (its page cache is charged to the cgroup), or with a file larger than free memory.
//! `docs/dust.md` says how to arrange either safely.
//!
//! All `unsafe` of the crate is in this module's private `sys` functions.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Instant;

use crate::target::{check_block, Read, Target};
use crate::DustError;

/// The page cache behind one file.
#[derive(Debug)]
pub struct LinuxTarget {
    path: String,
    file: File,
    map: sys::Mapping,
    page_bytes: u64,
    blocks: u64,
    residency: Vec<u8>,
    truth: Truth,
}

/// Which system call tells whether a page is resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    /// `cachestat(2)`, Linux 6.5 and later.
    Cachestat,
    /// `mincore(2)` on a mapping of the file.
    Mincore,
}

impl LinuxTarget {
    /// Parse `linux:PATH` and open the file.
    pub fn parse(text: &str) -> Result<Self, DustError> {
        let path = text
            .strip_prefix("linux:")
            .filter(|p| !p.is_empty())
            .ok_or_else(|| DustError::BadTarget {
                target: text.to_string(),
                why: "expected linux:PATH, the path of a file to read through the page cache"
                    .into(),
            })?;
        Self::open(path)
    }

    /// Open `path` for probing.
    pub fn open(path: &str) -> Result<Self, DustError> {
        let io = |what: &'static str| {
            move |source| DustError::Io {
                what,
                path: path.to_string(),
                source,
            }
        };
        let file = File::open(path).map_err(io("opening"))?;
        let len = file
            .metadata()
            .map_err(io("reading the metadata of"))?
            .len();
        let page_bytes = sys::page_size();
        let blocks = len / page_bytes;
        if blocks < 64 {
            return Err(DustError::BadTarget {
                target: format!("linux:{path}"),
                why: format!("the file has {blocks} pages; Dust needs a file several times larger than the cache"),
            });
        }
        sys::fadvise(&file, sys::Advice::Random).map_err(io("advising random access on"))?;
        let map = sys::Mapping::new(&file, blocks * page_bytes).map_err(io("mapping"))?;
        // A kernel without cachestat answers ENOSYS (seccomp filters may say EPERM).
        let truth = match sys::cachestat(&file, 0, page_bytes) {
            Ok(_) => Truth::Cachestat,
            Err(_) => Truth::Mincore,
        };
        Ok(LinuxTarget {
            path: path.to_string(),
            file,
            map,
            page_bytes,
            blocks,
            residency: vec![0u8; 1],
            truth,
        })
    }

    /// The ground truth in use.
    pub fn truth(&self) -> Truth {
        self.truth
    }

    /// Whether a page of the file is resident, without touching it. A block past the end
    /// of the file is an error ([`DustError::OutOfRange`]).
    pub fn resident(&mut self, block: u64) -> Result<bool, DustError> {
        check_block(block, self.blocks)?;
        match self.truth {
            Truth::Cachestat => {
                sys::cachestat(&self.file, block * self.page_bytes, self.page_bytes)
                    .map(|cached| cached > 0)
                    .map_err(|source| DustError::Io {
                        what: "cachestat on",
                        path: self.path.clone(),
                        source,
                    })
            }
            Truth::Mincore => self.resident_by_mincore(block),
        }
    }

    /// Whether a page of the file is resident, by `mincore` (whatever `truth` says). A
    /// block past the end of the file is an error ([`DustError::OutOfRange`]): checked here,
    /// and not only by the mapping, because `block * page_bytes` of a huge block wraps
    /// around to an offset inside it.
    pub fn resident_by_mincore(&mut self, block: u64) -> Result<bool, DustError> {
        check_block(block, self.blocks)?;
        self.map
            .mincore(
                block * self.page_bytes,
                self.page_bytes,
                &mut self.residency,
            )
            .map_err(|source| DustError::Io {
                what: "mincore on",
                path: self.path.clone(),
                source,
            })?;
        Ok(self.residency[0] & 1 == 1)
    }

    fn pread(&self, block: u64) -> Result<(), DustError> {
        let mut byte = [0u8; 1];
        self.file
            .read_exact_at(&mut byte, block * self.page_bytes)
            .map_err(|source| DustError::Io {
                what: "reading",
                path: self.path.clone(),
                source,
            })
    }
}

impl Target for LinuxTarget {
    fn describe(&self) -> String {
        let truth = match self.truth {
            Truth::Cachestat => "cachestat",
            Truth::Mincore => "mincore",
        };
        format!(
            "linux:{} ({} pages of {} bytes, ground truth {truth})",
            self.path, self.blocks, self.page_bytes
        )
    }

    fn blocks(&self) -> u64 {
        self.blocks
    }

    fn read(&mut self, block: u64) -> Result<Read, DustError> {
        check_block(block, self.blocks)?;
        let resident = self.resident(block)?;
        let start = Instant::now();
        self.pread(block)?;
        let latency_ns = start.elapsed().as_nanos() as u64;
        Ok(Read {
            latency_ns: Some(latency_ns),
            resident: Some(resident),
        })
    }

    fn reset(&mut self) -> Result<(), DustError> {
        sys::fadvise(&self.file, sys::Advice::DontNeed).map_err(|source| DustError::Io {
            what: "dropping the cached pages of",
            path: self.path.clone(),
            source,
        })
    }

    fn touch_range(&mut self, blocks: std::ops::Range<u64>, repeat: u32) -> Result<(), DustError> {
        if let Some(last) = blocks.clone().last() {
            check_block(last, self.blocks)?;
        }
        for b in blocks {
            for _ in 0..repeat {
                self.pread(b)?;
            }
        }
        Ok(())
    }

    fn has_timing(&self) -> bool {
        true
    }

    fn has_oracle(&self) -> bool {
        true
    }
}

/// Pages of `[offset, offset + len)` of `file` that are in the page cache, by
/// `cachestat(2)` (Linux 6.5 and later; older kernels answer `ENOSYS`). Public so that
/// every user of the page cache's ground truth (Dust here, the cache-aware server's
/// `cachestat` scheduler and its hit/miss header) asks it through this one wrapper.
pub fn cached_pages(file: &File, offset: u64, len: u64) -> std::io::Result<u64> {
    sys::cachestat(file, offset, len)
}

/// The system calls, each wrapped once.
#[allow(unsafe_code)]
mod sys {
    use std::fs::File;
    use std::io;
    use std::os::unix::io::AsRawFd;

    /// The page size.
    pub fn page_size() -> u64 {
        // SAFETY: sysconf reads a constant of the running system; no memory is involved.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if n > 0 {
            n as u64
        } else {
            4096
        }
    }

    /// `posix_fadvise` advice used here.
    pub enum Advice {
        Random,
        DontNeed,
    }

    /// Advise the kernel about the whole file.
    pub fn fadvise(file: &File, advice: Advice) -> io::Result<()> {
        let a = match advice {
            Advice::Random => libc::POSIX_FADV_RANDOM,
            Advice::DontNeed => libc::POSIX_FADV_DONTNEED,
        };
        // SAFETY: the descriptor is open for the lifetime of `file`; posix_fadvise only
        // reads its arguments.
        let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, a) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(rc))
        }
    }

    /// `cachestat(2)`'s system call number: 451 on every architecture Rust targets
    /// (the common system call table; only Alpha differs). A kernel without it answers
    /// ENOSYS.
    const SYS_CACHESTAT: libc::c_long = 451;

    #[repr(C)]
    struct CachestatRange {
        off: u64,
        len: u64,
    }

    #[repr(C)]
    #[derive(Default)]
    struct Cachestat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }

    /// Pages of `[offset, offset + len)` of `file` in the page cache, by `cachestat(2)`.
    pub fn cachestat(file: &File, offset: u64, len: u64) -> io::Result<u64> {
        let range = CachestatRange { off: offset, len };
        let mut out = Cachestat::default();
        // SAFETY: the descriptor is open for the lifetime of `file`; the kernel reads
        // `range` and writes one `struct cachestat` into `out`, both live, properly
        // aligned `repr(C)` values matching the kernel's layout (five and two u64s).
        let rc = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                file.as_raw_fd(),
                &range as *const CachestatRange,
                &mut out as *mut Cachestat,
                0u32,
            )
        };
        if rc == 0 {
            Ok(out.nr_cache)
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// A read-only shared mapping of a file, used only for `mincore`.
    #[derive(Debug)]
    pub struct Mapping {
        addr: *mut libc::c_void,
        len: usize,
    }

    impl Mapping {
        /// Map `len` bytes of `file` (len > 0).
        pub fn new(file: &File, len: u64) -> io::Result<Self> {
            let len = usize::try_from(len)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large"))?;
            // SAFETY: a fresh PROT_READ, MAP_SHARED mapping chosen by the kernel (addr
            // null); it aliases no Rust object, and is never read through, only passed
            // to mincore.
            let addr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            };
            if addr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            Ok(Mapping { addr, len })
        }

        /// Residency of the pages of `[offset, offset + len)` into `out` (one byte per
        /// page; bit 0 set when resident). A range that is not inside the mapping is an
        /// `InvalidInput` error, whatever the numbers: its end is computed without
        /// wrapping, since the offset becomes a pointer.
        pub fn mincore(&self, offset: u64, len: u64, out: &mut [u8]) -> io::Result<()> {
            let page = page_size();
            let pages = len.div_ceil(page) as usize;
            let inside = matches!(offset.checked_add(len), Some(end) if end <= self.len as u64);
            if !offset.is_multiple_of(page) || !inside || out.len() < pages {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "mincore range outside the mapping",
                ));
            }
            // SAFETY: the range lies inside our mapping (checked above), the offset is
            // page-aligned, and `out` has room for one byte per page of the range.
            let rc = unsafe {
                libc::mincore(
                    (self.addr as *mut u8).add(offset as usize) as *mut libc::c_void,
                    len as usize,
                    out.as_mut_ptr(),
                )
            };
            if rc == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            // SAFETY: addr/len are exactly what mmap returned; nothing refers to the
            // mapping after drop.
            unsafe {
                libc::munmap(self.addr, self.len);
            }
        }
    }

    // SAFETY: the mapping is only passed to mincore and munmap, which are thread-safe.
    unsafe impl Send for Mapping {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// cachestat and mincore agree page by page, after reading some pages and after
    /// dropping them (on a kernel without cachestat both answers are mincore's).
    #[test]
    #[cfg_attr(
        miri,
        ignore = "real files, mmap, mincore and cachestat are outside what Miri emulates"
    )]
    fn cachestat_and_mincore_agree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("truth.dat");
        std::fs::write(&path, vec![7u8; 128 * 4096]).unwrap();
        let mut t = LinuxTarget::parse(&format!("linux:{}", path.display())).unwrap();
        if t.truth() == Truth::Mincore {
            eprintln!("no cachestat on this kernel: only mincore is checked");
        }
        t.reset().unwrap();
        for b in (0..t.blocks()).step_by(3) {
            t.pread(b).unwrap();
        }
        let agree = |t: &mut LinuxTarget| {
            for b in 0..t.blocks() {
                assert_eq!(
                    t.resident(b).unwrap(),
                    t.resident_by_mincore(b).unwrap(),
                    "page {b}"
                );
            }
        };
        agree(&mut t);
        assert!(t.resident(3).unwrap());
        t.reset().unwrap();
        agree(&mut t);
    }

    /// Huge block numbers are errors, not pointers. `block * page` wraps (to 0 for
    /// 2^52 four-KiB pages, to the page before the mapping for u64::MAX), and the mapping's
    /// bounds check added two u64s that could wrap too, so such a block reached `ptr.add`
    /// out of bounds behind a safe function.
    #[test]
    #[cfg_attr(miri, ignore = "real files and mmap are outside what Miri emulates")]
    fn huge_block_numbers_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.dat");
        let page = sys::page_size();
        std::fs::write(&path, vec![1u8; 64 * page as usize]).unwrap();
        let mut t = LinuxTarget::parse(&format!("linux:{}", path.display())).unwrap();
        for block in [
            t.blocks(),
            1 << 52,
            u64::MAX / page,
            u64::MAX / page + 1,
            u64::MAX,
        ] {
            for r in [t.resident_by_mincore(block), t.resident(block)] {
                assert!(
                    matches!(r, Err(DustError::OutOfRange { .. })),
                    "block {block}: {r:?}"
                );
            }
            assert!(t.read(block).is_err(), "block {block}");
        }
        // The mapping's own check, with ranges whose end wraps past 2^64 to 0.
        let mut out = [0u8; 2];
        for (offset, len) in [
            (0u64.wrapping_sub(page), page),
            (0u64.wrapping_sub(2 * page), 2 * page),
        ] {
            let e = t.map.mincore(offset, len, &mut out).unwrap_err();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::InvalidInput,
                "{offset} + {len}: {e}"
            );
        }
        // In range, it still answers.
        assert!(t.resident_by_mincore(t.blocks() - 1).is_ok());
        t.map.mincore(0, 2 * page, &mut out).unwrap();
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "real files, mmap, mincore and cachestat are outside what Miri emulates"
    )]
    fn reads_are_timed_and_judged_against_mincore() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe.dat");
        let mut f = File::create(&path).unwrap();
        let page = vec![0x5au8; 4096];
        for _ in 0..256 {
            f.write_all(&page).unwrap();
        }
        f.sync_all().unwrap();
        drop(f);
        let mut t = LinuxTarget::parse(&format!("linux:{}", path.display())).unwrap();
        assert!(t.blocks() >= 256 * 4096 / sys::page_size());
        t.reset().unwrap();
        let first = t.read(3).unwrap();
        assert!(first.latency_ns.is_some());
        // After a read the page is resident, whatever it was before.
        assert!(t.resident(3).unwrap());
        assert_eq!(t.read(3).unwrap().resident, Some(true));
        assert!(t.read(t.blocks()).is_err());
        assert!(t.describe().contains("ground truth"));
        assert!(LinuxTarget::parse("linux:").is_err());
        assert!(LinuxTarget::parse("linux:/nonexistent/file").is_err());
    }
}
