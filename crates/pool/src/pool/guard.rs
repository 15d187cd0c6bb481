//! The application's pins: `PageRef` (shared, zero-copy) and `PageMut` (exclusive, marks
//! the page dirty; re-zeroes bytes past the end and, in write-through mode, writes the page
//! when it drops).

use super::{FileSlot, Inner, WritePolicy};
use crate::frames::{Exclusive, Shared};
use std::sync::atomic::Ordering;

/// A pinned page, read-only and zero-copy; unpinned on drop. Never evicted while alive.
#[must_use = "the page is unpinned as soon as the guard is dropped"]
pub struct PageRef<'a> {
    pub(super) guard: Shared<'a>,
    pub(super) page: u64,
}

impl PageRef<'_> {
    /// The page number.
    pub fn page(&self) -> u64 {
        self.page
    }
}

impl std::ops::Deref for PageRef<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.guard.bytes()
    }
}

/// A page pinned for writing, exclusive and zero-copy; marked dirty. On drop, bytes past
/// the file's end are re-zeroed and, in write-through mode, the page is written (an error
/// leaves it dirty for the next `fsync` to report).
#[must_use = "the page is released as soon as the guard is dropped"]
pub struct PageMut<'a> {
    pub(super) guard: Exclusive<'a>,
    pub(super) inner: &'a Inner,
    pub(super) slot: &'a FileSlot,
    pub(super) page: u64,
}

impl PageMut<'_> {
    /// The page number.
    pub fn page(&self) -> u64 {
        self.page
    }
}

impl std::ops::Deref for PageMut<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.guard.bytes()
    }
}

impl std::ops::DerefMut for PageMut<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.guard.bytes_mut()
    }
}

impl Drop for PageMut<'_> {
    fn drop(&mut self) {
        // Held exclusively since the pin: nobody can have given the frame another page.
        debug_assert_eq!(self.guard.header().page.load(Ordering::Relaxed), self.page);
        debug_assert!(
            self.guard.header().dirty.load(Ordering::Relaxed),
            "pin_mut marks dirty"
        );
        let ps = self.inner.page_size as u64;
        let len = self.slot.len.load(Ordering::Acquire);
        let start = self.page * ps;
        if len < start + ps {
            let from = len.saturating_sub(start) as usize;
            self.guard.bytes_mut()[from..].fill(0);
        }
        self.inner.order.pin_mut_dropped();
        if self.inner.write_policy == WritePolicy::WriteThrough
            && !self.inner.is_tagged(self.guard.id())
        {
            // An error leaves the page dirty for the next `fsync` to retry and report.
            let _ =
                self.inner
                    .write_latched(self.guard.id(), self.guard.header(), self.guard.bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{quiet_builder, small_pool, victim_pages};
    use crate::testing::{RecordingStorage, StorageEvent};
    use crate::WritePolicy;

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_shared_pin_holds_its_page_until_dropped() {
        let pool = small_pool(4, "lru");
        let f = pool.create("/g").unwrap();
        pool.write(f, 0, &[1; 2 * 4096]).unwrap();
        pool.sync_all().unwrap();
        let pin = pool.pin(f, 0).unwrap();
        assert_eq!((pin.page(), pin.len(), pin[0]), (0, 4096, 1));
        assert!(!pool.inner.frames.is_idle(0));
        let victims = victim_pages(&pool, 4);
        assert_eq!(victims, [1], "a pinned page is no victim");
        drop(pin);
        assert!(pool.inner.frames.is_idle(0));
        let victims = victim_pages(&pool, 4);
        assert_eq!(
            victims,
            [1, 0],
            "the pin was a hit: page 0 is the most recent"
        );
        pool.inner.check_invariants();
    }

    /// Bytes written through a `PageMut` past the file's end are not part of the file:
    /// they are zeroed again when the guard drops (invariant 4).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn an_exclusive_pin_rezeroes_past_the_end_on_drop() {
        let pool = small_pool(4, "lru");
        let f = pool.create("/z").unwrap();
        pool.write(f, 0, &[1; 100]).unwrap();
        {
            let mut page = pool.pin_mut(f, 0).unwrap();
            assert_eq!(page.page(), 0);
            page.fill(0xff);
        }
        let page = pool.pin(f, 0).unwrap();
        assert!(page[..100].iter().all(|&b| b == 0xff));
        assert!(page[100..].iter().all(|&b| b == 0));
        drop(page);
        assert_eq!(pool.len(f).unwrap(), 100);
        assert_eq!(pool.stats().dirty_pages, 1);
        pool.inner.check_invariants();
    }

    /// In write-through mode the page reaches storage when its `PageMut` drops (and only
    /// the bytes inside the file).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn an_exclusive_pin_writes_through_on_drop() {
        let storage = RecordingStorage::new();
        let pool = quiet_builder(4, "lru")
            .write_policy(WritePolicy::WriteThrough)
            .build_with_storage(storage.clone())
            .unwrap();
        let f = pool.create("/t").unwrap();
        pool.write(f, 0, &[1; 10]).unwrap();
        let before = storage.log_len();
        let mut page = pool.pin_mut(f, 0).unwrap();
        page[..4].copy_from_slice(b"abcd");
        assert_eq!(storage.log_len(), before, "nothing written while pinned");
        drop(page);
        let mut expected = b"abcd".to_vec();
        expected.extend_from_slice(&[1; 6]);
        assert_eq!(
            storage.log()[before..],
            [StorageEvent::Write {
                path: "/t".into(),
                offset: 0,
                data: expected
            }]
        );
        assert_eq!(pool.stats().dirty_pages, 0);
        pool.inner.check_invariants();
    }
}
