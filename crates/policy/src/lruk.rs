//! LRU-K (O'Neil, O'Neil & Weikum 1993, "The LRU-K page replacement algorithm for
//! database disk buffering", SIGMOD).
//!
//! Each page keeps the times of its last K uncorrelated references, `HIST(p, 1..=K)`
//! (most recent first), and the time of its very last reference, `LAST(p)`. The victim
//! is the page with the largest *backward K-distance* `t - HIST(p, K)`, i.e. the smallest
//! `HIST(p, K)`. A page with fewer than K references has infinite distance (`HIST(p, K)` =
//! 0 below); among those, the paper's *subsidiary policy* decides, and we use LRU on
//! `LAST(p)` as the paper suggests. Remaining ties (impossible when every request has its
//! own time) go to the lower frame number.
//!
//! *Correlated references*: a reference within `crp` of the page's previous one is
//! taken as part of the same burst (one transaction touching a page twice): it only updates
//! `LAST(p)`. The first uncorrelated reference after a burst shifts the history by one and
//! *moves every older entry forward by the burst's length* (`LAST - HIST(p,1)`), so that a
//! burst counts as one reference at its end. The paper writes the shift as an ascending
//! loop; we perform it as the shift it describes (oldest first) and leave "never" entries
//! (0) at 0. A page referenced within `crp` of now is not eligible for replacement.
//!
//! *Retained information*: when a page is evicted its `HIST` and `LAST` are kept, so that a
//! page coming back soon is known. The paper bounds this by a retained information period;
//! we bound it by a number of entries, the oldest evictions forgotten first
//! (`history`, default one entry per frame, i.e. `min(capacity, 2^24)`). On re-entry
//! the retained history is shifted and `HIST(p, 1) = t`.
//!
//! Time is [`Access::time`] + 1 (so that 0 can mean "never").
//!
//! Parameters: `k` (default 2, the paper's recommendation: LRU-2 already tells hot from
//! cold pages, larger K adapts slowly), `crp` (default 0, in requests: every reference
//! counts, which is what libCacheSim's `LRU-K` does — it has no correlated period), and
//! `history` (above). libCacheSim 0.3.5's LRU-K keeps no history for evicted objects (an
//! object that comes back starts with no references), which is `history=0` here; its
//! source at the commit our golden numbers come from (aa0fc409) has an empty `LRU_K.cpp`,
//! so `cachesim` cannot run it there and no golden test compares the two.
//!
//! Protected frames and CRP: eviction takes the eligible, evictable frame of least key;
//! if every evictable frame is inside its correlated period, it takes the evictable frame
//! of least key regardless (the paper assumes some page is always eligible). Frames
//! skipped keep their place in the heap.
//!
//! Implementation: frames with fewer than K references (HIST(p, K) = 0, "young") sit on a
//! linked list in LAST order, newest at the head: their keys `(0, LAST, frame)` are below
//! every other key and LAST only grows, so inserting, re-referencing and evicting them is
//! O(1). The other frames are in an indexed binary min-heap keyed by
//! `(HIST(p, K), LAST(p), frame)`, stored inline in one array with a per-frame position
//! array. A hit can only increase a key: a bottom-up sift-down (Floyd: the hole goes down
//! the path of smaller children, one comparison per level, and the entry is sifted back
//! up from the leaf) gives the same heap as the classic one with half the comparisons.
//! Eviction takes the oldest eligible young frame, else looks at the heap's root; only
//! when the root is protected or inside its CRP does it search the heap in key order
//! (best first, with a reusable scratch heap). The victim list is computed on a copy
//! ([`crate::victims_by_simulation`]). `tests/reference_a.rs` checks the eviction order
//! against an O(n) per-key model for K = 2 and 3, with and without a correlated period.
//!
//! Cost: O(1) per young frame, O(log n) per hit, insertion and eviction in the heap — O(1)
//! is not possible for general K because a hit can move a page anywhere in the order. One
//! hash operation per miss and per eviction for the retained history (with dense keys: a
//! presence bit, plus the value when a history is taken back). Memory per frame: `8 * K +
//! 8` bytes of history, 8 of key, 4 of heap position, 8 of list links, 24 of heap entry;
//! plus `8 * (K + 2)` bytes per retained history entry and its key map.
//!
//! Measured (`bufcache bench replay --policy lruk`, Zipf 1.0, 1M keys, 20M requests, 10%
//! cache, shared machine): 7.4 M requests/s before dense key maps got presence bits, 9.4 M
//! after; 6.9-7.7 M (three runs) before the young list and Floyd's sift-down in a session
//! where they then gave 7.8-9.0 M. Dust's full fingerprint of a 20,000-page cache
//! (`bufcache dust --target sim:lruk:pages=20000`, 300 iterations): 10.4 s before, 8.8 s
//! with Floyd's sift-down, 7.0-7.4 s with the young list too (3.5 s once Dust stopped
//! replaying identical set-up reads, see `docs/dust.md`). Dust's scans re-read pages
//! whose new key is larger than most, so each such hit still walks the heap's full depth
//! (35% of Dust's time). Tried and not kept: a second list, an ordered run, taking every
//! frame whose new key is at least the run's largest, so that such hits cost O(1) (sift-
//! down fell from 35% to 17% of the fingerprint, but the whole took 6.6-7.0 s against
//! 7.0-7.4 s, and Zipf replay did not move: the time left is cache misses on five
//! per-frame arrays, not comparisons); a 4-ary heap (half the depth, but 9.5-9.9 s
//! for the same fingerprint against 8.8 s binary); one 32-byte record per frame for
//! history, LAST and heap position (slower: 6.0 against 8.1 M requests/s, best of four;
//! sifts then write heap positions into the larger records); and lazy heap updates,
//! leaving a hit's entry stale until it reaches the top (slower, 4-7 against 9 M
//! requests/s: a refreshed root whose stored key is old sifts all the way down, while an
//! eager update moves less than one level on Zipf).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::history::HistoryRing;
use crate::list::{Links, List, NIL};

/// `pos` of a frame on the young list rather than the heap.
const YOUNG: u32 = NIL - 1;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// LRU-K with a correlated reference period and bounded retained history.
#[derive(Clone, Debug)]
pub struct LruK {
    k: usize,
    crp: u64,
    /// `hist[f * k + i]` = HIST(f, i + 1); 0 = never.
    hist: Vec<u64>,
    last: Vec<u64>,
    keys: Vec<u64>,
    /// Min-heap of (HIST(f, K), LAST(f), f) over the frames with K references.
    heap: Vec<(u64, u64, u32)>,
    /// Frames with fewer than K references (HIST(f, K) = 0), newest LAST at the head:
    /// their keys `(0, LAST, f)` are below every heap key, and LAST only grows, so a list
    /// keeps them in key order at O(1) per insert, hit and eviction.
    young: List,
    links: Links,
    pos: Vec<u32>,
    retained: HistoryRing,
    /// The `history` parameter (entries per unit of capacity) when built from the
    /// registry: `set_capacity` sizes the retained history by it.
    history_per_unit: Option<f64>,
    /// Reused by `evict` for the best-first search; empty between calls.
    scratch: BinaryHeap<Reverse<(u64, u64, u32, u32)>>,
    /// Reused buffer of K + 1 values for the retained history.
    buf: Vec<u64>,
}

impl LruK {
    /// LRU-`k` for about `frames` residents, correlated period `crp` (requests), keeping the
    /// history of up to `history` evicted keys.
    pub fn new(frames: usize, k: usize, crp: u64, history: usize) -> Self {
        let k = k.max(1);
        LruK {
            k,
            crp,
            hist: vec![0; frames * k],
            last: vec![0; frames],
            keys: vec![0; frames],
            heap: Vec::with_capacity(frames),
            young: List::new(),
            links: Links::with_capacity(frames),
            pos: vec![NIL; frames],
            retained: HistoryRing::new(history, k + 1),
            history_per_unit: None,
            scratch: BinaryHeap::new(),
            buf: vec![0; k + 1],
        }
    }

    #[inline]
    fn key_of(&self, f: usize) -> (u64, u64, u32) {
        (self.hist[f * self.k + self.k - 1], self.last[f], f as u32)
    }

    #[inline]
    fn place(&mut self, i: usize, e: (u64, u64, u32)) {
        self.heap[i] = e;
        self.pos[e.2 as usize] = i as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent] <= e {
                break;
            }
            self.place(i, self.heap[parent]);
            i = parent;
        }
        self.place(i, e);
    }

    /// Restore the heap below `i` after its key grew. Bottom-up (Floyd): walk the hole
    /// down the path of smaller children to a leaf without comparing against the moved
    /// entry (one comparison per level instead of two), then sift the entry up from there.
    /// A hit's new key is often larger than most (Dust's scans send pages to the bottom
    /// every time), where this halves the comparisons; with distinct keys the result is
    /// the same heap as the classic sift-down, so the order of victims cannot change.
    fn sift_down(&mut self, i: usize) {
        let e = self.heap[i];
        let n = self.heap.len();
        let mut hole = i;
        loop {
            let l = 2 * hole + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.heap[r] < self.heap[l] {
                r
            } else {
                l
            };
            self.place(hole, self.heap[c]);
            hole = c;
        }
        // Sift `e` up from the leaf, but not above `i` (everything above was fine).
        while hole > i {
            let parent = (hole - 1) / 2;
            if self.heap[parent] <= e {
                break;
            }
            self.place(hole, self.heap[parent]);
            hole = parent;
        }
        self.place(hole, e);
    }

    /// Put frame `f` (on neither structure) where its key belongs.
    fn enter(&mut self, f: usize) {
        if self.hist[f * self.k + self.k - 1] == 0 {
            self.pos[f] = YOUNG;
            self.links.push_front(&mut self.young, FrameId(f as u32));
        } else {
            self.heap.push(self.key_of(f));
            let i = self.heap.len() - 1;
            self.pos[f] = i as u32;
            self.sift_up(i);
        }
    }

    /// The young frame of least key (oldest LAST) accepted by `ok`.
    fn oldest_young(&self, ok: &dyn Fn(u32) -> bool) -> Option<u32> {
        self.links
            .iter_from_tail(&self.young)
            .map(|f| f.0)
            .find(|&f| ok(f))
    }

    /// Take frame `f` out of the young list or the heap.
    fn leave(&mut self, f: FrameId) {
        if self.pos[f.index()] == YOUNG {
            self.links.unlink(&mut self.young, f);
            self.pos[f.index()] = NIL;
        } else {
            self.heap_remove(f);
        }
    }

    fn heap_remove(&mut self, f: FrameId) {
        let i = self.pos[f.index()] as usize;
        self.pos[f.index()] = NIL;
        let last = self.heap.pop().expect("resident frame is on the heap");
        if i < self.heap.len() {
            self.place(i, last);
            self.sift_down(i);
            let j = self.pos[last.2 as usize] as usize;
            self.sift_up(j);
        }
    }

    /// Least-key heap entry accepted by `ok`, in key order (best-first search).
    fn least(&mut self, ok: &dyn Fn(u32) -> bool) -> Option<u32> {
        let root = *self.heap.first()?;
        if ok(root.2) {
            return Some(root.2);
        }
        self.scratch.clear();
        let push = |s: &mut BinaryHeap<_>, heap: &[(u64, u64, u32)], i: usize| {
            if i < heap.len() {
                let (a, b, f) = heap[i];
                s.push(Reverse((a, b, f, i as u32)));
            }
        };
        push(&mut self.scratch, &self.heap, 1);
        push(&mut self.scratch, &self.heap, 2);
        while let Some(Reverse((_, _, f, i))) = self.scratch.pop() {
            if ok(f) {
                self.scratch.clear();
                return Some(f);
            }
            let i = i as usize;
            push(&mut self.scratch, &self.heap, 2 * i + 1);
            push(&mut self.scratch, &self.heap, 2 * i + 2);
        }
        None
    }

    /// HIST(f, 1..=K) of a resident frame, most recent first (times are request time + 1).
    pub fn history(&self, frame: FrameId) -> &[u64] {
        &self.hist[frame.index() * self.k..(frame.index() + 1) * self.k]
    }
}

/// Retained history entries for `history` per unit of `capacity`.
fn retained_entries(history: f64, capacity: u64) -> usize {
    (history * crate::entry_bound(capacity) as f64).round() as usize
}

impl Policy for LruK {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.heap.len() + self.young.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame.index();
        let t = access.time.saturating_add(1);
        if t.saturating_sub(self.last[f]) > self.crp {
            let h = &mut self.hist[f * self.k..(f + 1) * self.k];
            let correl = self.last[f].saturating_sub(h[0]);
            for i in (1..h.len()).rev() {
                h[i] = if h[i - 1] == 0 { 0 } else { h[i - 1] + correl };
            }
            h[0] = t;
        }
        self.last[f] = t;
        if self.pos[f] == YOUNG {
            if self.hist[f * self.k + self.k - 1] == 0 {
                // Still young: LAST grew, so it is now the newest.
                self.links.move_to_front(&mut self.young, frame);
            } else {
                self.links.unlink(&mut self.young, frame);
                self.enter(f);
            }
            return;
        }
        let i = self.pos[f] as usize;
        self.heap[i] = self.key_of(f);
        self.sift_down(i);
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let f = frame.index();
        let k = self.k;
        ensure_slot(&mut self.last, frame, 0);
        ensure_slot(&mut self.keys, frame, 0);
        ensure_slot(&mut self.pos, frame, NIL);
        if self.hist.len() < (f + 1) * k {
            self.hist.resize((f + 1) * k, 0);
        }
        let t = access.time.saturating_add(1);
        let h = &mut self.hist[f * k..(f + 1) * k];
        if self.retained.take(access.key, &mut self.buf) {
            for i in (1..k).rev() {
                h[i] = self.buf[i - 1];
            }
        } else {
            h.fill(0);
        }
        h[0] = t;
        self.last[f] = t;
        self.keys[f] = access.key;
        self.enter(f);
    }

    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let t = incoming.time.saturating_add(1);
        let (crp, last) = (self.crp, std::mem::take(&mut self.last));
        let victim = {
            let eligible =
                |f: u32| t.saturating_sub(last[f as usize]) > crp && evictable(FrameId(f));
            // Young keys are all below heap keys: the oldest young frame first.
            match self.oldest_young(&eligible) {
                Some(f) => Some(f),
                None => match self.least(&eligible) {
                    Some(f) => Some(f),
                    None if crp > 0 => self
                        .oldest_young(&|f| evictable(FrameId(f)))
                        .or_else(|| self.least(&|f| evictable(FrameId(f)))),
                    None => None,
                },
            }
        };
        self.last = last;
        let f = FrameId(victim?);
        self.leave(f);
        let i = f.index();
        self.buf[..self.k].copy_from_slice(&self.hist[i * self.k..(i + 1) * self.k]);
        self.buf[self.k] = self.last[i];
        self.retained.insert(self.keys[i], &self.buf);
        Some(f)
    }

    fn remove(&mut self, frame: FrameId) {
        self.leave(frame);
        self.retained.forget(self.keys[frame.index()]);
    }

    /// The retained history follows the capacity (`history` entries per unit, the newest
    /// kept when it shrinks); a policy built with [`LruK::new`] keeps the count it was
    /// given.
    fn set_capacity(&mut self, capacity: u64) {
        if let Some(history) = self.history_per_unit {
            self.retained.set_slots(retained_entries(history, capacity));
        }
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for LruK {
    const NAME: &'static str = "lruk";
    const SUMMARY: &'static str =
        "LRU-K with correlated reference period and retained history (O'Neil et al. 1993)";
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "k",
            default: "2",
            help: "number of references remembered per page, 1..=8 (1 is LRU)",
        },
        ParamInfo {
            name: "crp",
            default: "0",
            help: "correlated reference period in requests (0: every reference counts)",
        },
        ParamInfo {
            name: "history",
            default: "1",
            help: "retained history of evicted keys, in multiples of the frame count, 0..=16",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let k = params.integer("k", 1, 8)? as usize;
        let crp = params.integer("crp", 0, u64::MAX / 2)?;
        let history = params.fraction("history", 0.0, 16.0)?;
        let frames = crate::prealloc_frames(ctx.capacity);
        let mut lruk = LruK::new(frames, k, crp, retained_entries(history, ctx.capacity));
        lruk.retained.set_key_space(ctx.key_space);
        lruk.history_per_unit = Some(history);
        Ok(lruk)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Cache, Lru, LruK};

    #[test]
    fn hand_worked_sequence() {
        // LRU-2, capacity 3, crp 0. Times are positions + 1. HIST(p,2) = 0 means never.
        //  t1 1, t2 2, t3 3 miss                      1:(0,1) 2:(0,2) 3:(0,3)  (HIST2, LAST)
        //  t4 1 hit: HIST(1) = [4, 1]                 1:(1,4)
        //  t5 4 miss: least key (0,2) -> evict 2      4:(0,5)
        //  t6 2 miss: retained HIST(2) = [2, 0] -> [6, 2]; least (0,3) -> evict 3
        //  t7 5 miss: least (0,5) = 4 -> evict 4       5:(0,7)
        //  t8 3 miss: retained [3,0] -> [8,3]; least (0,7) -> evict 5
        //  now 1:(1,4) 2:(2,6) 3:(3,8): victim order 1, 2, 3
        let trace = [1, 2, 3, 1, 4, 2, 5, 3];
        assert_eq!(
            hits(LruK::new(3, 2, 0, 3), 3, &trace),
            [false, false, false, true, false, false, false, false]
        );
        let ev: Vec<u64> = evictions(LruK::new(3, 2, 0, 3), 3, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ev, [2, 3, 4, 5]);
        assert_eq!(resident_after(LruK::new(3, 2, 0, 3), 3, &trace), [1, 2, 3]);
        // Without retained history 2 comes back as a stranger (0,6): t7 evicts 4 (0,5),
        // t8 evicts 2 (0,6) instead of 5. Left: 5:(0,7) 3:(0,8) 1:(1,4).
        assert_eq!(resident_after(LruK::new(3, 2, 0, 0), 3, &trace), [5, 3, 1]);
    }

    #[test]
    fn correlated_references_count_once() {
        // LRU-2, crp 2. t1 1, t2 1 (correlated: LAST only), t3 2, t4 3 -> capacity 3.
        // 1: HIST [1, 0], LAST 2. A burst is one reference: 1 still has infinite distance.
        // t5 4 miss: eligible are those with t - LAST > 2: 1 (5-2=3). 2 (5-3=2) and 3 are
        // inside their period. Evict 1.
        let trace = [1, 1, 2, 3, 4];
        let ev = evictions(LruK::new(3, 2, 2, 3), 3, &trace);
        assert_eq!(ev[4], [1]);
        // With crp 0 the second reference counts: 1 has HIST2 = 1, 2 and 3 are infinite:
        // 2 (LAST 3) goes.
        let ev = evictions(LruK::new(3, 2, 0, 3), 3, &trace);
        assert_eq!(ev[4], [2]);
    }

    #[test]
    fn correlation_shift_moves_history_forward() {
        // crp 3: t1 7, t2 7 (correlated), t6 7 (uncorrelated: 6 - 2 > 3).
        // correl period = LAST - HIST1 = 2 - 1 = 1; HIST = [6, 1 + 1] = [6, 2].
        let mut c = Cache::new(LruK::new(4, 2, 3, 4), 4);
        for t in [0u64, 1, 5] {
            c.access(&Access::unit(7, t));
        }
        let f = c.frame_of(7).unwrap();
        assert_eq!(c.policy().history(f), [6, 2]);
    }

    #[test]
    fn k1_is_lru() {
        let trace = [1, 2, 3, 1, 4, 2, 5, 1, 2, 3, 4, 5, 3, 3, 6, 1, 2, 6, 4];
        for cap in 1..6usize {
            assert_eq!(
                hits(LruK::new(cap, 1, 0, cap), cap as u64, &trace),
                hits(Lru::new(cap), cap as u64, &trace)
            );
        }
    }
}
