//! Dirty pages on their way to storage: dirty tracking (flag plus bitmap), writing a page
//! (one writer at a time), `fsync` and the `O_DIRECT` trim, and the flusher thread
//! (delayed-write ageing and the clean free-frame reserve).

use super::{BufferPool, FileHandle, Inner, WritePolicy, OPEN};
use crate::error::PoolError;
use crate::frames::{Bits, Header, NO_OWNER};
use crate::stats::Counter;
use crate::storage::StorageFile;
use policy::Access;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A write of several pages that failed: how many leading pages were written whole, and
/// the error.
#[derive(Debug)]
pub(super) struct RunError {
    pub pages_done: usize,
    pub error: PoolError,
}

impl Inner {
    pub(super) fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    /// Mark frame `id` (exclusively latched by the caller) dirty. Its bit in the dirty
    /// map is set first, so that a dirty frame always has its bit (a bit may outlive
    /// the flag for a moment; readers of the map check the flag).
    pub(super) fn mark_dirty(&self, id: u32, h: &Header) {
        debug_assert!(
            !self.frames.is_idle(id),
            "frame {id} marked dirty without a latch"
        );
        debug_assert_ne!(
            h.owner.load(Ordering::Relaxed),
            NO_OWNER,
            "a free frame made dirty"
        );
        if !h.dirty.load(Ordering::Relaxed) {
            let (word, bit) = self.frames.bit(Bits::Dirty, id);
            word.fetch_or(bit, Ordering::Release);
            h.dirty_since_ns.store(self.now_ns(), Ordering::Relaxed);
            h.dirty.store(true, Ordering::Release);
            self.dirty_pages.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Mark frame `id` clean (the caller holds a latch on it, so no `mark_dirty` races).
    pub(super) fn clear_dirty(&self, id: u32, h: &Header) {
        if h.dirty.swap(false, Ordering::AcqRel) {
            let (word, bit) = self.frames.bit(Bits::Dirty, id);
            word.fetch_and(!bit, Ordering::Release);
            let before = self.dirty_pages.fetch_sub(1, Ordering::Relaxed);
            debug_assert!(before > 0, "more pages cleaned than were dirty");
        }
    }

    /// The frames whose dirty bit is set, in id order: what `fsync` and ageing look at,
    /// without walking every frame header (a 1 GiB pool has 262 144 of them, 16 MiB).
    pub(super) fn dirty_frames(&self) -> impl Iterator<Item = u32> + '_ {
        self.frames
            .bit_words(Bits::Dirty)
            .flat_map(|(first, word)| {
                let mut bits = word.load(Ordering::Acquire);
                std::iter::from_fn(move || {
                    (bits != 0).then(|| {
                        let id = first + bits.trailing_zeros();
                        bits &= bits - 1;
                        id
                    })
                })
            })
    }

    /// Write a frame's page to storage. The caller holds a latch on the frame (shared or
    /// exclusive), so the bytes cannot change during the write. `Closed` when the page's
    /// file is being closed (`close` writes its pages itself).
    pub(super) fn write_out(&self, h: &Header, bytes: &[u8]) -> Result<(), PoolError> {
        let fh = self.handle_of(h.owner.load(Ordering::Relaxed));
        let (file, path) = self.file_of(fh)?;
        let len = self.slot(fh)?.len.load(Ordering::Acquire);
        self.write_page(&*file, &path, h.page.load(Ordering::Relaxed), bytes, len)
    }

    /// Write page `page` (its frame's bytes) of a file of logical length `len`: the part
    /// inside the file, or in `O_DIRECT` mode the whole page (the bytes past `len` are
    /// zero, invariant 4, and the trim in `fsync` and `close` cuts them off again).
    pub(super) fn write_page(
        &self,
        file: &dyn StorageFile,
        path: &Path,
        page: u64,
        bytes: &[u8],
        len: u64,
    ) -> Result<(), PoolError> {
        self.write_pages(file, path, page, &[bytes], len)
            .map_err(|e| e.error)
    }

    /// Write pages `first..` (one frame's bytes each) of a file of logical length `len`
    /// in one call to storage (a vectored write when there are several), each page as
    /// [`Inner::write_page`] would: pages wholly past the end are not written (nor
    /// counted), and count as written. On failure, says how many leading pages were
    /// written whole.
    pub(super) fn write_pages(
        &self,
        file: &dyn StorageFile,
        path: &Path,
        first: u64,
        pages: &[&[u8]],
        len: u64,
    ) -> Result<(), RunError> {
        let ps = self.page_size as u64;
        let mut bufs: Vec<&[u8]> = Vec::with_capacity(pages.len());
        for (i, bytes) in pages.iter().enumerate() {
            debug_assert_eq!(bytes.len(), self.page_size, "a page write is one frame");
            let off = (first + i as u64) * ps;
            let n = if self.direct {
                ps
            } else {
                len.saturating_sub(off).min(ps)
            } as usize;
            if n > 0 {
                bufs.push(&bytes[..n]);
            }
            if n < self.page_size {
                // the file ends in this page: the pages after it are wholly past the end
                break;
            }
        }
        if bufs.is_empty() {
            return Ok(());
        }
        let want: usize = bufs.iter().map(|b| b.len()).sum();
        let off = first * ps;
        self.counters.bump(Counter::WriteCalls);
        let result = loop {
            let attempt = match bufs.as_slice() {
                [one] => file.write_at(one, off),
                many => file.write_vectored_at(many, off),
            };
            match attempt {
                Ok(w) if w == want => break Ok(()),
                Ok(w) => {
                    break Err((
                        w,
                        std::io::Error::new(
                            std::io::ErrorKind::WriteZero,
                            format!("short write: {w} of {want} bytes at offset {off}"),
                        ),
                    ))
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err((0, e)),
            }
        };
        match result {
            Ok(()) => {
                self.counters.add(Counter::PagesWritten, bufs.len() as u64);
                Ok(())
            }
            Err((written, source)) => {
                // every buffer but the last is a whole page, and the last was not finished
                let pages_done = (written / self.page_size).min(bufs.len() - 1);
                self.counters.add(Counter::PagesWritten, pages_done as u64);
                self.counters
                    .add(Counter::WriteErrors, (bufs.len() - pages_done) as u64);
                Err(RunError {
                    pages_done,
                    error: PoolError::Io {
                        path: path.to_path_buf(),
                        op: "write",
                        source,
                    },
                })
            }
        }
    }

    /// Write the page of exclusively latched frame `id` now (write-through) and mark it
    /// clean; on error it stays dirty for the next `fsync` to retry and report.
    pub(super) fn write_latched(&self, id: u32, h: &Header, bytes: &[u8]) -> Result<(), PoolError> {
        match self.write_out(h, bytes) {
            Ok(()) => {
                self.clear_dirty(id, h);
                h.write_failed.store(false, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                h.write_failed.store(true, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Write every dirty page of `fh` (adjacent pages in one call); the first error is
    /// returned after trying all.
    pub(super) fn flush_file(&self, fh: FileHandle) -> Result<(), PoolError> {
        let owner = fh.owner();
        let mine: Vec<u32> = self
            .dirty_frames()
            .filter(|&id| self.frames.header(id).owner.load(Ordering::Relaxed) == owner)
            .collect();
        match self.clean_frames(&mine, true, Counter::ForegroundWrites, Some(owner)) {
            (_, Some(e)) => Err(e),
            (_, None) => Ok(()),
        }
    }

    /// In direct mode whole-page writes may leave the file longer than its logical length
    /// `len`: cut it back. The caller holds the file's resize lock exclusively, so no
    /// write can extend the file meanwhile (a trim to a stale length would cut off a page
    /// written since).
    pub(super) fn trim_to(
        &self,
        file: &dyn StorageFile,
        path: &Path,
        len: u64,
    ) -> Result<(), PoolError> {
        if !self.direct {
            return Ok(());
        }
        let io = |op, source| PoolError::Io {
            path: path.to_path_buf(),
            op,
            source,
        };
        if file.len().map_err(|e| io("stat", e))? != len {
            file.set_len(len).map_err(|e| io("set_len", e))?;
        }
        Ok(())
    }

    pub(super) fn fsync(&self, fh: FileHandle) -> Result<(), PoolError> {
        self.flush_ordered_all()?;
        self.flush_file(fh)?;
        let (file, path) = self.file_of(fh)?;
        if self.direct {
            let slot = self.slot(fh)?;
            let _resize = slot.resize.write();
            self.slot(fh)?;
            // After the flush: every whole-page write of a page dirty when fsync began has
            // landed (the `writing` flag made the flush wait for ones in flight).
            self.trim_to(&*file, &path, slot.len.load(Ordering::Acquire))?;
        }
        file.sync().map_err(|source| PoolError::Io {
            path,
            op: "sync",
            source,
        })
    }

    /// Ask the flusher to refill the free list now. The flag makes the request stick even
    /// if the flusher is busy (not waiting) when it is made: a bare `notify` would be lost.
    pub(super) fn wake_flusher(&self) {
        if !self.flusher_wake.swap(true, Ordering::AcqRel) {
            // Taking the mutex orders this with the flusher's check of the flag: either it
            // has not checked yet (and will see it) or it is waiting (and is notified).
            let _g = self.flusher.0.lock();
            self.flusher.1.notify_one();
        }
    }

    /// The flusher thread: delayed writes every `interval`, and the free-frame reserve
    /// whenever a miss finds it below the low-water mark. The two are separate on purpose:
    /// a refill must not pay for a walk over every frame header, or a miss-heavy workload
    /// spends its time scanning.
    pub(super) fn flusher_loop(&self, interval: Duration) {
        let mut next_ageing = Instant::now() + interval;
        loop {
            {
                let mut stop = self.flusher.0.lock();
                if !*stop && !self.flusher_wake.load(Ordering::Acquire) {
                    self.flusher.1.wait_until(&mut stop, next_ageing);
                }
                if *stop {
                    return;
                }
            }
            self.counters.bump(Counter::FlusherRuns);
            self.advance_clock();
            self.flush_level_for_pressure();
            if self.flusher_wake.swap(false, Ordering::AcqRel) {
                self.refill_free();
            }
            if self.release_pending.swap(false, Ordering::AcqRel) {
                self.release_retired_memory();
            }
            if Instant::now() >= next_ageing {
                self.write_aged();
                self.flush_ordered_background();
                next_ageing = Instant::now() + interval;
            }
        }
    }

    /// Write the pages dirty for longer than the delayed-write age.
    pub(super) fn write_aged(&self) {
        let WritePolicy::WriteBack { age, .. } = self.write_policy else {
            return;
        };
        if self.dirty_pages.load(Ordering::Relaxed) == 0 {
            return;
        }
        let now = self.now_ns();
        let age_ns = u64::try_from(age.as_nanos()).unwrap_or(u64::MAX);
        let aged: Vec<u32> = self
            .dirty_frames()
            .filter(|&id| {
                let h = self.frames.header(id);
                h.dirty.load(Ordering::Relaxed)
                    && now.saturating_sub(h.dirty_since_ns.load(Ordering::Relaxed)) >= age_ns
            })
            .collect();
        // Errors stay with the pages: they remain dirty, and the next fsync (or close, or
        // sync_all) retries them and reports the error.
        let _ = self.clean_frames(&aged, false, Counter::FlusherWrites, None);
    }

    /// Refill the free list up to twice the low-water mark (XMF's pool of clean frames),
    /// a batch at a time. When the policy's next victims are all dirty, write them here,
    /// so that the threads that need frames do not have to.
    pub(super) fn refill_free(&self) {
        let high_water = 2 * self.low_water();
        let mut freed = Vec::with_capacity(self.batch());
        // Bounded: other threads may take frames as fast as this one frees them.
        for _ in 0..high_water.div_ceil(self.batch()) + 4 {
            if self.free.lock().len() >= high_water {
                return;
            }
            let dirty = {
                let mut state = self.policy.lock();
                self.evict_clean(&mut state, &Access::phantom(), &mut freed, self.batch());
                if freed.is_empty() {
                    self.dirty_victims(&state, false)
                } else {
                    Vec::new()
                }
            };
            if !freed.is_empty() {
                self.free.lock().append(&mut freed);
                continue;
            }
            if dirty.is_empty() {
                // Only ordered data is left dirty: write a level here (it also releases
                // the leaves that follow it as plain pages), so that the misses need not
                // wait for its sync.
                if self.flush_level_for_eviction() > 0 {
                    continue;
                }
                return;
            }
            let dirty: Vec<u32> = dirty.iter().map(|f| f.0).collect();
            // Errors stay with the pages (see `write_aged`).
            let (cleaned, _) = self.clean_frames(&dirty, false, Counter::FlusherWrites, None);
            if cleaned == 0 {
                return;
            }
        }
    }
}

impl BufferPool {
    /// Write the file's dirty pages and sync it. On error the pages that could not be
    /// written stay dirty and a later `fsync` retries them.
    pub fn fsync(&self, f: FileHandle) -> Result<(), PoolError> {
        self.inner.fsync(f)
    }

    /// `fsync` every open file; returns the first error after trying all.
    pub fn sync_all(&self) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let mut first_err = None;
        for (slot_no, s) in inner.files.iter().enumerate() {
            let state = s.state.load(Ordering::Acquire);
            if state & OPEN != 0 {
                let fh = FileHandle {
                    pool: inner.id,
                    slot: slot_no as u32,
                    gen: (state >> 2) as u32,
                };
                match inner.fsync(fh) {
                    Ok(()) | Err(PoolError::Closed(_)) => {}
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{quiet_builder, small_pool, small_pool_over};
    use super::*;
    use crate::testing::{FaultKind, FaultOp, MemStorage, RecordingStorage, StorageEvent};
    use crate::IoMode;

    fn writes(log: &[StorageEvent]) -> Vec<(u64, usize)> {
        log.iter()
            .filter_map(|e| match e {
                StorageEvent::Write { offset, data, .. } => Some((*offset, data.len())),
                _ => None,
            })
            .collect()
    }

    /// Pages 0..130 in frames 0..130, clean; then pages (and so frames) 129, 3, 64 and
    /// 3 again are dirtied through `pin_mut`, across three bitmap words.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn dirty_tracking_keeps_the_flag_the_bitmap_and_the_count_together() {
        let pool = small_pool(130, "clock");
        let inner = &pool.inner;
        let f = pool.create("/d").unwrap();
        pool.write(f, 0, &vec![1; 130 * 4096]).unwrap();
        pool.sync_all().unwrap();
        assert_eq!(inner.dirty_frames().count(), 0);
        for page in [129, 3, 64, 3] {
            drop(pool.pin_mut(f, page).unwrap());
        }
        assert_eq!(
            inner.dirty_pages.load(Ordering::Relaxed),
            3,
            "marking twice counts once"
        );
        assert_eq!(
            inner.dirty_frames().collect::<Vec<_>>(),
            [3, 64, 129],
            "in id order"
        );
        inner.check_invariants();
        let g = inner.frames.exclusive(64);
        inner.clear_dirty(64, g.header());
        inner.clear_dirty(64, g.header());
        drop(g);
        assert_eq!(
            inner.dirty_pages.load(Ordering::Relaxed),
            2,
            "cleaning twice counts once"
        );
        assert_eq!(inner.dirty_frames().collect::<Vec<_>>(), [3, 129]);
        inner.check_invariants();
    }

    /// Buffered I/O writes only the part of the last page inside the file; `O_DIRECT`
    /// writes whole pages; a page wholly past the end is not written at all. The same
    /// bytes whether the pages go one call each or as one run (one call).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_page_write_and_a_run_cover_what_the_io_mode_needs() {
        for (mode, expected) in [
            (IoMode::Buffered, vec![(0, 4096), (4096, 904)]),
            (IoMode::Direct, vec![(0, 4096), (4096, 4096), (8192, 4096)]),
        ] {
            for as_run in [false, true] {
                let storage = RecordingStorage::new();
                let pool = quiet_builder(4, "lru")
                    .io_mode(mode)
                    .build_with_storage(storage.clone())
                    .unwrap();
                let f = pool.create("/w").unwrap();
                let (file, path) = pool.inner.file_of(f).unwrap();
                let page = [5u8; 4096];
                if as_run {
                    pool.inner
                        .write_pages(&*file, &path, 0, &[&page, &page, &page], 5000)
                        .unwrap();
                } else {
                    for p in 0..3 {
                        pool.inner
                            .write_page(&*file, &path, p, &page, 5000)
                            .unwrap();
                    }
                }
                assert_eq!(writes(&storage.log()), expected, "{mode:?}");
                let s = pool.stats();
                let calls = if as_run { 1 } else { expected.len() as u64 };
                assert_eq!(
                    (s.write_calls, s.pages_written),
                    (calls, expected.len() as u64)
                );
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_short_write_is_an_error_and_counted() {
        let storage = RecordingStorage::new();
        let pool = small_pool_over(4, "lru", storage.clone());
        let f = pool.create("/s").unwrap();
        let (file, path) = pool.inner.file_of(f).unwrap();
        storage.inject(FaultOp::Write, FaultKind::ShortWrite, 0, 1);
        let err = pool
            .inner
            .write_page(&*file, &path, 0, &[1; 4096], 4096)
            .unwrap_err();
        match err {
            PoolError::Io { op, source, .. } => {
                assert_eq!(op, "write");
                assert_eq!(source.kind(), std::io::ErrorKind::WriteZero);
            }
            other => panic!("{other:?}"),
        }
        let s = pool.stats();
        assert_eq!((s.pages_written, s.write_errors), (0, 1));
    }

    /// `fsync` writes a file's dirty pages in page order whatever frames hold them,
    /// adjacent pages in one call, and only that file's; then it syncs.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn fsync_writes_runs_of_adjacent_pages_in_one_call_then_syncs() {
        let storage = RecordingStorage::new();
        let pool = small_pool_over(8, "lru", storage.clone());
        let a = pool.create("/a").unwrap();
        let b = pool.create("/b").unwrap();
        // frames are handed out from 0 up: page 2 -> frame 0, b's page 0 -> frame 1, ...
        pool.write(a, 2 * 4096, &[2; 4096]).unwrap();
        pool.write(b, 0, &[9; 4096]).unwrap();
        pool.write(a, 5 * 4096, &[5; 4096]).unwrap();
        pool.write(a, 0, &[0; 4096]).unwrap();
        pool.write(a, 4096, &[1; 4096]).unwrap();
        let (before, stats) = (storage.log_len(), pool.stats());
        pool.fsync(a).unwrap();
        let log = storage.log()[before..].to_vec();
        let expected: Vec<StorageEvent> = [0u8, 1, 2, 5]
            .iter()
            .map(|&p| StorageEvent::Write {
                path: "/a".into(),
                offset: u64::from(p) * 4096,
                data: vec![p; 4096],
            })
            .chain([StorageEvent::Sync { path: "/a".into() }])
            .collect();
        assert_eq!(log, expected);
        let s = pool.stats();
        assert_eq!(
            (
                s.write_calls - stats.write_calls,
                s.pages_written - stats.pages_written
            ),
            (2, 4),
            "pages 0..3 in one call, page 5 in another"
        );
        assert_eq!(s.dirty_pages, 1, "b's page is still dirty");
        pool.inner.check_invariants();
    }

    /// A run that storage writes only in part: the pages written whole are clean, the
    /// rest stay dirty (marked failed, counted as errors) and the next `fsync` writes
    /// them, again in one call.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_short_run_cleans_only_the_pages_written_whole() {
        let storage = RecordingStorage::new();
        let pool = small_pool_over(8, "fifo", storage.clone());
        let f = pool.create("/s").unwrap();
        pool.write(f, 0, &[3; 4 * 4096]).unwrap();
        storage.inject(FaultOp::Write, FaultKind::ShortWrite, 0, 1);
        assert!(matches!(
            pool.fsync(f),
            Err(PoolError::Io { op: "write", .. })
        ));
        let s = pool.stats();
        assert_eq!(
            (
                s.write_calls,
                s.pages_written,
                s.write_errors,
                s.dirty_pages
            ),
            (1, 2, 2, 2),
            "half of 4 pages landed"
        );
        assert!(pool
            .inner
            .frames
            .header(2)
            .write_failed
            .load(Ordering::Relaxed));
        let before = storage.log_len();
        pool.fsync(f).unwrap();
        assert_eq!(
            writes(&storage.log()[before..]),
            [(2 * 4096, 4096), (3 * 4096, 4096)]
        );
        let s = pool.stats();
        assert_eq!((s.write_calls, s.pages_written, s.dirty_pages), (2, 4, 0));
        assert!(!pool
            .inner
            .frames
            .header(2)
            .write_failed
            .load(Ordering::Relaxed));
        pool.inner.check_invariants();
    }

    /// The flusher's ageing pass writes exactly the pages dirty for at least `age`.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn ageing_writes_only_pages_older_than_the_age() {
        for (age, written) in [(Duration::ZERO, 2), (Duration::from_secs(3600), 0)] {
            let pool = quiet_builder(4, "lru")
                .write_policy(WritePolicy::WriteBack {
                    interval: Duration::from_secs(3600),
                    age,
                })
                .build_with_storage(MemStorage::new())
                .unwrap();
            let f = pool.create("/g").unwrap();
            pool.write(f, 0, &[1; 2 * 4096]).unwrap();
            pool.inner.write_aged();
            let s = pool.stats();
            assert_eq!(
                (s.flusher_writes, s.dirty_pages),
                (written, 2 - written),
                "{age:?}"
            );
        }
    }

    /// The free-frame reserve (XMF's clean free pool): refilling frees frames in policy
    /// order up to twice the low-water mark, writing a victim first when every candidate
    /// is dirty. Five dirty pages leave 3 of 8 frames free, above the low-water mark of 2,
    /// so no miss woke the flusher thread and the refill below is the only one: 3 < 4, so
    /// it writes page 0 (the FIFO victim), frees it, and stops at 4 free frames.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn refill_frees_up_to_twice_the_low_water_mark() {
        let pool = quiet_builder(8, "fifo")
            .free_reserve(2)
            .build_with_storage(MemStorage::new())
            .unwrap();
        let inner = &pool.inner;
        assert_eq!(inner.low_water(), 2);
        let f = pool.create("/r").unwrap();
        pool.write(f, 0, &[4; 5 * 4096]).unwrap();
        inner.refill_free();
        let s = pool.stats();
        assert_eq!(
            (s.free_frames, s.flusher_writes, s.evictions, s.dirty_pages),
            (4, 1, 1, 4)
        );
        assert!(!pool.is_resident(f, 0).unwrap());
        inner.check_invariants();
    }
}
