//! CAR: Clock with Adaptive Replacement.
//!
//! Bansal & Modha, "CAR: Clock with Adaptive Replacement", FAST 2004.
//!
//! # Algorithm
//!
//! ARC's structure with clocks instead of LRU lists, so that a hit only sets a reference
//! bit. T1 (seen once) and T2 (seen at least twice) are circular lists of resident pages;
//! B1 and B2 are LRU ghost lists of pages evicted from them; `p` is the target size of T1.
//! To make room (the paper's `replace`): while no victim is found, if `|T1| >= max(1, p)`
//! look at T1's hand: a page with its bit clear is demoted to B1's MRU end, a page with its
//! bit set has it cleared and moves to T2's tail; otherwise look at T2's hand: a clear page
//! is demoted to B2, a set page has its bit cleared and goes to T2's tail. After `replace`,
//! a brand-new page trims the directory (`|T1|+|B1| = c`: drop B1's LRU, else a full
//! directory of `2c`: drop B2's LRU) and enters T1's tail; a page found in B1 raises `p` by
//! `max(1, |B2|/|B1|)`, one found in B2 lowers it by `max(1, |B1|/|B2|)`, and it enters T2's
//! tail. New and returning pages start with a clear bit.
//!
//! In unit mode this is the paper's Figure 2 exactly. Unlike ARC, `p` adapts *after* the
//! victim is chosen, as in the paper.
//!
//! # Generalization to sizes and choices
//!
//! * Sizes are summed in units, the adaptation step is multiplied by the page's size, and
//!   the directory bounds (`|T1|+|B1| <= c`, total `<= 2c`) are restored after each
//!   insertion by dropping ghost LRU entries, as in [`crate::Arc`]. Each ghost list holds
//!   at most `min(c, 2^24)` entries.
//! * `p` is real-valued, as in the paper; libCacheSim's CAR uses integer arithmetic.
//! * Pinned frames: the hand passes over a pinned page with a clear bit, which rotates it
//!   to the tail of its own list (a clock hand advancing past it); pages with a set bit are
//!   treated as usual. The loop is bounded by `2 * len + 2` steps; if that runs out (a
//!   list made only of pinned pages), the first evictable page from T1's hand, then T2's,
//!   is demoted.
//!
//! # Parameters
//!
//! None: `p` starts at 0 and adapts.
//!
//! # Cost
//!
//! O(1) per hit (one bit) and insertion; eviction amortized O(1) (every step clears a bit
//! set by a hit or moves a page from T1 to T2). `victims` clones the policy.
//! Memory per frame: 8 (links) + 1 (list tag and bit) + 4 (size) + 8 (key) = 21 bytes,
//! plus 16-32 bytes per ghost entry and the ghosts' key maps. Measured with `bufcache
//! bench replay` (Zipf 1.0, 1M keys, 20M requests, 10% cache, best of three on a shared
//! machine): 14.9 M requests/s with linked-slab ghost lists, 19.2 M with the current ones.

use crate::ghost::GhostList;
use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

const IN_T2: u8 = 0x02;
const REF: u8 = 0x01;

/// Clock with Adaptive Replacement. List heads are the clock tails (newest); the hand is
/// at each list's tail (oldest).
#[derive(Clone, Debug)]
pub struct Car {
    links: Links,
    t1: List,
    t2: List,
    flags: Vec<u8>,
    sizes: Vec<u32>,
    keys: Vec<u64>,
    b1: GhostList,
    b2: GhostList,
    t1_used: u64,
    t2_used: u64,
    c: u64,
    p: f64,
}

impl Car {
    /// CAR for `capacity` units.
    pub fn new(capacity: u64) -> Self {
        let frames = crate::prealloc_frames(capacity);
        Car {
            links: Links::with_capacity(frames),
            t1: List::new(),
            t2: List::new(),
            flags: vec![0; frames],
            sizes: vec![0; frames],
            keys: vec![0; frames],
            b1: GhostList::new(crate::entry_bound(capacity)),
            b2: GhostList::new(crate::entry_bound(capacity)),
            t1_used: 0,
            t2_used: 0,
            c: capacity,
            p: 0.0,
        }
    }

    /// The current target for T1, in units.
    pub fn target(&self) -> f64 {
        self.p
    }

    /// Keys of B1 and B2, MRU first, for tests.
    pub fn ghost_lists(&self) -> [Vec<u64>; 2] {
        [self.b1.iter().collect(), self.b2.iter().collect()]
    }

    fn demote(&mut self, f: FrameId) -> FrameId {
        let i = f.index();
        let s = self.sizes[i];
        if self.flags[i] & IN_T2 == 0 {
            self.links.unlink(&mut self.t1, f);
            self.t1_used -= u64::from(s);
            self.b1.push_front(self.keys[i], s);
        } else {
            self.links.unlink(&mut self.t2, f);
            self.t2_used -= u64::from(s);
            self.b2.push_front(self.keys[i], s);
        }
        f
    }

    fn trim_ghosts(&mut self) {
        while self.t1_used + self.b1.size_sum() > self.c && self.b1.pop_back().is_some() {}
        while self.t1_used + self.t2_used + self.b1.size_sum() + self.b2.size_sum() > 2 * self.c {
            if self.b2.pop_back().is_none() && self.b1.pop_back().is_none() {
                break;
            }
        }
    }
}

impl Policy for Car {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// A hit sets the page's reference bit.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Counter { cap: 1 }
    }

    fn len(&self) -> usize {
        self.t1.len() + self.t2.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        self.flags[frame.index()] |= REF;
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.flags, frame, 0);
        ensure_slot(&mut self.sizes, frame, 0);
        ensure_slot(&mut self.keys, frame, 0);
        let i = frame.index();
        self.sizes[i] = access.size;
        self.keys[i] = access.key;
        let s = u64::from(access.size);
        let step = f64::from(access.size.max(1));
        let (b1, b2) = (self.b1.size_sum() as f64, self.b2.size_sum() as f64);
        if self.b1.remove(access.key) {
            let delta = if b1 >= b2 { 1.0 } else { b2 / b1 };
            self.p = (self.p + delta * step).min(self.c as f64);
        } else if self.b2.remove(access.key) {
            let delta = if b2 >= b1 { 1.0 } else { b1 / b2 };
            self.p = (self.p - delta * step).max(0.0);
        } else {
            self.flags[i] = 0;
            self.links.push_front(&mut self.t1, frame);
            self.t1_used += s;
            self.trim_ghosts();
            return;
        }
        self.flags[i] = IN_T2;
        self.links.push_front(&mut self.t2, frame);
        self.t2_used += s;
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let bound = 2 * self.len() + 2;
        for _ in 0..bound {
            let use_t1 = (self.t1_used as f64 >= self.p.max(1.0) && !self.t1.is_empty())
                || self.t2.is_empty();
            if use_t1 {
                let f = self.t1.tail()?;
                let i = f.index();
                if self.flags[i] & REF == 0 {
                    if evictable(f) {
                        return Some(self.demote(f));
                    }
                    self.links.move_to_front(&mut self.t1, f);
                } else {
                    let s = u64::from(self.sizes[i]);
                    self.links.unlink(&mut self.t1, f);
                    self.t1_used -= s;
                    self.links.push_front(&mut self.t2, f);
                    self.t2_used += s;
                    self.flags[i] = IN_T2;
                }
            } else {
                let f = self.t2.tail()?;
                let i = f.index();
                if self.flags[i] & REF == 0 && evictable(f) {
                    return Some(self.demote(f));
                }
                self.flags[i] &= !REF;
                self.links.move_to_front(&mut self.t2, f);
            }
        }
        let f = self
            .links
            .iter_from_tail(&self.t1)
            .chain(self.links.iter_from_tail(&self.t2))
            .find(|&f| evictable(f))?;
        Some(self.demote(f))
    }

    fn remove(&mut self, frame: FrameId) {
        let i = frame.index();
        let s = u64::from(self.sizes[i]);
        if self.flags[i] & IN_T2 == 0 {
            self.links.unlink(&mut self.t1, frame);
            self.t1_used -= s;
        } else {
            self.links.unlink(&mut self.t2, frame);
            self.t2_used -= s;
        }
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }

    /// As ARC's: `c` becomes the new capacity, the target `p` is clamped to it, the ghost
    /// lists keep their newest keys up to the new bound and the directory bounds
    /// (`|T1|+|B1| <= c`, total `<= 2c`) are restored by dropping ghost LRU entries.
    /// Exact in the paper's sense (CAR(c) is defined for any c): the ghosts a shrink
    /// drops are the ones CAR would have dropped first.
    fn set_capacity(&mut self, capacity: u64) {
        self.c = capacity;
        self.p = self.p.min(capacity as f64);
        self.b1.set_capacity(crate::entry_bound(capacity));
        self.b2.set_capacity(crate::entry_bound(capacity));
        self.trim_ghosts();
    }
}

impl NamedPolicy for Car {
    const NAME: &'static str = "car";
    const SUMMARY: &'static str =
        "clock with adaptive replacement: ARC with clocks (Bansal & Modha, FAST 2004)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        let mut car = Car::new(ctx.capacity);
        car.b1.set_key_space(ctx.key_space);
        car.b2.set_key_space(ctx.key_space);
        Ok(car)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Cache, Car};

    #[test]
    fn hand_worked_sequence() {
        // c = 2, p = 0; lists written newest..hand, (bit).
        // 1 2: T1 [2(0) 1(0)].  1 (hit): bit of 1 set.
        // 3: replace: |T1| = 2 >= max(1, 0): hand 1 has its bit set -> cleared, to T2.
        //    |T1| = 1 >= 1: hand 2 clear -> demoted to B1. 3 is new: |T1|+|B1| = 1, total
        //    2: nothing trimmed. T1 [3], T2 [1], B1 [2].
        // 2: replace: |T1| = 1 >= 1: 3 demoted, B1 [3 2]. 2 in B1: p = 0 + max(1, 0/2) = 1;
        //    2 to T2: T2 [2 1], B1 [3].
        // 4: replace: |T1| = 0 < max(1, 1): T2's hand 1 (clear) -> B2 [1]. T1 [4].
        // 3: replace: |T1| = 1 >= 1: 4 -> B1 [4 3]. 3 in B1: |B1| = 2 >= |B2| = 1, p = 2.
        //    T2 [3 2], B1 [4], B2 [1].
        let trace = [1, 2, 1, 3, 2, 4, 3];
        assert_eq!(
            hits(Car::new(2), 2, &trace),
            [false, false, true, false, false, false, false]
        );
        let ev = evictions(Car::new(2), 2, &trace);
        let expected: [&[u64]; 7] = [&[], &[], &[], &[2], &[3], &[1], &[4]];
        assert_eq!(ev, expected);
        // |T1| = 0 < 2: T2's hand first: 2, then 3.
        assert_eq!(resident_after(Car::new(2), 2, &trace), [2, 3]);
        let mut cache = Cache::new(Car::new(2), 2);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        assert_eq!(cache.policy().ghost_lists(), [vec![4], vec![1]]);
        assert_eq!(cache.policy().target(), 2.0);
    }
}
