//! The buffer pool: files, pages, pins, misses, eviction, write-back.
//!
//! This file holds the shared state (`Inner`) and the data path of the public API (`read`,
//! `write`, `pin`, `pin_mut`, `prefetch`); each job has its own child module, which adds
//! the methods of `Inner` (and of `BufferPool`) that do it:
//!
//! | module | job |
//! |---|---|
//! | `config` | the builder, its validation, and building `Inner` |
//! | `files` | handles and slots, `open`, `close`, `set_len`, latching all of a file's pages |
//! | `hits` | recording hits for the policy without its lock (counters or queues) |
//! | `hint` | page hints: hits that go straight to a caller-remembered frame |
//! | `load` | finding or loading a page and latching it, read-ahead, `prefetch` |
//! | `admit` | the admission filter and the transient list of pages it refused |
//! | `evict` | free frames, batch eviction, dirty victims, dropping frames |
//! | `writeback` | dirty tracking, writing pages, `fsync`, the trim, the flusher |
//! | `info` | `stats`, residency, the victim list |
//! | `guard` | `PageRef` and `PageMut` |
//!
//! # Invariants (recounted by `check::check_invariants` in the unit tests, asserted where
//! cheap with `debug_assert!`, and exercised by the tests in `tests/`)
//!
//! 1. A page is mapped to at most one frame (`Table::insert` is insert-if-absent), so there
//!    is never a second cached copy of a page (UBC's one copy).
//! 2. While a key maps to a frame, that frame's header names the key as owner: the owner is
//!    written before the mapping is published and cleared only after it is removed, both
//!    under the frame's exclusive latch. A reader that pins a frame and finds another owner
//!    therefore knows its mapping was stale and may remove it while still pinned.
//! 3. The policy holds exactly the frames that are mapped, loaded and admitted
//!    (`PolicyState::resident` mirrors it); free frames and frames being loaded are not in
//!    it. A loaded frame the admission filter refused is on the transient list instead
//!    (`PolicyState::transient`), never on both.
//! 4. Bytes of a cached page beyond the file's logical length are zero, so growing a file
//!    never exposes old data.
//! 5. A dirty frame is never evicted and never dropped: it leaves the dirty state only by a
//!    successful write to storage (or by truncation of its page).
//! 6. No thread waits for a frame latch the application may hold while it holds a file's
//!    resize lock (a pin can be held for ever, and its holder may wait for that lock):
//!    `write` only tries latches under it, `set_len` and `close` refuse application pins.
//! 7. At most one write of a page to storage is in flight (`Header::writing`).

mod admit;
#[cfg(test)]
mod check;
mod config;
mod evict;
mod files;
mod guard;
mod hint;
mod hits;
mod info;
mod load;
mod ordering;
mod resize;
mod write_runs;
mod writeback;

pub use config::{
    BufferPoolBuilder, IoMode, Lookup, WritePolicy, MAX_OPEN_FILES, MAX_OPEN_FILES_HASHED,
};
pub use files::FileHandle;
pub use guard::{PageMut, PageRef};
pub use hint::PageHint;
pub use info::{PoolStats, ResidentMap};
pub use resize::TICK_NS;

use files::{open_state, FileSlot, NEXT_POOL_ID, OPEN};
use hits::{online_policies, HitMode, HitQueue, OptimisticHit};
pub use ordering::{OrderingFault, OrderingStats, WriteId};
use resize::Sizing;

use ordering::WriteOrder;

use crate::error::PoolError;
use crate::frames::{backoff, Exclusive, Frames, Shared};
use crate::lookup::Table;
use crate::stats::Counters;
use crate::storage::Storage;
use parking_lot::{Condvar, Mutex};
use policy::{Access, AnyPolicy};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// Tries of [`BufferPool::read_optimistic`] on a page that changes under it before it pins.
pub const OPTIMISTIC_TRIES: usize = 4;

/// A concurrent buffer pool over files. `Send + Sync`: share it with `Arc` and call it
/// through `&self` from any number of threads.
pub struct BufferPool {
    inner: Arc<Inner>,
    flusher: Option<JoinHandle<()>>,
}

struct PolicyState {
    /// Logical time: one tick per event the policy sees, in the order it sees them (LRU-K
    /// and ARC read `Access::time`).
    time: u64,
    policy: AnyPolicy,
    /// Mirrors which frames the policy holds (invariant 3), so that stale hit counters
    /// are never fed for a frame the policy does not know.
    resident: Vec<bool>,
    /// Loaded frames the admission filter refused (invariant 3): mapped, served, but not
    /// in the policy, and evicted before any policy victim (see `admit`).
    transient: admit::Transient,
}

struct Inner {
    /// This pool's identity, carried by its handles.
    id: u64,
    frames: Frames,
    table: Table,
    files: Box<[FileSlot]>,
    /// Serializes `open`s choosing a free slot.
    open_lock: Mutex<()>,
    policy: Mutex<PolicyState>,
    hit_mode: HitMode,
    /// The counter cap in `HitMode::Counter`, 0 otherwise (the hit path reads only this).
    hit_cap: u8,
    /// Per-thread-stripe hit queues in `HitMode::Queue`.
    hit_queues: Box<[HitQueue]>,
    free: Mutex<Vec<u32>>,
    storage: Arc<dyn Storage>,
    page_size: usize,
    page_shift: u32,
    read_ahead: u64,
    write_policy: WritePolicy,
    direct: bool,
    /// Frames evicted per batch (see [`Sizing`]); changes when the pool is resized.
    batch: AtomicUsize,
    /// Free frames the flusher keeps ready (see [`Sizing`]).
    low_water: AtomicUsize,
    /// Frames in circulation: the arena's frames minus the retired ones.
    capacity: AtomicUsize,
    /// Frames taken out of circulation by a shrink, reused first by a growth.
    retired: Mutex<Vec<u32>>,
    /// Serializes resizes, and the release of retired frames' memory with them.
    resizing: Mutex<()>,
    /// Frames retired whose memory the flusher has not handed back yet.
    unreleased: Mutex<Vec<u32>>,
    /// Set by a shrink: the flusher releases the memory of `unreleased`.
    release_pending: std::sync::atomic::AtomicBool,
    /// The builder's `free_reserve`, to size the reserve again after a resize.
    free_reserve: Option<usize>,
    /// Pages the application promises to keep pinned at once (the builder's).
    pin_limit: usize,
    /// The coarse clock of page ages, in ticks of `resize::TICK_NS` since the pool
    /// started: advanced by misses and the flusher, read by hits.
    clock: AtomicU32,
    counters: Counters,
    dirty_pages: AtomicU64,
    started: Instant,
    /// Flusher stop flag and wake-up.
    flusher: (Mutex<bool>, Condvar),
    /// A refill request for the flusher is pending.
    flusher_wake: std::sync::atomic::AtomicBool,
    /// Barriers, graph writes and their levels (`ordering`).
    order: ordering::Order,
    /// The admission filter asked on read misses (`None`: admit everything).
    admission: Option<Mutex<policy::Admitter>>,
}

/// A read that lies in one page of an open slot, before the end of its file
/// ([`Inner::in_one_page`]): what the hit fast paths need to serve it.
struct OnePage<'a> {
    slot: &'a FileSlot,
    page: u64,
    /// Offset of the read in the page.
    in_page: usize,
    /// Bytes to copy: the request, cut at the end of the file.
    n: usize,
}

impl Inner {
    /// The read of `len` bytes at `offset` of `f`, if it lies in one page and starts
    /// before the end of the file (anything else takes the general path, which checks the
    /// handle and reports errors).
    #[inline]
    fn in_one_page(&self, f: FileHandle, offset: u64, len: usize) -> Option<OnePage<'_>> {
        let slot = self.files.get(f.slot as usize)?;
        let file_len = slot.len.load(Ordering::Acquire);
        let in_page = (offset as usize) & (self.page_size - 1);
        if offset >= file_len || in_page + len > self.page_size {
            return None;
        }
        Some(OnePage {
            slot,
            page: offset >> self.page_shift,
            in_page,
            n: (file_len - offset).min(len as u64) as usize,
        })
    }

    /// A pool-held shared pin of `page` for a read (`read`'s general path and a hinted
    /// read's refresh): a hit, or the page found or loaded with read-ahead.
    #[inline]
    fn pin_to_read(
        &self,
        slot: &FileSlot,
        f: FileHandle,
        page: u64,
    ) -> Result<Shared<'_>, PoolError> {
        match self.hit_shared(slot, f, page, false) {
            Some(g) => Ok(g),
            None => Ok(self
                .acquire_waiting(f, page, false, Fill::Read, true, false)?
                .into_shared()),
        }
    }

    /// `pages_of(len)` for the pin's fast path, in three instructions: the same unless
    /// `len + page_size - 1` overflows (a length within a page of `u64::MAX`), when it is
    /// 0, so that the fast path declines and the general path decides.
    #[inline(always)]
    fn pages_fast(&self, len: u64) -> u64 {
        len.wrapping_add(self.page_size as u64 - 1) >> self.page_shift
    }
}

impl PolicyState {
    /// `a` with the next logical time.
    fn stamp(&mut self, mut a: Access) -> Access {
        self.time += 1;
        a.time = self.time;
        a
    }
}

/// A latch held by an operation: shared for reads, exclusive for writes and loads.
enum Latch<'a> {
    Shared(Shared<'a>),
    Excl(Exclusive<'a>),
}

impl<'a> Latch<'a> {
    fn into_shared(self) -> Shared<'a> {
        match self {
            Latch::Shared(s) => s,
            Latch::Excl(x) => x.downgrade(),
        }
    }

    fn into_excl(self) -> Option<Exclusive<'a>> {
        match self {
            Latch::Excl(x) => Some(x),
            Latch::Shared(_) => None,
        }
    }
}

/// How a page that is not resident gets its contents.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// Read it from storage.
    Read,
    /// The caller overwrites the whole page, or it lies past the end of the file.
    Zero,
}

impl BufferPool {
    /// A builder with the defaults: 1024 frames of 4 KiB, clock, mapped lookup,
    /// write-back, read-ahead 8, buffered I/O.
    pub fn builder() -> BufferPoolBuilder {
        BufferPoolBuilder::default()
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.inner.page_size
    }

    /// Frames in the pool (its capacity now: see [`BufferPool::resize`]).
    pub fn capacity_frames(&self) -> usize {
        self.inner.capacity()
    }

    /// Read at `offset` into `buf`, like `pread`: returns the bytes read, fewer than
    /// `buf.len()` only at end of file (0 at or past it). Reads see every completed write.
    #[inline]
    pub fn read(&self, f: FileHandle, offset: u64, buf: &mut [u8]) -> Result<usize, PoolError> {
        let inner = &*self.inner;
        // Fast path: the whole request lies in one resident page (XMF's small reads).
        if let Some(r) = inner.in_one_page(f, offset, buf.len()) {
            if let Some(g) = inner.hit_shared(r.slot, f, r.page, false) {
                buf[..r.n].copy_from_slice(&g.bytes()[r.in_page..r.in_page + r.n]);
                return Ok(r.n);
            }
        }
        self.read_slow(f, offset, buf)
    }

    #[cold]
    fn read_slow(&self, f: FileHandle, offset: u64, buf: &mut [u8]) -> Result<usize, PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let len = slot.len.load(Ordering::Acquire);
        if offset >= len || buf.is_empty() {
            return Ok(0);
        }
        let n = (len - offset).min(buf.len() as u64) as usize;
        let ps = inner.page_size;
        let mut done = 0usize;
        while done < n {
            let pos = offset + done as u64;
            let page = pos >> inner.page_shift;
            let in_page = (pos as usize) & (ps - 1);
            let take = (ps - in_page).min(n - done);
            let shared = inner.pin_to_read(slot, f, page)?;
            buf[done..done + take].copy_from_slice(&shared.bytes()[in_page..in_page + take]);
            done += take;
        }
        Ok(n)
    }

    /// [`read`](BufferPool::read), optimistically: when the request lies in one resident
    /// page, its bytes are copied with no atomic read-modify-write on the page's frame (no
    /// pin), then the copy is validated against the frame's version and retried if an
    /// exclusive holder (a writer, a load, an eviction) ran meanwhile; after
    /// [`OPTIMISTIC_TRIES`] failed tries, or for a page that is not resident, spans pages or
    /// starts a read-ahead window, it falls back to `read`. Same contract as `read`: `buf`
    /// receives only validated bytes, and reads see every completed write.
    ///
    /// Cheaper than `read` on a hit, since a pin and an unpin are two read-modify-writes of
    /// a cache line that every reader of the page shares; `buf` should be small (a record,
    /// a key), since the copy is made with word-sized atomic loads and a write to the page
    /// during a long copy makes it start over. With the `Hashed` lookup the table's shard
    /// lock is still taken; hits on an order-sensitive policy (`lru`) are still queued.
    ///
    /// ```
    /// use pool::{BufferPool, MemStorage};
    ///
    /// let pool = BufferPool::builder().build_with_storage(MemStorage::new())?;
    /// let f = pool.create("/t")?;
    /// pool.write(f, 4096, b"hello, page one")?;
    /// let mut buf = [0u8; 5];
    /// assert_eq!(pool.read_optimistic(f, 4096 + 7, &mut buf)?, 5);
    /// assert_eq!(&buf, b"page ");
    /// # Ok::<(), pool::PoolError>(())
    /// ```
    #[inline]
    pub fn read_optimistic(
        &self,
        f: FileHandle,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, PoolError> {
        let inner = &*self.inner;
        if let Some(r) = inner.in_one_page(f, offset, buf.len()) {
            // The first try straight-line; the retries out of line (as a loop here the
            // attempt's state was spilled and reloaded around it: 27 instructions a read).
            match inner.hit_optimistic(r.slot, f, r.page, r.in_page, &mut buf[..r.n]) {
                OptimisticHit::Hit => return Ok(r.n),
                OptimisticHit::Changed => {
                    if let Some(n) = self.optimistic_retries(f, offset, buf) {
                        return Ok(n);
                    }
                }
                OptimisticHit::Absent => {}
            }
        }
        self.read_slow(f, offset, buf)
    }

    /// The tries of `read_optimistic` after a first one found the frame changing: the
    /// bytes copied when one of them copied and validated them. It finds the page (and the
    /// length to copy, which a concurrent `set_len` may have changed) again from `offset`:
    /// taking the caller's `OnePage` by reference kept that on the stack on every read.
    #[cold]
    fn optimistic_retries(&self, f: FileHandle, offset: u64, buf: &mut [u8]) -> Option<usize> {
        let r = self.inner.in_one_page(f, offset, buf.len())?;
        for _ in 1..OPTIMISTIC_TRIES {
            std::hint::spin_loop();
            match self
                .inner
                .hit_optimistic(r.slot, f, r.page, r.in_page, &mut buf[..r.n])
            {
                OptimisticHit::Hit => return Some(r.n),
                OptimisticHit::Changed => {}
                OptimisticHit::Absent => return None,
            }
        }
        None
    }

    /// Write `buf` at `offset`, extending the file if needed. With write-back the bytes
    /// reach storage later; with write-through before this returns (an error then leaves
    /// the page dirty in the pool and is returned here). A write spanning pages is not
    /// atomic: other threads may see some pages of it before others, and on error a
    /// prefix of `buf` may already be in the pool (like a short `pwrite`).
    pub fn write(&self, f: FileHandle, offset: u64, buf: &[u8]) -> Result<(), PoolError> {
        self.write_with(f, offset, buf, &mut WriteOrder::Plain)
    }

    /// `write`, with the ordering the write belongs to (plain, or a graph write's node).
    fn write_with(
        &self,
        f: FileHandle,
        offset: u64,
        buf: &[u8],
        order: &mut WriteOrder<'_>,
    ) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let end = offset
            .checked_add(buf.len() as u64)
            .ok_or(PoolError::OutOfRange {
                offset,
                len: buf.len() as u64,
            })?;
        if buf.is_empty() {
            return Ok(());
        }
        let ps = inner.page_size;
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset + done as u64;
            let page = pos >> inner.page_shift;
            let in_page = (pos as usize) & (ps - 1);
            let take = (ps - in_page).min(buf.len() - done);
            let fill = if take == ps { Fill::Zero } else { Fill::Read };
            // The resize lock keeps the page and the length change together against a
            // truncation; it is never held while waiting for the page's latch, which an
            // application pin may hold for ever (a `set_len` waiting for the lock would
            // then stall everything behind it).
            inner.order_make_room()?;
            let mut spins = 0;
            let (_resize, mut g) = loop {
                let resize = slot.resize.read();
                if let Some(latch) = inner.acquire(f, page, true, fill, false, false, false)? {
                    let g = latch
                        .into_excl()
                        .expect("acquire(excl = true) returns an exclusive latch");
                    break (resize, g);
                }
                drop(resize);
                backoff(&mut spins);
            };
            let ordered = inner.order_before_write(&g, order, done + take == buf.len());
            g.bytes_mut()[in_page..in_page + take].copy_from_slice(&buf[done..done + take]);
            done += take;
            slot.len.fetch_max(pos + take as u64, Ordering::AcqRel);
            inner.mark_dirty(g.id(), g.header());
            if inner.write_policy == WritePolicy::WriteThrough && !ordered {
                inner.write_latched(g.id(), g.header(), g.bytes())?;
            }
        }
        debug_assert!(slot.len.load(Ordering::Relaxed) >= end);
        Ok(())
    }

    /// Logical length of the file (including writes not yet on storage).
    pub fn len(&self, f: FileHandle) -> Result<u64, PoolError> {
        Ok(self.inner.slot(f)?.len.load(Ordering::Acquire))
    }

    /// Load the pages of `f` listed in `pages` that are not resident, with all their reads
    /// in flight at once (on real files one `io_uring` submission per batch of up to 64;
    /// where the kernel refuses rings, one read after the other), and return how many were
    /// loaded. Resident pages, pages being loaded by another thread and pages past the end
    /// of the file are skipped. This is how one thread keeps several reads in flight: list
    /// the pages an operation will touch (an index probe's leaves, a join's next rows),
    /// prefetch them, then read or pin them as hits.
    ///
    /// A failed read leaves its page out of the cache and is returned after the others
    /// are loaded (the first error, like [`BufferPool::sync_all`]).
    ///
    /// ```
    /// use pool::{BufferPool, MemStorage};
    ///
    /// let pool = BufferPool::builder().capacity_frames(64).build_with_storage(MemStorage::new())?;
    /// let f = pool.create("/t")?;
    /// pool.write(f, 0, &[5u8; 8 * 4096])?;
    /// pool.sync_all()?;
    /// pool.close(f)?;
    /// let f = pool.open("/t")?;
    /// assert_eq!(pool.prefetch(f, &[1, 3, 5, 3, 99])?, 3); // 3 once; 99 is past the end
    /// assert_eq!(pool.stats().prefetched_pages, 3);
    /// assert_eq!(pool.pin(f, 3)?[0], 5); // a hit
    /// # Ok::<(), pool::PoolError>(())
    /// ```
    pub fn prefetch(&self, f: FileHandle, pages: &[u64]) -> Result<usize, PoolError> {
        self.inner.prefetch(f, pages)
    }

    /// Pin `page` for reading without copying: the guard derefs to the very frame that
    /// `read` copies from. The page is never evicted while pinned. Errors with
    /// [`PoolError::PastEnd`] for pages at or past the end of the file.
    #[inline]
    pub fn pin(&self, f: FileHandle, page: u64) -> Result<PageRef<'_>, PoolError> {
        let inner = &*self.inner;
        // The hit path builds no `Result` until it succeeds (they are large to move).
        if let Some(slot) = inner.files.get(f.slot as usize) {
            if page < inner.pages_fast(slot.len.load(Ordering::Acquire)) {
                if let Some(guard) = inner.hit_shared(slot, f, page, true) {
                    return Ok(PageRef { guard, page });
                }
            }
        }
        self.pin_slow(f, page)
    }

    #[cold]
    fn pin_slow(&self, f: FileHandle, page: u64) -> Result<PageRef<'_>, PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let pages = inner.pages_of(slot.len.load(Ordering::Acquire));
        if page >= pages {
            return Err(PoolError::PastEnd { page, pages });
        }
        let latch = inner.acquire_waiting(f, page, false, Fill::Read, false, true)?;
        inner.still_in_file(slot, page)?;
        Ok(PageRef {
            guard: latch.into_shared(),
            page,
        })
    }

    /// Pin `page` for writing: exclusive, zero-copy, and marks the page dirty. Bytes past
    /// the file's length are not part of the file (they are zeroed again on release);
    /// extend the file with `set_len` or `write` first.
    pub fn pin_mut(&self, f: FileHandle, page: u64) -> Result<PageMut<'_>, PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let pages = inner.pages_of(slot.len.load(Ordering::Acquire));
        if page >= pages {
            return Err(PoolError::PastEnd { page, pages });
        }
        let latch = inner.acquire_waiting(f, page, true, Fill::Read, false, true)?;
        inner.still_in_file(slot, page)?;
        let mut guard = latch
            .into_excl()
            .expect("acquire(excl = true) returns an exclusive latch");
        guard.mark_user();
        inner.order_before_write(&guard, &mut WriteOrder::Plain, true);
        inner.order.pin_mut_taken();
        inner.mark_dirty(guard.id(), guard.header());
        Ok(PageMut {
            guard,
            inner,
            slot,
            page,
        })
    }
}

impl Drop for BufferPool {
    /// Stops the flusher and writes and syncs every dirty page. Errors cannot be returned
    /// from `drop`: call [`BufferPool::sync_all`] first to see them.
    fn drop(&mut self) {
        *self.inner.flusher.0.lock() = true;
        self.inner.flusher.1.notify_all();
        if let Some(h) = self.flusher.take() {
            let _ = h.join();
        }
        let _ = self.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::NO_OWNER;
    use policy::{BuildContext, Policy, PolicySpec};

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn pool_is_send_and_sync() {
        assert_send_sync::<BufferPool>();
        assert_send_sync::<FileHandle>();
    }

    /// The pin's three-instruction page count equals `pages_of` (4 KiB pages: 0 bytes are
    /// 0 pages, 1..=4096 one, 4097 two), and a length so close to `u64::MAX` that the sum
    /// wraps gives 0, so the fast path declines every page rather than accept one past
    /// the end.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn the_fast_page_count_is_pages_of_or_declines() {
        let pool = BufferPool::builder()
            .capacity_frames(16)
            .build_with_storage(crate::MemStorage::new())
            .unwrap();
        let inner = &pool.inner;
        for (len, pages) in [(0, 0), (1, 1), (4095, 1), (4096, 1), (4097, 2), (8192, 2)] {
            assert_eq!(inner.pages_fast(len), pages, "{len} bytes");
            assert_eq!(inner.pages_of(len), pages, "{len} bytes");
        }
        let top = u64::MAX - 4094;
        assert_eq!(inner.pages_fast(top), 0);
        assert!(inner.pages_of(top) > 0);
    }

    #[test]
    fn owner_word_round_trips() {
        let pool = BufferPool::builder()
            .capacity_frames(16)
            .build_with_storage(crate::MemStorage::new())
            .unwrap();
        let fh = FileHandle {
            pool: pool.inner.id,
            slot: 7,
            gen: 9,
        };
        assert_eq!(pool.inner.handle_of(fh.owner()), fh);
        assert_ne!(fh.owner(), NO_OWNER);
    }

    /// A slot whose generation would wrap is retired: a handle closed 2^32 opens ago must
    /// never become valid again.
    #[test]
    fn a_slot_is_retired_before_its_generation_wraps() {
        let pool = BufferPool::builder()
            .capacity_frames(16)
            .max_open_files(2)
            .build_with_storage(crate::MemStorage::new())
            .unwrap();
        // as if slot 0 had been opened u32::MAX - 1 times
        pool.inner.files[0]
            .state
            .store(u64::from(u32::MAX - 1) << 2, Ordering::Release);
        let last = pool.create("/a").unwrap();
        assert_eq!((last.slot, last.gen), (0, u32::MAX));
        pool.close(last).unwrap();
        let next = pool.create("/b").unwrap();
        assert_eq!(next.slot, 1, "slot 0 is retired");
        assert!(matches!(pool.len(last), Err(PoolError::Closed(_))));
        assert!(matches!(
            pool.create("/c"),
            Err(PoolError::TooManyOpenFiles { max: 2 })
        ));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "builds every registered policy, large tables included: 203 s under Miri, for safe code"
    )]
    fn hit_modes_follow_the_declared_hit_paths() {
        let mode = |spec: &str| {
            let p = PolicySpec::parse(spec)
                .unwrap()
                .build(&BuildContext::new(64, 0))
                .unwrap();
            HitMode::of(p.hit_path())
        };
        assert_eq!(mode("fifo"), Some(HitMode::Counter(0)));
        assert_eq!(mode("clock"), Some(HitMode::Counter(1)));
        assert_eq!(mode("gclock:max=7"), Some(HitMode::Counter(7)));
        assert_eq!(mode("s3fifo"), Some(HitMode::Counter(3)));
        assert_eq!(mode("lru"), Some(HitMode::Queue));
        assert_eq!(mode("belady"), None);
        assert!(online_policies().contains("arc") && !online_policies().contains("belady"));
    }
}
