//! The buffer pool as a source (its `victims(n)`, its eviction counter, a one-byte read
//! to raise a page), and the thesis's open/read/write/close wrappers over it.
//!
//! The wrappers steer the pool before every page a read or write touches, then do the
//! read or write through the pool. Files are numbered in the order they were opened;
//! the pages of files opened outside the library may appear in the pool's victim list
//! and are left out (the target never holds them).

use crate::control::InfoReplace;
use crate::source::{PageKey, Source};
use crate::{InfoReplaceError, SourceError};
use policy::HitPath;
use pool::{BufferPool, FileHandle};
use std::path::Path;

/// A file opened through the library: its number in the [`PoolSource`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileNo(pub u32);

/// The buffer pool as a source.
pub struct PoolSource {
    pool: BufferPool,
    files: Vec<Option<FileHandle>>,
    numbers: hashbrown::HashMap<FileHandle, u32>,
    listed: Vec<(FileHandle, u64)>,
}

impl PoolSource {
    /// Steer `pool`.
    pub fn new(pool: BufferPool) -> Self {
        PoolSource {
            pool,
            files: Vec::new(),
            numbers: hashbrown::HashMap::new(),
            listed: Vec::new(),
        }
    }

    /// The pool.
    pub fn pool(&self) -> &BufferPool {
        &self.pool
    }

    /// Hand the pool back.
    pub fn into_pool(self) -> BufferPool {
        self.pool
    }

    /// Number a handle the application opened on the pool itself.
    pub fn adopt(&mut self, handle: FileHandle) -> FileNo {
        let no = self.files.len() as u32;
        self.files.push(Some(handle));
        self.numbers.insert(handle, no);
        FileNo(no)
    }

    /// The pool's handle of an open file.
    pub fn handle(&self, file: FileNo) -> Result<FileHandle, SourceError> {
        self.files
            .get(file.0 as usize)
            .copied()
            .flatten()
            .ok_or_else(|| SourceError::UnknownFile {
                file: file.0,
                source_name: self.describe(),
            })
    }

    fn forget(&mut self, file: FileNo) -> Result<FileHandle, SourceError> {
        let handle = self.handle(file)?;
        self.files[file.0 as usize] = None;
        self.numbers.remove(&handle);
        Ok(handle)
    }
}

impl Source for PoolSource {
    fn describe(&self) -> String {
        format!(
            "buffer pool of {} frames ({:?} hits)",
            self.pool.capacity_frames(),
            self.pool.hit_path()
        )
    }

    fn capacity_pages(&self) -> u64 {
        self.pool.capacity_frames() as u64
    }

    fn raises_priority_on_access(&self) -> bool {
        self.pool.hit_path() != HitPath::Ignore
    }

    fn victims(&mut self, n: usize, out: &mut Vec<PageKey>) -> Result<(), SourceError> {
        self.listed = self.pool.victims(n);
        out.extend(self.listed.iter().filter_map(|(h, page)| {
            self.numbers
                .get(h)
                .map(|&file| PageKey { file, page: *page })
        }));
        Ok(())
    }

    fn is_full(&self) -> bool {
        self.pool.stats().free_frames == 0
    }

    fn evictions(&self) -> u64 {
        self.pool.stats().evictions
    }

    fn eviction_batch(&self) -> u64 {
        self.pool.eviction_batch() as u64
    }

    fn refresh(&mut self, page: PageKey) -> Result<(), SourceError> {
        let handle = self.handle(FileNo(page.file))?;
        let offset = page.page * self.pool.page_size() as u64;
        self.pool.read(handle, offset, &mut [0u8; 1])?;
        Ok(())
    }

    fn is_resident(&self, page: PageKey) -> Result<bool, SourceError> {
        let handle = self.handle(FileNo(page.file))?;
        Ok(self.pool.is_resident(handle, page.page)?)
    }
}

/// The thesis's wrappers: every page a call touches is steered, then the call is made.
impl InfoReplace<PoolSource> {
    /// Open an existing file.
    pub fn open(&mut self, path: impl AsRef<Path>) -> Result<FileNo, InfoReplaceError> {
        let handle = self.source().pool().open(path).map_err(SourceError::from)?;
        Ok(self.source_mut().adopt(handle))
    }

    /// Create (or truncate) a file.
    pub fn create(&mut self, path: impl AsRef<Path>) -> Result<FileNo, InfoReplaceError> {
        let handle = self
            .source()
            .pool()
            .create(path)
            .map_err(SourceError::from)?;
        Ok(self.source_mut().adopt(handle))
    }

    /// Read at `offset` into `buf`, like `pread`. Each page is steered just before the
    /// pool reads it, so a read spanning pages is as exact as single-page reads.
    pub fn read(
        &mut self,
        file: FileNo,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, InfoReplaceError> {
        let handle = self.source().handle(file)?;
        let len = self
            .source()
            .pool()
            .len(handle)
            .map_err(SourceError::from)?;
        let want = buf.len().min(len.saturating_sub(offset) as usize);
        let mut done = 0;
        for (page, range) in page_chunks(offset, want, self.source().pool().page_size()) {
            self.before_access(PageKey { file: file.0, page })?;
            done += self
                .source()
                .pool()
                .read(handle, offset + range.start as u64, &mut buf[range])
                .map_err(SourceError::from)?;
        }
        Ok(done)
    }

    /// Write `buf` at `offset`, like `pwrite`; each page is steered just before it is
    /// written.
    pub fn write(&mut self, file: FileNo, offset: u64, buf: &[u8]) -> Result<(), InfoReplaceError> {
        let handle = self.source().handle(file)?;
        for (page, range) in page_chunks(offset, buf.len(), self.source().pool().page_size()) {
            self.before_access(PageKey { file: file.0, page })?;
            self.source()
                .pool()
                .write(handle, offset + range.start as u64, &buf[range])
                .map_err(SourceError::from)?;
        }
        Ok(())
    }

    /// Close a file; its number is not reused.
    pub fn close(&mut self, file: FileNo) -> Result<(), InfoReplaceError> {
        let handle = self.source_mut().forget(file)?;
        self.source()
            .pool()
            .close(handle)
            .map_err(SourceError::from)?;
        Ok(())
    }
}

/// The pages of `len` bytes from `offset`, each with the part of the caller's buffer that
/// falls in it.
fn page_chunks(
    offset: u64,
    len: usize,
    page_size: usize,
) -> impl Iterator<Item = (u64, std::ops::Range<usize>)> {
    let page_size = page_size as u64;
    let mut done = 0usize;
    std::iter::from_fn(move || {
        (done < len).then(|| {
            let pos = offset + done as u64;
            let take = ((page_size - pos % page_size) as usize).min(len - done);
            let range = done..done + take;
            done += take;
            (pos / page_size, range)
        })
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunks_split_at_page_boundaries() {
        // bytes 4090..12290: 6 in page 0, two whole pages, 2 in page 3
        let chunks: Vec<_> = super::page_chunks(4090, 8200, 4096).collect();
        assert_eq!(
            chunks,
            [(0, 0..6), (1, 6..4102), (2, 4102..8198), (3, 8198..8200)]
        );
        assert_eq!(super::page_chunks(0, 0, 4096).count(), 0);
    }
}
