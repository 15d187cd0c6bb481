//! Storage whose sync costs what a disk's cache flush costs: a wrapper that passes every
//! operation to the storage underneath and, after each successful `sync`, sleeps a fixed
//! modeled latency.
//!
//! Why: the virtual disk of the reference machine acknowledges `fsync` in 0.3–0.7 ms, far
//! less than a disk that really flushes a volatile write cache (a few ms for an SSD
//! without power-loss protection, 5–15 ms for a rotating disk), and neither a
//! device-mapper `delay` target nor a slow block device can be created there. Ordering
//! mechanisms differ exactly in how many syncs they wait for, so the experiment charges
//! each sync a latency chosen on the command line and says so in its output. Only the
//! wall time changes: the data, the writes and the order in which they reach the file
//! are those of the real storage.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pool::{BatchRead, OpenMode, Storage, StorageFile};

/// `inner`, with every sync followed by a sleep of `delay`.
#[derive(Clone, Debug)]
pub struct SlowSync<S> {
    inner: S,
    delay: Duration,
}

impl<S: Storage> SlowSync<S> {
    /// Charge `delay` per sync on top of `inner`'s own cost.
    pub fn new(inner: S, delay: Duration) -> Self {
        SlowSync { inner, delay }
    }
}

impl<S: Storage> Storage for SlowSync<S> {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn StorageFile>> {
        let file = self.inner.open(path, mode)?;
        if self.delay.is_zero() {
            return Ok(file);
        }
        Ok(Arc::new(SlowSyncFile {
            inner: file,
            delay: self.delay,
        }))
    }
}

/// One open file of [`SlowSync`].
struct SlowSyncFile {
    inner: Arc<dyn StorageFile>,
    delay: Duration,
}

impl StorageFile for SlowSyncFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.inner.read_at(buf, offset)
    }

    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        self.inner.read_vectored_at(bufs, offset)
    }

    fn read_batch(&self, reads: &mut [BatchRead<'_>]) {
        self.inner.read_batch(reads);
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.inner.write_at(buf, offset)
    }

    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<usize> {
        self.inner.write_vectored_at(bufs, offset)
    }

    fn sync(&self) -> io::Result<()> {
        self.inner.sync()?;
        std::thread::sleep(self.delay);
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn is_empty(&self) -> io::Result<bool> {
        self.inner.is_empty()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pool::MemStorage;
    use std::time::Instant;

    /// Data goes through unchanged, and a sync takes at least the modeled latency.
    #[test]
    fn syncs_are_charged_and_data_passes_through() {
        let s = SlowSync::new(MemStorage::new(), Duration::from_millis(20));
        let mode = OpenMode {
            create: true,
            direct: false,
        };
        let f = s.open(Path::new("/x"), mode).unwrap();
        assert_eq!(f.write_at(b"abc", 2).unwrap(), 3);
        let mut buf = [0u8; 5];
        assert_eq!(f.read_at(&mut buf, 0).unwrap(), 5);
        assert_eq!(&buf, b"\0\0abc");
        assert_eq!(f.len().unwrap(), 5);
        let began = Instant::now();
        f.sync().unwrap();
        assert!(began.elapsed() >= Duration::from_millis(20));
    }
}
