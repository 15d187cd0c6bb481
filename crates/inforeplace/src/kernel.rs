//! The Linux page cache behind one file, as the algorithmic mirror drives it: reads that
//! the kernel counts as accesses, the cheaper levers it offers, and a ground truth.
//!
//! [`PageCacheFile`] is what [`crate::PageCacheSource`] needs from the kernel, so that the
//! mirror's logic can be tested against a simulated kernel (`tests/page_cache.rs`) and
//! run against the real one ([`KernelFile`]) by the same code.
//!
//! [`KernelFile`], on a real file:
//!
//! * **read**: a one-byte `pread` of the page on a descriptor opened with
//!   `POSIX_FADV_RANDOM` (read-ahead off, so a miss brings in that page only). The kernel
//!   marks the page accessed, except when the same descriptor's previous read ended in the
//!   same page (`filemap_read` marks a folio once per run of reads of it): the mirror
//!   applies the same rule.
//! * **uncached read**: `preadv2(RWF_DONTCACHE)` (Linux 6.14 and later, on file systems
//!   that support it: ext4, xfs, btrfs since 6.15): a page that was not cached is read and
//!   dropped, so it displaces nothing. Probed once at open on a separate descriptor;
//!   [`KernelFile::dontcache`] says what the kernel answered.
//! * **drop**: `posix_fadvise(POSIX_FADV_DONTNEED)` over the one page: a clean, unmapped
//!   page leaves the cache at once.
//! * **resident**: Dust's ground truth ([`dust::LinuxTarget::resident`]: `cachestat(2)`
//!   where the kernel has it, else `mincore(2)` over a never-touched mapping), asked
//!   without reading the page, so the question disturbs nothing.

use std::cell::RefCell;
use std::fs::File;
use std::io::IoSliceMut;
use std::num::NonZeroU64;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::SourceError;

/// How a page is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadHow {
    /// Through the page cache: a miss brings the page in, a hit marks it accessed.
    Cached,
    /// `RWF_DONTCACHE`: a page not cached is read and dropped again.
    Uncached,
}

/// The page cache of one file, as the mirror drives it (module docs).
pub trait PageCacheFile {
    /// One line for reports and errors.
    fn describe(&self) -> String;

    /// Pages of the file.
    fn pages(&self) -> u64;

    /// Read one byte of `page`.
    fn read(&mut self, page: u64, how: ReadHow) -> Result<(), SourceError>;

    /// Drop `page` from the cache (`POSIX_FADV_DONTNEED`).
    fn drop_page(&mut self, page: u64) -> Result<(), SourceError>;

    /// Whether `page` is cached now, without disturbing it (the ground truth).
    fn resident(&self, page: u64) -> Result<bool, SourceError>;

    /// Whether [`ReadHow::Uncached`] is honoured here; where it is not, uncached reads
    /// are plain reads.
    fn dontcache(&self) -> bool;
}

/// The real page cache behind one file (module docs).
#[derive(Debug)]
pub struct KernelFile {
    path: PathBuf,
    file: File,
    page_bytes: u64,
    pages: u64,
    truth: RefCell<dust::LinuxTarget>,
    dontcache: Result<(), String>,
}

/// `RWF_DONTCACHE`'s value (include/uapi/linux/fs.h); rustix passes unnamed flags through.
const RWF_DONTCACHE: u32 = 0x80;

impl KernelFile {
    /// Open `path` (at least 64 pages long: Dust's ground truth refuses smaller files).
    pub fn open(path: &Path) -> Result<Self, SourceError> {
        let io = |what: &'static str| SourceError::io(what, path);
        let file = File::open(path).map_err(io("opening"))?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::Random)
            .map_err(|e| io("turning read-ahead off for")(e.into()))?;
        let text = path.to_str().ok_or_else(|| {
            io("naming")(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the path is not UTF-8",
            ))
        })?;
        let truth = dust::LinuxTarget::open(text)?;
        let page_bytes = rustix::param::page_size() as u64;
        let len = file.metadata().map_err(io("reading the length of"))?.len();
        let dontcache = probe_dontcache(path);
        Ok(KernelFile {
            path: path.to_path_buf(),
            file,
            page_bytes,
            pages: len / page_bytes,
            truth: RefCell::new(truth),
            dontcache,
        })
    }

    /// What the kernel said to `RWF_DONTCACHE` at open: `Ok` if it honours it, else the
    /// error it gave (`EOPNOTSUPP`: the file system does not; `EINVAL`: the kernel does
    /// not know the flag).
    pub fn dontcache_probe(&self) -> &Result<(), String> {
        &self.dontcache
    }

    /// The ground truth in use: `cachestat` or `mincore`.
    pub fn truth(&self) -> &'static str {
        match self.truth.borrow().truth() {
            dust::linux::Truth::Cachestat => "cachestat",
            dust::linux::Truth::Mincore => "mincore",
        }
    }

    /// Drop every cached page of the file (a cold start).
    pub fn drop_all(&mut self) -> Result<(), SourceError> {
        rustix::fs::fadvise(&self.file, 0, None, rustix::fs::Advice::DontNeed)
            .map_err(|e| SourceError::io("dropping the cached pages of", &self.path)(e.into()))
    }

    fn offset(&self, page: u64) -> Result<u64, SourceError> {
        if page < self.pages {
            Ok(page * self.page_bytes)
        } else {
            Err(SourceError::PageBeyondEnd {
                page,
                pages: self.pages,
            })
        }
    }
}

/// Read one byte at offset 0 with `RWF_DONTCACHE` on a descriptor of its own (so the
/// descriptor the mirror follows keeps its read position).
fn probe_dontcache(path: &Path) -> Result<(), String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let mut byte = [0u8; 1];
    let flags = rustix::io::ReadWriteFlags::from_bits_retain(RWF_DONTCACHE);
    rustix::io::preadv2(&file, &mut [IoSliceMut::new(&mut byte)], 0, flags)
        .map(|_| ())
        .map_err(|e| std::io::Error::from(e).to_string())
}

impl PageCacheFile for KernelFile {
    fn describe(&self) -> String {
        format!(
            "the Linux page cache of {} ({} pages, ground truth {})",
            self.path.display(),
            self.pages,
            self.truth()
        )
    }

    fn pages(&self) -> u64 {
        self.pages
    }

    fn read(&mut self, page: u64, how: ReadHow) -> Result<(), SourceError> {
        let offset = self.offset(page)?;
        let mut byte = [0u8; 1];
        let io = SourceError::io("reading", &self.path);
        if how == ReadHow::Uncached && self.dontcache.is_ok() {
            let flags = rustix::io::ReadWriteFlags::from_bits_retain(RWF_DONTCACHE);
            rustix::io::preadv2(&self.file, &mut [IoSliceMut::new(&mut byte)], offset, flags)
                .map(|_| ())
                .map_err(|e| io(e.into()))
        } else {
            self.file.read_exact_at(&mut byte, offset).map_err(io)
        }
    }

    fn drop_page(&mut self, page: u64) -> Result<(), SourceError> {
        let offset = self.offset(page)?;
        rustix::fs::fadvise(
            &self.file,
            offset,
            NonZeroU64::new(self.page_bytes),
            rustix::fs::Advice::DontNeed,
        )
        .map_err(|e| SourceError::io("dropping a page of", &self.path)(e.into()))
    }

    fn resident(&self, page: u64) -> Result<bool, SourceError> {
        self.offset(page)?;
        Ok(self.truth.borrow_mut().resident(page)?)
    }

    fn dontcache(&self) -> bool {
        self.dontcache.is_ok()
    }
}
