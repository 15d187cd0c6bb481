//! [`MemStorage`]: files kept in memory, for tests and examples that need no disk.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::storage::{OpenMode, Storage, StorageFile};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_storage_reads_what_was_written_and_shares_files() {
        let s = MemStorage::new();
        let p = Path::new("/a");
        assert!(s.open(p, OpenMode::buffered(false)).is_err());
        let f = s.open(p, OpenMode::buffered(true)).unwrap();
        assert_eq!(f.write_at(b"hello", 3).unwrap(), 5);
        let g = s.open(p, OpenMode::buffered(false)).unwrap();
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
}
