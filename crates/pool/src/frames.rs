//! The frame arena and its latch protocol: the only module of the pool with `unsafe` code.
//!
//! All frames live in **one** allocation aligned to the page size (at least 4 KiB), so that
//! every frame is a valid `O_DIRECT` buffer and frame `i` is found by address arithmetic
//! (`base + i * page_size`), as in XMF. Each frame has a header and a 16-byte hit record
//! (each in its own array, so that the data stays page-aligned and dense, and the hit
//! records dense too: see [`Chunk`]); the record's `state` word is the frame's latch:
//!
//! ```text
//!   bit 63        EXCLUSIVE: one holder may read and write the bytes
//!   bit 62        USER_EXCL: that holder is the application (a `PageMut`)
//!   bits 32..61   version: bumped each time an exclusive latch is released
//!   bits 16..31   user pins: how many of the shared pins are the application's (`PageRef`)
//!   bits 0..15    shared pin count: holders that may only read the bytes
//! ```
//!
//! The user bits only tell `set_len` and `close` whether a pin is the application's
//! (which may be held indefinitely: they refuse with `PagePinned`) or the pool's own
//! transient latch (a flusher write, an eviction: they wait it out).
//!
//! A shared pin is taken by a compare-and-swap that adds to the count while EXCLUSIVE is
//! clear; the exclusive latch only by a compare-and-swap from a word with no pins and no
//! latch. Therefore, at any time, either any number of [`Shared`] guards or one
//! [`Exclusive`] guard exist for a frame, never both, which is exactly Rust's aliasing rule
//! for `&[u8]` / `&mut [u8]`; the guards hand out slices only for their own lifetime. That
//! argument is the whole safety case of the guards, and it is local: nothing outside can
//! touch the state word except through this module (the field is private).
//!
//! **The version** (as in vmcache and LeanStore) is what makes a hit cheap. Everything
//! that changes a frame's bytes or the page it holds (a write, a load, an eviction, a
//! truncation) does it under the exclusive latch, and releasing that latch bumps the
//! version. So a state word read before and found unchanged after some reads proves no
//! exclusive holder ran in between. Two things use that:
//!
//! - [`Frames::try_share_if`]: the pool checks the frame's owner *before* pinning, then
//!   pins with one compare-and-swap from exactly the word it read. If the swap succeeds the
//!   version did not move, so the owner it checked is still the frame's: one atomic
//!   read-modify-write for a validated pin (the application's user count included), where
//!   pinning first and checking afterwards needs a second one to mark the pin as the
//!   application's once the page is known to be right.
//! - `Snapshot` (`frames/optimistic.rs`): an optimistic read, with no write to shared
//!   memory at all: read the word, copy bytes, read the word again.
//!
//! The version has 30 bits: it wraps after about 10^9 exclusive latches of one frame, and
//! a reader would have to stall for exactly such a multiple between its two reads of the
//! word (seconds, at tens of nanoseconds per latch) to be fooled. The pin count has 16
//! bits: more than 65,535 pins of one page at once wait for one to go.
//!
//! Waiting: a thread that finds a frame latched spins briefly and then yields the CPU, since
//! the holder is usually doing a single page copy or one `pread`. There are only two cores
//! on the reference machine, so yielding early matters more than spinning long.
#![allow(unsafe_code)]

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::OnceLock;
// Under `--cfg loom` the latch words are loom's atomics, so that `loom_tests` below can
// explore every interleaving and memory ordering of the protocol.
#[cfg(loom)]
use loom::sync::atomic::{fence, AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicU8};
use std::sync::atomic::Ordering;
#[cfg(not(loom))]
use std::sync::atomic::{fence, AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicU8};

mod guards;
mod optimistic;

pub(crate) use guards::{Exclusive, HitWords, Shared};

const EXCLUSIVE: u64 = 1 << 63;
const USER_EXCL: u64 = 1 << 62;
const VERSION_ONE: u64 = 1 << 32;
const VERSION_MASK: u64 = ((1 << 30) - 1) << 32;
const USER_ONE: u64 = 1 << 16;
const USER_MASK: u64 = ((1 << 16) - 1) << 16;
const COUNT_MASK: u64 = (1 << 16) - 1;
/// Shared pins beyond this wait (the counts must never overflow into the bits above).
const SHARED_MAX: u64 = COUNT_MASK;

/// The state word an exclusive holder leaves behind: no pins, no latch, the next version.
#[inline]
fn released(state: u64) -> u64 {
    (state & VERSION_MASK).wrapping_add(VERSION_ONE) & VERSION_MASK
}

/// Release the exclusive latch of the frame whose record is `hot`, leaving `extra` shared
/// pins behind (1 for a downgrade): the next version, and when the version wraps to 0,
/// one more in `Hot::wraps`. Only the holder writes either word while it is latched, so
/// plain stores do; the release store publishes both (and the bytes) to whoever acquires
/// the state word next.
#[inline]
fn release(hot: &Hot, extra: u64) {
    let next = released(hot.state.load(Ordering::Relaxed));
    if next == 0 {
        let w = hot.wraps.load(Ordering::Relaxed);
        hot.wraps.store(w.wrapping_add(1), Ordering::Relaxed);
    }
    hot.state.store(next + extra, Ordering::Release);
}

/// A frame's *tag*: the version of its state word `state` and how often that version
/// wrapped (`wraps`), 46 bits that change with every exclusive release. A page hint
/// (`pool::hint`) remembers it; finding it unchanged proves that no exclusive holder
/// (a load, an eviction, a write, a truncation, a close) has run on the frame since,
/// unless the frame was latched a multiple of 2^46 times in between.
#[inline(always)]
pub(crate) fn tag(state: u64, wraps: u16) -> u64 {
    (state & VERSION_MASK) | u64::from(wraps)
}

/// `owner` value of a frame that holds no page.
pub(crate) const NO_OWNER: u64 = u64::MAX;

/// Per-frame metadata the hit path does not need: plain atomics whose meaning the pool
/// defines (only *changed* under the exclusive latch). What a hit touches (the latch word,
/// the hit counter, the access time, the read-ahead mark) lives in dense per-chunk arrays
/// instead ([`Chunk`]), so that a hit reads no header at all.
/// One cache line per header, so that two threads working on neighbouring frames do not
/// bounce a shared line between cores.
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct Header {
    /// `(generation << 32) | file slot` of the page held, or [`NO_OWNER`].
    pub owner: AtomicU64,
    /// Page number within the owner's file.
    pub page: AtomicU64,
    /// The page differs from storage.
    pub dirty: AtomicBool,
    /// When the page became dirty, in ns since the pool started (for delayed-write ageing).
    pub dirty_since_ns: AtomicU64,
    /// Bumped each time the frame is loaded with a page, so a queued hit can tell whether
    /// the frame still holds the page it was recorded for.
    pub incarnation: AtomicU32,
    /// A write of the page to storage is in flight. Writers hold only a shared pin (readers
    /// go on during the I/O), so this flag is what keeps two of them (the flusher and an
    /// `fsync`, say) from writing the same page at once: a second, late whole-page write
    /// could land after an `O_DIRECT` trim and leave the file rounded up.
    pub writing: AtomicBool,
    /// The last write of this (dirty) page failed: eviction looks for room elsewhere first,
    /// so one file's failing storage does not stall misses on every file.
    pub write_failed: AtomicBool,
    /// The frame is out of circulation (the pool shrank): in neither the free list nor
    /// the policy, its memory handed back to the kernel.
    pub retired: AtomicBool,
}

/// One block of frames: `headers.len()` frames of `page_size` bytes in one page-aligned
/// allocation, with their headers and their bits of the pool's two per-frame bitmaps.
///
/// The hit path's per-frame words are a dense array of 16-byte [`Hot`] records, in the
/// spirit of vmcache's 8-byte page states: a hit on a random one of 64 Ki frames then
/// touches one line of a 1 MiB array rather than one of 4 MiB of 64-byte headers, which
/// on a machine shared with other work mostly miss every cache. Four frames share a
/// line; two threads pinning neighbours at once is rare on random access.
struct Chunk {
    base: NonNull<u8>,
    layout: Layout,
    headers: Box<[Header]>,
    hot: Box<[Hot]>,
    /// One bit per frame of this chunk that may be dirty (the pool's `mark_dirty`).
    dirty: Box<[AtomicU64]>,
    /// One bit per frame whose hit counter was bumped since the eviction path looked.
    touched: Box<[AtomicU64]>,
    /// One bit per frame carrying an ordered write not yet durable (`pool::ordering`).
    tagged: Box<[AtomicU64]>,
}

/// What a hit reads and writes of one frame (see [`Chunk`]).
#[derive(Debug)]
#[cfg_attr(not(loom), repr(C, align(16)))]
struct Hot {
    /// The latch word (module docs). Private: only the guards touch it.
    state: AtomicU64,
    /// The pool's coarse clock (see `Inner::tick`) when the page was loaded or last hit:
    /// how the pool tells the age of its oldest idle page to a memory budget. A hint,
    /// stored only when it changes.
    last_access: AtomicU32,
    /// Hits since the eviction path last looked (saturating): fed to the policy there.
    refs: AtomicU8,
    /// The frame holds the first page of a read-ahead window: hitting it starts the next
    /// window (a hint).
    ra_mark: AtomicBool,
    /// How many times the version wrapped to 0 (wrapping): widens the version to the 46
    /// bits of a page hint's [`tag`], since a hint may be held for as long as the caller
    /// likes, not for the nanoseconds of one optimistic read. Written only by an
    /// exclusive holder as it releases ([`release`]); the two bytes were padding.
    wraps: AtomicU16,
}

/// Which per-frame bitmap (see [`Frames::bit`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Bits {
    /// Frames that may be dirty.
    Dirty,
    /// Frames hit since the eviction path last fed their counters to the policy.
    Touched,
    /// Frames carrying ordered data not yet durable (only the ordering levels write them).
    Tagged,
}

/// Most chunks a pool can grow by after it is built (see [`Frames`]).
const MAX_GROWTH_CHUNKS: usize = 1024;

/// The frame arena. It starts as **one** block of `first` frames (the capacity the pool
/// was built with: frame `i` at `base + i * page_size`, as in XMF) and can grow by whole
/// chunks of `2^grow_shift` frames, each its own page-aligned block, published once and
/// never moved or freed before the arena: a frame reference handed out before a growth
/// stays valid, and readers never wait for one. Frame ids are dense: ids below
/// [`Frames::len`] exist. Shrinking the pool never frees a chunk; it retires frames and
/// hands their memory back to the kernel ([`Exclusive::release_memory`]).
pub(crate) struct Frames {
    page_size: usize,
    /// log2 of `page_size` (a power of two).
    page_shift: u32,
    /// Frames in the first block.
    first_len: usize,
    first: Chunk,
    /// log2 of the frames in each later chunk.
    grow_shift: u32,
    more: Box<[OnceLock<Chunk>]>,
    /// Frames that exist (ids below this are valid); grows only.
    len: std::sync::atomic::AtomicUsize,
}

// SAFETY: `Frames` owns its allocations exclusively (like `Box<[u8]>`s); all access to the
// bytes goes through `Shared` / `Exclusive` guards whose latch protocol (module docs)
// prevents data races, so sharing and sending the arena between threads is sound.
unsafe impl Send for Frames {}
// SAFETY: see `Send` above: `&Frames` only gives out bytes through the latch protocol.
unsafe impl Sync for Frames {}

/// Size of a transparent huge page on x86-64 and (with 4 KiB base pages) aarch64.
const HUGE_PAGE: usize = 2 << 20;

impl Chunk {
    /// Allocate `count` zeroed frames of `page_size` bytes, aligned to
    /// `max(page_size, 4096)` (2 MiB for blocks of 2 MiB or more).
    fn new(count: usize, page_size: usize) -> Option<Chunk> {
        if count == 0 || page_size == 0 {
            return None;
        }
        let size = count.checked_mul(page_size)?;
        // Large blocks start on a huge-page boundary, so that all of them can be backed by
        // transparent huge pages (below).
        let align = if size >= HUGE_PAGE {
            HUGE_PAGE
        } else {
            page_size.max(4096)
        };
        let layout = Layout::from_size_align(size, align).ok()?;
        // Not `alloc_zeroed`: with this alignment it would write the zeros before the
        // huge-page advice below, faulting the block in as 4 KiB pages.
        // SAFETY: `layout` has a non-zero size (count and page_size are both non-zero).
        let ptr = unsafe { std::alloc::alloc(layout) };
        let base = NonNull::new(ptr)?;
        // Miri cannot run `madvise` (a foreign call); the advice is only a hint, so under
        // Miri the block is simply not advised.
        #[cfg(not(miri))]
        if size >= HUGE_PAGE {
            // Ask for transparent huge pages: a miss reads into a random frame, and with
            // 4 KiB pages each such read pays a TLB miss and a page-table walk to pin the
            // buffer (O_DIRECT); with 2 MiB pages both mostly disappear. Only a hint: on a
            // kernel without THP, or with THP off, nothing changes.
            // SAFETY: `ptr..ptr + size` is the block just allocated and owned here;
            // MADV_HUGEPAGE changes how it is backed, never its contents or validity.
            let _ =
                unsafe { rustix::mm::madvise(ptr.cast(), size, rustix::mm::Advice::LinuxHugepage) };
        }
        // SAFETY: the block is `size` bytes, valid for writes and not yet shared.
        unsafe { ptr.write_bytes(0, size) };
        // Own the block at once, so that `Drop` frees it if the headers cannot be had.
        let mut chunk = Chunk {
            base,
            layout,
            headers: Box::new([]),
            hot: Box::new([]),
            dirty: Box::new([]),
            touched: Box::new([]),
            tagged: Box::new([]),
        };
        // Fallibly: an absurd capacity must be an error, not an abort in the allocator.
        let mut headers = Vec::new();
        headers.try_reserve_exact(count).ok()?;
        headers.extend((0..count).map(|_| Header {
            owner: AtomicU64::new(NO_OWNER),
            page: AtomicU64::new(0),
            dirty: AtomicBool::new(false),
            dirty_since_ns: AtomicU64::new(0),
            incarnation: AtomicU32::new(0),
            writing: AtomicBool::new(false),
            write_failed: AtomicBool::new(false),
            retired: AtomicBool::new(false),
        }));
        chunk.headers = headers.into_boxed_slice();
        let mut hot = Vec::new();
        hot.try_reserve_exact(count).ok()?;
        hot.extend((0..count).map(|_| Hot {
            state: AtomicU64::new(0),
            last_access: AtomicU32::new(0),
            refs: AtomicU8::new(0),
            ra_mark: AtomicBool::new(false),
            wraps: AtomicU16::new(0),
        }));
        chunk.hot = hot.into_boxed_slice();
        chunk.dirty = (0..count.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        chunk.touched = (0..count.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        chunk.tagged = (0..count.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        Some(chunk)
    }

    /// Frame `i`'s first byte (`page_size` is the arena's). Panics unless `i` is a frame
    /// of this chunk. The check is against the hit records' length (one per frame, like
    /// the headers), so that beside `&self.hot[i]` the compiler makes it once.
    #[inline]
    fn frame(&self, i: usize, page_size: usize) -> NonNull<u8> {
        assert!(i < self.hot.len());
        // SAFETY: `hot` holds one record per frame (`Chunk::new`), so i < the chunk's
        // frame count and the offset i * page_size is inside its allocation of
        // count * page_size bytes (no overflow: checked at construction).
        unsafe { self.base.add(i * page_size) }
    }

    fn bits(&self, which: Bits) -> &[AtomicU64] {
        match which {
            Bits::Dirty => &self.dirty,
            Bits::Touched => &self.touched,
            Bits::Tagged => &self.tagged,
        }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: `base` was returned by `alloc(self.layout)` and is freed once; no
        // guard can outlive the arena that owns this chunk, so no slice into the block
        // survives this point.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) }
    }
}

impl Frames {
    /// Allocate `count` zeroed frames of `page_size` bytes, aligned to `max(page_size, 4096)`.
    /// Returns `None` when the size overflows, the allocator refuses, or `page_size` is not
    /// a power of two of at least 8 (the builder only allows 4 KiB and up).
    pub(crate) fn new(count: usize, page_size: usize) -> Option<Frames> {
        // Powers of two of at least 8: frame ids become addresses by a shift, and a frame
        // is a whole number of aligned words (`Snapshot::copy`).
        if !page_size.is_power_of_two() || page_size < 8 {
            return None;
        }
        let first = Chunk::new(count, page_size)?;
        // Later chunks: a quarter of the first block, between 64 frames and 256 MiB, so
        // that a pool can grow to about 256 times its first size in at most
        // `MAX_GROWTH_CHUNKS` steps without small pools allocating large blocks.
        let grow = (count / 4)
            .next_power_of_two()
            .clamp(64, ((256usize << 20) / page_size).max(64));
        Some(Frames {
            page_size,
            page_shift: page_size.trailing_zeros(),
            first_len: count,
            first,
            grow_shift: grow.trailing_zeros(),
            more: (0..MAX_GROWTH_CHUNKS).map(|_| OnceLock::new()).collect(),
            len: std::sync::atomic::AtomicUsize::new(count),
        })
    }

    /// Number of frames that exist (the pool's capacity plus its retired frames).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The most frames the arena can ever hold.
    pub(crate) fn max_len(&self) -> usize {
        self.first_len + (MAX_GROWTH_CHUNKS << self.grow_shift)
    }

    /// Add one chunk; returns the new frames' ids (all idle, no owner). `None` when the
    /// arena is at [`Frames::max_len`] or the allocator refuses. Callers serialize growth
    /// (the pool's resize lock); readers may run meanwhile.
    pub(crate) fn grow(&self) -> Option<std::ops::Range<u32>> {
        let len = self.len();
        let index = (len - self.first_len) >> self.grow_shift;
        let slot = self.more.get(index)?;
        let chunk = Chunk::new(1 << self.grow_shift, self.page_size)?;
        if slot.set(chunk).is_err() {
            unreachable!("growth is serialized, so chunk {index} is set once");
        }
        let new_len = len + (1 << self.grow_shift);
        u32::try_from(new_len).ok()?;
        self.len.store(new_len, Ordering::Release);
        Some(len as u32..new_len as u32)
    }

    /// The chunk holding frame `id` and the frame's index in it. Panics on an id that does
    /// not exist, which only the pool's own code can produce (ids come from this arena).
    #[inline]
    fn locate(&self, id: u32) -> (&Chunk, usize) {
        let id = id as usize;
        if id < self.first_len {
            return (&self.first, id);
        }
        let rest = id - self.first_len;
        let chunk = self.more[rest >> self.grow_shift]
            .get()
            .expect("frame ids come from chunks that exist");
        (chunk, rest & ((1 << self.grow_shift) - 1))
    }

    /// Frame `id`'s header.
    #[inline]
    pub(crate) fn header(&self, id: u32) -> &Header {
        let (chunk, i) = self.locate(id);
        &chunk.headers[i]
    }

    /// What a hit on frame `id` reads and writes, and where its bytes are, located once.
    ///
    /// A frame of the first block (all of them, unless the pool grew) is found with one
    /// compare: `first_len` is the block's length, so that compare is also the bounds
    /// check of its record array and of its bytes, and the address is a shift (the chunk
    /// lookup, a second bounds check and a multiplication were 8 instructions of a hit).
    #[inline(always)]
    pub(crate) fn hit_words(&self, id: u32) -> HitWords<'_> {
        let i = id as usize;
        if i < self.first_len {
            debug_assert_eq!(self.first.hot.len(), self.first_len);
            // SAFETY: the first block has `first_len` frames and as many records
            // (`Frames::new`), and i < first_len; its allocation is first_len * page_size
            // bytes, so frame i's first byte, base + (i << page_shift), is inside it.
            return unsafe {
                HitWords {
                    hot: self.first.hot.get_unchecked(i),
                    frame: self.first.base.add(i << self.page_shift),
                }
            };
        }
        self.grown_hit_words(id)
    }

    /// [`Frames::hit_words`] for a frame of a chunk added by growth.
    #[cold]
    fn grown_hit_words(&self, id: u32) -> HitWords<'_> {
        let (chunk, i) = self.locate(id);
        HitWords {
            hot: &chunk.hot[i],
            frame: chunk.frame(i, self.page_size),
        }
    }

    #[inline]
    fn hot(&self, id: u32) -> &Hot {
        let (chunk, i) = self.locate(id);
        &chunk.hot[i]
    }

    /// Frame `id`'s latch word.
    #[inline]
    fn state(&self, id: u32) -> &AtomicU64 {
        &self.hot(id).state
    }

    /// Frame `id`'s hit counter (see [`Hot`]).
    #[inline]
    pub(crate) fn refs(&self, id: u32) -> &AtomicU8 {
        &self.hot(id).refs
    }

    /// Frame `id`'s last access on the pool's coarse clock (see [`Hot`]).
    #[inline]
    pub(crate) fn last_access(&self, id: u32) -> &AtomicU32 {
        &self.hot(id).last_access
    }

    /// The word of bitmap `which` holding frame `id`'s bit, and that bit.
    #[inline]
    pub(crate) fn bit(&self, which: Bits, id: u32) -> (&AtomicU64, u64) {
        let (chunk, i) = self.locate(id);
        (&chunk.bits(which)[i / 64], 1 << (i % 64))
    }

    /// Whether frame `id` holds the first page of a read-ahead window (a hint).
    #[inline]
    pub(crate) fn ra_marked(&self, id: u32) -> bool {
        self.hit_words(id).ra_marked()
    }

    /// Mark frame `id` as holding the first page of a read-ahead window, or not.
    #[inline]
    pub(crate) fn set_ra_mark(&self, id: u32, on: bool) {
        self.hot(id).ra_mark.store(on, Ordering::Relaxed);
    }

    /// Clear frame `id`'s read-ahead mark; true for the one caller that cleared it.
    #[inline]
    pub(crate) fn take_ra_mark(&self, id: u32) -> bool {
        self.hot(id).ra_mark.swap(false, Ordering::Relaxed)
    }

    /// Every word of bitmap `which` with the frame id of its bit 0, chunk by chunk.
    pub(crate) fn bit_words(&self, which: Bits) -> impl Iterator<Item = (u32, &AtomicU64)> {
        let grown = (self.len() - self.first_len) >> self.grow_shift;
        let chunks = std::iter::once((0, &self.first)).chain(
            self.more[..grown].iter().enumerate().map(move |(k, c)| {
                let first = self.first_len + (k << self.grow_shift);
                (first, c.get().expect("chunks below len exist"))
            }),
        );
        chunks.flat_map(move |(first, chunk)| {
            chunk
                .bits(which)
                .iter()
                .enumerate()
                .map(move |(w, word)| ((first + w * 64) as u32, word))
        })
    }

    /// Hand the memory of the latched frames back to the kernel (the pool shrank and
    /// retires them): their bytes read as zeros afterwards and cost no memory until
    /// written again. `latched` is sorted by id; frames adjacent in memory go in one
    /// `madvise` call.
    pub(crate) fn release_memory(&self, latched: &[Exclusive<'_>]) {
        let mut i = 0;
        while i < latched.len() {
            let start = self.frame_ptr(latched[i].id);
            let mut end = i + 1;
            while end < latched.len()
                && latched[end].id == latched[end - 1].id + 1
                && self.frame_ptr(latched[end].id) as usize
                    == self.frame_ptr(latched[end - 1].id) as usize + self.page_size
            {
                end += 1;
            }
            let len = (end - i) * self.page_size;
            // Miri cannot run `madvise`; there the frames keep their memory, zeroed by
            // hand (the observable contents are the same).
            #[cfg(miri)]
            let advised = false;
            // SAFETY: every frame of the run is exclusively latched by a guard in
            // `latched` (borrowed for this call), so no slice of these bytes exists; the
            // run is contiguous inside one chunk's allocation (checked above: each frame
            // starts where the previous ends) and page-aligned (frames are aligned to at
            // least 4 KiB and a multiple of it long). MADV_DONTNEED on private anonymous
            // memory only replaces its contents with zeros on the next touch.
            #[cfg(not(miri))]
            let advised = unsafe {
                rustix::mm::madvise(start.cast(), len, rustix::mm::Advice::LinuxDontNeed)
            }
            .is_ok();
            if !advised {
                // SAFETY: as above, the run is latched exclusively and inside one
                // allocation; writing zeros through the raw pointer aliases no slice.
                unsafe { start.write_bytes(0, len) };
            }
            i = end;
        }
    }

    /// True when frame `id` is neither pinned nor latched (a racy snapshot, for the eviction
    /// predicate; the evictor confirms by taking the exclusive latch).
    #[inline]
    pub(crate) fn is_idle(&self, id: u32) -> bool {
        self.state(id).load(Ordering::Relaxed) & !VERSION_MASK == 0
    }

    /// Pointer to frame `id`'s first byte.
    #[inline]
    fn frame_ptr(&self, id: u32) -> *mut u8 {
        let (chunk, i) = self.locate(id);
        chunk.frame(i, self.page_size).as_ptr()
    }

    /// Take a shared pin on frame `id` unless it is exclusively latched.
    #[inline]
    pub(crate) fn try_share(&self, id: u32) -> Option<Shared<'_>> {
        self.try_share_as(id, false)
    }

    /// Take a shared pin, counted as the application's when `user`.
    #[inline]
    pub(crate) fn try_share_as(&self, id: u32, user: bool) -> Option<Shared<'_>> {
        self.try_share_if(id, user, || true)
    }

    /// Take a shared pin if `valid` holds for the frame's header, with one
    /// compare-and-swap: `valid` runs after the state word is read and before the swap
    /// from exactly that word, so when the pin is taken no exclusive holder has run since
    /// `valid` looked (it would have bumped the version; module docs). `valid` reads what
    /// changes only under the exclusive latch (the header's owner and page, or the lookup
    /// table's entry for the page). `None` when the frame is exclusively latched, has the
    /// most pins, or `valid` says no.
    #[inline]
    pub(crate) fn try_share_if(
        &self,
        id: u32,
        user: bool,
        valid: impl FnMut() -> bool,
    ) -> Option<Shared<'_>> {
        let mut valid = valid;
        self.try_share_at(&self.hit_words(id), id, user, |_| valid())
    }

    /// [`Frames::try_share_if`] with the frame's words already located, and `valid` given
    /// the state word it is checked against (a page hint compares its tag with it).
    /// Always inlined, like the hit path it serves (as a call, with its closure, it cost
    /// a pin 40 instructions).
    #[inline(always)]
    pub(crate) fn try_share_words<'a>(
        &'a self,
        words: &HitWords<'a>,
        id: u32,
        user: bool,
        valid: impl FnMut(u64) -> bool,
    ) -> Option<Shared<'a>> {
        self.try_share_at(words, id, user, valid)
    }

    #[inline(always)]
    fn try_share_at<'a>(
        &'a self,
        words: &HitWords<'a>,
        id: u32,
        user: bool,
        mut valid: impl FnMut(u64) -> bool,
    ) -> Option<Shared<'a>> {
        let state = words.state();
        let add = if user { 1 + USER_ONE } else { 1 };
        // Acquire: the header fields `valid` reads are at least as new as the last
        // exclusive holder left them.
        let mut cur = state.load(Ordering::Acquire);
        loop {
            if cur & EXCLUSIVE != 0 || cur & COUNT_MASK >= SHARED_MAX || !valid(cur) {
                return None;
            }
            match state.compare_exchange_weak(cur, cur + add, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => {
                    return Some(Shared {
                        frames: self,
                        state,
                        frame: words.frame,
                        id,
                        user,
                    })
                }
                Err(now) => cur = now,
            }
        }
    }

    /// True when the application holds a `PageRef` or `PageMut` on the frame.
    #[inline]
    pub(crate) fn user_pinned(&self, id: u32) -> bool {
        self.state(id).load(Ordering::Acquire) & (USER_MASK | USER_EXCL) != 0
    }

    /// Take a shared pin, waiting while the frame is exclusively latched (or, in theory,
    /// while 2^29 - 1 other pins are held).
    pub(crate) fn share(&self, id: u32) -> Shared<'_> {
        self.share_as(id, false)
    }

    /// `share`, counted as the application's pin when `user`.
    pub(crate) fn share_as(&self, id: u32, user: bool) -> Shared<'_> {
        let mut spins = 0u32;
        loop {
            if let Some(g) = self.try_share_as(id, user) {
                return g;
            }
            backoff(&mut spins);
        }
    }

    /// Take the exclusive latch if the frame is idle.
    #[inline]
    pub(crate) fn try_exclusive(&self, id: u32) -> Option<Exclusive<'_>> {
        let state = self.state(id);
        let cur = state.load(Ordering::Relaxed);
        if cur & !VERSION_MASK != 0 {
            return None;
        }
        state
            .compare_exchange(cur, cur | EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        // Orders the holder's writes (bytes, owner, page) after the latch: an optimistic
        // reader that sees any of them sees the latch too when it validates (its acquire
        // fence pairs with this one; `Snapshot::still_valid`).
        fence(Ordering::Release);
        Some(Exclusive { frames: self, id })
    }

    /// Set idle frame `id`'s version to `version` (tests of the wrap: 2^30 latches are too
    /// slow to take one by one).
    #[cfg(test)]
    pub(crate) fn set_version(&self, id: u32, version: u64) {
        let state = self.state(id);
        assert_eq!(state.load(Ordering::Relaxed) & !VERSION_MASK, 0, "idle");
        state.store((version << 32) & VERSION_MASK, Ordering::Release);
    }

    /// Take the exclusive latch, waiting for pins and other latches to go away.
    pub(crate) fn exclusive(&self, id: u32) -> Exclusive<'_> {
        let mut spins = 0u32;
        loop {
            if let Some(g) = self.try_exclusive(id) {
                return g;
            }
            backoff(&mut spins);
        }
    }
}

/// Spin a little, then yield: the latch holder is normally one copy or one I/O away.
#[cfg(loom)]
pub(crate) fn backoff(_spins: &mut u32) {
    // loom must be told that a waiting thread cannot make progress on its own.
    loom::thread::yield_now();
}

/// Spin a little, then yield: the latch holder is normally one copy or one I/O away.
#[cfg(not(loom))]
#[inline]
pub(crate) fn backoff(spins: &mut u32) {
    if *spins < 32 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
    *spins = spins.saturating_add(1);
}

// The layout assumptions above: a header fits in one 64-byte line, four hit records in
// another.
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<Header>() == 64 && std::mem::size_of::<Hot>() == 16);

/// The latch protocol under loom (the model is in `frames/loom_tests.rs`).
#[cfg(all(test, loom))]
mod loom_tests;

#[cfg(all(test, not(loom)))]
mod tests;
