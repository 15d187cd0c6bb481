//! [`RecordingStorage`]: a storage that logs every write, length change and sync in the
//! order they took effect, and fails chosen operations on demand, so that a test can
//! rebuild every state a crash could leave on disk and drive every error path.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::MemStorage;
use crate::storage::{read_full_at, OpenMode, Storage, StorageFile};

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
    /// `write_at` / `write_vectored_at` (one fault per call).
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

    /// One call, so one chance for a fault (a short one writes the first half of the
    /// bytes); logged as one `Write` per buffer, since the pages of one `pwritev` reach
    /// the disk independently (a crash may keep any of them).
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<usize> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let n = match self.fire(FaultOp::Write) {
            None => total,
            Some(FaultKind::ShortWrite) => total / 2,
            Some(kind) => return Err(fault_error(kind)),
        };
        let mut done = 0usize;
        for buf in bufs {
            let part = &buf[..buf.len().min(n - done)];
            if part.is_empty() {
                break;
            }
            let at = offset + done as u64;
            let event = || StorageEvent::Write {
                path: self.path.clone(),
                offset: at,
                data: part.to_vec(),
            };
            self.storage
                .logged(event, || self.inner.write_at(part, at))?;
            done += part.len();
        }
        Ok(done)
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
    use super::*;

    #[test]
    fn recording_storage_logs_and_injects() {
        let s = RecordingStorage::new();
        let p = Path::new("/r");
        let f = s.open(p, OpenMode::buffered(true)).unwrap();
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
}
