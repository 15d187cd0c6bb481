//! The guards of the latch protocol (`Shared`, `Exclusive`) and the located words of a
//! hit (`HitWords`). Only this module and its parent touch the state word.
#![allow(unsafe_code)]

use super::{release, tag, Frames, Header, Hot, USER_EXCL, USER_ONE};
#[cfg(loom)]
use loom::sync::atomic::{AtomicU32, AtomicU64, AtomicU8};
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8};

/// A frame's words that a hit reads and writes ([`Frames::hit_words`]), and the address of
/// its bytes, found with one lookup of its chunk: a hit then locates nothing twice (the
/// chunk lookup, its bounds check and the multiplication by the page size were a tenth of
/// a pin's instructions when the guard's `bytes` did them again).
pub(crate) struct HitWords<'a> {
    pub(super) hot: &'a Hot,
    /// The frame's first byte (inside its chunk's allocation; see `Frames::hit_words`).
    pub(super) frame: NonNull<u8>,
}

impl<'a> HitWords<'a> {
    /// Whether the frame holds the first page of a read-ahead window (a hint).
    #[inline]
    pub(crate) fn ra_marked(&self) -> bool {
        self.hot.ra_mark.load(Ordering::Relaxed)
    }

    /// The frame's hit counter (see [`Hot`]).
    #[inline]
    pub(crate) fn refs(&self) -> &'a AtomicU8 {
        &self.hot.refs
    }

    /// The frame's last access on the pool's coarse clock (see [`Hot`]).
    #[inline]
    pub(crate) fn last_access(&self) -> &'a AtomicU32 {
        &self.hot.last_access
    }

    /// The frame's latch word.
    #[inline]
    pub(super) fn state(&self) -> &'a AtomicU64 {
        &self.hot.state
    }

    /// The frame's [`tag`] when its state word reads `state`. Valid only together with
    /// a check that the state word still reads `state` afterwards (a validated snapshot,
    /// a compare-and-swap from it): the wrap count is written under the exclusive latch.
    #[inline(always)]
    pub(crate) fn tag(&self, state: u64) -> u64 {
        tag(state, self.hot.wraps.load(Ordering::Relaxed))
    }
}

/// A shared pin: read access to a frame's bytes; unpins on drop.
pub(crate) struct Shared<'a> {
    pub(super) frames: &'a Frames,
    /// Frame `id`'s latch word, looked up once (repeated bounds-checked indexing showed
    /// up in the pin path's instruction count).
    pub(super) state: &'a AtomicU64,
    /// The frame's first byte, located once with the latch word. A raw pointer, not a
    /// `&[u8]`: a reference would still exist, inside the guard being dropped, after the
    /// unpin lets a writer in (the reason `std::cell::Ref` holds a `NonNull` too).
    pub(super) frame: NonNull<u8>,
    pub(super) id: u32,
    pub(super) user: bool,
}

// SAFETY: `frame` is only a cached address in the arena (what `frames` and `id` name), read
// through only while the pin is held; the guard is as shareable as `&Frames` it replaces.
unsafe impl Send for Shared<'_> {}
// SAFETY: as for `Send`: `&Shared` gives out only shared slices of a pinned frame.
unsafe impl Sync for Shared<'_> {}

impl<'a> Shared<'a> {
    /// The frame's bytes.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: while this pin exists the state word's count is > 0, so no `Exclusive`
        // guard (which requires the word to be exactly 0) can exist; only shared slices
        // alias these bytes. `frame` starts a frame of `page_size` bytes inside its chunk's
        // allocation (`Frames::hit_words`).
        unsafe { std::slice::from_raw_parts(self.frame.as_ptr(), self.frames.page_size) }
    }

    /// The frame's header.
    #[inline]
    pub(crate) fn header(&self) -> &'a Header {
        self.frames.header(self.id)
    }

    /// The frame id.
    #[inline]
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// The frame's [`tag`] now: stable while this pin is held, since only an exclusive
    /// holder changes it, and the pin was acquired after the last one released.
    pub(crate) fn tag(&self) -> u64 {
        let hot = self.frames.hot(self.id);
        tag(
            hot.state.load(Ordering::Relaxed),
            hot.wraps.load(Ordering::Relaxed),
        )
    }

    /// Count this pin as the application's from now on.
    pub(crate) fn mark_user(&mut self) {
        if !self.user {
            self.state.fetch_add(USER_ONE, Ordering::Relaxed);
            self.user = true;
        }
    }
}

impl Drop for Shared<'_> {
    #[inline]
    fn drop(&mut self) {
        let sub = if self.user { 1 + USER_ONE } else { 1 };
        self.state.fetch_sub(sub, Ordering::Release);
    }
}

/// The exclusive latch: read and write access to a frame's bytes; released on drop.
pub(crate) struct Exclusive<'a> {
    pub(super) frames: &'a Frames,
    pub(super) id: u32,
}

impl<'a> Exclusive<'a> {
    /// The frame id.
    #[inline]
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// The frame's bytes, read-only.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the exclusive latch is held (state == EXCLUSIVE), so no other guard exists;
        // the shared borrow of `self` prevents a simultaneous `bytes_mut`.
        unsafe { std::slice::from_raw_parts(self.frames.frame_ptr(self.id), self.frames.page_size) }
    }

    /// The frame's bytes, writable.
    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the exclusive latch is held, so this guard is the only one for the frame,
        // and `&mut self` makes the returned slice the only live one derived from it.
        unsafe {
            std::slice::from_raw_parts_mut(self.frames.frame_ptr(self.id), self.frames.page_size)
        }
    }

    /// The frame's header.
    #[inline]
    pub(crate) fn header(&self) -> &'a Header {
        self.frames.header(self.id)
    }

    /// Mark the holder as the application (a `PageMut`).
    pub(crate) fn mark_user(&mut self) {
        // Only the holder writes the word while it is latched.
        let state = self.frames.state(self.id);
        let cur = state.load(Ordering::Relaxed);
        state.store(cur | USER_EXCL, Ordering::Relaxed);
    }

    /// Turn the exclusive latch into one shared pin without letting a writer in between.
    #[inline]
    pub(crate) fn downgrade(self) -> Shared<'a> {
        let (frames, id) = (self.frames, self.id);
        std::mem::forget(self);
        let words = frames.hit_words(id);
        // A new version: the bytes or the page may have changed under the latch.
        release(words.hot, 1);
        Shared {
            frames,
            state: words.state(),
            frame: words.frame,
            id,
            user: false,
        }
    }
}

impl Drop for Exclusive<'_> {
    #[inline]
    fn drop(&mut self) {
        // Only the holder writes the word while it is latched (pins and other latches
        // compare-and-swap from words without EXCLUSIVE), so a plain store releases it.
        release(self.frames.hot(self.id), 0);
    }
}
