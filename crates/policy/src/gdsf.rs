//! GDSF, Greedy-Dual-Size with Frequency: evict the object whose frequency per unit of
//! size, inflated by an aging term, is lowest. Also the engine of [`crate::Lfuda`], which
//! is the same rule with sizes ignored.
//!
//! Cherkasova, "Improving WWW proxies performance with Greedy-Dual-Size-Frequency caching
//! policy", HP Labs HPL-98-69R1, 1998; Arlitt, Cherkasova, Dilley, Friedrich, Jin,
//! "Evaluating content management techniques for Web proxy caches", ACM SIGMETRICS
//! Performance Evaluation Review 27(4), 2000 (GDSF and LFU-DA side by side).
//!
//! # Algorithm
//!
//! Every resident object `i` has a frequency `F(i)` (requests since it entered, 1 on
//! entry) and a key `K(i) = L + F(i) * C / S(i)`, where `S(i)` is its size, `C` its cost
//! (1 here: the aim is the hit ratio) and `L` the cache's *inflation*: the key of the
//! last object evicted. The key is recomputed on every hit with the current `L`; eviction
//! takes the object with the least key and sets `L` to that key. Without `L` this would be
//! LFU per byte, which keeps objects that were popular long ago forever; with it, a newcomer
//! starts at the level where the cache currently evicts, so every resident object's
//! advantage from old hits shrinks as `L` rises ("dynamic aging"). Dividing by size favours
//! small objects, which maximises the object hit ratio in byte-sized caches.
//!
//! Ties between equal keys go to the object whose key was set longest ago (its last
//! request is oldest), as in libCacheSim.
//!
//! # Parameters
//!
//! None. The cost is 1 for every object (Cherkasova's GDSF(1), the variant that aims at
//! the hit ratio); in unit mode (every size 1) GDSF and LFU-DA make the same choices.
//!
//! # Deviations and choices
//!
//! * Keys are computed exactly as libCacheSim's `GDSF` computes them, in `f64`:
//!   `L + F * 1e6 / S` (the 1e6 keeps small ratios away from `L`'s rounding), so that miss
//!   counts agree with it digit for digit, in unit and in byte mode
//!   (`crates/sim/tests/golden_libcachesim.rs`). LFU-DA's keys are `L + F`, whole numbers
//!   held exactly in an `f64` up to 2^53.
//! * Frames the caller may not evict are passed over in key order; `L` becomes the key of
//!   the frame actually evicted and never decreases (when a passed-over frame with a lower
//!   key is evicted later, `L` stays).
//! * A size of 0 counts as 1.
//!
//! # Cost
//!
//! O(log n) per hit, insertion and eviction (an indexed binary heap, [`crate::heap`]);
//! a protected heap root costs a best-first walk past it. Memory per frame: a 24-byte heap
//! entry (key bits, tie-break sequence, frame), 4 bytes of heap position, 4 of frequency
//! and 4 of size = 36 bytes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::heap::IndexedHeap;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Heap key: the priority's bits (priorities are never negative, so their IEEE bits order
/// as the numbers do) and the sequence number of the request that set it.
type Key = (u64, u64);

/// Greedy-Dual with frequency and aging. `SIZE_AWARE`: divide by the object's size (GDSF)
/// or not (LFU-DA).
#[derive(Clone, Debug)]
pub struct GreedyDual<const SIZE_AWARE: bool> {
    heap: IndexedHeap<Key>,
    freq: Vec<u32>,
    sizes: Vec<u32>,
    /// `L`: the key of the last evicted object.
    inflation: f64,
    /// Counts hits and insertions: the tie-break among equal priorities.
    seq: u64,
    scratch: BinaryHeap<Reverse<(Key, u32)>>,
}

/// GDSF: frequency per unit of size, with dynamic aging.
pub type Gdsf = GreedyDual<true>;

impl<const SIZE_AWARE: bool> GreedyDual<SIZE_AWARE> {
    /// A policy expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        GreedyDual {
            heap: IndexedHeap::with_capacity(frames),
            freq: vec![0; frames],
            sizes: vec![1; frames],
            inflation: 0.0,
            seq: 0,
            scratch: BinaryHeap::new(),
        }
    }

    /// The priority `K` of a resident frame (for tests and Dust).
    pub fn priority(&self, frame: FrameId) -> f64 {
        f64::from_bits(self.heap.key(frame).0)
    }

    /// The inflation `L`.
    pub fn inflation(&self) -> f64 {
        self.inflation
    }

    /// `K = L + F` or `L + F * 1e6 / S`, in libCacheSim's order of operations.
    #[inline]
    fn key(&mut self, frame: FrameId) -> Key {
        let i = frame.index();
        let freq = f64::from(self.freq[i]);
        let worth = if SIZE_AWARE {
            freq * 1.0e6 / f64::from(self.sizes[i])
        } else {
            freq
        };
        self.seq += 1;
        ((self.inflation + worth).to_bits(), self.seq)
    }
}

impl<const SIZE_AWARE: bool> Policy for GreedyDual<SIZE_AWARE> {
    fn name(&self) -> &'static str {
        if SIZE_AWARE {
            "gdsf"
        } else {
            "lfuda"
        }
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let f = &mut self.freq[frame.index()];
        *f = f.saturating_add(1);
        let key = self.key(frame);
        self.heap.update(frame, key);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.freq, frame, 0);
        ensure_slot(&mut self.sizes, frame, 1);
        self.freq[frame.index()] = 1;
        self.sizes[frame.index()] = access.size.max(1);
        let key = self.key(frame);
        self.heap.push(frame, key);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let root = self.heap.peek()?;
        let victim = if evictable(root) {
            root
        } else {
            self.heap.least_where(evictable, &mut self.scratch)?
        };
        self.inflation = self.inflation.max(self.priority(victim));
        self.heap.remove(victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.heap.remove(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // Exact: evicting changes `L`, which only enters keys set later.
        self.heap.first_n_where(n, evictable, out);
    }
}

impl NamedPolicy for Gdsf {
    const NAME: &'static str = "gdsf";
    const SUMMARY: &'static str =
        "greedy-dual-size-frequency: least L + freq/size, L = last evicted (Cherkasova 1998)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(GreedyDual::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Access, Cache, Gdsf, Lfuda};

    /// Keys evicted by each `(key, size)` request.
    fn sized_evictions<P: crate::Policy>(policy: P, capacity: u64, trace: &[(u64, u32)]) -> Vec<Vec<u64>> {
        let mut cache = Cache::new(policy, capacity);
        let mut out = Vec::new();
        for (t, &(key, size)) in trace.iter().enumerate() {
            let mut a = Access::unit(key, t as u64);
            a.size = size;
            cache.access(&a);
            out.push(cache.evicted().to_vec());
        }
        out
    }

    #[test]
    fn size_aware_keys() {
        // capacity 10 bytes; (key, size): (1,5) (2,2) (3,4) (1,5) (2,2) (4,3) (5,1).
        // 1: K = 0 + 1e6/5 = 200,000. 2: K = 500,000 (7 bytes used).
        // 3 needs 11 > 10: evict the least, 1; L = 200,000; K3 = L + 250,000 = 450,000.
        // 1 again (11 bytes): evict 3 (450,000 < 500,000); L = 450,000; K1 = 650,000.
        // 2 hits: F = 2, K2 = L + 2e6/2 = 1,450,000.
        // 4 fits (10 bytes): K4 = 450,000 + 333,333.3 = 783,333.3.
        // 5 (11 bytes): evict the least, 1 (650,000); L = 650,000; K5 = 1,650,000.
        let trace = [(1, 5), (2, 2), (3, 4), (1, 5), (2, 2), (4, 3), (5, 1)];
        let ev = sized_evictions(Gdsf::new(4), 10, &trace);
        let expected: [&[u64]; 7] = [&[], &[], &[1], &[3], &[], &[], &[1]];
        assert_eq!(ev, expected);
        let mut cache = Cache::new(Gdsf::new(4), 10);
        for (t, &(key, size)) in trace.iter().enumerate() {
            let mut a = Access::unit(key, t as u64);
            a.size = size;
            cache.access(&a);
        }
        assert_eq!(cache.policy().inflation(), 650_000.0);
        assert_eq!(cache.policy().priority(cache.frame_of(2).unwrap()), 1_450_000.0);
        assert_eq!(cache.victims(3), [4, 2, 5]);
    }

    #[test]
    fn lfuda_ignores_sizes() {
        // The same requests under LFU-DA (K = L + F):
        // 1: K 1 (seq 1), 2: K 1 (seq 2). 3: evict 1 (tie, older); L = 1; K3 = 2.
        // 1: evict 2 (K 1); K1 = 2; 9 bytes used. 2 (11 bytes): evict 3 (K 2, older than
        // 1's); L = 2; K2 = 3. 4 fits (10 bytes), K4 = 3. 5: evict 1 (K 2).
        let trace = [(1, 5), (2, 2), (3, 4), (1, 5), (2, 2), (4, 3), (5, 1)];
        let ev = sized_evictions(Lfuda::new(4), 10, &trace);
        let expected: [&[u64]; 7] = [&[], &[], &[1], &[2], &[3], &[], &[1]];
        assert_eq!(ev, expected);
    }

    #[test]
    fn unit_sizes_make_gdsf_lfuda() {
        let trace: Vec<u64> = (0..400u64).map(|i| (i * 7 + i / 13) % 23).collect();
        assert_eq!(
            crate::testkit::evictions(Gdsf::new(5), 5, &trace),
            crate::testkit::evictions(Lfuda::new(5), 5, &trace)
        );
    }
}
