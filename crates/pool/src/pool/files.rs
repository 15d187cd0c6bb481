//! Files: handles, slots and their lifecycle (`open`, `close`), and changes of length
//! (`set_len`). The two operations that must see every page of a file hold its resize lock
//! exclusively and latch the pages with `latch_pages`, which never waits for an
//! application pin (module docs of `pool`, invariant 6).

use super::{BufferPool, Inner};
use crate::error::PoolError;
use crate::frames::{backoff, Exclusive};
use crate::lookup::{PageKey, Table};
use crate::storage::{OpenMode, StorageFile};
use parking_lot::RwLock;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A file opened in a pool. Copyable; stale after `close` (operations then return
/// [`PoolError::Closed`], even if the slot has been reused by another file). A handle is
/// only valid in the pool that opened it: another pool refuses it with `Closed` too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C)] // the pool id first: a page hint's fast path reads it (`hint.rs`)
pub struct FileHandle {
    /// The pool's identity (see `NEXT_POOL_ID`).
    pub(super) pool: u64,
    pub(super) slot: u32,
    pub(super) gen: u32,
}

/// Identities handed to pools, so a handle from one pool is refused by another.
pub(super) static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);

impl FileHandle {
    /// The frame-header owner word of this handle's pages (unique within its pool).
    #[inline]
    pub(super) fn owner(self) -> u64 {
        (u64::from(self.gen) << 32) | u64::from(self.slot)
    }

    #[inline]
    pub(super) fn key(self, page: u64) -> PageKey {
        PageKey {
            slot: self.slot,
            gen: self.gen,
            page,
        }
    }
}

pub(super) struct OpenFile {
    pub(super) file: Arc<dyn StorageFile>,
    pub(super) path: PathBuf,
}

pub(super) struct FileSlot {
    /// `gen << 2 | OPEN | BUSY`: the generation of the file that has (or last had) the
    /// slot, whether it is open, and whether a close is still releasing it. The slot is
    /// free for `open` only when neither flag is set.
    pub(super) state: AtomicU64,
    pub(super) file: RwLock<Option<OpenFile>>,
    /// Logical length: what `len` returns, including writes not yet on storage.
    pub(super) len: AtomicU64,
    /// Shared while a write changes a page or a load brings one in; exclusive for
    /// `set_len`, `close` and the `O_DIRECT` trim, which must see every page of the file
    /// that exists and know that no other will appear. Never held while waiting for a
    /// frame latch the application may hold (a pin can be held for ever), which is what
    /// keeps pins of different pages from ever blocking each other.
    pub(super) resize: RwLock<()>,
    /// The page after the last one loaded: a miss there is sequential (read-ahead).
    pub(super) ra_next: AtomicU64,
}

/// `FileSlot::state`: a file is open in the slot.
pub(super) const OPEN: u64 = 1;
/// `FileSlot::state`: a close is releasing the slot (not open, not yet free).
pub(super) const BUSY: u64 = 2;

impl FileSlot {
    pub(super) fn new() -> Self {
        FileSlot {
            state: AtomicU64::new(0),
            file: RwLock::new(None),
            len: AtomicU64::new(0),
            resize: RwLock::new(()),
            ra_next: AtomicU64::new(0),
        }
    }

    /// Generation of the slot's current or last file.
    pub(super) fn gen(&self) -> u32 {
        (self.state.load(Ordering::Acquire) >> 2) as u32
    }
}

#[inline]
pub(super) fn open_state(gen: u32) -> u64 {
    (u64::from(gen) << 2) | OPEN
}

impl Inner {
    #[inline]
    pub(super) fn slot(&self, fh: FileHandle) -> Result<&FileSlot, PoolError> {
        let s = self
            .files
            .get(fh.slot as usize)
            .ok_or(PoolError::Closed(fh))?;
        if s.state.load(Ordering::Acquire) != open_state(fh.gen) || fh.pool != self.id {
            return Err(PoolError::Closed(fh));
        }
        Ok(s)
    }

    /// The handle of the file whose pages carry `owner` (a frame header's owner word).
    #[inline]
    pub(super) fn handle_of(&self, owner: u64) -> FileHandle {
        FileHandle {
            pool: self.id,
            slot: owner as u32,
            gen: (owner >> 32) as u32,
        }
    }

    #[inline]
    pub(super) fn is_open(&self, fh: FileHandle) -> bool {
        self.slot(fh).is_ok()
    }

    #[inline]
    pub(super) fn pages_of(&self, len: u64) -> u64 {
        // a shift, not a division: this is on the pin path
        (len >> self.page_shift) + u64::from(len & (self.page_size as u64 - 1) != 0)
    }

    pub(super) fn file_of(
        &self,
        fh: FileHandle,
    ) -> Result<(Arc<dyn StorageFile>, PathBuf), PoolError> {
        let slot = self.slot(fh)?;
        let g = slot.file.read();
        match &*g {
            Some(f) if slot.state.load(Ordering::Acquire) == open_state(fh.gen) => {
                Ok((Arc::clone(&f.file), f.path.clone()))
            }
            _ => Err(PoolError::Closed(fh)),
        }
    }

    /// Frames currently owned by `fh` (a racy snapshot: callers re-check under a latch).
    pub(super) fn frames_of(&self, fh: FileHandle) -> Vec<u32> {
        let owner = fh.owner();
        (0..self.frames.len() as u32)
            .filter(|&id| self.frames.header(id).owner.load(Ordering::Relaxed) == owner)
            .collect()
    }

    /// The page frame `id` holds for `owner`, read without its latch: `None` if the frame
    /// is not `owner`'s. A frame can stop being the owner's at any moment (evicted and
    /// claimed for another file's page), so the page is read between two reads of the
    /// owner: `claim` publishes the page with `Release` after the owner, so another
    /// file's page number is never seen with our owner on both sides. The answer is a page
    /// the frame held for `owner` at some moment of the call; a caller that holds the
    /// owner's resize lock exclusively (no frame can *become* the owner's) gets the
    /// page it holds now, unless it has just stopped being the owner's.
    pub(super) fn page_owned_by(&self, id: u32, owner: u64) -> Option<u64> {
        let h = self.frames.header(id);
        if h.owner.load(Ordering::Acquire) != owner {
            return None;
        }
        let page = h.page.load(Ordering::Acquire);
        (h.owner.load(Ordering::Acquire) == owner).then_some(page)
    }

    /// Latch exclusively every resident page of `fh` for which `wanted(page)` holds, and
    /// return them. The caller holds the file's resize lock exclusively, so no page of the
    /// file can be loaded meanwhile: a frame that is the file's now was the file's when the
    /// snapshot was taken, and one that is not can never become it. A wanted page the
    /// application has pinned is refused with `PagePinned` (an application pin can last for
    /// ever, and its holder may be waiting for the resize lock); the pool's own latches
    /// (a copy, a load, a flusher write) are brief and waited out.
    pub(super) fn latch_pages(
        &self,
        fh: FileHandle,
        wanted: impl Fn(u64) -> bool,
    ) -> Result<Vec<(Exclusive<'_>, u64)>, PoolError> {
        let owner = fh.owner();
        let mut out = Vec::new();
        for id in self.frames_of(fh) {
            let h = self.frames.header(id);
            let mut spins = 0;
            loop {
                if let Some(g) = self.frames.try_exclusive(id) {
                    let page = h.page.load(Ordering::Relaxed);
                    if h.owner.load(Ordering::Relaxed) == owner && wanted(page) {
                        out.push((g, page));
                    }
                    break;
                }
                let pinned = self.frames.user_pinned(id);
                let Some(page) = self.page_owned_by(id, owner) else {
                    break;
                };
                if !wanted(page) {
                    break;
                }
                if pinned {
                    return Err(PoolError::PagePinned { page });
                }
                backoff(&mut spins);
            }
        }
        Ok(out)
    }
}

impl BufferPool {
    pub(super) fn open_with(&self, path: &Path, create: bool) -> Result<FileHandle, PoolError> {
        let inner = &*self.inner;
        let _g = inner.open_lock.lock();
        // A free slot (neither open nor still being released by a close) whose generation
        // can still grow: a slot whose generation would wrap is retired, so that a handle
        // closed 2^32 opens ago can never become valid again.
        let Some(slot_no) = inner.files.iter().position(|s| {
            let state = s.state.load(Ordering::Acquire);
            state & (OPEN | BUSY) == 0 && s.gen() < u32::MAX
        }) else {
            return Err(PoolError::TooManyOpenFiles {
                max: inner.files.len(),
            });
        };
        let slot = &inner.files[slot_no];
        let io = |op, source| PoolError::Io {
            path: path.to_path_buf(),
            op,
            source,
        };
        let file = inner
            .storage
            .open(
                path,
                OpenMode {
                    create,
                    direct: inner.direct,
                },
            )
            .map_err(|e| io("open", e))?;
        let len = file.len().map_err(|e| io("stat", e))?;
        let gen = slot.gen() + 1;
        let fh = FileHandle {
            pool: inner.id,
            slot: slot_no as u32,
            gen,
        };
        *slot.file.write() = Some(OpenFile {
            file,
            path: path.to_path_buf(),
        });
        slot.len.store(len, Ordering::Release);
        slot.ra_next.store(0, Ordering::Relaxed);
        if let Table::Mapped(m) = &inner.table {
            m.open(fh.slot, gen);
        }
        slot.state.store(open_state(gen), Ordering::Release);
        Ok(fh)
    }

    /// Open an existing file for reading and writing.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<FileHandle, PoolError> {
        self.open_with(path.as_ref(), false)
    }

    /// Create a file (truncating an existing one) for reading and writing.
    pub fn create(&self, path: impl AsRef<Path>) -> Result<FileHandle, PoolError> {
        self.open_with(path.as_ref(), true)
    }

    /// Truncate or extend the file. Cached pages past the new end are dropped, and the
    /// storage file is resized at once. Refused with [`PoolError::PagePinned`] (changing
    /// nothing) if the application pins a page that would be dropped, or the last page when
    /// it is cut inside.
    pub fn set_len(&self, f: FileHandle, len: u64) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let _resize = slot.resize.write();
        inner.slot(f)?;
        // Ordered writes first: none of this file's may be dropped or overtaken.
        inner.flush_ordered_all()?;
        let old = slot.len.load(Ordering::Acquire);
        if len == old {
            return Ok(());
        }
        let ps = inner.page_size as u64;
        let keep_pages = inner.pages_of(len);
        // The last kept page, when the new end cuts it: its bytes past the end are zeroed
        // (invariant 4). Growing needs none: the old last page is zero past the old end.
        let cut_page = (len < old && !len.is_multiple_of(ps)).then(|| keep_pages - 1);
        let latched = if len < old {
            inner.latch_pages(f, |page| page >= keep_pages || Some(page) == cut_page)?
        } else {
            Vec::new()
        };
        let (file, path) = inner.file_of(f)?;
        file.set_len(len).map_err(|source| PoolError::Io {
            path,
            op: "set_len",
            source,
        })?;
        // Published while the pages are still latched: from here on a write of the cut
        // page (the flusher's, an eviction's) writes only up to the new end, never the old
        // bytes after the storage truncation.
        slot.len.store(len, Ordering::Release);
        let mut state = None;
        for (mut g, page) in latched {
            if page >= keep_pages {
                inner.discard(g, state.get_or_insert_with(|| inner.policy.lock()));
            } else {
                let from = (len % ps) as usize;
                g.bytes_mut()[from..].fill(0);
            }
        }
        drop(state);
        // No page past the end is left (none can be loaded while the resize lock is held).
        // Kept pages of the file may be evicted and their frames reused by other files
        // meanwhile: hence the owner read on both sides of the page.
        debug_assert!(inner.frames_of(f).iter().all(|&id| inner
            .page_owned_by(id, f.owner())
            .is_none_or(|page| page < keep_pages)));
        Ok(())
    }

    /// Write the file's dirty pages, drop its pages from the pool and close it. If a page
    /// cannot be written, or is pinned, the error is returned and the file stays open
    /// (nothing is lost; close again later). Close does not sync: call `fsync` first for
    /// durability. Operations on the file that run concurrently with a successful close
    /// either finish before it or fail with [`PoolError::Closed`].
    pub fn close(&self, f: FileHandle) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        // No write or load of the file runs while this is held, so no page of it appears.
        let _resize = slot.resize.write();
        inner.slot(f)?;
        // Ordered writes first: close writes the file's pages in no particular order.
        inner.flush_ordered_all()?;
        // Every page of the file, latched: no hit, flusher write or eviction touches them
        // while the dirty ones are written and all are dropped. An application pin refuses
        // the close before anything changed.
        let latched = inner.latch_pages(f, |_| true)?;
        let (file, path) = inner.file_of(f)?;
        let len = slot.len.load(Ordering::Acquire);
        for (g, page) in &latched {
            let h = g.header();
            if h.dirty.load(Ordering::Acquire) {
                // The file stays open on error: the pages not yet written stay dirty.
                inner.write_page(&*file, &path, *page, g.bytes(), len)?;
                inner.clear_dirty(g.id(), h);
                h.write_failed.store(false, Ordering::Relaxed);
            }
        }
        // Last, after every whole-page write: nothing can write a page of the file now.
        inner.trim_to(&*file, &path, len)?;
        // Closed: new operations fail; ones already past their check find their pages
        // gone once the latches drop, and fail at the check when they retry.
        slot.state
            .store((u64::from(f.gen) << 2) | BUSY, Ordering::Release);
        let mut state = inner.policy.lock();
        for (g, _) in latched {
            inner.discard(g, &mut state);
        }
        drop(state);
        debug_assert!(
            inner.frames_of(f).is_empty(),
            "a page of a closed file is left"
        );
        *slot.file.write() = None;
        // Free for `open` only now that nothing of the old file is left in the slot.
        slot.state.store(u64::from(f.gen) << 2, Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{resident_pages, small_pool};
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_length_is_this_many_pages() {
        let pool = small_pool(4, "lru");
        let pages: Vec<u64> = [0, 1, 4095, 4096, 4097, 8192]
            .iter()
            .map(|&len| pool.inner.pages_of(len))
            .collect();
        assert_eq!(pages, [0, 1, 1, 1, 2, 2]);
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn handles_are_refused_after_close_and_by_other_pools() {
        let pool = small_pool(4, "lru");
        let other = small_pool(4, "lru");
        let f = pool.create("/c").unwrap();
        assert_eq!(pool.inner.handle_of(f.owner()), f);
        assert!(matches!(other.len(f), Err(PoolError::Closed(h)) if h == f));
        pool.close(f).unwrap();
        assert!(matches!(pool.len(f), Err(PoolError::Closed(_))));
        assert!(matches!(pool.close(f), Err(PoolError::Closed(_))));
        // the slot is reused with the next generation
        let g = pool.open("/c").unwrap();
        assert_eq!((g.slot, g.gen), (f.slot, f.gen + 1));
        assert!(matches!(
            pool.open("/missing"),
            Err(PoolError::Io { op: "open", .. })
        ));
    }

    /// Truncating drops the pages past the new end, zeroes the tail of the last one
    /// (invariant 4: checked by `check_invariants`) and resizes the storage file.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn truncation_drops_pages_and_zeroes_the_tail() {
        let pool = small_pool(4, "lru");
        let f = pool.create("/t").unwrap();
        pool.write(f, 0, &[7; 3 * 4096]).unwrap();
        pool.set_len(f, 5000).unwrap();
        assert_eq!(resident_pages(&pool, f), [0, 1]);
        assert_eq!(pool.len(f).unwrap(), 5000);
        pool.inner.check_invariants();
        pool.set_len(f, 3 * 4096).unwrap();
        let page = pool.pin(f, 1).unwrap();
        assert!(page[..904].iter().all(|&b| b == 7));
        assert!(
            page[904..].iter().all(|&b| b == 0),
            "old bytes do not come back"
        );
    }

    /// `set_len` never waits for an application pin it would have to drop.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn truncation_refuses_a_pinned_page() {
        let pool = small_pool(4, "lru");
        let f = pool.create("/p").unwrap();
        pool.write(f, 0, &[1; 2 * 4096]).unwrap();
        let pin = pool.pin(f, 1).unwrap();
        assert!(matches!(
            pool.set_len(f, 4096),
            Err(PoolError::PagePinned { page: 1 })
        ));
        assert_eq!(pool.len(f).unwrap(), 2 * 4096);
        drop(pin);
        pool.set_len(f, 4096).unwrap();
        assert_eq!(resident_pages(&pool, f), [0]);
        pool.inner.check_invariants();
    }
}
