//! Page hints: a caller remembers which frame held a page, and a hit goes straight to that
//! frame, with no (file, offset) translation (the file and length checks, the page table's
//! walk), as a B-tree holding LeanStore's swizzled pointers or vmcache's page ids does.
//!
//! A [`PageHint`] names one page of one file (its handle and page number) and remembers
//! the frame that held it, the frame's *tag* (its version and wrap count, `frames::tag`)
//! and how many of the page's bytes lay inside the file, all taken while the page was
//! pinned. A hinted read or pin trusts the frame only while its tag is unchanged:
//!
//! * every change of what a frame holds or of its bytes happens under its exclusive
//!   latch, and every release of that latch moves the tag: a load or an eviction (the
//!   frame's page changes), a write or a `PageMut` (its bytes), a `set_len` that drops the
//!   page or cuts it inside (both latch it: `files.rs`), a `close` (it latches and drops
//!   every page of the file before the slot is reused), a shrink of the pool (it latches
//!   the frames it retires). So an unchanged tag means the frame still holds the page,
//!   the file is still open, and the page still has at least the remembered bytes inside
//!   the file (a file only shrinks past a page by latching it; growing never shortens a
//!   page). A read within the remembered bytes is then exactly what `read` would return.
//! * a hint is checked against the pool (its handle's pool id, unique in the process),
//!   so a hint from another pool names no frame of this one and takes the full path,
//!   where that pool's handle is refused with [`PoolError::Closed`].
//! * the tag has 46 bits, so a stale hint is taken for a fresh one only if its frame was
//!   latched exclusively a multiple of 2^46 times between the hint and its use (at
//!   20 ns a latch, about 16 days of latching that one frame and nothing else).
//!
//! What a hinted hit skips is the translation, nothing it records: it counts a hit and
//! records it for the policy (`touch`) exactly as the unhinted hit does, and declines a
//! read-ahead trigger, so the policy and the statistics see the same accesses either way.
//! Anything else (an empty or stale hint, a read past the remembered bytes, a miss) takes
//! the full path, counts a `hint_refreshes`, and refreshes the hint from the pin it took.

use super::hits::OptimisticHit;
use super::{BufferPool, FileHandle, FileSlot, PageRef};
use crate::error::PoolError;
use crate::frames::Shared;
use crate::stats::Counter;
use std::sync::atomic::Ordering;

/// A remembered frame for one page of one file (module docs of `pool::hint`; the user's
/// guide is `docs/pool.md`, "Page hints"). Made by [`BufferPool::hint`], empty; the first
/// hinted read or pin fills it and later ones go straight to the frame while it still
/// holds the page. Cheap to copy; holds no pin and keeps nothing resident.
///
/// 40 bytes, laid out so that what a hit reads (tag, frame, length, and the handle's pool
/// id) are its first 24: a caller's array of hints is read at random, and a hint whose
/// hot part straddles two cache lines costs a second miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct PageHint {
    /// The frame's tag when the hint was taken.
    tag: u64,
    frame: u32,
    /// Bytes of the page inside the file when the hint was taken (0: empty, and `frame`
    /// means nothing).
    len: u32,
    file: FileHandle,
    page: u64,
}

impl PageHint {
    /// The file the hint is for.
    pub fn file(&self) -> FileHandle {
        self.file
    }

    /// The page the hint is for.
    pub fn page(&self) -> u64 {
        self.page
    }

    /// Whether the hint remembers a frame (it may still be stale).
    pub fn is_filled(&self) -> bool {
        self.len != 0
    }

    /// Remember `pin`'s frame, which holds the page now, with `file_len` the file's length
    /// read while pinned (module docs: a shrink that cuts or drops the page must latch
    /// it, which waits for the pin, so the length read is not below the page's true one
    /// by the time the tag can be seen unchanged).
    fn fill(&mut self, pin: &Shared<'_>, file_len: u64, page_size: usize) {
        let start = self.page.saturating_mul(page_size as u64);
        self.len = file_len.saturating_sub(start).min(page_size as u64) as u32;
        self.frame = pin.id();
        self.tag = pin.tag();
    }
}

impl BufferPool {
    /// An empty hint for page `page` of `f` (no lookup: the first hinted read or pin fills
    /// it). Errors with [`PoolError::Closed`] for a closed handle or another pool's.
    pub fn hint(&self, f: FileHandle, page: u64) -> Result<PageHint, PoolError> {
        self.inner.slot(f)?;
        Ok(PageHint {
            file: f,
            page,
            tag: 0,
            frame: 0,
            len: 0,
        })
    }

    /// Read `buf.len()` bytes from byte `in_page` of the hinted page, optimistically,
    /// going straight to the remembered frame: the same result as
    /// [`read`](BufferPool::read) at `page * page_size + in_page` (short only at the end
    /// of the file; a range past the page continues into the next pages through the full
    /// path), with no pin when the hint is fresh. A stale or empty hint takes the full
    /// path and is refreshed. Errors as `read`'s, and with [`PoolError::OutOfRange`] for a
    /// page whose first byte lies beyond `u64::MAX`.
    #[inline]
    pub fn read_hinted(
        &self,
        hint: &mut PageHint,
        in_page: usize,
        buf: &mut [u8],
    ) -> Result<usize, PoolError> {
        let inner = &*self.inner;
        let len = hint.len as usize;
        if hint.file.pool == inner.id && in_page < len && buf.len() <= len - in_page {
            let tag = hint.tag;
            let hit = inner.copy_hit(hint.frame, in_page, buf, |w, seen| {
                w.tag(seen) == tag && !w.ra_marked()
            });
            if hit == OptimisticHit::Hit {
                return Ok(buf.len());
            }
        }
        self.read_hinted_slow(hint, in_page, buf)
    }

    #[cold]
    fn read_hinted_slow(
        &self,
        hint: &mut PageHint,
        in_page: usize,
        buf: &mut [u8],
    ) -> Result<usize, PoolError> {
        let inner = &*self.inner;
        inner.counters.bump(Counter::HintRefreshes);
        let (f, page, ps) = (hint.file, hint.page, inner.page_size);
        let offset = page
            .checked_mul(ps as u64)
            .and_then(|start| start.checked_add(in_page as u64));
        let Some(offset) = offset else {
            return Err(PoolError::OutOfRange {
                offset: u64::MAX,
                len: buf.len() as u64,
            });
        };
        if in_page >= ps || buf.len() > ps - in_page {
            // Not a read of this page alone: `read`'s job, and nothing to remember.
            return self.read(f, offset, buf);
        }
        let slot = inner.slot(f)?;
        let file_len = slot.len.load(Ordering::Acquire);
        if offset >= file_len || buf.is_empty() {
            return Ok(0);
        }
        let n = (file_len - offset).min(buf.len() as u64) as usize;
        let pin = inner.pin_to_read(slot, f, page)?;
        buf[..n].copy_from_slice(&pin.bytes()[in_page..in_page + n]);
        hint.fill(&pin, slot.len.load(Ordering::Acquire), ps);
        Ok(n)
    }

    /// [`pin`](BufferPool::pin) of the hinted page, going straight to the remembered
    /// frame (one compare-and-swap that also proves the tag unchanged) when the hint is
    /// fresh; a stale or empty hint takes the full path and is refreshed.
    #[inline]
    pub fn pin_hinted(&self, hint: &mut PageHint) -> Result<PageRef<'_>, PoolError> {
        let inner = &*self.inner;
        if hint.file.pool == inner.id && hint.len != 0 {
            let tag = hint.tag;
            let pinned = inner.pin_hit(hint.frame, true, |w, cur| {
                w.tag(cur) == tag && !w.ra_marked()
            });
            if let Some(guard) = pinned {
                return Ok(PageRef {
                    guard,
                    page: hint.page,
                });
            }
        }
        self.pin_hinted_slow(hint)
    }

    #[cold]
    fn pin_hinted_slow(&self, hint: &mut PageHint) -> Result<PageRef<'_>, PoolError> {
        let inner = &*self.inner;
        inner.counters.bump(Counter::HintRefreshes);
        let pinned = self.pin(hint.file, hint.page)?;
        // The pin succeeded, so the handle named an open slot of this pool.
        let slot: &FileSlot = &inner.files[hint.file.slot as usize];
        hint.fill(
            &pinned.guard,
            slot.len.load(Ordering::Acquire),
            inner.page_size,
        );
        Ok(pinned)
    }
}

// The layout the doc comment of `PageHint` promises.
const _: () = assert!(std::mem::size_of::<PageHint>() == 40);

#[cfg(test)]
mod tests {
    use super::super::check::small_pool;
    use super::*;

    /// A filled hint remembers the frame, its tag while pinned and the page's bytes in
    /// the file: the last page of a 2.5-page file has 2048.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_refresh_remembers_frame_tag_and_the_bytes_inside_the_file() {
        let pool = small_pool(8, "clock");
        let f = pool.create("/h").unwrap();
        pool.write(f, 0, &[1; 4096 * 2 + 2048]).unwrap();
        let mut last = pool.hint(f, 2).unwrap();
        assert!(!last.is_filled());
        let g = pool.pin_hinted(&mut last).unwrap();
        assert_eq!(
            (last.frame, last.tag, last.len),
            (g.guard.id(), g.guard.tag(), 2048)
        );
        drop(g);
        let mut first = pool.hint(f, 0).unwrap();
        assert_eq!(pool.read_hinted(&mut first, 8, &mut [0; 8]).unwrap(), 8);
        assert_eq!(first.len, 4096);
        assert_eq!(pool.stats().hint_refreshes, 2);
    }

    /// A hint whose tag no longer matches its frame's is not used, even though the frame
    /// still holds the page (here: the version moved by a write of the same bytes).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_tag_mismatch_is_never_served_from_the_frame() {
        let pool = small_pool(8, "clock");
        let f = pool.create("/h").unwrap();
        pool.write(f, 0, &[7; 4096]).unwrap();
        let mut h = pool.hint(f, 0).unwrap();
        pool.read_hinted(&mut h, 0, &mut [0; 8]).unwrap();
        let stale = PageHint {
            tag: h.tag ^ 1,
            ..h
        };
        let tag = stale.tag;
        let hit = pool
            .inner
            .copy_hit(stale.frame, 0, &mut [0; 8], |w, seen| w.tag(seen) == tag);
        assert_eq!(hit, OptimisticHit::Absent);
        assert!(pool
            .inner
            .pin_hit(stale.frame, true, |w, cur| w.tag(cur) == tag)
            .is_none());
        let fresh = h.tag;
        assert!(pool
            .inner
            .pin_hit(h.frame, true, |w, cur| w.tag(cur) == fresh)
            .is_some());
    }
}
