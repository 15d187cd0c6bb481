//! What InfoReplace needs from the cache it steers: a *source* (thesis §3.3.1).
//!
//! The thesis's kernel exported two things: the victim list (the next `N` pages it would
//! evict) and a cheap eviction counter, mapped into the process, that says how far the
//! list has moved since it was last read. Raising a page's priority needs nothing new: a
//! read does it, as a side effect, in every policy that counts hits. [`Source`] is those
//! three operations, plus residency for measuring accuracy.

use crate::SourceError;

/// A page of a file as InfoReplace names it: the file's number in the library (the order
/// it was opened in) and the page's number in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageKey {
    /// File number.
    pub file: u32,
    /// Page number within the file.
    pub page: u64,
}

impl PageKey {
    /// The key the target simulation uses: the file in the high 32 bits and the page in
    /// the low 32, as the DES forms its keys, so that PinRange (which reads the page
    /// number from the low bits) works unchanged. `None` past 2^32 pages.
    #[inline]
    pub fn key(self) -> Option<u64> {
        (self.page < 1 << 32).then(|| (u64::from(self.file) << 32) | self.page)
    }

    /// The page a key names (the inverse of [`PageKey::key`]).
    #[inline]
    pub fn from_key(key: u64) -> Self {
        PageKey {
            file: (key >> 32) as u32,
            page: key & 0xffff_ffff,
        }
    }
}

/// A cache InfoReplace can steer.
pub trait Source {
    /// One line saying what this is, for reports and errors.
    fn describe(&self) -> String;

    /// How many pages the cache holds when full: the target is simulated at this size.
    fn capacity_pages(&self) -> u64;

    /// Whether reading a resident page raises its priority. A source that answers no
    /// (FIFO, Random) is refused: nothing the library does could keep a page.
    fn raises_priority_on_access(&self) -> bool;

    /// Whether the source can list its next victims at all.
    fn has_victim_list(&self) -> bool {
        true
    }

    /// Append the next `n` pages the cache would evict, first victim first. Pages of
    /// files the library did not open are left out (they are never the target's).
    fn victims(&mut self, n: usize, out: &mut Vec<PageKey>) -> Result<(), SourceError>;

    /// How many pages the cache has evicted so far: a counter that only grows (the
    /// thesis's memory-mapped counter), read on every call, so it must be cheap.
    fn evictions(&self) -> u64;

    /// Whether the next page brought in will evict one (no free frame is left).
    fn is_full(&self) -> bool;

    /// The most pages one access may evict at once (the pool evicts in batches): the
    /// library keeps at least this many victims clear of wanted pages.
    fn eviction_batch(&self) -> u64 {
        1
    }

    /// Access `page` to raise its priority (a one-byte read), without it counting as the
    /// application's access.
    fn refresh(&mut self, page: PageKey) -> Result<(), SourceError>;

    /// Whether `page` is resident now, without disturbing the cache (for accuracy).
    fn is_resident(&self, page: PageKey) -> Result<bool, SourceError>;

    /// Whether `page` is resident as far as the source can tell cheaply: asked before
    /// every access to decide whether to look at the victim list. A source whose ground
    /// truth costs a system call (the page cache) answers from its mirror instead.
    fn predicts_resident(&self, page: PageKey) -> bool {
        self.is_resident(page).unwrap_or(false)
    }

    /// The target has just evicted `page`. A source with a cheaper lever than waiting
    /// for its own eviction (the page cache's `POSIX_FADV_DONTNEED`) may drop the page
    /// now; the default does nothing.
    fn target_evicted(&mut self, page: PageKey) -> Result<(), SourceError> {
        let _ = page;
        Ok(())
    }
}
