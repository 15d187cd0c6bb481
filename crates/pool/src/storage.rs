//! Where pages come from and go to: the storage traits and real files.
//!
//! The pool never calls the file system directly; it goes through [`Storage`] (open a path)
//! and [`StorageFile`] (positioned reads and writes, sync, length). [`FileStorage`] is real
//! files; tests swap in the doubles of [`crate::testing`]: [`MemStorage`] (fast, no disk)
//! or [`RecordingStorage`], which logs every write, length change and sync in order and
//! fails chosen operations on demand.

use std::io;
use std::path::Path;
use std::sync::Arc;

// The doubles used to live here; their paths under `storage::` stay valid.
#[doc(no_inline)]
pub use crate::testing::{FaultKind, FaultOp, MemStorage, RecordingStorage, StorageEvent};

/// How to open a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenMode {
    /// Create the file if missing and truncate it to zero length (like `File::create`).
    pub create: bool,
    /// Bypass the OS page cache (`O_DIRECT`). Buffers, offsets and lengths handed to the
    /// file are then multiples of the pool's page size, which is at least 4 KiB.
    pub direct: bool,
}

#[cfg(test)]
impl OpenMode {
    /// Buffered, creating the file or not (what the storage tests open with).
    pub(crate) fn buffered(create: bool) -> Self {
        OpenMode {
            create,
            direct: false,
        }
    }
}

/// A place files can be opened.
pub trait Storage: Send + Sync + 'static {
    /// Open `path` for reading and writing.
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn StorageFile>>;
}

/// One open file: positioned I/O, so many threads may use it at once.
pub trait StorageFile: Send + Sync {
    /// Read at `offset` into `buf`; returns the bytes read (short at end of file).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// Read consecutive bytes at `offset` into several buffers in order (read-ahead fills
    /// several frames at once). Returns the total read. The default reads one by one.
    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        let mut total = 0usize;
        for buf in bufs.iter_mut() {
            let want = buf.len();
            let n = read_full_at(self, buf, offset + total as u64)?;
            total += n;
            if n < want {
                break;
            }
        }
        Ok(total)
    }

    /// Read several independent ranges, each into its own buffer, setting each
    /// [`BatchRead::result`] (bytes read, short at end of file, or the error). Files that
    /// can keep several reads in flight at once do (real files: one `io_uring`
    /// submission); the default reads one after the other.
    fn read_batch(&self, reads: &mut [BatchRead<'_>]) {
        read_each(self, reads);
    }

    /// Write `buf` at `offset`; returns the bytes written (may be short).
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize>;

    /// Write several buffers to consecutive bytes at `offset`, in order (write-back of a
    /// run of adjacent dirty pages: one `pwritev` instead of a `pwrite` per page). Returns
    /// the total written, which may be short. The default writes one buffer at a time and
    /// stops at the first short one, which is what a short `pwritev` looks like too.
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<usize> {
        let mut total = 0usize;
        for buf in bufs {
            let n = self.write_at(buf, offset + total as u64)?;
            total += n;
            if n < buf.len() {
                break;
            }
        }
        Ok(total)
    }

    /// Make everything written so far durable (`fsync`).
    fn sync(&self) -> io::Result<()>;

    /// Current length in bytes.
    fn len(&self) -> io::Result<u64>;

    /// True when the file has no bytes.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Truncate or extend (with zeros) to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
}

/// One read of a [`StorageFile::read_batch`].
#[derive(Debug)]
pub struct BatchRead<'a> {
    /// Where in the file.
    pub offset: u64,
    /// Where to, and how much.
    pub buf: &'a mut [u8],
    /// Filled in by `read_batch`: bytes read (short only at end of file) or the error.
    pub result: io::Result<usize>,
}

impl<'a> BatchRead<'a> {
    /// A read of `buf.len()` bytes at `offset`, not yet done.
    pub fn new(offset: u64, buf: &'a mut [u8]) -> Self {
        BatchRead {
            offset,
            buf,
            result: Ok(0),
        }
    }
}

/// Read into `buf` at `offset`, retrying interrupted calls. A short read means end of
/// file: storage files are regular files, where the kernel returns less than asked only
/// at the end. (Looping on a short read would also be wrong for `O_DIRECT`, whose
/// follow-up read would start at an unaligned offset.)
pub(crate) fn read_full_at<F: StorageFile + ?Sized>(
    file: &F,
    buf: &mut [u8],
    offset: u64,
) -> io::Result<usize> {
    loop {
        match file.read_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// The batch read done one read at a time.
fn read_each<F: StorageFile + ?Sized>(file: &F, reads: &mut [BatchRead<'_>]) {
    for r in reads.iter_mut() {
        r.result = read_full_at(file, r.buf, r.offset);
    }
}

/// Real files through `pread`/`pwrite` (`std::os::unix::fs::FileExt`), optionally opened
/// with `O_DIRECT`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileStorage;

struct RealFile(std::fs::File);

impl Storage for FileStorage {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn StorageFile>> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).write(true);
        if mode.create {
            opts.create(true).truncate(true);
        }
        if mode.direct {
            let flag = rustix::fs::OFlags::DIRECT.bits();
            opts.custom_flags(flag as i32);
        }
        Ok(Arc::new(RealFile(opts.open(path)?)))
    }
}

impl StorageFile for RealFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(&self.0, buf, offset)
    }

    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        let mut slices: Vec<io::IoSliceMut<'_>> =
            bufs.iter_mut().map(|b| io::IoSliceMut::new(b)).collect();
        // A short count means end of file (see `read_full_at`).
        loop {
            match rustix::io::preadv(&self.0, &mut slices, offset) {
                Ok(n) => return Ok(n),
                Err(e) if e == rustix::io::Errno::INTR => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn read_batch(&self, reads: &mut [BatchRead<'_>]) {
        use std::os::fd::AsFd;
        let done = crate::uring::read_batch(self.0.as_fd(), reads);
        // The ring may stop a read short without reaching the end of the file (the kernel
        // allows it for buffered reads); `pread` tells the two apart, and short reads are
        // rare (the last page of a file), so redo those with it.
        for r in reads[..done].iter_mut() {
            if matches!(r.result, Ok(n) if n < r.buf.len()) {
                r.result = read_full_at(self, r.buf, r.offset);
            }
        }
        read_each(self, &mut reads[done..]);
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::write_at(&self.0, buf, offset)
    }

    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<usize> {
        let slices: Vec<io::IoSlice<'_>> = bufs.iter().map(|b| io::IoSlice::new(b)).collect();
        loop {
            match rustix::io::pwritev(&self.0, &slices, offset) {
                Ok(n) => return Ok(n),
                Err(e) if e == rustix::io::Errno::INTR => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn sync(&self) -> io::Result<()> {
        self.0.sync_all()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "real file I/O (preadv) is outside what Miri emulates")]
    fn real_files_vectored_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = FileStorage.open(&p, OpenMode::buffered(true)).unwrap();
        let data: Vec<u8> = (0..10000u32).map(|i| (i % 251) as u8).collect();
        assert_eq!(f.write_at(&data, 0).unwrap(), data.len());
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        let mut c = vec![0u8; 4096];
        let n = f
            .read_vectored_at(&mut [&mut a, &mut b, &mut c], 0)
            .unwrap();
        assert_eq!(n, 10000);
        assert_eq!(&a[..], &data[..4096]);
        assert_eq!(&b[..], &data[4096..8192]);
        assert_eq!(&c[..10000 - 8192], &data[8192..]);
        assert_eq!(f.len().unwrap(), 10000);
    }

    /// `pwritev` puts the buffers one after the other at the offset.
    #[test]
    #[cfg_attr(miri, ignore = "real file I/O (pwritev) is outside what Miri emulates")]
    fn real_files_vectored_write() {
        let dir = tempfile::tempdir().unwrap();
        let f = FileStorage
            .open(&dir.path().join("w"), OpenMode::buffered(true))
            .unwrap();
        let (a, b) = (vec![1u8; 4096], vec![2u8; 100]);
        assert_eq!(f.write_vectored_at(&[&a, &b], 8192).unwrap(), 4196);
        assert_eq!(f.len().unwrap(), 8192 + 4196);
        let mut back = vec![9u8; 8192 + 4196];
        assert_eq!(f.read_at(&mut back, 0).unwrap(), back.len());
        assert!(back[..8192].iter().all(|&x| x == 0));
        assert_eq!(&back[8192..8192 + 4096], &a[..]);
        assert_eq!(&back[8192 + 4096..], &b[..]);
    }
}
