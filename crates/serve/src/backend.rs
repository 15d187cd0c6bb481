//! Where a request's bytes come from: the OS page cache (`pread` on the file) or
//! `bufcache-pool`. A [`Job`] is one admitted GET, with its file already open (from the
//! server's [`crate::open_files`] cache), so that the oracles can ask about its pages
//! while it waits.

use std::collections::HashMap;
use std::fs::File;
use std::io::IoSliceMut;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use pool::{BufferPool, FileHandle, IoMode, Lookup};
use rustix::io::{preadv2, Errno, ReadWriteFlags};

use crate::open_files::OpenFile;
use crate::ServeError;

/// Page size the oracles and the mirror count in: the kernel's page on x86-64 and the
/// pool's default page.
pub const PAGE_BYTES: u64 = 4096;

/// Bytes the server reads for one request.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file read through the page cache.
    Os(Arc<File>),
    /// A file read through the pool.
    Pool(FileHandle),
}

/// One GET between admission and completion: which bytes of which file.
#[derive(Clone, Debug)]
pub struct Job {
    /// Canonical path, for logs.
    pub path: Arc<Path>,
    /// The file's inode number: with the page number, the mirror's key.
    pub inode: u64,
    /// First byte served.
    pub start: u64,
    /// One past the last byte served.
    pub end: u64,
    /// How to read it.
    pub source: Source,
}

impl Job {
    /// Pages `first..last` (exclusive) that the job reads; empty for an empty range.
    pub fn pages(&self) -> std::ops::Range<u64> {
        if self.end <= self.start {
            return 0..0;
        }
        self.start / PAGE_BYTES..self.end.div_ceil(PAGE_BYTES)
    }
}

/// The pool and the handles of the files it has opened.
pub struct PoolBackend {
    /// The pool.
    pub pool: BufferPool,
    handles: Mutex<HashMap<PathBuf, FileHandle>>,
}

impl std::fmt::Debug for PoolBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolBackend")
            .field("capacity_frames", &self.pool.capacity_frames())
            .finish()
    }
}

/// How the server reads files.
#[derive(Clone, Debug)]
pub enum Backend {
    /// `pread` through the page cache.
    Os,
    /// Through `bufcache-pool`.
    Pool(Arc<PoolBackend>),
}

/// Files the pool keeps open at once (each holds a descriptor). 16,384 covers the
/// SURGE-like set (12,000 files) with room; the pool's hashed lookup allows up to
/// [`pool::MAX_OPEN_FILES_HASHED`] (65,536), and the process's descriptor limit is the
/// other bound (`bufcache serve` raises its soft limit to the hard one). A larger set
/// cannot be served through the pool: its files are never closed, so that their cached
/// pages stay.
pub const POOL_MAX_FILES: usize = 16_384;

impl Backend {
    /// A pool of `capacity_bytes` under `policy`, reading with `O_DIRECT` so that the page
    /// cache holds nothing and the pool's residency is the whole truth.
    pub fn pool(policy: &str, capacity_bytes: u64) -> Result<Self, ServeError> {
        let pool = BufferPool::builder()
            .capacity_bytes(capacity_bytes)
            .page_size(PAGE_BYTES as usize)
            .policy(policy)
            .io_mode(IoMode::Direct)
            // Hashed: the mapped lookup's per-file tables would cost 16 KiB a slot.
            .lookup(Lookup::Hashed)
            .max_open_files(POOL_MAX_FILES)
            .read_ahead(0)
            .pin_limit(16)
            .build()?;
        Ok(Backend::Pool(Arc::new(PoolBackend {
            pool,
            handles: Mutex::new(HashMap::new()),
        })))
    }

    /// Describe bytes `start..end` of the open `file` as a job. The page cache reads
    /// through the file's own descriptor (no allocation, no system call); the pool opens
    /// the file once and keeps its handle.
    pub fn job(&self, file: &OpenFile, start: u64, end: u64) -> Result<Job, ServeError> {
        let source = match self {
            Backend::Os => Source::Os(Arc::clone(&file.file)),
            Backend::Pool(p) => {
                let mut handles = p.handles.lock();
                let handle = match handles.get(&*file.path) {
                    Some(h) => *h,
                    None => {
                        let h = p.pool.open(&file.path)?;
                        handles.insert(file.path.to_path_buf(), h);
                        h
                    }
                };
                Source::Pool(handle)
            }
        };
        Ok(Job {
            path: Arc::clone(&file.path),
            inode: file.inode,
            start,
            end,
            source,
        })
    }

    /// Whether every page of the job is resident in the pool (`None` for the OS backend:
    /// see [`crate::oracle::ground_truth`]).
    pub fn pool_resident(&self, job: &Job) -> Option<bool> {
        let pages = job.pages();
        self.pool_resident_pages(job)
            .map(|n| n == pages.end - pages.start)
    }

    /// How many pages of the job are resident in the pool (`None` for the OS backend).
    pub fn pool_resident_pages(&self, job: &Job) -> Option<u64> {
        match (self, &job.source) {
            (Backend::Pool(p), Source::Pool(h)) => Some(
                job.pages()
                    .filter(|&page| p.pool.is_resident(*h, page).unwrap_or(false))
                    .count() as u64,
            ),
            _ => None,
        }
    }

    /// The job's bytes if the page cache holds every one of them now, read without
    /// waiting (`preadv2(RWF_NOWAIT)`, as ClickHouse and Seastar serve hits), so that a
    /// hit costs no trip to a blocking thread; `None` when a read would wait (or the
    /// file system cannot say, or the job reads through the pool): then [`Self::read`]
    /// on a blocking thread. Safe to call on the event loop.
    pub fn read_cached(&self, job: &Job) -> Option<Vec<u8>> {
        let Source::Os(file) = &job.source else {
            return None;
        };
        let len = (job.end - job.start) as usize;
        let mut buf = vec![0u8; len];
        let mut done = 0;
        while done < len {
            let mut bufs = [IoSliceMut::new(&mut buf[done..])];
            let at = job.start + done as u64;
            match preadv2(&**file, &mut bufs, at, ReadWriteFlags::NOWAIT) {
                // End of file early (it shrank): the blocking read reports it.
                Ok(0) => return None,
                Ok(n) => done += n,
                Err(Errno::INTR) => {}
                // EAGAIN: some page is not cached; anything else: let `read` say.
                Err(_) => return None,
            }
        }
        Some(buf)
    }

    /// Read the job's bytes (blocking: call from a blocking thread).
    pub fn read(&self, job: &Job) -> Result<Vec<u8>, ServeError> {
        let len = (job.end - job.start) as usize;
        let mut buf = vec![0u8; len];
        match (&job.source, self) {
            (Source::Os(file), _) => {
                file.read_exact_at(&mut buf, job.start)
                    .map_err(ServeError::io("reading", &*job.path))?;
            }
            (Source::Pool(h), Backend::Pool(p)) => {
                let mut done = 0;
                while done < len {
                    let n = p.pool.read(*h, job.start + done as u64, &mut buf[done..])?;
                    if n == 0 {
                        return Err(ServeError::Io {
                            what: "reading (file shrank while served)",
                            path: job.path.to_path_buf(),
                            source: std::io::ErrorKind::UnexpectedEof.into(),
                        });
                    }
                    done += n;
                }
            }
            (Source::Pool(_), Backend::Os) => {
                unreachable!("a pool job is only made by the pool backend")
            }
        }
        Ok(buf)
    }
}
