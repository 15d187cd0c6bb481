//! LRFU: Least Recently/Frequently Used, one weighted score spanning LRU and LFU.
//!
//! Lee, Choi, Kim, Noh, Min, Cho & Kim, "LRFU: A Spectrum of Policies that Subsumes the
//! Least Recently Used and Least Frequently Used Policies", IEEE Transactions on
//! Computers 50(12), 2001.
//!
//! # Algorithm
//!
//! Every past reference of a block counts, less the older it is: at time `t` a block
//! referenced at times `t1 .. tk` has the *combined recency and frequency*
//! `CRF = F(t - t1) + ... + F(t - tk)` with `F(x) = (1/2)^(lambda x)`. The block of least
//! CRF is evicted. `lambda = 0` weighs every reference alike (LFU); `lambda = 1` makes the
//! most recent reference outweigh all older ones together (`1 > 1/2 + 1/4 + ...`), which is
//! LRU; values in between trade recency for frequency.
//!
//! Because `F(a + b) = F(a) F(b)`, a block's CRF needs only its value `C` at its last
//! reference `tb`: a new reference at `t` sets `C = 1 + F(t - tb) C`, and
//! `CRF(t) = F(t - tb) C`. Between two references the ratio of two blocks' CRFs does not
//! change (both decay by the same factor), so the paper keeps the blocks in a heap that
//! only needs repairing where a block is referenced. Here the heap key makes that
//! explicit: `log2 CRF(t) = log2 C + lambda tb - lambda t`, and the last term is common
//! to all blocks, so each block is keyed by `log2 C + lambda tb`, fixed between its
//! references. Time counts requests.
//!
//! # Parameters
//!
//! * `lambda` (0.001): in `[0, 1]`, the paper's range for `F(x) = (1/2)^(lambda x)`.
//!   The paper's measurements favour small values (LFU-like with slow aging) on its
//!   traces; 0.001 halves a reference's weight every 1,000 requests.
//!
//! # Deviations and choices
//!
//! * Ties (equal CRF, as between blocks with equal counts at `lambda = 0`) go to the
//!   block referenced least recently.
//! * Pinned blocks keep their place; eviction takes the least CRF among evictable blocks.
//! * The paper's "correlated references" window is not part of the basic policy and is
//!   not here. Sizes do not enter the score.
//!
//! # Cost
//!
//! O(log n) per hit, insertion and eviction (indexed heap), plus one `exp2` per hit.
//! `victims` walks the heap. Memory per frame: 16 (heap entry: key bits and time) + 4
//! (heap position) + 8 (`C`) + 8 (`tb`) = 36 bytes.

use crate::heap::IndexedHeap;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Heap key: the bits of `log2 C + lambda tb` (never negative, so the bits order as the
/// value), then `tb` (older first among equals).
type Key = (u64, u64);

/// LRFU.
#[derive(Clone, Debug)]
pub struct Lrfu {
    heap: IndexedHeap<Key>,
    /// `C`: the CRF at the block's last reference.
    crf: Vec<f64>,
    /// `tb`: the time of the block's last reference.
    last: Vec<u64>,
    lambda: f64,
    /// Requests seen.
    now: u64,
    scratch: std::collections::BinaryHeap<std::cmp::Reverse<(Key, u32)>>,
}

impl Lrfu {
    /// LRFU expecting about `frames` residents, with `lambda` in `[0, 1]`.
    pub fn new(frames: usize, lambda: f64) -> Self {
        assert!((0.0..=1.0).contains(&lambda), "lambda is in [0, 1]");
        Lrfu {
            heap: IndexedHeap::with_capacity(frames),
            crf: vec![0.0; frames],
            last: vec![0; frames],
            lambda,
            now: 0,
            scratch: Default::default(),
        }
    }

    /// A resident block's CRF now (for tests).
    pub fn crf_now(&self, frame: FrameId) -> f64 {
        let i = frame.index();
        self.crf[i] * self.decay(self.now - self.last[i])
    }

    /// `F(x) = (1/2)^(lambda x)`.
    #[inline]
    fn decay(&self, x: u64) -> f64 {
        (-self.lambda * x as f64).exp2()
    }

    #[inline]
    fn key(&self, frame: FrameId) -> Key {
        let i = frame.index();
        let score = self.crf[i].log2() + self.lambda * self.last[i] as f64;
        (score.to_bits(), self.last[i])
    }
}

impl Policy for Lrfu {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let i = frame.index();
        self.crf[i] = 1.0 + self.decay(self.now - self.last[i]) * self.crf[i];
        self.last[i] = self.now;
        self.heap.update(frame, self.key(frame));
        self.now += 1;
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        ensure_slot(&mut self.crf, frame, 0.0);
        ensure_slot(&mut self.last, frame, 0);
        self.crf[frame.index()] = 1.0;
        self.last[frame.index()] = self.now;
        self.heap.push(frame, self.key(frame));
        self.now += 1;
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self.heap.least_where(evictable, &mut self.scratch)?;
        self.heap.remove(victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.heap.remove(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // Exact: an eviction changes no other block's key.
        self.heap.first_n_where(n, evictable, out);
    }
}

impl NamedPolicy for Lrfu {
    const NAME: &'static str = "lrfu";
    const SUMMARY: &'static str =
        "least CRF = sum of (1/2)^(lambda * age) over past references: LFU at 0, LRU at 1 (Lee et al. 2001)";
    const PARAMS: &'static [ParamInfo] = &[ParamInfo {
        name: "lambda",
        default: "0.001",
        help: "decay of a reference's weight per request, 0..=1 (0 is LFU, 1 is LRU)",
    }];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let lambda = params.fraction("lambda", 0.0, 1.0)?;
        Ok(Lrfu::new(crate::prealloc_frames(ctx.capacity), lambda))
    }
}

#[cfg(test)]
mod tests {
    use super::Lrfu;
    use crate::testkit::{evictions, hits};
    use crate::{Access, Cache, FrameId, Lfu, Lru};

    #[test]
    fn hand_worked_sequence() {
        // c = 2, lambda = 0.5, times 0.. . 1 1 2: C1 = 1 + 2^-0.5 = 1.707 at t 1; C2 = 1
        // at t 2. 3 (t 3): CRF1 = 1.707 * 2^-1 = 0.854, CRF2 = 2^-0.5 = 0.707: evict 2.
        // 2 (t 4): CRF1 = 1.707 * 2^-1.5 = 0.604, CRF3 = 2^-0.5 = 0.707: evict 1.
        // LRU would evict 1 at t 3; LFU would evict 3 at t 4.
        let trace = [1, 1, 2, 3, 2];
        let expected: [&[u64]; 5] = [&[], &[], &[], &[2], &[1]];
        assert_eq!(evictions(Lrfu::new(2, 0.5), 2, &trace), expected);
        assert_eq!(evictions(Lru::new(2), 2, &trace)[3], [1]);
        assert_eq!(evictions(Lfu::new(2), 2, &trace)[4], [3]);
        let mut cache = Cache::new(Lrfu::new(2, 0.5), 2);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        // after 5 requests (now = 5): 3 referenced at t 3, 2 at t 4
        let crf = |f| cache.policy().crf_now(FrameId(f));
        let mut values = [crf(0), crf(1)];
        values.sort_by(f64::total_cmp);
        assert!((values[0] - 0.5).abs() < 1e-12, "{values:?}");
        assert!((values[1] - 2f64.powf(-0.5)).abs() < 1e-12, "{values:?}");
    }

    #[test]
    fn the_ends_of_the_spectrum_are_lfu_and_lru() {
        let trace: Vec<u64> = (0..4000u64).map(|i| (i * 7 + i / 11) % 37).collect();
        assert_eq!(
            hits(Lrfu::new(9, 1.0), 9, &trace),
            hits(Lru::new(9), 9, &trace)
        );
        // LFU here breaks ties by recency, as LRFU at lambda 0 does
        assert_eq!(
            hits(Lrfu::new(9, 0.0), 9, &trace),
            hits(Lfu::new(9), 9, &trace)
        );
    }
}
