//! Where pages come from and go to: real files, memory, or a recording fault injector.
//!
//! The pool never calls the file system directly; it goes through [`Storage`] (open a path)
//! and [`StorageFile`] (positioned reads and writes, sync, length). Tests swap in
//! [`MemStorage`] (fast, no disk) or [`RecordingStorage`], which logs every write, length
//! change and sync in order, so that a test can rebuild every state a crash could leave on
//! disk, and which fails chosen operations with `EIO`, `ENOSPC` or a short write.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

/// How to open a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenMode {
    /// Create the file if missing and truncate it to zero length (like `File::create`).
    pub create: bool,
    /// Bypass the OS page cache (`O_DIRECT`). Buffers, offsets and lengths handed to the
    /// file are then multiples of the pool's page size, which is at least 4 KiB.
    pub direct: bool,
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

/// Files kept in memory, keyed by path. Clones share the same files, so a test can reopen
/// a file through a new pool and see what the old one wrote.
#[derive(Clone, Default)]
pub struct MemStorage {
    files: Arc<Mutex<HashMap<PathBuf, Arc<MemFile>>>>,
}

impl MemStorage {
    /// An empty in-memory file system.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current contents of `path`, if it exists.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        self.files.lock().get(path).map(|f| f.data.lock().clone())
    }
}

#[derive(Default)]
struct MemFile {
    data: Mutex<Vec<u8>>,
}

impl Storage for MemStorage {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn StorageFile>> {
        let mut files = self.files.lock();
        if mode.create {
            let f = files.entry(path.to_path_buf()).or_default();
            f.data.lock().clear();
            return Ok(Arc::clone(f) as Arc<dyn StorageFile>);
        }
        match files.get(path) {
            Some(f) => Ok(Arc::clone(f) as Arc<dyn StorageFile>),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no such file: {}", path.display()),
            )),
        }
    }
}

impl StorageFile for MemFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let data = self.data.lock();
        let Ok(start) = usize::try_from(offset) else {
            return Ok(0);
        };
        if start >= data.len() {
            return Ok(0);
        }
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let mut data = self.data.lock();
        mem_write(&mut data, buf, offset)?;
        Ok(buf.len())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.data.lock().len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let mut data = self.data.lock();
        grow(&mut data, len)?;
        data.resize(len, 0);
        Ok(())
    }
}

/// Make room for `len` bytes, failing with `OutOfMemory` instead of aborting: an
/// in-memory file is as large as its length, and a length is user input.
fn grow(data: &mut Vec<u8>, len: usize) -> io::Result<()> {
    if len > data.len() {
        data.try_reserve_exact(len - data.len())
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    }
    Ok(())
}

fn mem_write(data: &mut Vec<u8>, buf: &[u8], offset: u64) -> io::Result<()> {
    let start = usize::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let end = start
        .checked_add(buf.len())
        .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
    if data.len() < end {
        grow(data, end)?;
        data.resize(end, 0);
    }
    data[start..end].copy_from_slice(buf);
    Ok(())
}

/// One operation that reached storage, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageEvent {
    /// Bytes written at an offset (a short write logs only the bytes that were written).
    Write {
        /// The file.
        path: PathBuf,
        /// Byte offset.
        offset: u64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// The file's length was set.
    SetLen {
        /// The file.
        path: PathBuf,
        /// New length.
        len: u64,
    },
    /// The file was synced: everything logged for it before this event is durable.
    Sync {
        /// The file.
        path: PathBuf,
    },
}

/// Which operations a fault applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultOp {
    /// `write_at`.
    Write,
    /// `sync`.
    Sync,
    /// `read_at` / `read_vectored_at`.
    Read,
    /// `set_len`.
    SetLen,
}

/// What an injected fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Fail with `EIO`.
    Eio,
    /// Fail with `ENOSPC`.
    NoSpace,
    /// For writes: write the first half of the buffer and report that length.
    /// For other operations it behaves like [`FaultKind::Eio`].
    ShortWrite,
}

#[derive(Clone, Debug)]
struct Fault {
    op: FaultOp,
    kind: FaultKind,
    /// Only operations on this file (any file when `None`).
    path: Option<PathBuf>,
    /// Operations of kind `op` to let through before failing.
    skip: usize,
    /// How many failures remain (`usize::MAX` = until cleared).
    times: usize,
}

/// A storage that fails chosen operations on demand and, unless built with
/// [`RecordingStorage::faults_over`], logs every write, length change and sync in the order
/// they took effect. [`RecordingStorage::new`] keeps its files in memory; `faults_over`
/// wraps any storage (real files, `O_DIRECT` included). Clones share the log, the files
/// and the faults.
#[derive(Clone)]
pub struct RecordingStorage {
    inner: Arc<dyn Storage>,
    /// Whether operations are logged (a long randomized run would fill memory with it).
    logging: bool,
    shared: Arc<Mutex<Recording>>,
}

impl Default for RecordingStorage {
    fn default() -> Self {
        Self::new()
    }
}

struct Recording {
    log: Vec<StorageEvent>,
    faults: Vec<Fault>,
}

impl RecordingStorage {
    /// In-memory files, an empty log, no faults.
    pub fn new() -> Self {
        Self::with(MemStorage::new(), true)
    }

    /// Fault injection over `inner`, with no log: for long runs over real files.
    pub fn faults_over(inner: impl Storage) -> Self {
        Self::with(inner, false)
    }

    fn with(inner: impl Storage, logging: bool) -> Self {
        RecordingStorage {
            inner: Arc::new(inner),
            logging,
            shared: Arc::new(Mutex::new(Recording {
                log: Vec::new(),
                faults: Vec::new(),
            })),
        }
    }

    /// Everything logged so far, in order.
    pub fn log(&self) -> Vec<StorageEvent> {
        self.shared.lock().log.clone()
    }

    /// Number of events logged so far.
    pub fn log_len(&self) -> usize {
        self.shared.lock().log.len()
    }

    /// The current (not necessarily durable) contents of `path`, if it exists and can be
    /// read (read through the wrapped storage, without `O_DIRECT` and without faults).
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let mode = OpenMode {
            create: false,
            direct: false,
        };
        let f = self.inner.open(path, mode).ok()?;
        let mut buf = vec![0u8; usize::try_from(f.len().ok()?).ok()?];
        let n = read_full_at(&*f, &mut buf, 0).ok()?;
        buf.truncate(n);
        Some(buf)
    }

    /// Fail the next `times` operations of kind `op` (after letting `skip` through) with
    /// `kind`. `times == usize::MAX` keeps failing until [`RecordingStorage::clear_faults`].
    pub fn inject(&self, op: FaultOp, kind: FaultKind, skip: usize, times: usize) {
        self.push_fault(None, op, kind, skip, times);
    }

    /// [`RecordingStorage::inject`] for operations on one file only: a full file system
    /// seen by one file, while the others keep working.
    pub fn inject_path(
        &self,
        path: impl AsRef<Path>,
        op: FaultOp,
        kind: FaultKind,
        skip: usize,
        times: usize,
    ) {
        self.push_fault(Some(path.as_ref().to_path_buf()), op, kind, skip, times);
    }

    fn push_fault(
        &self,
        path: Option<PathBuf>,
        op: FaultOp,
        kind: FaultKind,
        skip: usize,
        times: usize,
    ) {
        self.shared.lock().faults.push(Fault {
            op,
            kind,
            path,
            skip,
            times,
        });
    }

    /// Remove every pending fault.
    pub fn clear_faults(&self) {
        self.shared.lock().faults.clear();
    }

    /// Consume a fault for `op` on `path`, if one fires now.
    fn fire(&self, op: FaultOp, path: &Path) -> Option<FaultKind> {
        let mut rec = self.shared.lock();
        let fault = rec
            .faults
            .iter_mut()
            .find(|f| f.op == op && f.times > 0 && f.path.as_deref().is_none_or(|p| p == path))?;
        if fault.skip > 0 {
            fault.skip -= 1;
            return None;
        }
        if fault.times != usize::MAX {
            fault.times -= 1;
        }
        Some(fault.kind)
    }

    /// Run `apply` and, when logging, log `event` under the log lock while it takes
    /// effect, so that the log order is the order of effects. Without a log the operation
    /// runs unlocked (real files keep their parallelism).
    fn logged<T>(
        &self,
        event: impl FnOnce() -> StorageEvent,
        apply: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<T> {
        if !self.logging {
            return apply();
        }
        let mut rec = self.shared.lock();
        let out = apply()?;
        rec.log.push(event());
        Ok(out)
    }
}

fn fault_error(kind: FaultKind) -> io::Error {
    match kind {
        FaultKind::NoSpace => rustix::io::Errno::NOSPC.into(),
        FaultKind::Eio | FaultKind::ShortWrite => rustix::io::Errno::IO.into(),
    }
}

struct RecordingFile {
    path: PathBuf,
    inner: Arc<dyn StorageFile>,
    storage: RecordingStorage,
}

impl Storage for RecordingStorage {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn StorageFile>> {
        let event = || StorageEvent::SetLen {
            path: path.to_path_buf(),
            len: 0,
        };
        let inner = if mode.create {
            self.logged(event, || self.inner.open(path, mode))?
        } else {
            self.inner.open(path, mode)?
        };
        Ok(Arc::new(RecordingFile {
            path: path.to_path_buf(),
            inner,
            storage: self.clone(),
        }))
    }
}

impl RecordingFile {
    fn fire(&self, op: FaultOp) -> Option<FaultKind> {
        self.storage.fire(op, &self.path)
    }
}

impl StorageFile for RecordingFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        if let Some(kind) = self.fire(FaultOp::Read) {
            return Err(fault_error(kind));
        }
        self.inner.read_at(buf, offset)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let n = match self.fire(FaultOp::Write) {
            None => buf.len(),
            Some(FaultKind::ShortWrite) => buf.len() / 2,
            Some(kind) => return Err(fault_error(kind)),
        };
        let event = || StorageEvent::Write {
            path: self.path.clone(),
            offset,
            data: buf[..n].to_vec(),
        };
        self.storage
            .logged(event, || self.inner.write_at(&buf[..n], offset))?;
        Ok(n)
    }

    fn sync(&self) -> io::Result<()> {
        if let Some(kind) = self.fire(FaultOp::Sync) {
            return Err(fault_error(kind));
        }
        let event = || StorageEvent::Sync {
            path: self.path.clone(),
        };
        self.storage.logged(event, || self.inner.sync())
    }

    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        if let Some(kind) = self.fire(FaultOp::SetLen) {
            return Err(fault_error(kind));
        }
        let event = || StorageEvent::SetLen {
            path: self.path.clone(),
            len,
        };
        self.storage.logged(event, || self.inner.set_len(len))
    }
}

#[cfg(test)]
mod tests {
    /// Buffered, creating the file or not.
    fn mode(create: bool) -> OpenMode {
        OpenMode {
            create,
            direct: false,
        }
    }

    use super::*;

    #[test]
    fn mem_storage_reads_what_was_written_and_shares_files() {
        let s = MemStorage::new();
        let p = Path::new("/a");
        assert!(s.open(p, mode(false)).is_err());
        let f = s.open(p, mode(true)).unwrap();
        assert_eq!(f.write_at(b"hello", 3).unwrap(), 5);
        let g = s.open(p, mode(false)).unwrap();
        let mut buf = [9u8; 10];
        assert_eq!(g.read_at(&mut buf, 0).unwrap(), 8);
        assert_eq!(&buf[..8], b"\0\0\0hello");
        let mut a = [0u8; 4];
        let mut b = [0u8; 4];
        assert_eq!(g.read_vectored_at(&mut [&mut a, &mut b], 2).unwrap(), 6);
        assert_eq!((&a, &b[..2]), (b"\0hel", &b"lo"[..]));
        g.set_len(4).unwrap();
        assert_eq!(s.contents(p).unwrap(), b"\0\0\0h");
    }

    #[test]
    fn recording_storage_logs_and_injects() {
        let s = RecordingStorage::new();
        let p = Path::new("/r");
        let f = s.open(p, mode(true)).unwrap();
        s.inject(FaultOp::Write, FaultKind::ShortWrite, 1, 1);
        assert_eq!(f.write_at(b"abcd", 0).unwrap(), 4);
        assert_eq!(f.write_at(b"wxyz", 4).unwrap(), 2);
        s.inject(FaultOp::Sync, FaultKind::NoSpace, 0, 1);
        let e = f.sync().unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NOSPC.raw_os_error())
        );
        f.sync().unwrap();
        assert_eq!(
            s.log(),
            vec![
                StorageEvent::SetLen {
                    path: p.into(),
                    len: 0
                },
                StorageEvent::Write {
                    path: p.into(),
                    offset: 0,
                    data: b"abcd".to_vec()
                },
                StorageEvent::Write {
                    path: p.into(),
                    offset: 4,
                    data: b"wx".to_vec()
                },
                StorageEvent::Sync { path: p.into() },
            ]
        );
        assert_eq!(s.contents(p).unwrap(), b"abcdwx");
    }

    #[test]
    #[cfg_attr(miri, ignore = "real file I/O (preadv) is outside what Miri emulates")]
    fn real_files_vectored_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = FileStorage.open(&p, mode(true)).unwrap();
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
}
