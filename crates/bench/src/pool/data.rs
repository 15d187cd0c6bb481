//! The pool benchmark's data files: made in a temporary directory removed at the end,
//! filled so that a wrong page would be visible, and put into or out of the OS page cache.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::MIB;
use crate::error::BenchError;
use crate::os;

/// The data files of one invocation, in a temporary directory removed on drop.
pub(crate) struct DataDir {
    dir: tempfile::TempDir,
}

impl DataDir {
    /// A new directory in `parent`, or in the system's temporary directory.
    pub fn new(parent: Option<&Path>) -> Result<DataDir, BenchError> {
        let mut b = tempfile::Builder::new();
        b.prefix("bufcache-bench-pool-");
        let dir = match parent {
            Some(p) => b.tempdir_in(p).map_err(|e| {
                BenchError::io(format!("cannot make a directory in {}", p.display()), e)
            })?,
            None => b
                .tempdir()
                .map_err(|e| BenchError::io("cannot make a temporary directory", e))?,
        };
        Ok(DataDir { dir })
    }

    /// A file of `bytes` bytes whose every 8-byte word holds its own offset (so a wrong
    /// page would be visible), written, synced and closed.
    pub fn file(&self, name: &str, bytes: u64) -> Result<PathBuf, BenchError> {
        let path = self.dir.path().join(name);
        let write_error = |e| BenchError::io(format!("cannot write {}", path.display()), e);
        let created = File::create(&path)
            .map_err(|e| BenchError::io(format!("cannot create {}", path.display()), e))?;
        let mut f = std::io::BufWriter::with_capacity(MIB as usize, created);
        let mut offset = 0u64;
        while offset < bytes {
            f.write_all(&offset.to_le_bytes()).map_err(write_error)?;
            offset += 8;
        }
        let f = f.into_inner().map_err(|e| write_error(e.into_error()))?;
        f.sync_all()
            .map_err(|e| BenchError::io(format!("cannot sync {}", path.display()), e))?;
        Ok(path)
    }
}

/// Read all of `path` through the OS page cache, so that buffered reads of it hit.
pub(crate) fn warm_page_cache(path: &Path) -> Result<(), BenchError> {
    let mut f = os::open(path)?;
    std::io::copy(&mut f, &mut std::io::sink())
        .map_err(|e| BenchError::io(format!("cannot read {}", path.display()), e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_file_words_hold_their_offsets() {
        let d = DataDir::new(None).unwrap();
        let p = d.file("x", 3 * 4096).unwrap();
        warm_page_cache(&p).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len(), 3 * 4096);
        for (i, w) in bytes.chunks(8).enumerate() {
            assert_eq!(u64::from_le_bytes(w.try_into().unwrap()), i as u64 * 8);
        }
    }

    #[test]
    fn the_directory_goes_away_with_its_files() {
        let parent = tempfile::tempdir().unwrap();
        let d = DataDir::new(Some(parent.path())).unwrap();
        d.file("a", 4096).unwrap();
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 1);
        drop(d);
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_missing_parent_is_an_error_naming_it() {
        let e = DataDir::new(Some(Path::new("/nonexistent/dir")))
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/dir"), "{e}");
    }
}
