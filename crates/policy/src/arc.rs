//! ARC: Adaptive Replacement Cache.
//!
//! Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", FAST 2003.
//!
//! # Algorithm
//!
//! Two LRU lists of resident objects: T1 holds objects seen once recently, T2 objects seen
//! at least twice. Two ghost lists remember keys recently evicted from them: B1 (from T1)
//! and B2 (from T2). A target `p` for T1's size moves with the workload: a miss that hits
//! in B1 says "T1 was too small" and raises `p` by `max(1, |B2|/|B1|)`; a hit in B2 lowers
//! it by `max(1, |B1|/|B2|)`. REPLACE evicts T1's LRU into B1 when `|T1| > p` (or
//! `|T1| = p` and the newcomer is in B2), else T2's LRU into B2. Hits move an object to
//! T2's MRU end; a ghost hit brings the object back into T2; a brand-new object enters T1.
//! The directory is bounded: `|T1| + |B1| <= c` and `|T1|+|T2|+|B1|+|B2| <= 2c`; when T1
//! alone fills `c` its LRU is discarded without a ghost.
//!
//! In unit mode (every size 1, `c` = capacity) this is exactly the paper's Figure 4.
//!
//! # Generalization to sizes
//!
//! All `|X|` are sums of sizes in the cache's units; ghosts keep the size the object had.
//! The adaptation step is multiplied by the newcomer's size (the paper's step is "one
//! page"). Case IV.A's "T1 holds all of L1" becomes "B1 is empty and T1 plus the newcomer
//! exceed `c`". The directory bounds are restored after each insertion by dropping ghost
//! LRU entries (B1 first for the `c` bound, then B2, then B1 for the `2c` bound), which in
//! unit mode drops exactly the entries the paper drops before REPLACE. Each ghost list also
//! holds at most `min(c, 2^24)` entries.
//!
//! # Choices
//!
//! * `p` is a real number, as in the paper (where `|B2|/|B1|` is a ratio, not an integer
//!   division). libCacheSim's ARC keeps `p` as an integer and divides integers, so its
//!   adaptation steps are floors of ours; small miss-ratio differences can come from that.
//! * The adaptation happens once per miss: at the first `evict` for the newcomer, or in
//!   `on_insert` if the cache had room and `evict` was never called.
//! * Pinned frames: REPLACE takes the LRU-most evictable frame of the list it chose,
//!   skipping pinned ones in place; if that list has none, it takes from the other list.
//!
//! # Parameters
//!
//! None: ARC is self-tuning; `p` starts at 0 as in the paper.
//!
//! # Cost
//!
//! O(1) per hit, insertion and eviction (plus ghost hash lookups on a miss); skipping
//! pinned frames costs one step each. `victims` clones the policy (O(frames)), because
//! REPLACE depends on `p` and on list sizes that change with every eviction.
//! Memory per frame: 8 (links) + 1 (list tag) + 4 (size) + 8 (key, to fill the ghosts)
//! = 21 bytes, plus 16-32 bytes per ghost entry (up to `2c` entries) and the ghosts' key
//! maps. Measured with `bufcache bench replay` (Zipf 1.0, 1M keys, 20M requests, 10%
//! cache, best of three on a shared machine): 12.3 M requests/s with linked-slab ghost
//! lists, 18.8 M with the current ones.

use crate::ghost::GhostList;
use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

const T1: u8 = 0;
const T2: u8 = 1;

/// Adaptive Replacement Cache. List heads are the MRU ends.
#[derive(Clone, Debug)]
pub struct Arc {
    links: Links,
    t1: List,
    t2: List,
    tag: Vec<u8>,
    sizes: Vec<u32>,
    keys: Vec<u64>,
    b1: GhostList,
    b2: GhostList,
    t1_used: u64,
    t2_used: u64,
    c: u64,
    p: f64,
    /// (key, time) of the miss whose adaptation of `p` has been done.
    adapted: Option<(u64, u64)>,
}

impl Arc {
    /// ARC for `capacity` units.
    pub fn new(capacity: u64) -> Self {
        let frames = crate::prealloc_frames(capacity);
        Arc {
            links: Links::with_capacity(frames),
            t1: List::new(),
            t2: List::new(),
            tag: vec![T1; frames],
            sizes: vec![0; frames],
            keys: vec![0; frames],
            b1: GhostList::new(crate::entry_bound(capacity)),
            b2: GhostList::new(crate::entry_bound(capacity)),
            t1_used: 0,
            t2_used: 0,
            c: capacity,
            p: 0.0,
            adapted: None,
        }
    }

    /// The current target for T1, in units.
    pub fn target(&self) -> f64 {
        self.p
    }

    /// Frames of T1 and T2, MRU first, for tests.
    pub fn resident_lists(&self) -> [Vec<FrameId>; 2] {
        [
            self.links.iter_from_head(&self.t1).collect(),
            self.links.iter_from_head(&self.t2).collect(),
        ]
    }

    /// Keys of B1 and B2, MRU first, for tests.
    pub fn ghost_lists(&self) -> [Vec<u64>; 2] {
        [self.b1.iter().collect(), self.b2.iter().collect()]
    }

    /// Adjust `p` for a miss on `access` if its key is in a ghost list (once per miss).
    fn adapt(&mut self, access: &Access) {
        let mark = Some((access.key, access.time));
        if self.adapted == mark {
            return;
        }
        let step = f64::from(access.size.max(1));
        let (b1, b2) = (self.b1.size_sum() as f64, self.b2.size_sum() as f64);
        if self.b1.contains(access.key) {
            let delta = if b1 >= b2 { 1.0 } else { b2 / b1 };
            self.p = (self.p + delta * step).min(self.c as f64);
            self.adapted = mark;
        } else if self.b2.contains(access.key) {
            let delta = if b2 >= b1 { 1.0 } else { b1 / b2 };
            self.p = (self.p - delta * step).max(0.0);
            self.adapted = mark;
        }
    }

    /// The LRU-most evictable frame of `list`.
    #[inline]
    fn lru_evictable(&self, list: &List, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.links.iter_from_tail(list).find(|&f| evictable(f))
    }

    /// Evict `f` from T1 or T2, optionally remembering it in the matching ghost list.
    fn take(&mut self, f: FrameId, ghost: bool) -> FrameId {
        let i = f.index();
        let s = self.sizes[i];
        if self.tag[i] == T1 {
            self.links.unlink(&mut self.t1, f);
            self.t1_used -= u64::from(s);
            if ghost {
                self.b1.push_front(self.keys[i], s);
            }
        } else {
            self.links.unlink(&mut self.t2, f);
            self.t2_used -= u64::from(s);
            if ghost {
                self.b2.push_front(self.keys[i], s);
            }
        }
        f
    }

    /// Restore the directory bounds after an insertion.
    fn trim_ghosts(&mut self) {
        while self.t1_used + self.b1.size_sum() > self.c && self.b1.pop_back().is_some() {}
        let total = |a: &Self| a.t1_used + a.t2_used + a.b1.size_sum() + a.b2.size_sum();
        while total(self) > 2 * self.c {
            if self.b2.pop_back().is_none() && self.b1.pop_back().is_none() {
                break;
            }
        }
    }
}

impl Policy for Arc {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.t1.len() + self.t2.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let i = frame.index();
        if self.tag[i] == T1 {
            let s = u64::from(self.sizes[i]);
            self.links.unlink(&mut self.t1, frame);
            self.t1_used -= s;
            self.links.push_front(&mut self.t2, frame);
            self.t2_used += s;
            self.tag[i] = T2;
        } else {
            self.links.move_to_front(&mut self.t2, frame);
        }
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.tag, frame, T1);
        ensure_slot(&mut self.sizes, frame, 0);
        ensure_slot(&mut self.keys, frame, 0);
        let i = frame.index();
        self.sizes[i] = access.size;
        self.keys[i] = access.key;
        let s = u64::from(access.size);
        self.adapt(access);
        self.adapted = None;
        if self.b1.remove(access.key) || self.b2.remove(access.key) {
            self.tag[i] = T2;
            self.links.push_front(&mut self.t2, frame);
            self.t2_used += s;
        } else {
            self.tag[i] = T1;
            self.links.push_front(&mut self.t1, frame);
            self.t1_used += s;
            self.trim_ghosts();
        }
    }

    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let in_b1 = self.b1.contains(incoming.key);
        let in_b2 = !in_b1 && self.b2.contains(incoming.key);
        if in_b1 || in_b2 {
            self.adapt(incoming);
        } else if self.b1.is_empty() && self.t1_used + u64::from(incoming.size.max(1)) > self.c {
            // Case IV.A with |T1| = c: discard T1's LRU without a ghost.
            if let Some(f) = self.lru_evictable(&self.t1, evictable) {
                return Some(self.take(f, false));
            }
        }
        // REPLACE(x, p)
        let t1 = self.t1_used as f64;
        let from_t1 = self.t1_used > 0 && (t1 > self.p || (in_b2 && t1 == self.p));
        let (first, second) = if from_t1 {
            (&self.t1, &self.t2)
        } else {
            (&self.t2, &self.t1)
        };
        let f = self
            .lru_evictable(first, evictable)
            .or_else(|| self.lru_evictable(second, evictable))?;
        Some(self.take(f, true))
    }

    fn remove(&mut self, frame: FrameId) {
        self.take(frame, false);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }

    /// `c` becomes the new capacity and the target `p` is clamped to it; the ghost lists
    /// keep their newest keys up to the new bound. Exact in the paper's sense (ARC(c) is
    /// defined for any c); the ghosts trimmed by a shrink are the ones ARC would have
    /// dropped first.
    fn set_capacity(&mut self, capacity: u64) {
        self.c = capacity;
        self.p = self.p.min(capacity as f64);
        self.b1.set_capacity(crate::entry_bound(capacity));
        self.b2.set_capacity(crate::entry_bound(capacity));
    }
}

impl NamedPolicy for Arc {
    const NAME: &'static str = "arc";
    const SUMMARY: &'static str =
        "adaptive replacement cache: T1/T2 with ghosts B1/B2 (Megiddo & Modha, FAST 2003)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        let mut arc = Arc::new(ctx.capacity);
        arc.b1.set_key_space(ctx.key_space);
        arc.b2.set_key_space(ctx.key_space);
        Ok(arc)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Arc, Cache};

    /// After a resize ARC runs at the new capacity: grown from 2 to 3 it keeps a loop of
    /// three pages (at 2 it would miss on every access).
    #[test]
    fn a_resized_arc_runs_at_its_new_capacity() {
        use crate::Policy;
        let mut arc = Arc::new(2);
        arc.set_capacity(3);
        let mut cache = Cache::new(arc, 3);
        let hits: Vec<bool> = [1, 2, 3, 1, 2, 3]
            .iter()
            .enumerate()
            .map(|(t, &k)| cache.access(&Access::unit(k, t as u64)).is_hit())
            .collect();
        assert_eq!(hits, [false, false, false, true, true, true]);
    }

    #[test]
    fn hand_worked_sequence() {
        // c = 2, lists written MRU..LRU.
        // 1: T1 [1].  2: T1 [2 1].  1 (hit): T1 [2], T2 [1].
        // 3: case IV.B (|L1| = 1 < 2, total 2 >= 2): REPLACE: |T1| = 1 > p = 0 -> 2 to B1.
        //    T1 [3], T2 [1], B1 [2].
        // 2: in B1 -> p = min(2, 0 + max(1, 0/1)) = 1. REPLACE: |T1| = 1 > 1? no -> T2's LRU
        //    1 goes to B2. 2 into T2. T1 [3], T2 [2], B1 [], B2 [1].
        // 1: in B2 -> p = max(0, 1 - max(1, 0/1)) = 0. REPLACE: |T1| = 1 > 0 -> 3 to B1.
        //    T1 [], T2 [1 2], B1 [3], B2 [].
        // 4: case IV.B (|L1| = 1, total 3 >= 2; total != 4): REPLACE: |T1| = 0 -> T2's LRU 2
        //    to B2. T1 [4], T2 [1], B1 [3], B2 [2].
        // 5: case IV.A (|L1| = |T1| + |B1| = 2 = c, |T1| = 1 < c): drop B1's LRU 3, REPLACE:
        //    |T1| = 1 > 0 -> 4 to B1. T1 [5], T2 [1], B1 [4], B2 [2].
        let trace = [1, 2, 1, 3, 2, 1, 4, 5];
        assert_eq!(
            hits(Arc::new(2), 2, &trace),
            [false, false, true, false, false, false, false, false]
        );
        let ev = evictions(Arc::new(2), 2, &trace);
        let expected: [&[u64]; 8] = [&[], &[], &[], &[2], &[1], &[3], &[2], &[4]];
        assert_eq!(ev, expected);
        // p = 0 and |T1| = 1 > 0: 5 goes first, then 1.
        assert_eq!(resident_after(Arc::new(2), 2, &trace), [5, 1]);

        let mut cache = Cache::new(Arc::new(2), 2);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        assert_eq!(cache.policy().ghost_lists(), [vec![4], vec![2]]);
        assert_eq!(cache.policy().target(), 0.0);
    }

    #[test]
    fn t1_full_discards_without_ghost() {
        // c = 2, a scan: 1 2 3: T1 holds all of L1 (B1 empty, |T1| = 2 = c) -> 1 discarded
        // with no ghost, so a return of 1 is a plain miss that goes to T1 again.
        let trace = [1, 2, 3, 1];
        let ev = evictions(Arc::new(2), 2, &trace);
        let expected: [&[u64]; 4] = [&[], &[], &[1], &[2]];
        assert_eq!(ev, expected);
        let mut cache = Cache::new(Arc::new(2), 2);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        let [t1, t2] = cache.policy().resident_lists();
        assert_eq!((t1.len(), t2.len()), (2, 0));
        assert_eq!(cache.policy().ghost_lists(), [vec![], vec![]]);
    }
}
