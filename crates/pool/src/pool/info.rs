//! The information interface: counters and gauges (`stats`), which pages are resident,
//! and the policy's next victims (Burnett's victim list).

use super::{BufferPool, FileHandle};
use crate::error::PoolError;
use crate::stats::Counter;
use policy::{FrameId, Policy};
use std::sync::atomic::Ordering;

/// Counters and gauges of a pool (see [`BufferPool::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Page accesses (read, write, pin) that found the page resident.
    pub hits: u64,
    /// Page accesses that had to load (or zero-fill) the page.
    pub misses: u64,
    /// Read calls issued to storage (one per miss, read-ahead included in the same call).
    pub read_calls: u64,
    /// Pages read from storage.
    pub pages_read: u64,
    /// Of those, pages read ahead of demand.
    pub read_ahead_pages: u64,
    /// Of those, pages loaded by [`BufferPool::prefetch`] (not counted as misses: the
    /// accesses that follow count, as hits).
    pub prefetched_pages: u64,
    /// Pages written to storage by anyone.
    pub pages_written: u64,
    /// Write calls issued to storage: adjacent dirty pages of a file written back
    /// together are one call (`pwritev`), so `pages_written / write_calls` is the average
    /// run.
    pub write_calls: u64,
    /// Pages written by application threads rather than the flusher: by a thread that
    /// needed a frame and found only dirty ones, and by `fsync` writing its file's dirty
    /// pages.
    pub foreground_writes: u64,
    /// Pages written by the flusher thread.
    pub flusher_writes: u64,
    /// Flusher wake-ups.
    pub flusher_runs: u64,
    /// Page writes that failed (the page stayed dirty).
    pub write_errors: u64,
    /// Pages evicted.
    pub evictions: u64,
    /// Misses whose page the admission filter refused: read and served from a transient
    /// frame, evicted before any of the policy's pages (0 without a filter; see
    /// `docs/pool.md`, "Admission").
    pub admission_refused: u64,
    /// Hinted reads and pins ([`BufferPool::read_hinted`], [`BufferPool::pin_hinted`])
    /// whose [`PageHint`](super::PageHint) did not lead straight to the page (empty,
    /// stale, or for a request it cannot serve): they took the full path, and refreshed
    /// the hint when it was for one page. Their hits and misses count as usual.
    pub hint_refreshes: u64,
    /// Pages dirty now.
    pub dirty_pages: u64,
    /// Free frames now.
    pub free_frames: u64,
    /// Frames in the pool.
    pub capacity_frames: u64,
    /// Frames a shrink took out of circulation whose memory the flusher has not yet
    /// handed back to the kernel (it does so right after the shrink).
    pub unreleased_frames: u64,
}

/// Which pages of a file are resident: one bit per page (see [`BufferPool::resident`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResidentMap {
    pub(super) pages: u64,
    pub(super) words: Vec<u64>,
}

impl ResidentMap {
    /// A map of a file of `pages` pages in which `resident` are cached. The bitmap only
    /// extends to the highest resident page, so a huge sparse file costs nothing.
    pub(super) fn new(pages: u64, resident: &[u64]) -> Self {
        let resident: Vec<u64> = resident.iter().copied().filter(|&p| p < pages).collect();
        let words = resident.iter().max().map_or(0, |&m| m / 64 + 1) as usize;
        let mut map = ResidentMap {
            pages,
            words: vec![0; words],
        };
        for p in resident {
            map.words[(p / 64) as usize] |= 1 << (p % 64);
        }
        map
    }

    /// Pages covered (the file's length in pages when the map was taken).
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// Whether `page` is resident.
    pub fn get(&self, page: u64) -> bool {
        self.words
            .get((page / 64) as usize)
            .is_some_and(|w| w & (1 << (page % 64)) != 0)
    }

    /// Number of resident pages.
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The resident page numbers in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            (0..64u64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| i as u64 * 64 + b)
        })
    }

    /// The bitmap words: bit `p % 64` of word `p / 64` is page `p`. There are only as
    /// many words as the highest resident page needs; pages beyond them are not resident.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

impl BufferPool {
    /// The next `n` pages the policy would evict, in order (Burnett's victim list). Pinned
    /// and dirty pages are skipped, as eviction would skip them.
    pub fn victims(&self, n: usize) -> Vec<(FileHandle, u64)> {
        let inner = &*self.inner;
        // No more victims than frames, whatever is asked (and no huge allocation).
        let n = n.min(inner.capacity());
        let mut state = inner.policy.lock();
        inner.feed_refs(&mut state);
        let frames = &inner.frames;
        let mut out = Vec::with_capacity(n);
        state.policy.victims(
            n,
            &|f: FrameId| frames.is_idle(f.0) && !frames.header(f.0).dirty.load(Ordering::Relaxed),
            &mut out,
        );
        debug_assert!(out.len() <= n, "the policy listed more victims than asked");
        out.into_iter()
            .map(|f| {
                let h = frames.header(f.0);
                (
                    inner.handle_of(h.owner.load(Ordering::Relaxed)),
                    h.page.load(Ordering::Relaxed),
                )
            })
            .collect()
    }

    /// What the pool's policy does with hits ([`policy::HitPath`]). A caller that wants
    /// to keep a page cached by reading it (InfoReplace) needs hits to raise priority:
    /// under [`policy::HitPath::Ignore`] (fifo, random) reading changes nothing.
    pub fn hit_path(&self) -> policy::HitPath {
        self.inner.policy.lock().policy.hit_path()
    }

    /// How many frames one eviction frees at most: the thread that needs a frame frees a
    /// batch and keeps the rest on the free list (`docs/pool.md`). A caller watching
    /// [`BufferPool::victims`] must expect this many of them to go at once.
    pub fn eviction_batch(&self) -> usize {
        self.inner.batch()
    }

    /// Whether page `page` of `f` is resident now: one lookup and an owner check, no
    /// pin, and nothing counted or told to the policy — so a prober (Dust) can ask before
    /// each read without disturbing what it measures. A page being loaded counts as
    /// resident (its frame is mapped).
    ///
    /// ```
    /// use pool::{BufferPool, MemStorage};
    ///
    /// let pool = BufferPool::builder().capacity_frames(16).build_with_storage(MemStorage::new())?;
    /// let f = pool.create("/t")?;
    /// pool.write(f, 0, &[1u8; 4096])?;
    /// assert!(pool.is_resident(f, 0)?);
    /// assert!(!pool.is_resident(f, 1)?);
    /// assert_eq!(pool.stats().hits, 0);
    /// # Ok::<(), pool::PoolError>(())
    /// ```
    pub fn is_resident(&self, f: FileHandle, page: u64) -> Result<bool, PoolError> {
        let inner = &*self.inner;
        inner.slot(f)?;
        if !inner.table.page_in_range(page) {
            return Ok(false);
        }
        Ok(inner
            .table
            .get(f.key(page))
            .is_some_and(|id| inner.page_owned_by(id, f.owner()) == Some(page)))
    }

    /// Which pages of the file are resident now.
    pub fn resident(&self, f: FileHandle) -> Result<ResidentMap, PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let pages: Vec<u64> = inner
            .frames_of(f)
            .into_iter()
            .filter_map(|id| inner.page_owned_by(id, f.owner()))
            .collect();
        Ok(ResidentMap::new(
            inner.pages_of(slot.len.load(Ordering::Acquire)),
            &pages,
        ))
    }

    /// Counters and gauges.
    pub fn stats(&self) -> PoolStats {
        let i = &*self.inner;
        let c = &i.counters;
        PoolStats {
            hits: c.get(Counter::Hits),
            misses: c.get(Counter::Misses),
            read_calls: c.get(Counter::ReadCalls),
            pages_read: c.get(Counter::PagesRead),
            read_ahead_pages: c.get(Counter::ReadAheadPages),
            prefetched_pages: c.get(Counter::PrefetchedPages),
            pages_written: c.get(Counter::PagesWritten),
            write_calls: c.get(Counter::WriteCalls),
            foreground_writes: c.get(Counter::ForegroundWrites),
            flusher_writes: c.get(Counter::FlusherWrites),
            flusher_runs: c.get(Counter::FlusherRuns),
            write_errors: c.get(Counter::WriteErrors),
            evictions: c.get(Counter::Evictions),
            admission_refused: c.get(Counter::AdmissionRefused),
            hint_refreshes: c.get(Counter::HintRefreshes),
            dirty_pages: i.dirty_pages.load(Ordering::Relaxed),
            free_frames: i.free.lock().len() as u64,
            capacity_frames: i.capacity() as u64,
            unreleased_frames: i.unreleased_frames() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{small_pool, victim_pages};
    use super::*;

    /// Pages 3, 64 and 130 of a 200-page file (250 is past its end and left out): three
    /// words, up to the highest resident page only.
    #[test]
    fn a_resident_map_has_one_bit_per_page_up_to_the_highest() {
        let m = ResidentMap::new(200, &[130, 3, 250, 64]);
        assert_eq!(m.pages(), 200);
        assert_eq!(m.words(), [1 << 3, 1, 1 << 2]);
        assert_eq!(m.count(), 3);
        assert_eq!(m.iter().collect::<Vec<_>>(), [3, 64, 130]);
        assert!(m.get(64) && !m.get(65) && !m.get(199) && !m.get(250));
        let empty = ResidentMap::new(10, &[]);
        assert_eq!((empty.words().len(), empty.count()), (0, 0));
        assert!(!empty.get(0));
    }

    /// Counters after a known sequence on 4 frames: three pages written (three misses,
    /// zero-filled: nothing read), two reads of resident pages (hits), a fourth page
    /// written, a fifth that evicts the FIFO-oldest after writing it (all were dirty).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn stats_count_what_happened() {
        let pool = small_pool(4, "fifo");
        let f = pool.create("/s").unwrap();
        pool.write(f, 0, &[1; 3 * 4096]).unwrap();
        let mut b = [0u8; 8];
        pool.read(f, 0, &mut b).unwrap();
        pool.read(f, 4096 + 100, &mut b).unwrap();
        pool.write(f, 3 * 4096, &[1; 4096]).unwrap();
        let s = pool.stats();
        assert_eq!((s.hits, s.misses, s.pages_read, s.read_calls), (2, 4, 0, 0));
        assert_eq!((s.dirty_pages, s.free_frames, s.capacity_frames), (4, 0, 4));
        pool.write(f, 4 * 4096, &[1; 4096]).unwrap();
        let s = pool.stats();
        assert_eq!((s.misses, s.evictions, s.foreground_writes), (5, 1, 1));
        assert_eq!((s.pages_written, s.dirty_pages, s.write_errors), (1, 4, 0));
        assert_eq!(s.free_frames, 0);
        pool.inner.check_invariants();
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn residency_is_asked_without_counting_or_touching() {
        let pool = small_pool(4, "lru");
        let f = pool.create("/r").unwrap();
        pool.write(f, 4096, &[1; 4096]).unwrap();
        assert!(pool.is_resident(f, 1).unwrap());
        assert!(!pool.is_resident(f, 0).unwrap());
        assert!(
            !pool.is_resident(f, u64::MAX).unwrap(),
            "out of the table's range"
        );
        assert_eq!(pool.resident(f).unwrap().iter().collect::<Vec<_>>(), [1]);
        assert_eq!(pool.stats().hits, 0);
    }

    /// However many are asked for, no more victims than frames (and no huge allocation).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn the_victim_list_is_bounded_by_the_frames() {
        let pool = small_pool(4, "lru");
        let f = pool.create("/v").unwrap();
        pool.write(f, 0, &[1; 4 * 4096]).unwrap();
        pool.sync_all().unwrap();
        let victims = victim_pages(&pool, usize::MAX);
        assert_eq!(victims, [0, 1, 2, 3]);
        assert!(pool.victims(usize::MAX).iter().all(|&(h, _)| h == f));
    }
}
