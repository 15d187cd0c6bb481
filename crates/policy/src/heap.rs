//! An indexed binary min-heap of frames: each resident frame has one key, and the heap
//! knows where every frame sits, so a frame's key can be raised, lowered or removed in
//! O(log n) without searching.
//!
//! Priority policies (GDSF, LFUDA) keep every resident frame ordered by a key that
//! changes on each hit; a sorted tree would allocate nodes as keys move, this heap lives in
//! two vectors sized at construction. Frames the caller may not evict are handled by
//! [`IndexedHeap::least_where`], a best-first walk that visits keys in increasing order
//! and stops at the first acceptable frame, so a protected root costs O(k log k) for the
//! k frames it has to look past, not a full sort.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::list::NIL;
use crate::{ensure_slot, FrameId};

/// A min-heap of `(key, frame)` with each frame's position recorded.
#[derive(Clone, Debug)]
pub struct IndexedHeap<K> {
    entries: Vec<(K, u32)>,
    /// `pos[f]`: index of frame `f` in `entries`, or `NIL` when absent.
    pos: Vec<u32>,
}

impl<K: Ord + Copy> IndexedHeap<K> {
    /// An empty heap expecting about `frames` frames (grows beyond that on demand).
    pub fn with_capacity(frames: usize) -> Self {
        IndexedHeap {
            entries: Vec::with_capacity(frames),
            pos: vec![NIL; frames],
        }
    }

    /// Number of frames in the heap.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The key of a frame in the heap.
    #[inline]
    pub fn key(&self, frame: FrameId) -> K {
        self.entries[self.pos[frame.index()] as usize].0
    }

    /// The frame with the least key.
    #[inline]
    pub fn peek(&self) -> Option<FrameId> {
        self.entries.first().map(|&(_, f)| FrameId(f))
    }

    /// Add `frame` (not in the heap) with `key`.
    #[inline]
    pub fn push(&mut self, frame: FrameId, key: K) {
        ensure_slot(&mut self.pos, frame, NIL);
        debug_assert_eq!(self.pos[frame.index()], NIL, "frame already in the heap");
        self.entries.push((key, frame.0));
        let i = self.entries.len() - 1;
        self.pos[frame.index()] = i as u32;
        self.sift_up(i);
    }

    /// Give `frame` (in the heap) a new key.
    #[inline]
    pub fn update(&mut self, frame: FrameId, key: K) {
        let i = self.pos[frame.index()] as usize;
        let old = self.entries[i].0;
        self.entries[i].0 = key;
        if key < old {
            self.sift_up(i);
        } else {
            self.sift_down(i);
        }
    }

    /// Take `frame` (in the heap) out.
    pub fn remove(&mut self, frame: FrameId) {
        let i = self.pos[frame.index()] as usize;
        self.pos[frame.index()] = NIL;
        let last = self.entries.pop().expect("frame is in the heap");
        if i < self.entries.len() {
            let old = self.entries[i].0;
            self.place(i, last);
            if last.0 < old {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }

    /// The frame with the least key among those `ok` accepts, visiting frames in key order
    /// (ties in unspecified but deterministic order: keys should be unique). `scratch` is
    /// reused between calls so that a protected root allocates nothing in steady state.
    pub fn least_where(
        &self,
        ok: &dyn Fn(FrameId) -> bool,
        scratch: &mut BinaryHeap<Reverse<(K, u32)>>,
    ) -> Option<FrameId> {
        let mut found = None;
        self.in_order(scratch, |f| {
            if ok(f) {
                found = Some(f);
                false
            } else {
                true
            }
        });
        found
    }

    /// Appends to `out` the first `n` frames `ok` accepts, in key order: the victim list
    /// of a policy whose eviction takes the least key and changes no other key.
    pub fn first_n_where(&self, n: usize, ok: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        let mut left = n;
        if left == 0 {
            return;
        }
        self.in_order(&mut BinaryHeap::new(), |f| {
            if ok(f) {
                out.push(f);
                left -= 1;
            }
            left > 0
        });
    }

    /// Calls `visit` on frames in increasing key order until it returns false or every
    /// frame was visited: a best-first walk down the heap.
    pub fn in_order(
        &self,
        scratch: &mut BinaryHeap<Reverse<(K, u32)>>,
        mut visit: impl FnMut(FrameId) -> bool,
    ) {
        scratch.clear();
        if let Some(&root) = self.entries.first() {
            scratch.push(Reverse((root.0, 0)));
        }
        while let Some(Reverse((_, i))) = scratch.pop() {
            let i = i as usize;
            if !visit(FrameId(self.entries[i].1)) {
                break;
            }
            for child in [2 * i + 1, 2 * i + 2] {
                if let Some(&(key, _)) = self.entries.get(child) {
                    scratch.push(Reverse((key, child as u32)));
                }
            }
        }
    }

    #[inline]
    fn place(&mut self, i: usize, entry: (K, u32)) {
        self.entries[i] = entry;
        self.pos[entry.1 as usize] = i as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        let entry = self.entries[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.entries[parent].0 <= entry.0 {
                break;
            }
            self.place(i, self.entries[parent]);
            i = parent;
        }
        self.place(i, entry);
    }

    fn sift_down(&mut self, mut i: usize) {
        let entry = self.entries[i];
        let n = self.entries.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.entries[right].0 < self.entries[left].0 {
                right
            } else {
                left
            };
            if entry.0 <= self.entries[child].0 {
                break;
            }
            self.place(i, self.entries[child]);
            i = child;
        }
        self.place(i, entry);
    }
}

#[cfg(test)]
mod tests {
    use super::IndexedHeap;
    use crate::FrameId;
    use rand::{Rng, SeedableRng};

    /// Against a plain vector: after random pushes, updates and removals the heap yields
    /// frames in key order and `least_where` finds the least accepted key.
    #[test]
    fn agrees_with_a_sorted_vector() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let mut heap = IndexedHeap::with_capacity(4);
        let mut model: Vec<(u64, u32)> = Vec::new();
        let mut scratch = Default::default();
        for step in 0..3000u64 {
            let f = rng.gen_range(0..40u32);
            let present = model.iter().position(|&(_, g)| g == f);
            // unique keys: the step number breaks ties
            let key = rng.gen_range(0..50u64) * 10_000 + step;
            match (present, rng.gen_range(0..3)) {
                (None, _) => {
                    heap.push(FrameId(f), key);
                    model.push((key, f));
                }
                (Some(i), 0) => {
                    heap.remove(FrameId(f));
                    model.remove(i);
                }
                (Some(i), _) => {
                    heap.update(FrameId(f), key);
                    model[i].0 = key;
                }
            }
            model.sort();
            assert_eq!(heap.len(), model.len());
            assert_eq!(heap.peek().map(|f| f.0), model.first().map(|e| e.1));
            let odd = |g: FrameId| g.0 % 2 == 1;
            let want = model.iter().find(|e| e.1 % 2 == 1).map(|e| e.1);
            assert_eq!(heap.least_where(&odd, &mut scratch).map(|g| g.0), want);
        }
        let mut order = Vec::new();
        heap.in_order(&mut scratch, |f| {
            order.push(f.0);
            true
        });
        assert_eq!(order, model.iter().map(|e| e.1).collect::<Vec<_>>());
    }
}
