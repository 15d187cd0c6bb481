//! Belady's OPT (MIN): evict the resident object whose next access is furthest away.
//!
//! Belady, "A study of replacement algorithms for a virtual-storage computer", IBM Systems
//! Journal, 1966. Offline: it needs each request's next-access time
//! ([`Access::next_access`], [`NEVER`] when the key is not requested again), so
//! [`Policy::needs_future`] is true.
//!
//! # Algorithm
//!
//! Every missed object is admitted. To make room, the resident object with the largest
//! next-access time is evicted (objects never requested again first). A hit refreshes the
//! object's next-access time from the hit's request. With unit sizes this minimizes the
//! number of misses among all policies that admit every missed object; with variable sizes
//! it is only a heuristic (optimal variable-size caching is NP-hard).
//!
//! This is libCacheSim's `Belady` (a max-priority queue on next access, every miss
//! admitted), so miss ratios must agree exactly in unit mode. Ties (several objects never
//! requested again) do not change the miss count in unit mode; we break them by the larger
//! frame number so that victim lists are deterministic. libCacheSim's tie order is that of
//! its heap and may differ with variable sizes.
//!
//! # Parameters
//!
//! None.
//!
//! # Data structure
//!
//! An indexed binary max-heap over frames, keyed by `(next_access, frame)`, with each
//! frame's heap position in a per-frame array. Chosen over a `BTreeSet<(u64, FrameId)>`
//! because the heap lives in two flat preallocated arrays (no node allocation per
//! insertion, better locality) and a hit only sifts one entry, while a B-tree allocates and
//! rebalances nodes. Pinned frames are handled by popping them aside until an evictable top
//! appears and pushing them back afterwards (O(k log n) for k pinned frames in the way);
//! `victims` walks the heap best-first without changing it.
//!
//! # Cost
//!
//! O(log n) per hit, insertion, eviction and removal. Memory per frame: 8 bytes next
//! access + 4 bytes heap position + 4 bytes heap slot = 16 bytes.

use std::collections::BinaryHeap;

use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy, NEVER};

const ABSENT: u32 = u32::MAX;

/// Belady's OPT over an indexed max-heap.
#[derive(Clone, Debug)]
pub struct Belady {
    /// Heap of frames; `heap[0]` has the largest `(next, frame)`.
    heap: Vec<u32>,
    /// Position of each frame in `heap`, or `ABSENT`.
    pos: Vec<u32>,
    /// Next-access time of each resident frame.
    next: Vec<u64>,
    /// Pinned frames popped aside during one eviction.
    aside: Vec<u32>,
}

impl Belady {
    /// OPT expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        Belady {
            heap: Vec::with_capacity(frames),
            pos: vec![ABSENT; frames],
            next: vec![NEVER; frames],
            aside: Vec::new(),
        }
    }

    #[inline]
    fn rank(&self, f: u32) -> (u64, u32) {
        (self.next[f as usize], f)
    }

    #[inline]
    fn place(&mut self, i: usize, f: u32) {
        self.heap[i] = f;
        self.pos[f as usize] = i as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        let f = self.heap[i];
        let r = self.rank(f);
        while i > 0 {
            let parent = (i - 1) / 2;
            let pf = self.heap[parent];
            if self.rank(pf) >= r {
                break;
            }
            self.place(i, pf);
            i = parent;
        }
        self.place(i, f);
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let f = self.heap[i];
        let r = self.rank(f);
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let mut c = l;
            if l + 1 < n && self.rank(self.heap[l + 1]) > self.rank(self.heap[l]) {
                c = l + 1;
            }
            let cf = self.heap[c];
            if self.rank(cf) <= r {
                break;
            }
            self.place(i, cf);
            i = c;
        }
        self.place(i, f);
    }

    fn push(&mut self, f: u32) {
        self.heap.push(f);
        let i = self.heap.len() - 1;
        self.pos[f as usize] = i as u32;
        self.sift_up(i);
    }

    /// Remove the frame at heap position `i`.
    fn delete_at(&mut self, i: usize) -> u32 {
        let f = self.heap[i];
        let last = self.heap.pop().expect("heap is not empty");
        self.pos[f as usize] = ABSENT;
        if i < self.heap.len() {
            self.place(i, last);
            self.sift_down(i);
            self.sift_up(self.pos[last as usize] as usize);
        }
        f
    }
}

impl Policy for Belady {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let i = frame.index();
        let old = self.next[i];
        self.next[i] = access.next_access;
        let p = self.pos[i] as usize;
        if access.next_access > old {
            self.sift_up(p);
        } else {
            self.sift_down(p);
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.pos, frame, ABSENT);
        ensure_slot(&mut self.next, frame, NEVER);
        self.next[frame.index()] = access.next_access;
        self.push(frame.0);
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut found = None;
        while let Some(&top) = self.heap.first() {
            if evictable(FrameId(top)) {
                self.delete_at(0);
                found = Some(FrameId(top));
                break;
            }
            let f = self.delete_at(0);
            self.aside.push(f);
        }
        while let Some(f) = self.aside.pop() {
            self.push(f);
        }
        found
    }

    fn remove(&mut self, frame: FrameId) {
        let p = self.pos[frame.index()] as usize;
        self.delete_at(p);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // Best-first walk: a heap node outranks its children, so popping the best frontier
        // node yields frames in descending (next, frame) order, which is the order in
        // which repeated evictions take the evictable ones.
        let mut frontier: BinaryHeap<((u64, u32), usize)> = BinaryHeap::new();
        if !self.heap.is_empty() {
            frontier.push((self.rank(self.heap[0]), 0));
        }
        let mut taken = 0;
        while taken < n {
            let Some((_, i)) = frontier.pop() else { break };
            let f = self.heap[i];
            if evictable(FrameId(f)) {
                out.push(FrameId(f));
                taken += 1;
            }
            for c in [2 * i + 1, 2 * i + 2] {
                if c < self.heap.len() {
                    frontier.push((self.rank(self.heap[c]), c));
                }
            }
        }
    }

    fn needs_future(&self) -> bool {
        true
    }
}

impl NamedPolicy for Belady {
    const NAME: &'static str = "belady";
    const SUMMARY: &'static str =
        "offline OPT: evict the object requested furthest in the future (Belady 1966)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Belady::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::hits_with_future;
    use crate::{Access, Belady, Cache};

    #[test]
    fn textbook_reference_string() {
        // 3 frames, trace 7 0 1 2 0 3 0 4 2 3 0 3 2 1 2 0 1 7 0 1 (Silberschatz): 9 misses.
        // 2 (t3) evicts 7 (never again); 3 (t5) evicts 1 (next at t13, the furthest);
        // 4 (t7) evicts 0 (t10 vs 2 at t8, 3 at t9); 0 (t10) evicts 4 (never);
        // 1 (t13) evicts 3 (never); 7 (t17) evicts 2 (never).
        let trace = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1];
        let h = hits_with_future(Belady::new(3), 3, &trace);
        assert_eq!(h.iter().filter(|&&x| !x).count(), 9);
        let misses: Vec<usize> = (0..trace.len()).filter(|&i| !h[i]).collect();
        assert_eq!(misses, [0, 1, 2, 3, 5, 7, 10, 13, 17]);
    }

    #[test]
    fn victim_order_and_pins() {
        // Resident: key k has next access 100 + k (key 3 never again).
        let mut cache = Cache::new(Belady::new(4), 4);
        for (t, k) in [0u64, 1, 2, 3].into_iter().enumerate() {
            let mut a = Access::unit(k, t as u64);
            a.next_access = if k == 3 { crate::NEVER } else { 100 + k };
            cache.access(&a);
        }
        assert_eq!(cache.victims(4), [3, 2, 1, 0]);
        // a hit moves key 0's next access furthest (but before "never")
        let mut a = Access::unit(0, 4);
        a.next_access = 500;
        assert!(cache.access(&a).is_hit());
        assert_eq!(cache.victims(4), [3, 0, 2, 1]);
        // pin key 3 and key 0: the eviction skips them and leaves them resident
        let f3 = cache.frame_of(3).unwrap();
        let f0 = cache.frame_of(0).unwrap();
        let pinned = move |f: crate::FrameId| f != f3 && f != f0;
        let mut b = Access::unit(9, 5);
        b.next_access = 6;
        cache.access_with(&b, &pinned);
        assert_eq!(cache.evicted(), [2]);
        assert!(cache.contains(3) && cache.contains(0));
        assert_eq!(cache.victims(4), [3, 0, 1, 9]);
    }
}
