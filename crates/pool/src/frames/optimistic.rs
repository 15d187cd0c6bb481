//! Optimistic reads of a frame: copy bytes with no write to shared memory, then prove
//! from the state word's version that no exclusive holder ran meanwhile (a seqlock, as
//! vmcache's and LeanStore's optimistic latches).
//!
//! **How the bytes are read, and why so.** An optimistic reader holds no latch, so an
//! exclusive holder may be writing the very bytes it reads. Making a `&[u8]` of them would
//! be undefined behaviour at once (a shared reference promises the bytes do not change),
//! and plain loads racing with a write are a data race. The reader therefore never makes
//! a reference to the frame: it copies with relaxed atomic loads of whole aligned 8-byte
//! words (those covering the range) into the caller's buffer, and the caller may look at
//! the copy only after [`Snapshot::still_valid`] says yes. Torn values can sit in the copy
//! of a failed attempt; they are plain bytes in the caller's own memory, thrown away.
//!
//! The proof that a validated copy is whole is the seqlock's (Boehm, "Can seqlocks get
//! along with programming language memory models?", MSPC 2012): the writer takes the latch
//! (a compare-and-swap setting EXCLUSIVE), then a release fence, then writes; the reader
//! loads the word with acquire, copies, then an acquire fence, then loads the word again.
//! If the copy saw any write of a holder, the two fences synchronize and the second load
//! sees that holder's latch or its release (a new version): validation fails. The loom
//! model (`loom_tests.rs`) checks this with the header's owner and atomic data words.
//!
//! **What the model does not cover.** The strict Rust (C++) memory model calls even an
//! atomic load racing with a *non-atomic* write a data race, and the pool's writers write
//! the frame non-atomically: `PageMut` hands out `&mut [u8]`, `write` copies with
//! `copy_from_slice`, and loads are `pread`s into the frame. A strictly model-sound seqlock
//! needs byte-wise atomic copies on both sides (the C++ proposal P1478); the write side
//! cannot be that while `PageMut` is a `&mut [u8]`. What is kept: the reader side is all
//! atomic and makes no reference; the compiler cannot see the writer from the reader's
//! code (or the reverse) and emits plain loads and stores; a racy copy is never used. This
//! is the same compromise as crossbeam's `AtomicCell` fallback and vmcache itself.

use super::{fence, AtomicU64, Frames, HitWords, EXCLUSIVE, VERSION_MASK};
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

/// The state word of a frame as it was when an optimistic read began. Whatever is read
/// after it (bytes, header fields, the lookup table's entry) is as unvalidated as the
/// bytes until [`Snapshot::still_valid`] says yes. Holds no latch:
/// the frame may change at any time, and [`Snapshot::still_valid`] tells whether it did.
pub(crate) struct Snapshot<'a> {
    frames: &'a Frames,
    state: &'a AtomicU64,
    /// The frame's first byte (`HitWords`).
    frame: NonNull<u8>,
    seen: u64,
}

impl Frames {
    /// Begin an optimistic read of frame `id`; `None` while it is exclusively latched (being
    /// loaded, written, evicted or truncated: the caller retries or pins).
    #[cfg(any(test, loom))]
    #[inline]
    pub(crate) fn snapshot(&self, id: u32) -> Option<Snapshot<'_>> {
        self.snapshot_words(&self.hit_words(id))
    }

    /// [`Frames::snapshot`] with the frame's words already located.
    #[inline(always)]
    pub(crate) fn snapshot_words<'a>(&'a self, words: &HitWords<'a>) -> Option<Snapshot<'a>> {
        let state = words.state();
        // Acquire: the bytes and fields read next are at least as new as the last
        // exclusive holder left them.
        let seen = state.load(Ordering::Acquire);
        if seen & EXCLUSIVE != 0 {
            return None;
        }
        Some(Snapshot {
            frames: self,
            state,
            frame: words.frame,
            seen,
        })
    }
}

impl<'a> Snapshot<'a> {
    /// The state word as the snapshot read it (for a page hint's tag check).
    #[inline(always)]
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }

    /// Copy the frame's bytes from `offset` into `dst` with atomic loads (module docs).
    /// The copy may be torn until [`Snapshot::still_valid`] says otherwise. Panics if the
    /// range leaves the frame (the pool's callers check it). (Under loom too: the loom
    /// models read atomic stand-ins for the bytes instead of calling this.)
    ///
    /// Every load is of a whole aligned 8-byte word (the words covering the range lie in
    /// the frame: it starts on a page boundary and is a multiple of 8 long). A range of
    /// whole words, the common case of a record or a key, is one load and one store a
    /// word with no other test; the byte-at-a-time head and tail of the first version cost
    /// an 8-byte read about 25 instructions.
    #[inline]
    pub(crate) fn copy(&self, offset: usize, dst: &mut [u8]) {
        let len = dst.len();
        // One overflow-checked sum (a wrapped sum would pass the test).
        assert!(offset
            .checked_add(len)
            .is_some_and(|end| end <= self.frames.page_size));
        if (offset | len).is_multiple_of(8) {
            copy_words(self.frame, offset, dst);
        } else {
            copy_unaligned(self.frame, offset, dst);
        }
    }

    /// True when no exclusive holder has held the frame since the snapshot was taken, so
    /// everything read through it (bytes and header fields) is one consistent state.
    #[inline]
    pub(crate) fn still_valid(&self) -> bool {
        // Pairs with the release fence after a latch is taken (`Frames::try_exclusive`):
        // a read that saw a holder's write makes the load below see the holder.
        fence(Ordering::Acquire);
        let now = self.state.load(Ordering::Relaxed);
        (now ^ self.seen) & (EXCLUSIVE | VERSION_MASK) == 0
    }
}

/// [`Snapshot::copy`] of a range of whole aligned words (`offset` and `dst.len()`
/// multiples of 8, the range inside the frame): one atomic load and one store a word.
///
/// The first word is copied before any loop, and the loop for the others runs only for
/// longer ranges: a loop over all the words (the first form, over `chunks_exact_mut`) is
/// unrolled four times with a remainder loop, and setting that up cost an 8-byte read 15
/// of its instructions (`scripts/vmcache/loop_instructions.py`). Instructions matter on
/// the optimistic hit even when its data miss the cache: how many reads' misses the CPU
/// overlaps depends on how many reads fit its reorder window (`docs/performance.md`,
/// "Issue 17, fourth round").
#[inline(always)]
fn copy_words(frame: NonNull<u8>, offset: usize, dst: &mut [u8]) {
    let len = dst.len();
    if len == 0 {
        return;
    }
    let to = dst.as_mut_ptr();
    // SAFETY: `len` is a non-zero multiple of 8, so `dst` has at least 8 bytes.
    unsafe { to.cast::<u64>().write_unaligned(word(frame, offset)) };
    let mut at = 8;
    while at < len {
        // SAFETY: `at + 8 <= len`: `at` and `len` are multiples of 8 and `at < len`.
        unsafe {
            to.add(at)
                .cast::<u64>()
                .write_unaligned(word(frame, offset + at))
        };
        at += 8;
    }
}

/// [`Snapshot::copy`] of a range that does not start or end on a word: each word
/// covering it is loaded whole and its bytes inside the range copied. A function of the
/// frame's address, not a method: as a method taking the snapshot by reference, the
/// snapshot had to be stored to memory on every read, even those that never call this.
#[inline(never)]
fn copy_unaligned(frame: NonNull<u8>, offset: usize, dst: &mut [u8]) {
    let end = offset + dst.len();
    let mut at = offset & !7;
    while at < end {
        let w = word(frame, at).to_ne_bytes();
        let (lo, hi) = (offset.max(at), end.min(at + 8));
        dst[lo - offset..hi - offset].copy_from_slice(&w[lo - at..hi - at]);
        at += 8;
    }
}

/// The 8-byte word at byte `at` of the frame starting at `frame`, loaded atomically. `at`
/// is a multiple of 8 with `at + 8` at most the page size (the callers: a word below the
/// end of a range that [`Snapshot::copy`] checked lies inside the frame).
#[inline(always)]
fn word(frame: NonNull<u8>, at: usize) -> u64 {
    // std's atomics even under loom: this is a view of raw memory.
    use std::sync::atomic::AtomicU64;
    debug_assert!(at.is_multiple_of(8));
    // SAFETY: the eight bytes lie inside the frame (callers, above; the page size is a
    // multiple of 8), hence inside its chunk's allocation, which lives as long as the arena
    // (chunks are never freed before it); the frame starts on a page boundary
    // (`Frames::new`), so `frame + at` is 8-aligned. The memory is only ever read here
    // through atomics, never through a reference; see the module docs for the writers.
    unsafe { AtomicU64::from_ptr(frame.as_ptr().add(at).cast()) }.load(Ordering::Relaxed)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Copies at every alignment and length around the word size equal the frame's bytes.
    #[test]
    fn copies_match_the_frame_at_every_alignment() {
        let f = Frames::new(1, 4096).unwrap();
        {
            let mut x = f.exclusive(0);
            for (i, b) in x.bytes_mut().iter_mut().enumerate() {
                *b = (i * 7 + 3) as u8;
            }
        }
        let expected: Vec<u8> = (0..4096).map(|i| (i * 7 + 3) as u8).collect();
        let s = f.snapshot(0).unwrap();
        for offset in [0usize, 1, 5, 7, 8, 9, 4080, 4088] {
            for len in [0usize, 1, 7, 8, 9, 15, 16, 17] {
                let len = len.min(4096 - offset);
                let mut dst = vec![0xAAu8; len];
                s.copy(offset, &mut dst);
                assert_eq!(
                    dst,
                    expected[offset..offset + len],
                    "at {offset}, {len} bytes"
                );
            }
        }
        let mut whole = vec![0u8; 4096];
        s.copy(0, &mut whole);
        assert!(whole == expected);
        assert!(s.still_valid());
    }

    /// A snapshot survives pins and unpins, fails after any exclusive latch (even one
    /// that changed nothing, or that was downgraded), and cannot begin while one is held.
    #[test]
    fn only_an_exclusive_latch_invalidates_a_snapshot() {
        let f = Frames::new(1, 4096).unwrap();
        let s = f.snapshot(0).unwrap();
        drop(f.try_share_as(0, true).unwrap());
        let pinned = f.share(0);
        assert!(s.still_valid(), "pins do not change the version");
        drop(pinned);
        let x = f.try_exclusive(0).unwrap();
        assert!(f.snapshot(0).is_none(), "no snapshot while latched");
        assert!(!s.still_valid());
        drop(x);
        assert!(!s.still_valid(), "the release bumped the version");
        let t = f.snapshot(0).unwrap();
        assert!(t.still_valid());
        drop(f.exclusive(0).downgrade());
        assert!(!t.still_valid(), "a downgrade is a release too");
        assert!(f.is_idle(0));
    }

    /// A pin taken with `try_share_if` is refused when the check fails, and is the
    /// application's from its one compare-and-swap when asked.
    #[test]
    fn a_checked_pin_takes_the_user_count_at_once() {
        let f = Frames::new(1, 4096).unwrap();
        f.header(0).page.store(9, Ordering::Relaxed);
        let h = f.header(0);
        let on_page = |p: u64| move || h.page.load(Ordering::Relaxed) == p;
        assert!(f.try_share_if(0, true, on_page(8)).is_none());
        assert!(f.is_idle(0) && !f.user_pinned(0));
        let g = f.try_share_if(0, true, on_page(9)).unwrap();
        assert!(f.user_pinned(0));
        assert!(f.try_exclusive(0).is_none());
        drop(g);
        assert!(f.is_idle(0) && !f.user_pinned(0));
        let x = f.exclusive(0);
        assert!(f.try_share_if(0, false, on_page(9)).is_none());
        drop(x);
    }

    /// A writer fills the frame with one repeated byte under the exclusive latch, with
    /// atomic stores (so that Miri's race detector can run this too; the pool's own writers
    /// are plain, see the module docs); optimistic readers never validate a mixed copy.
    #[test]
    fn validated_copies_are_never_torn() {
        use std::sync::atomic::AtomicU64;
        let f = std::sync::Arc::new(Frames::new(1, 256).unwrap());
        let writer = {
            let f = std::sync::Arc::clone(&f);
            std::thread::spawn(move || {
                for v in 1..=200u64 {
                    let x = f.exclusive(0);
                    let base = f.frame_ptr(x.id()).cast::<u64>();
                    for w in 0..32 {
                        // SAFETY: inside the 256-byte frame, 8-aligned, latched
                        // exclusively; written only atomically in this test.
                        let word = unsafe { AtomicU64::from_ptr(base.add(w)) };
                        word.store(v * 0x0101_0101_0101_0101, Ordering::Relaxed);
                    }
                    drop(x);
                }
            })
        };
        let mut validated = 0;
        let mut buf = [0u8; 256];
        while !writer.is_finished() || validated == 0 {
            if let Some(s) = f.snapshot(0) {
                s.copy(0, &mut buf);
                if s.still_valid() {
                    validated += 1;
                    assert!(buf[1..] == buf[..255], "a validated copy is whole");
                }
            }
        }
        writer.join().unwrap();
    }
}
