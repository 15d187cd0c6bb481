//! Bringing pages in: finding or loading a page and latching it (`acquire`), claiming and
//! publishing frames, demand reads with read-ahead, and `prefetch` with several reads in
//! flight.

use super::{FileHandle, FileSlot, Fill, Inner, Latch};
use crate::error::PoolError;
use crate::frames::{Exclusive, NO_OWNER};
use crate::stats::Counter;
use crate::storage::{read_full_at, BatchRead, StorageFile};
use policy::{Access, FrameId, Policy};
use std::path::Path;
use std::sync::atomic::Ordering;

impl Inner {
    /// `PastEnd` if `page` is past the end of the file now: a pin checks the length before
    /// it loads, and a truncation may run in between (the pin would then hold a page that
    /// is not part of the file, though `set_len` reported success).
    pub(super) fn still_in_file(&self, slot: &FileSlot, page: u64) -> Result<(), PoolError> {
        let pages = self.pages_of(slot.len.load(Ordering::Acquire));
        if page < pages {
            Ok(())
        } else {
            Err(PoolError::PastEnd { page, pages })
        }
    }

    /// Pages beyond what the lookup table can address are an error, not a panic.
    pub(super) fn check_in_range(&self, page: u64) -> Result<(), PoolError> {
        if self.table.page_in_range(page) {
            Ok(())
        } else {
            Err(PoolError::OutOfRange {
                offset: page.saturating_mul(self.page_size as u64),
                len: self.page_size as u64,
            })
        }
    }

    /// Find or load `page` of `fh` and latch it (exclusive when `excl`). With `wait` false,
    /// `Ok(None)` instead of waiting when the page is resident but latched by someone else
    /// (`write` must not wait for a latch while it holds the file's resize lock).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn acquire(
        &self,
        fh: FileHandle,
        page: u64,
        excl: bool,
        fill: Fill,
        read_ahead: bool,
        user: bool,
        wait: bool,
    ) -> Result<Option<Latch<'_>>, PoolError> {
        self.check_in_range(page)?;
        let key = fh.key(page);
        loop {
            let slot = self.slot(fh)?;
            if let Some(fid) = self.table.get(key) {
                let latch = match (excl, wait) {
                    (true, true) => Latch::Excl(self.frames.exclusive(fid)),
                    (false, true) => Latch::Shared(self.frames.share(fid)),
                    (true, false) => match self.frames.try_exclusive(fid) {
                        Some(g) => Latch::Excl(g),
                        None => return Ok(None),
                    },
                    (false, false) => match self.frames.try_share(fid) {
                        Some(g) => Latch::Shared(g),
                        None => return Ok(None),
                    },
                };
                let h = self.frames.header(fid);
                if h.owner.load(Ordering::Relaxed) == fh.owner()
                    && h.page.load(Ordering::Relaxed) == page
                {
                    self.touch(fid);
                    self.counters.bump(Counter::Hits);
                    if read_ahead && self.frames.ra_marked(fid) && self.frames.take_ra_mark(fid) {
                        // The reader reached the read-ahead window: fetch the next one.
                        let start = slot.ra_next.load(Ordering::Relaxed).max(page + 1);
                        self.read_ahead_run(fh, slot, start);
                    }
                    return Ok(Some(Self::as_user(latch, user)));
                }
                // Stale mapping (invariant 2): remove it while pinned, so the frame cannot
                // be reloaded for this key in between.
                self.table.remove(key, fid);
                drop(latch);
                continue;
            }
            if let Some(latch) = self.load(fh, slot, page, excl, fill, read_ahead)? {
                return Ok(Some(Self::as_user(latch, user)));
            }
        }
    }

    /// `acquire` that waits for the latch.
    pub(super) fn acquire_waiting(
        &self,
        fh: FileHandle,
        page: u64,
        excl: bool,
        fill: Fill,
        read_ahead: bool,
        user: bool,
    ) -> Result<Latch<'_>, PoolError> {
        Ok(self
            .acquire(fh, page, excl, fill, read_ahead, user, true)?
            .expect("an acquire that waits always returns a latch"))
    }

    /// Count a shared latch as the application's pin (`user`), once its page is known.
    pub(super) fn as_user(latch: Latch<'_>, user: bool) -> Latch<'_> {
        match latch {
            Latch::Shared(mut s) if user => {
                s.mark_user();
                Latch::Shared(s)
            }
            other => other,
        }
    }

    /// Claim a frame for `page` and publish the mapping. With `wait`, evict (writing dirty
    /// victims if need be) until a frame is free; without, take one only if it can be had
    /// at once (the free list, or a batch of clean victims if the policy lock is free):
    /// what a thread that already holds claimed frames must do, or two such threads can
    /// starve each other.
    pub(super) fn claim(
        &self,
        fh: FileHandle,
        page: u64,
        wait: bool,
    ) -> Result<Claim<'_>, PoolError> {
        let incoming = Self::access(fh, page);
        let g = if wait {
            self.alloc_frame(&incoming)?
        } else {
            match self.frame_now(&incoming) {
                Some(g) => g,
                None => return Ok(Claim::NoFrame),
            }
        };
        let h = g.header();
        // A free frame belongs to no page (evict, unclaim and discard clear the owner).
        debug_assert_eq!(
            h.owner.load(Ordering::Relaxed),
            NO_OWNER,
            "claimed a frame in use"
        );
        h.incarnation.fetch_add(1, Ordering::Relaxed);
        self.frames
            .last_access(g.id())
            .store(self.advance_clock(), Ordering::Relaxed);
        h.owner.store(fh.owner(), Ordering::Relaxed);
        // After the owner, with `Release`: see `Inner::page_owned_by`, which reads the two
        // without the latch.
        h.page.store(page, Ordering::Release);
        self.frames.refs(g.id()).store(0, Ordering::Relaxed);
        self.frames.set_ra_mark(g.id(), false);
        h.write_failed.store(false, Ordering::Relaxed);
        debug_assert!(!h.dirty.load(Ordering::Relaxed));
        let key = fh.key(page);
        if self.table.insert(key, g.id()).is_err() {
            self.unclaim(g, None);
            self.slot(fh)?;
            return Ok(Claim::Mapped);
        }
        if !self.is_open(fh) {
            // Closed while we claimed: leave nothing behind.
            self.unclaim(g, Some(key));
            return Err(PoolError::Closed(fh));
        }
        Ok(Claim::Frame(g))
    }

    /// A free frame, exclusively latched, if one can be had without waiting.
    fn frame_now(&self, incoming: &Access) -> Option<Exclusive<'_>> {
        let popped = self.free.lock().pop();
        let id = match popped {
            Some(id) => id,
            None => {
                let mut state = self.policy.try_lock()?;
                self.take_or_evict(&mut state, incoming)?
            }
        };
        // A reader holding a stale mapping may pin a free frame for a moment.
        Some(self.frames.exclusive(id))
    }

    /// Give back frames claimed for pages of `fh` that will not be loaded.
    fn unclaim_all(&self, fh: FileHandle, claimed: Vec<Exclusive<'_>>) {
        for g in claimed {
            let p = g.header().page.load(Ordering::Relaxed);
            self.unclaim(g, Some(fh.key(p)));
        }
    }

    /// Register loaded frames with the policy.
    pub(super) fn insert_loaded(&self, frames: &[u32]) {
        let mut state = self.policy.lock();
        for &id in frames {
            // Invariant 3: a frame being loaded is not in the policy yet.
            debug_assert!(!state.resident[id as usize], "frame {id} inserted twice");
            let a = state.stamp(Self::access_of(self.frames.header(id)));
            state.policy.on_insert(FrameId(id), &a);
            state.resident[id as usize] = true;
        }
    }

    /// Load `page` (a miss). `Ok(None)` when another thread mapped it first.
    pub(super) fn load(
        &self,
        fh: FileHandle,
        slot: &FileSlot,
        page: u64,
        excl: bool,
        fill: Fill,
        read_ahead: bool,
    ) -> Result<Option<Latch<'_>>, PoolError> {
        // A load must not race a truncation: it could bring back a page past the new end,
        // with its old bytes (invariant 4). Recursive: `write` already holds it shared.
        let _resize = slot.resize.read_recursive();
        let mut g = match self.claim(fh, page, true)? {
            Claim::Frame(g) => g,
            Claim::Mapped => return Ok(None),
            Claim::NoFrame => unreachable!("a claim that waits always gets a frame"),
        };
        let len = slot.len.load(Ordering::Acquire);
        let ps = self.page_size as u64;
        let fill = if page.saturating_mul(ps) >= len {
            Fill::Zero
        } else {
            fill
        };
        self.counters.bump(Counter::Misses);
        let mut extra: Vec<Exclusive<'_>> = Vec::new();
        if fill == Fill::Zero {
            g.bytes_mut().fill(0);
        } else {
            let (file, path) = match self.file_of(fh) {
                Ok(f) => f,
                Err(e) => {
                    self.unclaim(g, Some(fh.key(page)));
                    return Err(e);
                }
            };
            let sequential =
                read_ahead && self.read_ahead > 0 && slot.ra_next.load(Ordering::Relaxed) == page;
            if sequential {
                let pages = self.pages_of(len);
                let end = (page + 1 + self.read_ahead).min(pages);
                extra = self.claim_run(fh, page + 1, end);
            }
            let result = {
                let mut bufs: Vec<&mut [u8]> = Vec::with_capacity(1 + extra.len());
                bufs.push(g.bytes_mut());
                for x in extra.iter_mut() {
                    bufs.push(x.bytes_mut());
                }
                self.read_into(&*file, &mut bufs, page * ps)
            };
            match result {
                Ok(()) => {}
                Err(e) => {
                    for x in extra {
                        let p = x.header().page.load(Ordering::Relaxed);
                        self.unclaim(x, Some(fh.key(p)));
                    }
                    self.unclaim(g, Some(fh.key(page)));
                    return Err(PoolError::Io {
                        path,
                        op: "read",
                        source: e,
                    });
                }
            }
            self.counters.bump(Counter::ReadCalls);
            self.counters
                .add(Counter::PagesRead, 1 + extra.len() as u64);
            self.counters
                .add(Counter::ReadAheadPages, extra.len() as u64);
        }
        slot.ra_next
            .store(page + 1 + extra.len() as u64, Ordering::Relaxed);
        // Admission is asked of pages read for a shared access only (see `admit`); the
        // read-ahead pages skip it.
        let refused = !excl && fill != Fill::Zero && !self.admits(fh, page);
        let mut ids = Vec::with_capacity(1 + extra.len());
        if refused {
            self.counters.bump(Counter::AdmissionRefused);
            self.park_refused(g.id());
        } else {
            ids.push(g.id());
        }
        ids.extend(extra.iter().map(|x| x.id()));
        self.insert_loaded(&ids);
        if let Some(first) = extra.first() {
            self.frames.set_ra_mark(first.id(), true);
        }
        drop(extra);
        Ok(Some(if excl {
            Latch::Excl(g)
        } else {
            Latch::Shared(g.downgrade())
        }))
    }

    /// Load the non-resident pages of `pages` with their reads in flight together; see
    /// [`BufferPool::prefetch`]. A chunk claims at most a quarter of the pool, so a huge
    /// list cannot latch every frame and starve other threads.
    pub(super) fn prefetch(&self, fh: FileHandle, pages: &[u64]) -> Result<usize, PoolError> {
        let slot = self.slot(fh)?;
        for &page in pages {
            self.check_in_range(page)?;
        }
        // Like `load`: a prefetch must not race a truncation.
        let _resize = slot.resize.read_recursive();
        let (file, path) = self.file_of(fh)?;
        let in_file = self.pages_of(slot.len.load(Ordering::Acquire));
        let most = (self.capacity() / 4).max(1);
        let mut batch = Batch {
            file: &*file,
            path: &path,
            loaded: 0,
            first_err: None,
        };
        let mut claimed: Vec<Exclusive<'_>> = Vec::with_capacity(most.min(pages.len()));
        for &page in pages {
            // Past the end there is nothing to read: an access there zero-fills.
            if page >= in_file || self.table.get(fh.key(page)).is_some() {
                continue;
            }
            // Wait for a frame only while holding none (see `claim`); otherwise read what
            // is claimed first, which frees the way.
            let mut claim = self.claim(fh, page, claimed.is_empty());
            if let Ok(Claim::NoFrame) = claim {
                self.read_batch(fh, std::mem::take(&mut claimed), &mut batch);
                claim = self.claim(fh, page, true);
            }
            match claim {
                Ok(Claim::Frame(g)) => claimed.push(g),
                Ok(Claim::Mapped | Claim::NoFrame) => {}
                Err(e) => {
                    self.unclaim_all(fh, claimed);
                    return Err(e);
                }
            }
            if claimed.len() == most {
                self.read_batch(fh, std::mem::take(&mut claimed), &mut batch);
            }
        }
        self.read_batch(fh, claimed, &mut batch);
        match batch.first_err {
            Some(e) => Err(e),
            None => Ok(batch.loaded),
        }
    }

    /// Read the claimed pages with their reads in flight together, and register the ones
    /// read with the policy; a failed read leaves its page out (the first error is kept).
    fn read_batch(&self, fh: FileHandle, mut claimed: Vec<Exclusive<'_>>, batch: &mut Batch<'_>) {
        if claimed.is_empty() {
            return;
        }
        let ps = self.page_size as u64;
        let results: Vec<std::io::Result<usize>> = {
            let mut reads: Vec<BatchRead<'_>> = claimed
                .iter_mut()
                .map(|g| {
                    let offset = g.header().page.load(Ordering::Relaxed) * ps;
                    BatchRead::new(offset, g.bytes_mut())
                })
                .collect();
            batch.file.read_batch(&mut reads);
            reads.into_iter().map(|r| r.result).collect()
        };
        self.counters.bump(Counter::ReadCalls);
        let mut ok = Vec::with_capacity(claimed.len());
        for (mut g, result) in claimed.into_iter().zip(results) {
            match result {
                Ok(n) => {
                    // Short only at the end of the file: the rest of the page is zeros.
                    g.bytes_mut()[n.min(self.page_size)..].fill(0);
                    ok.push(g);
                }
                Err(source) => {
                    let p = g.header().page.load(Ordering::Relaxed);
                    self.unclaim(g, Some(fh.key(p)));
                    batch.first_err.get_or_insert(PoolError::Io {
                        path: batch.path.to_path_buf(),
                        op: "read",
                        source,
                    });
                }
            }
        }
        let ids: Vec<u32> = ok.iter().map(|g| g.id()).collect();
        self.insert_loaded(&ids);
        self.counters.add(Counter::PagesRead, ids.len() as u64);
        self.counters
            .add(Counter::PrefetchedPages, ids.len() as u64);
        batch.loaded += ids.len();
    }

    /// Read consecutive pages into `bufs`, zero-filling whatever lies past the end of file.
    pub(super) fn read_into(
        &self,
        file: &dyn StorageFile,
        bufs: &mut [&mut [u8]],
        offset: u64,
    ) -> std::io::Result<()> {
        let n = if bufs.len() == 1 {
            read_full_at(file, bufs[0], offset)?
        } else {
            file.read_vectored_at(bufs, offset)?
        };
        let ps = self.page_size;
        for (i, b) in bufs.iter_mut().enumerate() {
            let got = n.saturating_sub(i * ps).min(ps);
            b[got..].fill(0);
        }
        Ok(())
    }

    /// Claim frames for the non-resident pages `start..end`, stopping at the first page
    /// that is resident or when no frame is free without waiting. Read-ahead is a hint:
    /// it never fails and never writes dirty pages to make room.
    pub(super) fn claim_run(&self, fh: FileHandle, start: u64, end: u64) -> Vec<Exclusive<'_>> {
        let mut out = Vec::new();
        for p in start..end {
            if self.table.get(fh.key(p)).is_some() {
                break;
            }
            match self.claim(fh, p, false) {
                Ok(Claim::Frame(g)) => out.push(g),
                Ok(Claim::Mapped | Claim::NoFrame) => break,
                Err(_) => {
                    // The file was closed: a hint needs no error.
                    self.unclaim_all(fh, out);
                    return Vec::new();
                }
            }
        }
        out
    }

    /// Read-ahead triggered by a hit on a marked page: load `start..start+depth`.
    pub(super) fn read_ahead_run(&self, fh: FileHandle, slot: &FileSlot, start: u64) {
        // Never wait here: the caller holds a latch that a running `set_len` may wait for.
        let Some(_resize) = slot.resize.try_read_recursive() else {
            return;
        };
        let len = slot.len.load(Ordering::Acquire);
        let end = (start + self.read_ahead).min(self.pages_of(len));
        if start >= end {
            return;
        }
        let Ok((file, _)) = self.file_of(fh) else {
            return;
        };
        let mut run = self.claim_run(fh, start, end);
        if run.is_empty() {
            return;
        }
        let result = {
            let mut bufs: Vec<&mut [u8]> = run.iter_mut().map(|g| g.bytes_mut()).collect();
            self.read_into(&*file, &mut bufs, start * self.page_size as u64)
        };
        if result.is_err() {
            // A hint failed: forget it; the demand read will report the error.
            for g in run {
                let p = g.header().page.load(Ordering::Relaxed);
                self.unclaim(g, Some(fh.key(p)));
            }
            return;
        }
        self.counters.bump(Counter::ReadCalls);
        self.counters.add(Counter::PagesRead, run.len() as u64);
        self.counters.add(Counter::ReadAheadPages, run.len() as u64);
        slot.ra_next
            .store(start + run.len() as u64, Ordering::Relaxed);
        let ids: Vec<u32> = run.iter().map(|g| g.id()).collect();
        self.insert_loaded(&ids);
        self.frames.set_ra_mark(run[0].id(), true);
    }
}

/// Outcome of [`Inner::claim`].
pub(super) enum Claim<'a> {
    /// A frame for the page, exclusively latched, mapped, not yet loaded.
    Frame(Exclusive<'a>),
    /// Another thread mapped the page first.
    Mapped,
    /// No frame could be had without waiting (only when not asked to wait).
    NoFrame,
}

/// A prefetch's progress over its batches.
struct Batch<'a> {
    file: &'a dyn StorageFile,
    path: &'a Path,
    loaded: usize,
    first_err: Option<PoolError>,
}

#[cfg(test)]
mod tests {
    use super::super::check::{quiet_builder, resident_pages, small_pool_over};
    use super::super::BufferPool;
    use super::*;
    use crate::storage::OpenMode;
    use crate::testing::{FaultKind, FaultOp, MemStorage, RecordingStorage};
    use crate::Storage;

    /// A 12-page file already on `storage`, page `p` filled with `p`.
    fn twelve_pages(storage: &dyn Storage) {
        let file = storage
            .open(Path::new("/f"), OpenMode::buffered(true))
            .unwrap();
        for p in 0..12u8 {
            file.write_at(&[p; 4096], u64::from(p) * 4096).unwrap();
        }
    }

    /// 16 frames reading 4 pages ahead, with the 12-page file open.
    fn read_ahead_pool() -> (BufferPool, FileHandle) {
        let storage = MemStorage::new();
        twelve_pages(&storage);
        let pool = quiet_builder(16, "lru")
            .read_ahead(4)
            .build_with_storage(storage)
            .unwrap();
        let f = pool.open("/f").unwrap();
        (pool, f)
    }

    fn counts(pool: &BufferPool) -> (u64, u64, u64) {
        let s = pool.stats();
        (s.read_calls, s.pages_read, s.read_ahead_pages)
    }

    /// A miss at the file's read position reads 4 more pages in the same call and marks
    /// the first of them; a hit on the mark reads the next window.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn sequential_misses_read_ahead_in_windows() {
        let (pool, f) = read_ahead_pool();
        let mut b = [0u8; 1];
        pool.read(f, 0, &mut b).unwrap();
        assert_eq!(counts(&pool), (1, 5, 4));
        assert_eq!(resident_pages(&pool, f), [0, 1, 2, 3, 4]);
        pool.read(f, 4096, &mut b).unwrap();
        assert_eq!(b[0], 1);
        assert_eq!(counts(&pool), (2, 9, 8));
        assert_eq!(resident_pages(&pool, f), (0..9).collect::<Vec<_>>());
        assert_eq!(pool.stats().misses, 1, "the second read was a hit");
        pool.inner.check_invariants();
    }

    /// A miss elsewhere reads one page; the next page is then sequential, and its window
    /// stops at the end of the file (pages 9, 10, 11).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_random_miss_reads_one_page_and_the_window_stops_at_the_end() {
        let (pool, f) = read_ahead_pool();
        let mut b = [0u8; 1];
        pool.read(f, 7 * 4096, &mut b).unwrap();
        assert_eq!(counts(&pool), (1, 1, 0));
        pool.read(f, 8 * 4096, &mut b).unwrap();
        assert_eq!(b[0], 8);
        assert_eq!(counts(&pool), (2, 5, 3));
        assert_eq!(resident_pages(&pool, f), [7, 8, 9, 10, 11]);
        pool.inner.check_invariants();
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn pages_past_the_end_or_the_table_are_errors() {
        let (pool, f) = read_ahead_pool();
        assert!(matches!(
            pool.pin(f, 12),
            Err(PoolError::PastEnd {
                page: 12,
                pages: 12
            })
        ));
        assert!(matches!(
            pool.inner.check_in_range(u64::MAX),
            Err(PoolError::OutOfRange { len: 4096, .. })
        ));
        assert!(pool.inner.check_in_range(11).is_ok());
    }

    /// A failed read gives its frame back: nothing mapped, nothing in the policy.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_failed_read_leaves_nothing_behind() {
        let storage = RecordingStorage::new();
        twelve_pages(&storage);
        let pool = small_pool_over(4, "lru", storage.clone());
        let f = pool.open("/f").unwrap();
        storage.inject(FaultOp::Read, FaultKind::Eio, 0, 1);
        let mut b = [0u8; 1];
        assert!(matches!(
            pool.read(f, 0, &mut b),
            Err(PoolError::Io { op: "read", .. })
        ));
        assert!(resident_pages(&pool, f).is_empty());
        assert_eq!(pool.stats().free_frames, 4);
        pool.inner.check_invariants();
        assert_eq!(pool.read(f, 0, &mut b).unwrap(), 1);
    }
}
