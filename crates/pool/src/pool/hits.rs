//! Recording hits for the policy without taking its lock: a per-frame saturating counter
//! for policies that declare `HitPath::Counter` (fed before each eviction), per-thread
//! queues applied in order for `HitPath::Ordered` (BP-Wrapper), and the shared-pin hit
//! fast path. Also the policy's view of a page (`Access`).

use super::{open_state, FileHandle, FileSlot, Inner, PolicyState};
use crate::frames::{Bits, Header, HitWords, Shared};
use crate::lookup::Table;
use crate::stats::{stripe, Counter};
use parking_lot::Mutex;
use policy::{Access, BuildContext, FrameId, HitPath, Policy, PolicySpec};
use std::sync::atomic::Ordering;

/// How hits reach the policy, from what the policy declares ([`policy::HitPath`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HitMode {
    /// Per-frame saturating counter, capped at the value (0: hits are ignored). Hits cost
    /// a load (and a store until the counter saturates). See `docs/pool.md`.
    Counter(u8),
    /// Order-sensitive policies (a hit moves the page in a list), run BP-Wrapper style
    /// (Ding et al., ICDE 2009): each thread queues its hits and they are applied, in each
    /// thread's order, under the policy lock when a queue fills or eviction runs. Hits
    /// cost a queue push under a per-thread-stripe lock.
    Queue,
}

impl HitMode {
    /// `None` for a policy no online cache can run.
    pub(super) fn of(path: HitPath) -> Option<HitMode> {
        match path {
            HitPath::Ignore => Some(HitMode::Counter(0)),
            HitPath::Counter { cap } => Some(HitMode::Counter(cap.max(1))),
            HitPath::Ordered => Some(HitMode::Queue),
            HitPath::Offline => None,
        }
    }
}

/// What an optimistic hit attempt found ([`Inner::hit_optimistic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OptimisticHit {
    /// The bytes were copied and validated.
    Hit,
    /// The frame was latched or changed during the copy: worth another try.
    Changed,
    /// Not resident here (or not a plain hit): take the pinned path.
    Absent,
}

/// Hits a thread queues before it tries to apply them (BP-Wrapper's batch size).
pub(super) const QUEUE_COMMIT: usize = 64;
/// Hits a queue holds at most; when the policy lock stays busy past this, further hits
/// are dropped (a lost hint) rather than making a reader wait.
pub(super) const QUEUE_MAX: usize = 1024;

#[repr(align(128))]
pub(super) struct HitQueue(pub(super) Mutex<Vec<(u32, u32)>>);

/// The registered policies a pool can run (all but the offline ones), for the error that
/// refuses another.
pub(super) fn online_policies() -> String {
    let ctx = BuildContext::new(16, 0);
    policy::POLICIES
        .iter()
        .filter(|info| {
            PolicySpec::parse(info.name)
                .and_then(|spec| spec.build(&ctx))
                .is_ok_and(|p| HitMode::of(p.hit_path()).is_some())
        })
        .map(|info| info.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Inner {
    /// The policy's view of page `page` of the file in `slot` at generation `gen`.
    pub(super) fn access_key(slot: u32, gen: u32, page: u64) -> Access {
        let mut a = Access::unit((u64::from(slot) << 48) ^ (u64::from(gen) << 40) ^ page, 0);
        a.stream = slot;
        a
    }

    pub(super) fn access(fh: FileHandle, page: u64) -> Access {
        Self::access_key(fh.slot, fh.gen, page)
    }

    pub(super) fn access_of(h: &Header) -> Access {
        let owner = h.owner.load(Ordering::Relaxed);
        Self::access_key(
            owner as u32,
            (owner >> 32) as u32,
            h.page.load(Ordering::Relaxed),
        )
    }

    /// Record a hit for the policy: bump the frame's counter (unless saturated, the common
    /// case for hot pages: then this is one load) and mark the frame in the touched bitmap
    /// so the eviction path finds it without scanning every header. The bit is set after
    /// every increment, so a counter bumped while the feeder resets it is marked again
    /// and fed next time; a lost increment under a race only loses a hint.
    #[inline]
    pub(super) fn touch(&self, id: u32) {
        self.touch_words(id, &self.frames.hit_words(id));
    }

    /// [`Inner::touch`] with the frame's words already located. Always inlined: as a
    /// call it cost a pin a dozen instructions of spills around it.
    #[inline(always)]
    fn touch_words(&self, id: u32, words: &HitWords<'_>) {
        self.note_access(words);
        if self.hit_cap > 0 {
            let refs = words.refs();
            let r = refs.load(Ordering::Relaxed);
            if r < self.hit_cap {
                refs.store(r + 1, Ordering::Relaxed);
                let (word, bit) = self.frames.bit(Bits::Touched, id);
                word.fetch_or(bit, Ordering::AcqRel);
            }
        } else if self.hit_mode == HitMode::Queue {
            self.queue_hit(id, self.frames.header(id));
        }
    }

    /// BP-Wrapper: queue the hit in this thread's stripe; once the queue holds a batch,
    /// apply it if the policy lock is free right now (never wait on the hit path). Kept
    /// out of line: the counter policies' hit path inlines `touch_words` without it.
    #[inline(never)]
    pub(super) fn queue_hit(&self, id: u32, h: &Header) {
        let incarnation = h.incarnation.load(Ordering::Relaxed);
        let mut q = self.hit_queues[stripe()].0.lock();
        if q.len() < QUEUE_MAX {
            q.push((id, incarnation));
        }
        if q.len() >= QUEUE_COMMIT {
            if let Some(mut state) = self.policy.try_lock() {
                self.apply_queued(&mut state, &mut q);
            }
        }
    }

    /// Apply queued hits in queue order, skipping frames that were evicted or reloaded
    /// since the hit was recorded.
    pub(super) fn apply_queued(&self, state: &mut PolicyState, q: &mut Vec<(u32, u32)>) {
        for (id, incarnation) in q.drain(..) {
            let h = self.frames.header(id);
            if state.resident[id as usize] && h.incarnation.load(Ordering::Relaxed) == incarnation {
                let a = state.stamp(Self::access_of(h));
                state.policy.on_hit(FrameId(id), &a);
            }
        }
    }

    /// The hit fast path for shared pins: the page is resident and not a read-ahead
    /// trigger. No `Result`s are built or moved here (they are large); anything unusual
    /// returns `None` and the caller takes the general path (`acquire`), which re-checks
    /// everything.
    ///
    /// The pin is one compare-and-swap ([`Frames::try_share_if`]): the frame is checked
    /// to hold the page before it, and the swap succeeds only if no exclusive holder ran
    /// since, so a pin counted as the application's is never one taken through a stale
    /// mapping (else `set_len` and `close` could refuse because of another file's reader).
    ///
    /// Always inlined into `pin` and `read`, and the mapped lookup's hit with it: as a
    /// call it returned its guard through memory and saved and restored six registers, a
    /// tenth of a pin's instructions. The hashed lookup's hit is a call
    /// ([`Inner::hit_shared_hashed`]): kept apart, neither lookup's path carries the
    /// other's registers and tests (its shard lock costs more than the call).
    ///
    /// [`Frames::try_share_if`]: crate::frames::Frames::try_share_if
    #[inline(always)]
    pub(super) fn hit_shared(
        &self,
        slot: &FileSlot,
        fh: FileHandle,
        page: u64,
        user: bool,
    ) -> Option<Shared<'_>> {
        if slot.state.load(Ordering::Acquire) != open_state(fh.gen) || fh.pool != self.id {
            return None;
        }
        match &self.table {
            Table::Mapped(m) => {
                let entry = m.find(fh.key(page))?;
                let fid = entry.candidate()?;
                self.pin_hit(fid, user, |w, _| entry.maps_to(fid) && !w.ra_marked())
            }
            Table::Hashed(_) => self.hit_shared_hashed(fh, page, user),
        }
    }

    /// [`Inner::hit_shared`] with the hashed lookup.
    #[inline(always)]
    fn hit_shared_hashed(&self, fh: FileHandle, page: u64, user: bool) -> Option<Shared<'_>> {
        let fid = self.table.get(fh.key(page))?;
        self.pin_hit(fid, user, |w, _| {
            self.header_holds(fid, fh, page) && !w.ra_marked()
        })
    }

    /// Pin frame `fid` if `holds` says, after its state word is read (and given that
    /// word), that the frame holds the page and is no read-ahead trigger (a hit on one
    /// starts the next window: the general path's job); then record the hit. `holds` is
    /// valid only together with the version check the pin's compare-and-swap makes
    /// (invariant 2: a mapping is published and removed under the frame's exclusive
    /// latch, and the frame names the key as owner while it is mapped). Serves the page
    /// hints too (`hint.rs`), whose `holds` compares the hint's tag with the word.
    #[inline(always)]
    pub(super) fn pin_hit(
        &self,
        fid: u32,
        user: bool,
        holds: impl Fn(&HitWords<'_>, u64) -> bool,
    ) -> Option<Shared<'_>> {
        let words = self.frames.hit_words(fid);
        let g = self
            .frames
            .try_share_words(&words, fid, user, |cur| holds(&words, cur))?;
        self.touch_words(fid, &words);
        self.counters.bump(Counter::Hits);
        Some(g)
    }

    /// With the hashed lookup, whether frame `fid` holds page `page` of `fh`: its header's
    /// owner and page (reading the table again would take the shard lock again). The
    /// mapped lookup instead reads its table entry again, a line the lookup just brought
    /// in, so that a hit reads no header at all (`frames::Chunk`).
    #[inline]
    fn header_holds(&self, fid: u32, fh: FileHandle, page: u64) -> bool {
        let h = self.frames.header(fid);
        h.owner.load(Ordering::Relaxed) == fh.owner() && h.page.load(Ordering::Relaxed) == page
    }

    /// The optimistic hit: copy `dst.len()` bytes from `in_page` of a resident page with
    /// no atomic read-modify-write on the frame (a frame `Snapshot`, validated after the
    /// copy). The hit is recorded for the policy only once the copy is validated. Always
    /// inlined into `read_optimistic`, like [`Inner::hit_shared`] into `pin`, and like it
    /// with the hashed lookup's case out of line.
    #[inline(always)]
    pub(super) fn hit_optimistic(
        &self,
        slot: &FileSlot,
        fh: FileHandle,
        page: u64,
        in_page: usize,
        dst: &mut [u8],
    ) -> OptimisticHit {
        if slot.state.load(Ordering::Acquire) != open_state(fh.gen) || fh.pool != self.id {
            return OptimisticHit::Absent;
        }
        match &self.table {
            Table::Mapped(m) => {
                let Some(entry) = m.find(fh.key(page)) else {
                    return OptimisticHit::Absent;
                };
                let Some(fid) = entry.candidate() else {
                    return OptimisticHit::Absent;
                };
                self.copy_hit(fid, in_page, dst, |w, _| {
                    entry.maps_to(fid) && !w.ra_marked()
                })
            }
            Table::Hashed(_) => self.hit_optimistic_hashed(fh, page, in_page, dst),
        }
    }

    /// [`Inner::hit_optimistic`] with the hashed lookup, out of line (inlined, it made
    /// the mapped read carry five more instructions; the pin's case is the other way
    /// round, its guard then went through memory).
    #[inline(never)]
    fn hit_optimistic_hashed(
        &self,
        fh: FileHandle,
        page: u64,
        in_page: usize,
        dst: &mut [u8],
    ) -> OptimisticHit {
        let Some(fid) = self.table.get(fh.key(page)) else {
            return OptimisticHit::Absent;
        };
        self.copy_hit(fid, in_page, dst, |w, _| {
            self.header_holds(fid, fh, page) && !w.ra_marked()
        })
    }

    /// Copy from frame `fid` optimistically if `holds` (as for [`Inner::pin_hit`]) says,
    /// after the snapshot of its state word, that the frame holds the page; then validate
    /// and record the hit.
    #[inline(always)]
    pub(super) fn copy_hit(
        &self,
        fid: u32,
        in_page: usize,
        dst: &mut [u8],
        holds: impl Fn(&HitWords<'_>, u64) -> bool,
    ) -> OptimisticHit {
        let words = self.frames.hit_words(fid);
        let Some(snap) = self.frames.snapshot_words(&words) else {
            // Latched: being loaded, written, evicted or truncated right now.
            return OptimisticHit::Changed;
        };
        if !holds(&words, snap.seen()) {
            // Another page (a stale mapping) or a read-ahead trigger: the pinned path
            // sorts it out.
            return OptimisticHit::Absent;
        }
        snap.copy(in_page, dst);
        if !snap.still_valid() {
            return OptimisticHit::Changed;
        }
        self.touch_words(fid, &words);
        self.counters.bump(Counter::Hits);
        OptimisticHit::Hit
    }

    /// Feed the hits recorded since the last call to the policy (under its lock).
    pub(super) fn feed_refs(&self, state: &mut PolicyState) {
        if self.hit_mode == HitMode::Queue {
            for q in self.hit_queues.iter() {
                let mut q = q.0.lock();
                self.apply_queued(state, &mut q);
            }
            return;
        }
        if self.hit_cap == 0 {
            return;
        }
        for (first, word) in self.frames.bit_words(Bits::Touched) {
            if word.load(Ordering::Relaxed) == 0 {
                continue;
            }
            let mut bits = word.swap(0, Ordering::AcqRel);
            while bits != 0 {
                let id = first + bits.trailing_zeros();
                bits &= bits - 1;
                let h = self.frames.header(id);
                let r = self.frames.refs(id).swap(0, Ordering::AcqRel);
                if state.resident[id as usize] {
                    for _ in 0..r.min(self.hit_cap) {
                        let a = state.stamp(Self::access_of(h));
                        state.policy.on_hit(FrameId(id), &a);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{resident_pages, small_pool, victim_pages};
    use super::super::BufferPool;
    use super::*;
    use crate::stats::stripe;

    /// A pool of 8 frames holding pages 0..4 of one file, clean (so that they can be
    /// victims), loaded in page order into frames 0..4.
    fn four_clean_pages(policy: &str) -> (BufferPool, FileHandle) {
        let pool = small_pool(8, policy);
        let f = pool.create("/h").unwrap();
        for p in 0..4u64 {
            pool.write(f, p * 4096, &[p as u8 + 1; 4096]).unwrap();
        }
        pool.sync_all().unwrap();
        assert_eq!(resident_pages(&pool, f), [0, 1, 2, 3]);
        (pool, f)
    }

    #[test]
    fn declared_hit_paths_map_to_modes() {
        assert_eq!(HitMode::of(HitPath::Ignore), Some(HitMode::Counter(0)));
        // a declared cap of 0 still records one hit (a reference bit)
        assert_eq!(
            HitMode::of(HitPath::Counter { cap: 0 }),
            Some(HitMode::Counter(1))
        );
        assert_eq!(
            HitMode::of(HitPath::Counter { cap: 3 }),
            Some(HitMode::Counter(3))
        );
        assert_eq!(HitMode::of(HitPath::Ordered), Some(HitMode::Queue));
        assert_eq!(HitMode::of(HitPath::Offline), None);
    }

    #[test]
    fn a_page_key_keeps_slot_generation_and_page_apart() {
        let k = |slot, gen, page| Inner::access_key(slot, gen, page).key;
        assert_ne!(k(1, 0, 5), k(0, 1, 5));
        assert_ne!(k(0, 1, 5), k(0, 0, 5));
        assert_ne!(k(1, 0, 5), k(1, 0, 6));
        assert_eq!(k(2, 3, 7), (2 << 48) ^ (3 << 40) ^ 7);
        assert_eq!(Inner::access_key(9, 1, 0).stream, 9);
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_frame_header_gives_the_same_access_as_its_handle() {
        let (pool, f) = four_clean_pages("clock");
        let h = pool.inner.frames.header(2);
        assert_eq!(Inner::access_of(h), Inner::access(f, 2));
    }

    /// Clock (counter cap 1): the hit sets the counter and the touched bit; the victim
    /// list feeds it to the policy, which then gives page 0 its second chance:
    /// hand at page 0 (counter 1 -> 0, moved behind page 3), then 1, 2, 3, 0.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn counter_hits_are_recorded_without_the_lock_and_fed_before_eviction() {
        let (pool, f) = four_clean_pages("clock");
        let inner = &pool.inner;
        assert_eq!(victim_pages(&pool, 8), [0, 1, 2, 3]);
        drop(pool.pin(f, 0).unwrap());
        drop(pool.pin(f, 0).unwrap());
        assert_eq!(
            inner.frames.refs(0).load(Ordering::Relaxed),
            1,
            "capped at 1"
        );
        assert_eq!(
            inner.frames.bit(Bits::Touched, 0).0.load(Ordering::Relaxed),
            1,
            "frame 0 marked"
        );
        assert_eq!(victim_pages(&pool, 8), [1, 2, 3, 0]);
        assert_eq!(inner.frames.refs(0).load(Ordering::Relaxed), 0, "fed");
        assert_eq!(
            inner.frames.bit(Bits::Touched, 0).0.load(Ordering::Relaxed),
            0
        );
        inner.check_invariants();
    }

    /// GCLOCK with `max=3`: five hits reach the policy as three.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn counter_hits_saturate_at_the_declared_cap() {
        let (pool, f) = four_clean_pages("gclock:max=3");
        for _ in 0..5 {
            drop(pool.pin(f, 1).unwrap());
        }
        assert_eq!(pool.inner.frames.refs(1).load(Ordering::Relaxed), 3);
        let mut state = pool.inner.policy.lock();
        pool.inner.feed_refs(&mut state);
        let policy::AnyPolicy::GClock(g) = &state.policy else {
            panic!("not gclock")
        };
        assert_eq!(g.counter(FrameId(1)), 3);
        assert_eq!(g.counter(FrameId(0)), 0);
    }

    /// FIFO ignores hits: nothing is counted, nothing is queued, the order stays.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn ignored_hits_cost_nothing() {
        let (pool, f) = four_clean_pages("fifo");
        drop(pool.pin(f, 0).unwrap());
        assert_eq!(pool.inner.frames.refs(0).load(Ordering::Relaxed), 0);
        assert!(pool
            .inner
            .frames
            .bit_words(Bits::Touched)
            .all(|(_, w)| w.load(Ordering::Relaxed) == 0));
        assert_eq!(victim_pages(&pool, 8), [0, 1, 2, 3]);
        assert_eq!(pool.stats().hits, 1);
    }

    /// LRU: hits wait in this thread's queue and reach the policy in order when the
    /// victim list (like eviction) feeds them: 0 then 1 become the most recent.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn ordered_hits_are_queued_and_applied_in_order() {
        let (pool, f) = four_clean_pages("lru");
        drop(pool.pin(f, 0).unwrap());
        drop(pool.pin(f, 1).unwrap());
        assert_eq!(pool.inner.hit_queues[stripe()].0.lock().len(), 2);
        assert_eq!(victim_pages(&pool, 8), [2, 3, 0, 1]);
        assert!(pool.inner.hit_queues[stripe()].0.lock().is_empty());
        pool.inner.check_invariants();
    }

    /// A queue that reaches `QUEUE_COMMIT` applies itself when the policy lock is free.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_full_batch_of_queued_hits_is_applied_on_the_hit_path() {
        let (pool, f) = four_clean_pages("lru");
        for _ in 0..QUEUE_COMMIT - 1 {
            drop(pool.pin(f, 0).unwrap());
        }
        assert_eq!(
            pool.inner.hit_queues[stripe()].0.lock().len(),
            QUEUE_COMMIT - 1
        );
        drop(pool.pin(f, 0).unwrap());
        assert!(pool.inner.hit_queues[stripe()].0.lock().is_empty());
        assert_eq!(victim_pages(&pool, 8), [1, 2, 3, 0]);
    }

    /// A queued hit recorded for an earlier incarnation of a frame (evicted and loaded
    /// again since) is dropped, not applied to the frame's new page.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn stale_queued_hits_are_skipped() {
        let (pool, _) = four_clean_pages("lru");
        let inner = &pool.inner;
        let now = inner.frames.header(0).incarnation.load(Ordering::Relaxed);
        let mut state = inner.policy.lock();
        let mut q = vec![(0, now.wrapping_sub(1))];
        inner.apply_queued(&mut state, &mut q);
        assert!(q.is_empty());
        drop(state);
        assert_eq!(victim_pages(&pool, 8), [0, 1, 2, 3]);
        let mut state = inner.policy.lock();
        inner.apply_queued(&mut state, &mut vec![(0, now)]);
        drop(state);
        assert_eq!(victim_pages(&pool, 8), [1, 2, 3, 0]);
    }

    /// An optimistic read of a resident page copies the bytes, counts a hit, records it
    /// for the policy (clock: the counter and the touched bit) and leaves no pin behind.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn an_optimistic_read_is_a_recorded_hit_without_a_pin() {
        let (pool, f) = four_clean_pages("clock");
        let before = pool.stats();
        let mut buf = [0u8; 10];
        assert_eq!(pool.read_optimistic(f, 4096 + 4086, &mut buf).unwrap(), 10);
        assert_eq!(buf, [2; 10], "page 1 holds 2s");
        let after = pool.stats();
        assert_eq!((after.hits, after.misses), (before.hits + 1, before.misses));
        let inner = &pool.inner;
        assert!(inner.frames.is_idle(1) && !inner.frames.user_pinned(1));
        assert_eq!(inner.frames.refs(1).load(Ordering::Relaxed), 1);
        assert_eq!(
            inner.frames.bit(Bits::Touched, 1).0.load(Ordering::Relaxed),
            0b10
        );
        assert_eq!(victim_pages(&pool, 8), [0, 2, 3, 1]);
    }

    /// What is not a one-page hit takes the pinned path, with `read`'s results: a page
    /// that is not resident (a miss), a read spanning two pages, past the end, a closed
    /// file.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn an_optimistic_read_falls_back_to_the_pinned_path() {
        let pool = small_pool(8, "clock");
        let f = pool.create("/o").unwrap();
        pool.write(f, 0, &[3; 3 * 4096]).unwrap();
        pool.sync_all().unwrap();
        pool.close(f).unwrap();
        let f = pool.open("/o").unwrap();
        let misses = pool.stats().misses;
        let mut buf = [0u8; 8];
        assert_eq!(pool.read_optimistic(f, 4096 + 8, &mut buf).unwrap(), 8);
        assert_eq!((buf, pool.stats().misses), ([3; 8], misses + 1));
        let mut across = [0u8; 16];
        assert_eq!(
            pool.read_optimistic(f, 2 * 4096 - 8, &mut across).unwrap(),
            16
        );
        assert_eq!(across, [3; 16]);
        assert_eq!(pool.read_optimistic(f, 3 * 4096, &mut buf).unwrap(), 0);
        pool.close(f).unwrap();
        assert!(matches!(
            pool.read_optimistic(f, 0, &mut buf),
            Err(crate::PoolError::Closed(_))
        ));
    }

    /// The attempt itself: a frame latched exclusively (being written, loaded or evicted)
    /// is `Changed`, not read; once released it is a hit again, and a frame holding
    /// another page is `Absent`.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn an_optimistic_attempt_reports_a_latched_frame_as_changed() {
        let (pool, f) = four_clean_pages("fifo");
        let inner = &pool.inner;
        let slot = inner.slot(f).unwrap();
        let mut dst = [0u8; 4];
        let latch = inner.frames.exclusive(2);
        assert_eq!(
            inner.hit_optimistic(slot, f, 2, 0, &mut dst),
            OptimisticHit::Changed
        );
        drop(latch);
        assert_eq!(
            inner.hit_optimistic(slot, f, 2, 0, &mut dst),
            OptimisticHit::Hit
        );
        assert_eq!(dst, [3; 4]);
        assert_eq!(
            inner.hit_optimistic(slot, f, 7, 0, &mut dst),
            OptimisticHit::Absent
        );
    }
}
