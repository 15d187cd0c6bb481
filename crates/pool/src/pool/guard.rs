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
        let ps = self.inner.page_size as u64;
        let len = self.slot.len.load(Ordering::Acquire);
        let start = self.page * ps;
        if len < start + ps {
            let from = len.saturating_sub(start) as usize;
            self.guard.bytes_mut()[from..].fill(0);
        }
        if self.inner.write_policy == WritePolicy::WriteThrough {
            // An error leaves the page dirty for the next `fsync` to retry and report.
            let _ =
                self.inner
                    .write_latched(self.guard.id(), self.guard.header(), self.guard.bytes());
        }
    }
}
