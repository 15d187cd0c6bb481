//! Admission: the filter asked on read misses, and the transient list of the pages it
//! refused.
//!
//! A pool cannot refuse to hold a page the way a simulated cache can: the reader needs the
//! bytes, and they are read into a frame. So a refused page is read and served like any
//! other (mapped, latched, hit by whoever finds it while it is there), but its frame is not
//! given to the policy: it goes on the [`Transient`] list, and [`Inner::evict_clean`] takes
//! frames from that list, oldest first, before it asks the policy for a victim. A scan of
//! pages read once therefore recycles a handful of frames among itself instead of pushing
//! the policy's pages out.
//!
//! Which loads ask the filter: pages read from storage for a shared access (`read`, `pin`).
//! A page loaded to be written, or created past the end of the file, is dirty at once and
//! must stay until written, so it is always admitted; read-ahead and `prefetch` skip the
//! filter as the simulator's prefetchers do. A transient page that becomes dirty (a later
//! `pin_mut` or `write` hit it) is admitted into the policy when the list reaches it, since
//! only the policy's victims are written back to make room. A hit on a transient page
//! counts as a hit but is not shown to the policy (it holds no such frame); the page's next
//! miss asks the filter again.
//!
//! All of it lives under the policy lock (`PolicyState::transient`), so invariant 3 — a
//! loaded frame is in the policy or on the transient list, never both — is kept by the
//! same lock that keeps the policy itself.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use super::{FileHandle, Inner, PolicyState};
use policy::{FrameId, Policy};

/// Frames holding refused pages, oldest first.
pub(super) struct Transient {
    /// Frame ids in the order they were refused; an id whose `member` flag is clear was
    /// dropped since (truncation, close) and is skipped when it comes up.
    queue: VecDeque<u32>,
    /// Per frame: on the list now.
    member: Vec<bool>,
}

impl Transient {
    /// An empty list for `frames` frames.
    pub fn new(frames: usize) -> Self {
        Transient {
            queue: VecDeque::new(),
            member: vec![false; frames],
        }
    }

    /// Cover `frames` frames (the pool grew).
    pub fn grow(&mut self, frames: usize) {
        self.member.resize(frames, false);
    }

    /// Whether frame `id` holds a refused page.
    #[cfg(test)]
    pub fn contains(&self, id: u32) -> bool {
        self.member[id as usize]
    }

    /// Forget frame `id` (its page was dropped); its queue entry goes stale.
    pub fn remove(&mut self, id: u32) {
        self.member[id as usize] = false;
    }

    /// Frames on the list.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.member.iter().filter(|&&m| m).count()
    }

    fn push(&mut self, id: u32) {
        debug_assert!(!self.member[id as usize], "frame {id} refused twice");
        self.member[id as usize] = true;
        self.queue.push_back(id);
        // Stale entries are dropped when they come up; a pool that truncates much and
        // evicts little sheds them here, so the queue stays within twice the frames.
        if self.queue.len() > 2 * self.member.len() {
            let member = &self.member;
            self.queue.retain(|&f| member[f as usize]);
        }
    }
}

impl Inner {
    /// Whether the filter admits page `page` of `fh` (true without a filter).
    pub(super) fn admits(&self, fh: FileHandle, page: u64) -> bool {
        match &self.admission {
            None => true,
            Some(filter) => filter.lock().admit(&Self::access(fh, page)),
        }
    }

    /// Put the freshly loaded frame `id` on the transient list instead of in the policy.
    pub(super) fn park_refused(&self, id: u32) {
        let mut state = self.policy.lock();
        debug_assert!(
            !state.resident[id as usize],
            "a refused frame in the policy"
        );
        state.transient.push(id);
    }

    /// Put frame `id` on the transient list whatever it is (for the checker's self-test).
    #[cfg(test)]
    pub(super) fn park_refused_unchecked(&self, id: u32) {
        self.policy.lock().transient.push(id);
    }

    /// Evict transient frames, oldest first, into `freed` until it holds `goal` frames or
    /// every one has been looked at once. A latched frame keeps its place for next time; a
    /// dirty one is admitted into the policy (only policy victims are written to make room).
    pub(super) fn evict_transient(
        &self,
        state: &mut PolicyState,
        freed: &mut Vec<u32>,
        goal: usize,
    ) {
        let mut looks = state.transient.queue.len();
        while freed.len() < goal && looks > 0 {
            looks -= 1;
            let Some(id) = state.transient.queue.pop_front() else {
                break;
            };
            if !state.transient.member[id as usize] {
                continue;
            }
            let h = self.frames.header(id);
            if h.dirty.load(Ordering::Acquire) {
                state.transient.member[id as usize] = false;
                let a = state.stamp(Self::access_of(h));
                state.policy.on_insert(FrameId(id), &a);
                state.resident[id as usize] = true;
                continue;
            }
            if self.frames.is_idle(id) && self.try_evict_frame(id) {
                state.transient.member[id as usize] = false;
                freed.push(id);
            } else {
                state.transient.queue.push_back(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{quiet_builder, resident_pages};
    use super::super::BufferPool;
    use crate::storage::OpenMode;
    use crate::testing::MemStorage;
    use crate::{PoolError, Storage};
    use std::path::Path;

    /// A pool of 4 LRU frames behind `admission` over a 32-page file, page `p` filled
    /// with `p`; pages 0 and 1 are brought in by `prefetch` (which skips the filter) and
    /// read once more, so they are the hot set at the head of LRU's order.
    fn hot_pool(admission: Option<&str>) -> (BufferPool, super::FileHandle) {
        let storage = MemStorage::new();
        let file = storage
            .open(Path::new("/s"), OpenMode::buffered(true))
            .unwrap();
        for p in 0..32u8 {
            file.write_at(&[p; 4096], u64::from(p) * 4096).unwrap();
        }
        let mut builder = quiet_builder(4, "lru");
        if let Some(a) = admission {
            builder = builder.admission(a);
        }
        let pool = builder.build_with_storage(storage).unwrap();
        let f = pool.open("/s").unwrap();
        assert_eq!(pool.prefetch(f, &[0, 1]).unwrap(), 2);
        let mut b = [0u8; 1];
        for p in [0, 1] {
            pool.read(f, p * 4096, &mut b).unwrap();
        }
        (pool, f)
    }

    /// Read `pages` once each; the bytes are right whatever the filter did.
    fn scan(pool: &BufferPool, f: super::FileHandle, pages: std::ops::Range<u64>) {
        let mut b = [0u8; 1];
        for p in pages {
            pool.read(f, p * 4096, &mut b).unwrap();
            assert_eq!(u64::from(b[0]), p);
            pool.inner.check_invariants();
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_scan_behind_secondhit_leaves_the_hot_set_resident() {
        // Scan pages 10 and 11 take the two free frames and are refused (first misses): they
        // go on the transient list. Page 12 evicts 10, the oldest transient page, not LRU's
        // victim 0; 13 evicts 11; and so on. At the end 0 and 1 are resident, with 18 and
        // 19 transient.
        let (pool, f) = hot_pool(Some("secondhit"));
        scan(&pool, f, 10..20);
        assert_eq!(resident_pages(&pool, f), [0, 1, 18, 19]);
        // Every scan page was a first miss: all ten refused (the hot pages never asked).
        assert_eq!(pool.stats().admission_refused, 10);
        assert_eq!(pool.inner.policy.lock().transient.len(), 2);
        let before = pool.stats().misses;
        let mut b = [0u8; 1];
        pool.read(f, 0, &mut b).unwrap();
        pool.read(f, 4096, &mut b).unwrap();
        assert_eq!(pool.stats().misses, before, "the hot set still hits");
        // A refused page's second miss admits it: 10 evicts transient 18 and enters LRU.
        pool.read(f, 10 * 4096, &mut b).unwrap();
        assert_eq!(resident_pages(&pool, f), [0, 1, 10, 19]);
        assert_eq!(pool.inner.policy.lock().transient.len(), 1);
        pool.inner.check_invariants();
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn without_a_filter_the_same_scan_flushes_the_hot_set() {
        let (pool, f) = hot_pool(None);
        scan(&pool, f, 10..20);
        assert_eq!(resident_pages(&pool, f), [16, 17, 18, 19]);
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_refused_page_that_is_written_is_admitted_before_it_can_be_lost() {
        // prob:p=0 refuses every read miss. Page 5 is read (transient), then written
        // through a hit: dirty, so the next eviction admits it into the policy instead of
        // dropping it, and it stays until written.
        let (pool, f) = hot_pool(Some("prob:p=0"));
        let mut b = [0u8; 1];
        pool.read(f, 5 * 4096, &mut b).unwrap();
        pool.write(f, 5 * 4096, &[99]).unwrap();
        pool.read(f, 6 * 4096, &mut b).unwrap();
        pool.read(f, 7 * 4096, &mut b).unwrap();
        assert!(pool.is_resident(f, 5).unwrap());
        assert_eq!(pool.inner.policy.lock().transient.len(), 1, "only 7");
        pool.inner.check_invariants();
        pool.sync_all().unwrap();
        pool.read(f, 5 * 4096, &mut b).unwrap();
        assert_eq!(b[0], 99);
        pool.inner.check_invariants();
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn truncation_drops_a_transient_page_from_the_list() {
        let (pool, f) = hot_pool(Some("secondhit"));
        let mut b = [0u8; 1];
        pool.read(f, 20 * 4096, &mut b).unwrap();
        assert_eq!(pool.inner.policy.lock().transient.len(), 1);
        pool.set_len(f, 10 * 4096).unwrap();
        assert_eq!(pool.inner.policy.lock().transient.len(), 0);
        assert_eq!(resident_pages(&pool, f), [0, 1]);
        pool.inner.check_invariants();
        // The freed frame serves again; the stale queue entry is passed over.
        scan(&pool, f, 2..10);
    }

    #[test]
    fn a_bad_filter_is_refused_when_the_pool_is_built() {
        let err = BufferPool::builder()
            .admission("bloom")
            .build_with_storage(MemStorage::new())
            .err()
            .expect("refused");
        assert!(matches!(err, PoolError::Admission(_)), "{err}");
        assert!(err.to_string().contains("known: always"), "{err}");
    }
}
