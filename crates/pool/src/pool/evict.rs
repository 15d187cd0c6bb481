//! Making room: taking free frames, evicting batches of clean idle victims in policy
//! order under the policy lock, writing dirty victims when nothing clean is left (passing
//! over pages whose writes fail), and dropping frames for good.

use super::{Inner, PolicyState};
use crate::error::PoolError;
use crate::frames::{backoff, Exclusive, NO_OWNER};
use crate::lookup::PageKey;
use crate::stats::Counter;
use policy::{Access, FrameId, Policy};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Outcome of one eviction attempt.
pub(super) enum Evicted {
    /// A frame for the caller (others may have gone to the free list).
    Frame(u32),
    /// Only dirty frames were evictable; some were written (or found unwritable and
    /// marked so), try again.
    Cleaned,
    /// Nothing evictable now, but some frames are only latched by the pool itself (loads,
    /// hits, writes in flight): wait a moment and try again.
    Busy,
    /// Every frame is pinned by the application.
    Nothing,
}

/// How long a miss waits while every frame is latched by the pool's own operations before
/// it gives up with `AllPinned` (see `alloc_frame`).
const BUSY_WAIT: Duration = Duration::from_secs(10);

impl Inner {
    /// Take a free frame, evicting a batch if there is none. The frame is returned
    /// exclusively latched, with no owner.
    pub(super) fn alloc_frame(&self, incoming: &Access) -> Result<Exclusive<'_>, PoolError> {
        // Rounds that wrote dirty pages are bounded, in case other threads keep re-dirtying
        // what this one cleans (enough to pass over every frame once when their writes
        // fail, a batch per round).
        let mut cleaning_rounds = 1000 + self.frames.len() / self.batch();
        // While every frame is latched by the pool's own operations (loads and their reads,
        // copies, writes in flight, other threads' claims), wait: those end without waiting
        // for this thread. A count of rounds is no bound here: on a loaded machine a read
        // can outlast any number of yields. Only an absurd wait ends in an error.
        let mut busy_since: Option<Instant> = None;
        let mut spins = 0;
        loop {
            let (popped, low) = {
                let mut free = self.free.lock();
                let id = free.pop();
                (id, free.len() < self.low_water())
            };
            if low {
                self.wake_flusher();
            }
            let id = match popped {
                Some(id) => id,
                None => match self.evict_batch(incoming)? {
                    Evicted::Frame(id) => id,
                    Evicted::Cleaned if cleaning_rounds > 0 => {
                        cleaning_rounds -= 1;
                        continue;
                    }
                    Evicted::Busy
                        if busy_since.get_or_insert_with(Instant::now).elapsed() < BUSY_WAIT =>
                    {
                        if spins > 1000 {
                            std::thread::sleep(Duration::from_micros(50));
                        } else {
                            backoff(&mut spins);
                        }
                        continue;
                    }
                    Evicted::Cleaned | Evicted::Busy | Evicted::Nothing => {
                        return Err(PoolError::AllPinned {
                            frames: self.capacity(),
                        })
                    }
                },
            };
            // A reader holding a stale mapping may pin a free frame for a moment.
            return Ok(self.frames.exclusive(id));
        }
    }

    /// Evict up to `count` clean, idle frames (under the policy lock) into `freed`: one
    /// batch for a miss or the flusher, the whole difference for a shrink. Dirty frames
    /// are skipped, not written: writing is the flusher's job, or
    /// [`Inner::evict_batch`]'s when there is nothing else.
    pub(super) fn evict_clean(
        &self,
        state: &mut PolicyState,
        incoming: &Access,
        freed: &mut Vec<u32>,
        count: usize,
    ) {
        self.feed_refs(state);
        // One logical time for the whole batch: it is one miss (ARC adapts once per miss).
        let incoming = state.stamp(*incoming);
        let frames = &self.frames;
        // The dirty flag first: the hand passes dirty frames far more often than latched
        // ones (every tagged frame while ordered data waits for its level), and a dirty
        // frame then costs one load, not also one of its latch word (another cache line).
        // Both are hints; `try_evict_frame` checks again under the latch.
        let clean_idle =
            |f: FrameId| !frames.header(f.0).dirty.load(Ordering::Relaxed) && frames.is_idle(f.0);
        let batch = self.batch();
        let goal = freed.len() + count;
        // Pages the admission filter refused go before any of the policy's.
        self.evict_transient(state, freed, goal);
        let mut refused = 0;
        while freed.len() < goal && refused < batch {
            let Some(f) = state.policy.evict(&incoming, &clean_idle) else {
                break;
            };
            debug_assert!(
                state.resident[f.index()],
                "the policy evicted a frame it did not hold"
            );
            state.resident[f.index()] = false;
            if self.try_evict_frame(f.0) {
                debug_assert_eq!(frames.header(f.0).owner.load(Ordering::Relaxed), NO_OWNER);
                freed.push(f.0);
            } else {
                // Pinned or dirtied since the predicate looked: keep it resident.
                refused += 1;
                let a = state.stamp(Self::access_of(frames.header(f.0)));
                state.policy.on_insert(f, &a);
                state.resident[f.index()] = true;
            }
        }
    }

    /// A frame for a thread that found the free list empty: one another thread freed
    /// while this one waited for the policy lock, or the first of a freshly evicted batch
    /// (the rest go to the free list).
    pub(super) fn take_or_evict(&self, state: &mut PolicyState, incoming: &Access) -> Option<u32> {
        if let Some(id) = self.free.lock().pop() {
            return Some(id);
        }
        let mut freed = Vec::with_capacity(self.batch());
        self.evict_clean(state, incoming, &mut freed, self.batch());
        let mine = freed.pop();
        if !freed.is_empty() {
            self.free.lock().extend_from_slice(&freed);
        }
        mine
    }

    /// The next `batch` victims in policy order that are idle and dirty (to be written
    /// before they can be evicted): those whose last write did not fail, or with `failed`
    /// only those whose last write did.
    pub(super) fn dirty_victims(&self, state: &PolicyState, failed: bool) -> Vec<FrameId> {
        let mut out = Vec::new();
        if !self.untagged_dirty() {
            // Only ordered data is dirty: the scan below would step over every frame in
            // vain (on every miss while a level is being written).
            return out;
        }
        let frames = &self.frames;
        let pick = |f: FrameId| {
            let h = frames.header(f.0);
            frames.is_idle(f.0)
                && h.dirty.load(Ordering::Relaxed)
                && !self.is_tagged(f.0)
                && h.write_failed.load(Ordering::Relaxed) == failed
        };
        let batch = self.batch();
        state.policy.victims(batch, &pick, &mut out);
        debug_assert!(out.len() <= batch);
        out
    }

    /// Evict a batch; if every evictable frame is dirty (the flusher is behind), write the
    /// policy's next victims from this thread, outside the policy lock, and report
    /// `Cleaned` so the caller tries again. Pages whose writes failed are passed over
    /// while others can be written (one file on a full disk must not stall misses on every
    /// file); only when nothing else is left are they tried again, and if they fail the
    /// miss gets [`PoolError::WriteBackStalled`] with their file's error.
    pub(super) fn evict_batch(&self, incoming: &Access) -> Result<Evicted, PoolError> {
        let mut state = self.policy.lock();
        if let Some(id) = self.take_or_evict(&mut state, incoming) {
            return Ok(Evicted::Frame(id));
        }
        let mut dirty = self.dirty_victims(&state, false);
        let only_failed = dirty.is_empty();
        if only_failed {
            dirty = self.dirty_victims(&state, true);
        }
        drop(state);
        if dirty.is_empty() && self.flush_level_for_eviction() > 0 {
            // Only ordered data was left dirty: a level wrote what the rest follows.
            return Ok(Evicted::Cleaned);
        }
        if dirty.is_empty() {
            let frames = &self.frames;
            let all_user_pinned = (0..frames.len() as u32).all(|id| {
                frames.user_pinned(id) || frames.header(id).retired.load(Ordering::Relaxed)
            });
            return Ok(if all_user_pinned {
                Evicted::Nothing
            } else {
                Evicted::Busy
            });
        }
        let dirty: Vec<u32> = dirty.iter().map(|f| f.0).collect();
        let (cleaned, first_err) =
            self.clean_frames(&dirty, false, Counter::ForegroundWrites, None);
        match first_err {
            Some(e) if cleaned == 0 && only_failed => Err(PoolError::WriteBackStalled {
                source: Box::new(e),
            }),
            // Those pages are marked failed now: the next round looks past them.
            Some(_) => Ok(Evicted::Cleaned),
            None if cleaned == 0 => Ok(Evicted::Busy),
            None => Ok(Evicted::Cleaned),
        }
    }

    /// Unmap a clean idle frame (the policy has already forgotten it).
    pub(super) fn try_evict_frame(&self, id: u32) -> bool {
        let Some(g) = self.frames.try_exclusive(id) else {
            return false;
        };
        let h = g.header();
        if h.dirty.load(Ordering::Acquire) {
            return false;
        }
        let owner = h.owner.load(Ordering::Relaxed);
        if owner != NO_OWNER {
            self.table.remove(
                self.handle_of(owner).key(h.page.load(Ordering::Relaxed)),
                id,
            );
        }
        h.owner.store(NO_OWNER, Ordering::Relaxed);
        self.frames.refs(id).store(0, Ordering::Relaxed);
        self.frames.set_ra_mark(id, false);
        self.counters.bump(Counter::Evictions);
        true
    }

    /// Give back a claimed frame that was never loaded (or whose load failed).
    pub(super) fn unclaim(&self, g: Exclusive<'_>, published: Option<PageKey>) {
        let id = g.id();
        if let Some(key) = published {
            self.table.remove(key, id);
        }
        g.header().owner.store(NO_OWNER, Ordering::Relaxed);
        drop(g);
        self.free.lock().push(id);
    }

    /// Drop frame `id` (exclusively latched) from the cache entirely.
    pub(super) fn discard(&self, g: Exclusive<'_>, state: &mut PolicyState) {
        let id = g.id();
        let h = g.header();
        // Invariant 7: a writer holds a shared pin for its write, so none is in flight
        // while this thread holds the frame exclusively.
        debug_assert!(
            !h.writing.load(Ordering::Relaxed),
            "discarding a page being written"
        );
        let owner = h.owner.load(Ordering::Relaxed);
        if owner != NO_OWNER {
            self.table.remove(
                self.handle_of(owner).key(h.page.load(Ordering::Relaxed)),
                id,
            );
        }
        if state.resident[id as usize] {
            state.policy.remove(FrameId(id));
            state.resident[id as usize] = false;
        }
        state.transient.remove(id);
        self.order_frame_dropped(id);
        self.clear_dirty(id, h);
        h.write_failed.store(false, Ordering::Relaxed);
        h.owner.store(NO_OWNER, Ordering::Relaxed);
        self.frames.refs(id).store(0, Ordering::Relaxed);
        self.frames.set_ra_mark(id, false);
        drop(g);
        self.free.lock().push(id);
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{resident_pages, small_pool, small_pool_over};
    use super::*;
    use crate::testing::{RecordingStorage, StorageEvent};

    /// Four frames filled with clean pages 0..4 of one file (FIFO order 0, 1, 2, 3).
    fn full_fifo() -> (super::super::BufferPool, super::super::FileHandle) {
        let pool = small_pool(4, "fifo");
        let f = pool.create("/e").unwrap();
        pool.write(f, 0, &[7; 6 * 4096]).unwrap();
        pool.sync_all().unwrap();
        // pages 0 and 1 were evicted to make room for 4 and 5: reload them in order
        assert_eq!(resident_pages(&pool, f), [2, 3, 4, 5]);
        (pool, f)
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_miss_evicts_the_policys_victim() {
        let (pool, f) = full_fifo();
        let mut b = [0u8; 1];
        pool.read(f, 0, &mut b).unwrap();
        assert_eq!(resident_pages(&pool, f), [0, 3, 4, 5]);
        assert_eq!(pool.stats().evictions, 3);
        pool.inner.check_invariants();
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_pinned_victim_is_passed_over_and_keeps_its_place() {
        let (pool, f) = full_fifo();
        let pin = pool.pin(f, 2).unwrap();
        let mut b = [0u8; 1];
        pool.read(f, 0, &mut b).unwrap();
        assert_eq!(
            resident_pages(&pool, f),
            [0, 2, 4, 5],
            "3 went instead of pinned 2"
        );
        drop(pin);
        pool.read(f, 4096, &mut b).unwrap();
        assert_eq!(
            resident_pages(&pool, f),
            [0, 1, 4, 5],
            "then 2, still the oldest"
        );
        pool.inner.check_invariants();
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn with_every_frame_pinned_a_miss_fails_instead_of_waiting() {
        let pool = small_pool(2, "lru");
        let f = pool.create("/p").unwrap();
        pool.write(f, 0, &[1; 3 * 4096]).unwrap();
        let pins = [pool.pin(f, 1).unwrap(), pool.pin(f, 2).unwrap()];
        let mut b = [0u8; 1];
        assert!(matches!(
            pool.read(f, 0, &mut b),
            Err(PoolError::AllPinned { frames: 2 })
        ));
        drop(pins);
        assert_eq!(pool.read(f, 0, &mut b).unwrap(), 1);
        pool.inner.check_invariants();
    }

    /// With no flusher help, a miss that finds only dirty victims writes the policy's
    /// first victim itself, then evicts it: one foreground write, page 0, in that order.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn when_every_victim_is_dirty_the_miss_writes_the_first_one() {
        let storage = RecordingStorage::new();
        let pool = small_pool_over(2, "fifo", storage.clone());
        let f = pool.create("/d").unwrap();
        pool.write(f, 0, &[1; 2 * 4096]).unwrap();
        let before = storage.log_len();
        pool.write(f, 2 * 4096, &[2; 4096]).unwrap();
        let s = pool.stats();
        assert_eq!((s.foreground_writes, s.evictions, s.dirty_pages), (1, 1, 2));
        assert_eq!(
            storage.log()[before..],
            [StorageEvent::Write {
                path: "/d".into(),
                offset: 0,
                data: vec![1; 4096]
            }]
        );
        assert_eq!(resident_pages(&pool, f), [1, 2]);
        pool.inner.check_invariants();
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_latched_or_dirty_frame_is_not_evicted() {
        let pool = small_pool(4, "lru");
        let inner = &pool.inner;
        let f = pool.create("/l").unwrap();
        pool.write(f, 0, &[1; 2 * 4096]).unwrap();
        assert!(!inner.try_evict_frame(0), "dirty");
        pool.sync_all().unwrap();
        let pin = pool.pin(f, 0).unwrap();
        assert!(!inner.try_evict_frame(0), "pinned");
        drop(pin);
        let evictions = pool.stats().evictions;
        // frame 1 holds page 1, clean and idle: it goes (the policy is told separately)
        let mut state = inner.policy.lock();
        state.policy.remove(FrameId(1));
        state.resident[1] = false;
        drop(state);
        assert!(inner.try_evict_frame(1));
        assert_eq!(
            inner.frames.header(1).owner.load(Ordering::Relaxed),
            NO_OWNER
        );
        assert_eq!(pool.stats().evictions, evictions + 1);
        assert!(!pool.is_resident(f, 1).unwrap());
        inner.free.lock().push(1);
        inner.check_invariants();
    }

    /// `discard` drops a dirty page without writing it (truncation) and frees the frame.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_discarded_frame_is_clean_unmapped_and_free() {
        let pool = small_pool(4, "arc");
        let inner = &pool.inner;
        let f = pool.create("/x").unwrap();
        pool.write(f, 0, &[3; 4096]).unwrap();
        assert_eq!(pool.stats().dirty_pages, 1);
        let mut state = inner.policy.lock();
        inner.discard(inner.frames.exclusive(0), &mut state);
        assert_eq!(state.policy.len(), 0);
        drop(state);
        assert_eq!(pool.stats().dirty_pages, 0);
        assert_eq!(pool.stats().free_frames, 4);
        assert!(!pool.is_resident(f, 0).unwrap());
        inner.check_invariants();
    }
}
