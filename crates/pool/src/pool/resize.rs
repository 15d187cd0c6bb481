//! Changing the pool's capacity while it runs, and the coarse clock that tells how long
//! its pages have been idle: what a memory budget (`crate::budget`) needs from a pool.
//!
//! **Shrinking** takes frames out of circulation one at a time through the same path a
//! miss uses to get a frame ([`Inner::alloc_frame`]): a free frame if there is one,
//! otherwise the policy's victims, dirty ones written first (by the flusher or by this
//! thread). A frame so obtained is *retired*: in neither the free list nor the policy,
//! its memory handed back to the kernel. Hits go on meanwhile (they take no lock a resize
//! holds); misses compete with the shrink for frames, as misses compete with each other.
//! If the policy runs out of evictable frames before the target (the application pins
//! too many pages), every frame retired so far goes back to the free list and the resize
//! fails: nothing is dropped and the capacity is what it was.
//!
//! Returning the retired frames' memory to the kernel (`madvise(MADV_DONTNEED)`) is
//! most of a shrink's work: freeing 131 072 pages and the TLB shootdowns that go with
//! it took 82% of the CPU time of halving a 1 GiB pool (perf, `pool_resize` bench). The
//! frames are out of circulation once retired, so the flusher thread does it right
//! after ([`Inner::release_retired_memory`]) and `resize` returns without waiting;
//! [`crate::PoolStats::unreleased_frames`] shows what is still to go back.
//!
//! **Growing** brings retired frames back first, then adds chunks to the arena
//! ([`Frames::grow`]): existing frames never move, so a reader holding one is never
//! disturbed.
//!
//! The policy hears of every change ([`policy::Policy::set_capacity`]) after a shrink and
//! before a growth, so it never holds more than the capacity it was last told.

use super::{BufferPool, Inner};
use crate::error::PoolError;
use policy::{Access, FrameId, Policy};
use std::sync::atomic::Ordering;

/// The settings derived from the capacity. One function, used when the pool is built and
/// after every resize.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Sizing {
    /// Frames evicted per batch: a few percent of the pool (1/32, 1..=256), large enough
    /// that feeding reference counters (a scan of the touched bitmap) is amortized over
    /// many evictions, small enough that a miss does not wait for a long scan.
    pub batch: usize,
    /// Free frames the flusher keeps ready (XMF's clean free pool): 1/64 of the pool, at
    /// most 256; below 64 frames none (a frame kept free would be 2% or more of the
    /// cache, and small pools stay deterministic). An explicit `free_reserve` is capped at
    /// a quarter of the pool.
    pub low_water: usize,
}

impl Sizing {
    pub(super) fn of(frames: usize, free_reserve: Option<usize>) -> Sizing {
        let batch = (frames / 32).clamp(1, 256);
        debug_assert!(batch <= frames.max(1), "a batch never exceeds the pool");
        Sizing {
            batch,
            low_water: free_reserve.map_or((frames / 64).min(256), |n| n.min(frames / 4)),
        }
    }
}

/// log2 of the nanoseconds in one tick of the pool's coarse clock (about 16.8 ms): fine
/// enough for page ages that matter to memory negotiation (Sprite compares ages in
/// seconds), coarse enough that a hot page stores its tick rarely, and a `u32` of them
/// lasts over two years.
const TICK_SHIFT: u32 = 24;

/// Nanoseconds in one tick of the pool's coarse clock.
pub const TICK_NS: u64 = 1 << TICK_SHIFT;

impl Inner {
    /// Frames in circulation.
    #[inline]
    pub(super) fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Acquire)
    }

    /// Frames evicted per batch.
    #[inline]
    pub(super) fn batch(&self) -> usize {
        self.batch.load(Ordering::Relaxed)
    }

    /// Free frames the flusher keeps ready.
    #[inline]
    pub(super) fn low_water(&self) -> usize {
        self.low_water.load(Ordering::Relaxed)
    }

    /// The coarse clock now, advanced from the real clock (misses and the flusher call
    /// this; hits only read the stored tick, see [`Inner::note_access`]).
    pub(super) fn advance_clock(&self) -> u32 {
        let now = (self.now_ns() >> TICK_SHIFT) as u32;
        self.clock.fetch_max(now, Ordering::Relaxed);
        now
    }

    /// Record an access to a frame (its `last_access` word) at the clock's current tick:
    /// two loads, and a store only once per tick per frame.
    #[inline]
    pub(super) fn note_access(&self, words: &crate::frames::HitWords<'_>) {
        let now = self.clock.load(Ordering::Relaxed);
        let last = words.last_access();
        if last.load(Ordering::Relaxed) != now {
            last.store(now, Ordering::Relaxed);
        }
    }

    fn set_sizing(&self, frames: usize) {
        let s = Sizing::of(frames, self.free_reserve);
        self.batch.store(s.batch, Ordering::Relaxed);
        self.low_water.store(s.low_water, Ordering::Relaxed);
        self.capacity.store(frames, Ordering::Release);
    }

    /// Frames the application pins now (a snapshot).
    fn user_pinned_frames(&self) -> usize {
        (0..self.frames.len() as u32)
            .filter(|&id| self.frames.user_pinned(id))
            .count()
    }

    fn shrink(&self, target: usize) -> Result<(), PoolError> {
        let current = self.capacity();
        let pinned = self.user_pinned_frames();
        if target < pinned + 1 {
            return Err(PoolError::ResizeBelowPinned {
                requested: target,
                pinned,
            });
        }
        let need = current - target;
        let mut taken = Vec::with_capacity(need);
        // Free frames first, all at once.
        {
            let mut free = self.free.lock();
            let n = need.min(free.len());
            let from = free.len() - n;
            taken.extend(free.drain(from..));
        }
        let phantom = Access::phantom();
        while taken.len() < need {
            // Clean victims in one long eviction under the policy lock (misses wait for
            // it, hits do not)...
            let before = taken.len();
            {
                let mut state = self.policy.lock();
                self.evict_clean(&mut state, &phantom, &mut taken, need - before);
            }
            if taken.len() > before {
                continue;
            }
            // ... and when none is clean, the path a miss takes: it writes dirty victims,
            // waits out frames the pool itself has latched, and says when all are pinned.
            match self.alloc_frame(&phantom) {
                Ok(g) => taken.push(g.id()),
                Err(e) => {
                    // Give back everything: the pool keeps its capacity.
                    self.free.lock().extend_from_slice(&taken);
                    return Err(match e {
                        PoolError::AllPinned { .. } => PoolError::ResizeBelowPinned {
                            requested: target,
                            pinned: self.user_pinned_frames(),
                        },
                        other => other,
                    });
                }
            }
        }
        // The frames are unreachable now (in neither the free list nor the policy); a
        // reader with a stale mapping may still pin one for a moment: latch them all.
        taken.sort_unstable();
        let latched: Vec<_> = taken.iter().map(|&id| self.frames.exclusive(id)).collect();
        for g in &latched {
            g.header().retired.store(true, Ordering::Relaxed);
        }
        drop(latched);
        self.retired.lock().extend_from_slice(&taken);
        self.set_sizing(target);
        self.policy.lock().policy.set_capacity(target as u64);
        // Their memory goes back to the kernel in the background (see the module doc).
        self.unreleased.lock().extend_from_slice(&taken);
        self.release_pending.store(true, Ordering::Release);
        self.wake_flusher();
        Ok(())
    }

    /// Hand the memory of frames retired since the last call back to the kernel (the
    /// flusher runs this after a shrink). Under the resize lock, so that no growth takes
    /// a frame back while its memory goes: frames a growth took back already are in use
    /// again and are passed over (their retired flag is clear).
    pub(super) fn release_retired_memory(&self) {
        let _no_resize = self.resizing.lock();
        let mut ids = std::mem::take(&mut *self.unreleased.lock());
        ids.retain(|&id| self.frames.header(id).retired.load(Ordering::Relaxed));
        // a frame retired, taken back and retired again is listed twice
        ids.sort_unstable();
        ids.dedup();
        let latched: Vec<_> = ids.iter().map(|&id| self.frames.exclusive(id)).collect();
        self.frames.release_memory(&latched);
    }

    /// Frames retired whose memory has not been handed back yet.
    pub(super) fn unreleased_frames(&self) -> usize {
        self.unreleased.lock().len()
    }

    fn grow(&self, target: usize) -> Result<(), PoolError> {
        let current = self.capacity();
        let max = self.frames.max_len();
        if target > max {
            return Err(PoolError::ResizeTooLarge {
                requested: target,
                max,
            });
        }
        let mut retired = self.retired.lock();
        // New chunks until the retired frames cover the growth; frames of a chunk beyond
        // the target stay retired (their memory is handed back at once).
        while retired.len() < target - current {
            let ids = self.frames.grow().ok_or(PoolError::OutOfMemory {
                bytes: ((target - current) * self.page_size) as u128,
            })?;
            let latched: Vec<_> = ids.clone().map(|id| self.frames.exclusive(id)).collect();
            for g in &latched {
                g.header().retired.store(true, Ordering::Relaxed);
            }
            self.frames.release_memory(&latched);
            drop(latched);
            retired.extend(ids.rev());
        }
        let keep = retired.len() - (target - current);
        let back: Vec<u32> = retired.split_off(keep);
        drop(retired);
        {
            let mut state = self.policy.lock();
            state.policy.set_capacity(target as u64);
            state.resident.resize(self.frames.len(), false);
            state.transient.grow(self.frames.len());
        }
        for &id in &back {
            self.frames
                .header(id)
                .retired
                .store(false, Ordering::Relaxed);
        }
        self.set_sizing(target);
        self.free.lock().extend(back.iter().rev());
        Ok(())
    }
}

impl BufferPool {
    /// Change the pool's capacity to `frames` while it runs. Growing adds frames (retired
    /// ones first, then new chunks of the arena: no frame moves, readers never wait).
    /// Shrinking evicts through the policy, writing dirty pages before their frames go, and
    /// hands the frames' memory back to the kernel; hits go on meanwhile.
    ///
    /// Errors, each leaving the capacity as it was: [`PoolError::CapacityBelowPinLimit`]
    /// below `pin_limit + read_ahead + 1` frames; [`PoolError::ResizeBelowPinned`] when
    /// the application pins too many pages to shrink that far; [`PoolError::ResizeTooLarge`]
    /// beyond what the arena can address (256 times the first capacity or more, see
    /// `docs/pool.md`); a write error of a dirty page that had to go
    /// ([`PoolError::WriteBackStalled`]).
    ///
    /// ```
    /// use pool::{BufferPool, MemStorage};
    ///
    /// let pool = BufferPool::builder().capacity_frames(64).build_with_storage(MemStorage::new())?;
    /// let f = pool.create("/t")?;
    /// pool.write(f, 0, &[7u8; 64 * 4096])?;
    /// pool.resize(16)?; // dirty pages are written before their frames go
    /// assert_eq!(pool.capacity_frames(), 16);
    /// pool.resize(200)?;
    /// assert_eq!(pool.stats().capacity_frames, 200);
    /// let mut b = [0u8; 1];
    /// pool.read(f, 5 * 4096, &mut b)?;
    /// assert_eq!(b[0], 7);
    /// # Ok::<(), pool::PoolError>(())
    /// ```
    pub fn resize(&self, frames: usize) -> Result<(), PoolError> {
        let inner = &*self.inner;
        if frames < self.min_capacity_frames() {
            return Err(PoolError::CapacityBelowPinLimit {
                capacity_frames: frames,
                pin_limit: inner.pin_limit,
                read_ahead: inner.read_ahead as usize,
            });
        }
        let _one_at_a_time = inner.resizing.lock();
        let current = inner.capacity();
        match frames.cmp(&current) {
            std::cmp::Ordering::Less => inner.shrink(frames),
            std::cmp::Ordering::Greater => inner.grow(frames),
            std::cmp::Ordering::Equal => Ok(()),
        }
    }

    /// Pages the application pins now (a snapshot).
    pub fn pinned_pages(&self) -> usize {
        self.inner.user_pinned_frames()
    }

    /// The least capacity [`BufferPool::resize`] accepts: `pin_limit + read_ahead + 1`.
    pub fn min_capacity_frames(&self) -> usize {
        let inner = &*self.inner;
        inner
            .pin_limit
            .saturating_add(inner.read_ahead as usize)
            .saturating_add(1)
    }

    /// How long the page this pool would give up next has been idle, in nanoseconds
    /// (to the pool's coarse clock, [`TICK_NS`]): the age Sprite's negotiation compares.
    /// `None` when nothing is evictable (empty, or every page pinned). Asks the policy for
    /// its next victim (cheap for list policies; a copy of the state for those that list
    /// victims by simulation, such as ARC or Clock).
    pub fn oldest_idle_ns(&self) -> Option<u64> {
        let inner = &*self.inner;
        let now = inner.advance_clock();
        let victim = {
            let mut state = inner.policy.lock();
            inner.feed_refs(&mut state);
            let frames = &inner.frames;
            let mut out = Vec::with_capacity(1);
            state
                .policy
                .victims(1, &|f: FrameId| frames.is_idle(f.0), &mut out);
            out.first()?.0
        };
        let then = inner.frames.last_access(victim).load(Ordering::Relaxed);
        Some(u64::from(now.saturating_sub(then)) << TICK_SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{resident_pages, small_pool, small_pool_over};
    use super::*;
    use crate::testing::{FaultKind, FaultOp, RecordingStorage, StorageEvent};

    /// Four frames holding clean pages 0..4 of one file, FIFO order 0, 1, 2, 3.
    fn four_clean(policy: &str) -> (BufferPool, super::super::FileHandle) {
        let pool = small_pool(4, policy);
        let f = pool.create("/r").unwrap();
        pool.write(f, 0, &[9; 4 * 4096]).unwrap();
        pool.sync_all().unwrap();
        (pool, f)
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn shrinking_evicts_the_policys_victims_and_retires_their_frames() {
        let (pool, f) = four_clean("fifo");
        pool.resize(2).unwrap();
        assert_eq!(resident_pages(&pool, f), [2, 3], "FIFO's first two went");
        let s = pool.stats();
        assert_eq!((s.capacity_frames, s.evictions, s.free_frames), (2, 2, 0));
        assert_eq!(pool.capacity_frames(), 2);
        pool.inner.check_invariants();
        // the retired frames are out of circulation: a miss evicts page 2, the oldest
        let mut b = [0u8; 1];
        pool.read(f, 0, &mut b).unwrap();
        assert_eq!(resident_pages(&pool, f), [0, 3]);
        pool.inner.check_invariants();
    }

    /// Dirty pages are written before their frames go, in the policy's order, and stay
    /// readable afterwards from storage.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn shrinking_writes_dirty_pages_before_their_frames_go() {
        let storage = RecordingStorage::new();
        let pool = small_pool_over(4, "fifo", storage.clone());
        let f = pool.create("/d").unwrap();
        pool.write(f, 0, &[1; 4096]).unwrap();
        pool.write(f, 4096, &[2; 4096]).unwrap();
        pool.write(f, 2 * 4096, &[3; 4096]).unwrap();
        let before = storage.log_len();
        pool.resize(2).unwrap();
        let writes: Vec<u64> = storage.log()[before..]
            .iter()
            .filter_map(|e| match e {
                StorageEvent::Write { offset, .. } => Some(offset / 4096),
                _ => None,
            })
            .collect();
        // the free frame went first, then page 0 (written, then evicted)
        assert_eq!(writes, [0]);
        assert_eq!(resident_pages(&pool, f), [1, 2]);
        let mut b = [0u8; 1];
        pool.read(f, 0, &mut b).unwrap();
        assert_eq!(b[0], 1);
        pool.inner.check_invariants();
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn shrinking_below_the_pinned_pages_is_refused_and_drops_nothing() {
        let pool = small_pool(6, "lru");
        let f = pool.create("/p").unwrap();
        pool.write(f, 0, &[5; 6 * 4096]).unwrap();
        let pins = [
            pool.pin(f, 0).unwrap(),
            pool.pin(f, 1).unwrap(),
            pool.pin(f, 2).unwrap(),
        ];
        assert!(matches!(
            pool.resize(3),
            Err(PoolError::ResizeBelowPinned {
                requested: 3,
                pinned: 3
            })
        ));
        assert!(matches!(
            pool.resize(1),
            Err(PoolError::CapacityBelowPinLimit {
                capacity_frames: 1,
                pin_limit: 1,
                read_ahead: 0
            })
        ));
        assert_eq!(pool.capacity_frames(), 6);
        assert_eq!(resident_pages(&pool, f), [0, 1, 2, 3, 4, 5]);
        assert_eq!(pool.stats().dirty_pages, 6);
        // one frame more than pinned is allowed: the pinned pages stay, 3 and 4 go
        pool.resize(4).unwrap();
        assert_eq!(resident_pages(&pool, f), [0, 1, 2, 5]);
        assert_eq!(pool.stats().dirty_pages, 4);
        drop(pins);
        pool.inner.check_invariants();
    }

    /// A dirty page that cannot be written stops the shrink: the frames retired so far
    /// come back, the capacity is unchanged, the page stays dirty.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_failed_write_undoes_the_shrink() {
        let storage = RecordingStorage::new();
        let pool = small_pool_over(4, "fifo", storage.clone());
        let f = pool.create("/w").unwrap();
        pool.write(f, 0, &[1; 4 * 4096]).unwrap();
        storage.inject(FaultOp::Write, FaultKind::Eio, 0, usize::MAX);
        assert!(matches!(
            pool.resize(2),
            Err(PoolError::WriteBackStalled { .. })
        ));
        assert_eq!(pool.capacity_frames(), 4);
        assert_eq!(resident_pages(&pool, f), [0, 1, 2, 3]);
        assert_eq!(pool.stats().dirty_pages, 4);
        pool.inner.check_invariants();
    }

    /// Growing past the first block adds chunks (64 frames each for so small a pool);
    /// frames of a chunk beyond the target stay retired; shrinking and growing again
    /// reuses retired frames before allocating.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn growing_adds_chunks_and_reuses_retired_frames() {
        let (pool, f) = four_clean("lru");
        pool.resize(100).unwrap();
        assert_eq!(pool.inner.frames.len(), 4 + 128);
        assert_eq!(pool.capacity_frames(), 100);
        pool.inner.check_invariants();
        pool.write(f, 0, &[3; 100 * 4096]).unwrap();
        assert_eq!(resident_pages(&pool, f).len(), 100);
        assert_eq!(pool.stats().evictions, 0, "all 100 pages fit");
        pool.inner.check_invariants();
        pool.resize(10).unwrap();
        pool.resize(120).unwrap();
        assert_eq!(pool.inner.frames.len(), 4 + 128, "no new chunk");
        pool.inner.check_invariants();
        let mut b = vec![0u8; 100 * 4096];
        assert_eq!(pool.read(f, 0, &mut b).unwrap(), b.len());
        assert!(b.iter().all(|&x| x == 3));
        let max = pool.inner.frames.max_len();
        assert!(matches!(
            pool.resize(max + 1),
            Err(PoolError::ResizeTooLarge { requested, max: m }) if requested == max + 1 && m == max
        ));
        pool.inner.check_invariants();
    }

    /// The age of the next victim: the page loaded first under LRU, until a hit makes it
    /// the most recent. Only lower bounds on time are asserted (a loaded machine may
    /// sleep longer, never shorter).
    #[test]
    #[cfg_attr(miri, ignore = "sleeps and builds a whole pool")]
    fn the_oldest_idle_page_is_the_next_victim() {
        let pool = small_pool(4, "lru");
        assert_eq!(pool.oldest_idle_ns(), None, "nothing resident");
        let f = pool.create("/a").unwrap();
        pool.write(f, 0, &[1; 4096]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(80));
        pool.write(f, 4096, &[1; 4096]).unwrap();
        let old = pool.oldest_idle_ns().unwrap();
        assert!(old >= 3 * TICK_NS, "page 0 is 80 ms old: {old} ns");
        let _pin = pool.pin(f, 0).unwrap();
        // pinned pages are not idle: page 1 is the candidate now, younger
        let young = pool.oldest_idle_ns().unwrap();
        assert!(young < old, "{young} vs {old}");
        pool.inner.check_invariants();
    }

    /// A pin taken before a growth (and a shrink) still reads its frame: frames never move.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_pinned_page_survives_growth_and_shrinking_in_place() {
        let (pool, f) = four_clean("clock");
        let pin = pool.pin(f, 1).unwrap();
        let before = pin.as_ptr();
        pool.resize(300).unwrap();
        pool.resize(3).unwrap();
        assert_eq!(pin.as_ptr(), before);
        assert!(pin.iter().all(|&b| b == 9));
        drop(pin);
        // the 296 free frames went first, then one victim: page 0, the clock's first
        assert_eq!(resident_pages(&pool, f), [1, 2, 3]);
        assert_eq!(pool.stats().free_frames, 0);
        pool.inner.check_invariants();
    }

    /// The checker can fail: a retired frame back on the free list.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    #[should_panic(expected = "retired and free")]
    fn the_checker_sees_a_retired_frame_on_the_free_list() {
        let (pool, _f) = four_clean("fifo");
        pool.resize(2).unwrap();
        let id = pool.inner.retired.lock()[0];
        pool.inner.free.lock().push(id);
        pool.inner.check_invariants();
    }

    /// The flusher hands the retired frames' memory back after the shrink: the count of
    /// unreleased frames goes to zero, and a retired frame reads as zeros (MADV_DONTNEED,
    /// or zeros written by hand where it is not available).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool and waits for its flusher")]
    fn the_flusher_releases_retired_memory_after_a_shrink() {
        let (pool, _f) = four_clean("fifo");
        pool.resize(2).unwrap();
        let retired = pool.inner.retired.lock().clone();
        assert_eq!(retired.len(), 2);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while pool.stats().unreleased_frames > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the flusher never released the retired frames"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        for id in retired {
            let g = pool.inner.frames.exclusive(id);
            assert!(
                g.bytes().iter().all(|&b| b == 0),
                "frame {id} kept its bytes"
            );
        }
        pool.inner.check_invariants();
        // a growth takes them back; a release pending for them would pass them over
        pool.resize(4).unwrap();
        assert_eq!(pool.stats().unreleased_frames, 0);
        pool.inner.check_invariants();
    }

    #[test]
    fn sizing_follows_the_capacity() {
        assert_eq!(
            Sizing::of(16, None),
            Sizing {
                batch: 1,
                low_water: 0
            }
        );
        assert_eq!(
            Sizing::of(640, None),
            Sizing {
                batch: 20,
                low_water: 10
            }
        );
        assert_eq!(
            Sizing::of(1 << 20, None),
            Sizing {
                batch: 256,
                low_water: 256
            }
        );
        assert_eq!(Sizing::of(640, Some(1000)).low_water, 160);
    }
}
