//! The resident frames as a dense array, for policies that pick victims by position
//! (Random's uniform draw, the sampled policies: Hyperbolic, Redis-style sampled LRU/LFU,
//! LHD): O(1) insert, O(1) removal by swapping the last entry into the hole, O(1) access
//! to the i-th resident, and one sampler ([`ResidentSet::take_best_of_sample`]) that all
//! the sampled policies share.

use rand::Rng;

use crate::list::NIL;
use crate::{ensure_slot, FrameId};

/// Resident frames in no particular order, each knowing its position.
#[derive(Clone, Debug)]
pub(crate) struct ResidentSet {
    dense: Vec<u32>,
    /// Each frame's index in `dense` (`NIL` when not resident).
    pos: Vec<u32>,
}

impl ResidentSet {
    /// Room for about `frames` residents.
    pub(crate) fn new(frames: usize) -> Self {
        ResidentSet {
            dense: Vec::with_capacity(frames),
            pos: vec![NIL; frames],
        }
    }

    /// How many frames are resident.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.dense.len()
    }

    /// The resident at position `i` (`i < len()`).
    #[inline]
    pub(crate) fn at(&self, i: usize) -> FrameId {
        FrameId(self.dense[i])
    }

    /// Adds a frame that is not resident.
    #[inline]
    pub(crate) fn insert(&mut self, frame: FrameId) {
        ensure_slot(&mut self.pos, frame, NIL);
        debug_assert_eq!(
            self.pos[frame.index()],
            NIL,
            "frame {} inserted twice",
            frame.0
        );
        self.pos[frame.index()] = self.dense.len() as u32;
        self.dense.push(frame.0);
    }

    /// Removes and returns the resident at position `i`.
    #[inline]
    pub(crate) fn take_at(&mut self, i: usize) -> FrameId {
        let f = self.dense.swap_remove(i);
        if i < self.dense.len() {
            self.pos[self.dense[i] as usize] = i as u32;
        }
        self.pos[f as usize] = NIL;
        FrameId(f)
    }

    /// Removes a resident frame.
    pub(crate) fn remove(&mut self, frame: FrameId) {
        let i = self.pos[frame.index()];
        debug_assert_ne!(i, NIL, "removing frame {} that is not resident", frame.0);
        self.take_at(i as usize);
    }

    /// Draws `samples` residents uniformly with replacement, skipping those `evictable`
    /// refuses, and removes and returns the best one: `better(a, b)` says that `a` should
    /// go before `b`; of equals the first drawn wins. If every draw was refused, the first
    /// evictable frame after a random position is taken (as Random does), so an evictable
    /// frame is found whenever one exists. Uniform draws with replacement are what Redis and
    /// libCacheSim do; the fallback keeps the contract of [`crate::Policy::evict`] when pins
    /// cover most of the cache.
    pub(crate) fn take_best_of_sample<R: Rng>(
        &mut self,
        rng: &mut R,
        samples: usize,
        evictable: &dyn Fn(FrameId) -> bool,
        mut better: impl FnMut(FrameId, FrameId) -> bool,
    ) -> Option<FrameId> {
        let n = self.dense.len();
        if n == 0 {
            return None;
        }
        let mut best: Option<usize> = None;
        for _ in 0..samples {
            let i = rng.gen_range(0..n);
            let f = self.at(i);
            if !evictable(f) {
                continue;
            }
            if best.is_none_or(|b| better(f, self.at(b))) {
                best = Some(i);
            }
        }
        if best.is_none() {
            let start = rng.gen_range(0..n);
            best = (0..n)
                .map(|k| (start + k) % n)
                .find(|&i| evictable(self.at(i)));
        }
        best.map(|i| self.take_at(i))
    }
}
