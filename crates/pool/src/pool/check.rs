//! The pool's invariants (module docs of `pool`, numbered there) recounted from scratch on
//! a quiescent pool, and the small pools the per-module unit tests build.
//!
//! The hot paths assert what is cheap where it happens (`debug_assert!`); this module
//! checks the rest, which needs a walk over every frame and so cannot run on every
//! operation. Unit tests call [`Inner::check_invariants`] after each step; it only makes
//! sense when no operation is in flight (application pins may be held).
//!
//! The unit tests that build a pool are ignored under Miri: building and driving even a
//! four-frame pool takes Miri about half a minute per test, and what Miri is there to
//! check, the arena's `unsafe` code, has its own tests in `frames.rs` (which Miri runs).

use super::{BufferPool, HitMode, Inner};
use crate::frames::{Bits, NO_OWNER};
use crate::testing::MemStorage;
use crate::Storage;
use policy::Policy;
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Inner {
    /// Panics with the first invariant that does not hold. Call only on a quiescent pool.
    pub(super) fn check_invariants(&self) {
        // The flusher latches retired frames while it releases their memory.
        let _no_release = self.resizing.lock();
        let frames = self.frames.len();
        let state = self.policy.lock();
        let free: HashSet<u32> = self.free.lock().iter().copied().collect();
        let retired: HashSet<u32> = self.retired.lock().iter().copied().collect();
        assert_eq!(
            retired.len(),
            self.retired.lock().len(),
            "a frame is retired twice"
        );
        assert_eq!(
            free.len(),
            self.free.lock().len(),
            "a frame is on the free list twice"
        );
        let mut pages = HashSet::new();
        let mut dirty = 0u64;
        for id in 0..frames as u32 {
            let h = self.frames.header(id);
            let owner = h.owner.load(Ordering::Acquire);
            let page = h.page.load(Ordering::Relaxed);
            let is_dirty = h.dirty.load(Ordering::Acquire);
            assert!(
                !h.writing.load(Ordering::Acquire),
                "frame {id}: a write in flight (7)"
            );
            if is_dirty {
                dirty += 1;
                let (word, bit) = self.frames.bit(Bits::Dirty, id);
                assert_eq!(
                    word.load(Ordering::Acquire) & bit,
                    bit,
                    "frame {id}: dirty without its dirty-map bit"
                );
            }
            assert!(
                self.frames.last_access(id).load(Ordering::Relaxed)
                    <= self.clock.load(Ordering::Relaxed),
                "frame {id}: accessed after the clock's tick"
            );
            if h.retired.load(Ordering::Relaxed) {
                assert!(
                    retired.contains(&id),
                    "frame {id}: flagged retired, not listed"
                );
                assert!(!free.contains(&id), "frame {id}: retired and free");
                assert!(
                    owner == NO_OWNER && !is_dirty,
                    "frame {id}: retired but holds a page"
                );
                assert!(
                    !state.resident[id as usize] && !state.transient.contains(id),
                    "frame {id}: retired but in the policy or transient"
                );
                assert!(self.frames.is_idle(id), "frame {id}: retired but latched");
                continue;
            }
            assert!(
                !retired.contains(&id),
                "frame {id}: listed retired, not flagged"
            );
            if owner == NO_OWNER {
                assert!(free.contains(&id), "frame {id}: no owner and not free");
                assert!(
                    !state.resident[id as usize] && !state.transient.contains(id),
                    "frame {id}: free but in the policy or transient (3)"
                );
                assert!(!is_dirty, "frame {id}: free but dirty (5)");
                continue;
            }
            assert!(
                !free.contains(&id),
                "frame {id}: owned and on the free list"
            );
            assert!(
                state.resident[id as usize] != state.transient.contains(id),
                "frame {id}: loaded, and not in exactly one of the policy and the transient list (3)"
            );
            assert!(
                pages.insert((owner, page)),
                "frame {id}: a second copy of a page (1)"
            );
            let fh = self.handle_of(owner);
            assert_eq!(
                self.table.get(fh.key(page)),
                Some(id),
                "frame {id}: owns page {page} but the lookup does not map it there (2)"
            );
            // Invariant 4, where the frame can be read now (a `PageMut` may hold it).
            if let (Some(g), Ok(slot)) = (self.frames.try_share(id), self.slot(fh)) {
                let len = slot.len.load(Ordering::Acquire);
                let start = page * self.page_size as u64;
                let from = len.saturating_sub(start).min(self.page_size as u64) as usize;
                assert!(
                    g.bytes()[from..].iter().all(|&b| b == 0),
                    "frame {id}: bytes past the end of the file are not zero (4)"
                );
            }
        }
        let resident = state.resident.iter().filter(|&&r| r).count();
        assert_eq!(
            state.policy.len(),
            resident,
            "policy and `resident` disagree (3)"
        );
        assert_eq!(
            resident + state.transient.len() + free.len() + retired.len(),
            frames,
            "frames neither free nor resident nor transient nor retired"
        );
        assert_eq!(
            self.capacity(),
            frames - retired.len(),
            "the capacity is not the frames in circulation"
        );
        assert_eq!(
            state.resident.len(),
            frames,
            "the policy's mirror does not cover every frame"
        );
        assert_eq!(
            self.dirty_pages.load(Ordering::Relaxed),
            dirty,
            "the dirty-page count disagrees with the flags"
        );
        let cap = match self.hit_mode {
            HitMode::Counter(c) => c,
            HitMode::Queue => 0,
        };
        assert_eq!(
            self.hit_cap, cap,
            "the hit path's cap disagrees with the mode"
        );
    }
}

/// A pool for unit tests: `frames` frames of 4 KiB over memory, `policy`, no read-ahead,
/// one application pin, no free-frame reserve and a flusher that never runs on its own
/// (so which pages are resident follows from the test's steps alone).
pub(super) fn small_pool(frames: usize, policy: &str) -> BufferPool {
    small_pool_over(frames, policy, MemStorage::new())
}

/// [`small_pool`] over `storage`.
pub(super) fn small_pool_over(frames: usize, policy: &str, storage: impl Storage) -> BufferPool {
    quiet_builder(frames, policy)
        .build_with_storage(storage)
        .expect("a valid test configuration")
}

/// The builder behind [`small_pool`], for tests that change one more setting.
pub(super) fn quiet_builder(frames: usize, policy: &str) -> super::BufferPoolBuilder {
    BufferPool::builder()
        .capacity_frames(frames)
        .policy(policy)
        .read_ahead(0)
        .pin_limit(1)
        .free_reserve(0)
        .write_policy(super::WritePolicy::WriteBack {
            interval: Duration::from_secs(3600),
            age: Duration::from_secs(3600),
        })
}

/// The pages of the policy's next `n` victims, in order.
pub(super) fn victim_pages(pool: &BufferPool, n: usize) -> Vec<u64> {
    pool.victims(n).into_iter().map(|(_, p)| p).collect()
}

/// The resident pages of `f`, in page order.
pub(super) fn resident_pages(pool: &BufferPool, f: super::FileHandle) -> Vec<u64> {
    pool.resident(f).expect("open file").iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded_pool() -> BufferPool {
        let pool = small_pool(4, "lru");
        let f = pool.create("/c").unwrap();
        pool.write(f, 0, &[1; 2 * 4096]).unwrap();
        pool.inner.check_invariants();
        pool
    }

    /// The checker can fail: a loaded frame the policy does not know (invariant 3).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    #[should_panic(expected = "not in exactly one of the policy and the transient list (3)")]
    fn the_checker_sees_a_frame_missing_from_the_policy() {
        let pool = loaded_pool();
        pool.inner.policy.lock().resident[1] = false;
        pool.inner.check_invariants();
    }

    /// ... and one both in the policy and on the admission filter's transient list.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    #[should_panic(expected = "not in exactly one of the policy and the transient list (3)")]
    fn the_checker_sees_a_frame_in_the_policy_and_transient() {
        let pool = loaded_pool();
        pool.inner.park_refused_unchecked(1);
        pool.inner.check_invariants();
    }

    /// ... and a dirty count that disagrees with the flags.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    #[should_panic(expected = "dirty-page count disagrees")]
    fn the_checker_sees_a_wrong_dirty_count() {
        let pool = loaded_pool();
        pool.inner.dirty_pages.fetch_add(1, Ordering::Relaxed);
        pool.inner.check_invariants();
    }

    /// ... and stale bytes past the end of the file (invariant 4).
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    #[should_panic(expected = "past the end of the file are not zero (4)")]
    fn the_checker_sees_bytes_past_the_end() {
        let pool = loaded_pool();
        let f = pool.create("/short").unwrap();
        pool.write(f, 0, &[1; 10]).unwrap();
        let id = pool.inner.frames_of(f)[0];
        pool.inner.frames.exclusive(id).bytes_mut()[10] = 9;
        pool.inner.check_invariants();
    }
}
