//! The resident frames as a dense array, for policies that pick victims by position
//! (Random's uniform draw, the sampled policies: Hyperbolic, Redis-style sampled LRU/LFU,
//! LHD): O(1) insert, O(1) removal by swapping the last entry into the hole, O(1) access
//! to the i-th resident, and one sampler ([`ResidentSet::take_best_of_sample`]) that all
//! the sampled policies share.
//!
//! Each resident may carry a payload stored *by position*, beside the frame number: a
//! policy that keeps there what its score reads (Hyperbolic: entry time, count, size)
//! reads one array at the drawn position instead of looking the frame's state up in a
//! second array after the first, which takes a dependent cache miss out of every draw.

use rand::Rng;

use crate::list::NIL;
use crate::{ensure_slot, FrameId};

/// Resident frames in no particular order, each knowing its position, each with a
/// payload `T` kept at the same position (none by default).
#[derive(Clone, Debug)]
pub(crate) struct ResidentSet<T = ()> {
    dense: Vec<u32>,
    /// `payload[i]` belongs to the frame `dense[i]`.
    payload: Vec<T>,
    /// Each frame's index in `dense` (`NIL` when not resident).
    pos: Vec<u32>,
}

impl<T: Copy> ResidentSet<T> {
    /// Room for about `frames` residents.
    pub(crate) fn new(frames: usize) -> Self {
        ResidentSet {
            dense: Vec::with_capacity(frames),
            payload: Vec::with_capacity(frames),
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

    /// Adds a frame that is not resident, with its payload.
    #[inline]
    pub(crate) fn insert_with(&mut self, frame: FrameId, payload: T) {
        ensure_slot(&mut self.pos, frame, NIL);
        debug_assert_eq!(
            self.pos[frame.index()],
            NIL,
            "frame {} inserted twice",
            frame.0
        );
        self.pos[frame.index()] = self.dense.len() as u32;
        self.dense.push(frame.0);
        self.payload.push(payload);
    }

    /// The payload of a resident frame.
    #[inline]
    pub(crate) fn payload_mut(&mut self, frame: FrameId) -> &mut T {
        let i = self.pos[frame.index()];
        debug_assert_ne!(i, NIL, "frame {} is not resident", frame.0);
        &mut self.payload[i as usize]
    }

    /// Removes and returns the resident at position `i`.
    #[inline]
    pub(crate) fn take_at(&mut self, i: usize) -> FrameId {
        let f = self.dense.swap_remove(i);
        self.payload.swap_remove(i);
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
    /// refuses, and removes and returns the best one: `score` rates a frame (given with its
    /// payload) once per draw and `better(a, b)` says that a frame scored `a` should go
    /// before one scored `b`; of equals the first drawn wins. If every draw was refused, the first evictable frame
    /// after a random position is taken (as Random does), so an evictable frame is found
    /// whenever one exists. Uniform draws with replacement are what Redis and libCacheSim
    /// do; the fallback keeps the contract of [`crate::Policy::evict`] when pins cover most
    /// of the cache.
    ///
    /// The hot loop of every sampled policy (64 draws per eviction for Hyperbolic), so it
    /// keeps the best draw's score instead of scoring it again at each comparison, asks
    /// `evictable` (a call through a pointer) only of a draw that would become the best
    /// (the same choice as asking first, since a refused draw never becomes the best), and
    /// takes two draws from each 64-bit output of the generator (see [`positions`]).
    #[inline]
    pub(crate) fn take_best_of_sample<R: Rng + Clone, S>(
        &mut self,
        rng: &mut R,
        samples: usize,
        evictable: &dyn Fn(FrameId) -> bool,
        mut score: impl FnMut(FrameId, &T) -> S,
        better: impl Fn(&S, &S) -> bool,
    ) -> Option<FrameId> {
        let n = self.dense.len();
        if n == 0 {
            return None;
        }
        // The draws run on a local copy of the generator, written back at the end: through
        // the `&mut` the compiler stored its state to memory after every draw.
        let mut local = rng.clone();
        let mut best: Option<(usize, S)> = None;
        let mut consider = |i: usize| {
            let f = self.at(i);
            let s = score(f, &self.payload[i]);
            if best.as_ref().is_none_or(|(_, b)| better(&s, b)) && evictable(f) {
                best = Some((i, s));
            }
        };
        for _ in 0..samples / 2 {
            let (a, b) = positions(local.next_u64(), n);
            consider(a);
            consider(b);
        }
        if samples % 2 == 1 {
            consider(positions(local.next_u64(), n).0);
        }
        *rng = local;
        let best = match best {
            Some((i, _)) => Some(i),
            None => {
                let start = rng.gen_range(0..n);
                (0..n)
                    .map(|k| (start + k) % n)
                    .find(|&i| evictable(self.at(i)))
            }
        };
        best.map(|i| self.take_at(i))
    }
}

impl ResidentSet {
    /// Adds a frame that is not resident.
    #[inline]
    pub(crate) fn insert(&mut self, frame: FrameId) {
        self.insert_with(frame, ());
    }
}

/// Two positions below `n` from one 64-bit random value, one from each half: a 32-bit
/// half times `n`, shifted down by 32 bits (Lemire's multiply-shift, without his rejection
/// step). A position then comes up with probability within `n / 2^32` of `1 / n` (relative
/// error about 10^-6 for 5,000 residents), far below what any sample of a run could show,
/// and the generator runs once per two draws: the draw is most of a sampled policy's
/// eviction. `n` is at most 2^32 (positions are `u32`).
#[inline]
fn positions(r: u64, n: usize) -> (usize, usize) {
    debug_assert!(n as u64 <= 1 << 32);
    let n = n as u64;
    let lo = ((r & 0xffff_ffff) * n) >> 32;
    let hi = ((r >> 32) * n) >> 32;
    (lo as usize, hi as usize)
}

#[cfg(test)]
mod tests {
    use super::positions;

    #[test]
    fn positions_split_a_value_into_two_draws_below_n() {
        // each half scaled to [0, n): 0 is the bottom, 2^32 - 1 the top, 2^31 the middle
        assert_eq!(positions(0, 10), (0, 0));
        assert_eq!(positions(u64::MAX, 10), (9, 9));
        assert_eq!(positions(0xffff_ffff_0000_0000, 10), (0, 9));
        assert_eq!(positions(0x8000_0000, 10), (5, 0));
        assert_eq!(positions(u64::MAX, 1), (0, 0));
        // at the largest n a half is its own position
        assert_eq!(positions(0x0000_0007_0000_0003, 1 << 32), (3, 7));
    }

    #[test]
    fn every_position_comes_up_equally_often_to_within_one_step() {
        // sweep the low half evenly: position j's share is its run of consecutive halves
        let n = 5_000usize;
        let mut counts = vec![0u32; n];
        let step = 1u64 << 10;
        for h in (0..1u64 << 32).step_by(step as usize) {
            counts[positions(h, n).0] += 1;
        }
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        // 2^22 sweep points over 5,000 positions: 838 or 839 each
        assert_eq!((*lo, *hi), (838, 839));
    }
}
