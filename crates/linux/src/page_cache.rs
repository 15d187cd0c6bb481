//! Whether pages of a file are in the page cache, and advice about them.
//!
//! Two ways to ask, with the same answer: `cachestat(2)` (Linux 6.5 and later) needs no
//! mapping; elsewhere `mincore(2)` over a `PROT_READ` shared mapping of the file that is
//! never read through, so it maps nothing in and cannot keep a page alive by asking.
//! Every system call is wrapped once, here; this is the crate's only `unsafe`.

#![allow(unsafe_code)]

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

/// The `posix_fadvise` advice bufcache gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// Reads will be random: turn read-ahead off for the file.
    Random,
    /// Drop the file's clean, unmapped pages now.
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

/// Pages of `[offset, offset + len)` of `file` that are in the page cache, by
/// `cachestat(2)` (Linux 6.5 and later; older kernels answer `ENOSYS`, and seccomp filters
/// may answer `EPERM`).
pub fn cached_pages(file: &File, offset: u64, len: u64) -> io::Result<u64> {
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
