//! LFU-DA, LFU with Dynamic Aging: evict the object with the least `L + frequency`,
//! where `L` is the key of the last object evicted.
//!
//! Arlitt, Cherkasova, Dilley, Friedrich, Jin, "Evaluating content management techniques
//! for Web proxy caches", ACM SIGMETRICS Performance Evaluation Review 27(4), 2000.
//!
//! # Algorithm
//!
//! Plain LFU keeps whatever was popular once: an object with a thousand old hits outlives
//! every newcomer. LFU-DA gives each resident object the key `K = L + F` (its frequency
//! `F` since it entered, plus the cache's age `L` at its last request) and evicts the least
//! key, setting `L` to it. A newcomer therefore starts level with what the cache currently
//! evicts, and old hits count for less and less as `L` climbs. Sizes are ignored (the
//! paper's LFU-DA aims at the byte hit ratio; [`crate::Gdsf`] divides by size for the
//! object hit ratio). Ties go to the object whose key was set longest ago.
//!
//! It is GDSF's rule without the size term, so the two share one implementation,
//! [`crate::gdsf::GreedyDual`]; see `gdsf.rs` for the data structure, the handling of
//! protected frames and the cost (O(log n) per operation, 36 bytes per frame).
//!
//! # Parameters
//!
//! None.
//!
//! # Deviations
//!
//! libCacheSim's `LFUDA` (0.3.5, commit aa0fc409) adds `L` to the key on every hit
//! (`K += L`) instead of recomputing `K = L + F`, so an object hit often in a late phase
//! gains much more than one hit's worth; that is not the paper's rule, and its miss counts
//! differ from ours. libCacheSim's `GDSF` in unit mode (`--ignore-obj-size`) *is* the
//! paper's LFU-DA (`K = L + F * 1e6`), and our miss counts equal it digit for digit
//! (`crates/sim/tests/golden_libcachesim.rs`).

use crate::gdsf::GreedyDual;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};

/// LFU with dynamic aging: GDSF's engine with sizes ignored.
pub type Lfuda = GreedyDual<false>;

impl NamedPolicy for Lfuda {
    const NAME: &'static str = "lfuda";
    const SUMMARY: &'static str =
        "LFU with dynamic aging: least L + freq, L = last evicted (Arlitt et al. 2000)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(GreedyDual::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Lfu, Lfuda};

    #[test]
    fn hand_worked_sequence() {
        // capacity 2: 1 1 2 3 2 3 4
        // 1 miss: K1 = 0 + 1. 1 hit: F 2, K1 = 2. 2 miss: K2 = 1.
        // 3 miss: evict the least, 2 (K 1); L = 1; K3 = 1 + 1 = 2.
        // 2 miss: 1 and 3 both have K 2: evict 1, whose key was set first; L = 2; K2 = 3.
        //   (plain LFU would evict 3: 1 has two requests, 3 one.)
        // 3 hit: F 2, K3 = 2 + 2 = 4.  4 miss: evict 2 (K 3); L = 3; K4 = 4.
        let trace = [1, 1, 2, 3, 2, 3, 4];
        assert_eq!(
            hits(Lfuda::new(2), 2, &trace),
            [false, true, false, false, false, true, false]
        );
        let ev = evictions(Lfuda::new(2), 2, &trace);
        let expected: [&[u64]; 7] = [&[], &[], &[], &[2], &[1], &[], &[2]];
        assert_eq!(ev, expected);
        assert_eq!(evictions(Lfu::new(2), 2, &trace)[4], [3]);
        // 3 and 4 both have K 4; 3's was set first
        assert_eq!(resident_after(Lfuda::new(2), 2, &trace), [3, 4]);
    }

    #[test]
    fn aging_lets_a_new_phase_in() {
        // Phase one: 1 and 2 requested 50 times each (K 50, L 0). Phase two loops over
        // 3 4 5 (request j = 0..300 of the phase is key 3 + j % 3) with a cache of 3. LFU
        // never evicts 1 or 2 (counts 50) and misses on every request of the loop.
        // LFU-DA: j = 0 fills the cache (K 1); each later miss evicts the previous
        // newcomer, so L = j and the newcomer's K = j + 1, until j = 50, where 1 (K 50,
        // set before 2's) is the least; at j = 51, 2 is. The cache then holds the keys of
        // j = 49, 50, 51 (4 5 3): the whole loop, so j = 52..300 all hit: 248 hits.
        let mut trace: Vec<u64> = (0..100).map(|i| 1 + i % 2).collect();
        trace.extend((0..300).map(|i| 3 + i % 3));
        let tail_hits = |h: Vec<bool>| h[100..].iter().filter(|&&x| x).count();
        assert_eq!(tail_hits(hits(Lfu::new(3), 3, &trace)), 0);
        assert_eq!(tail_hits(hits(Lfuda::new(3), 3, &trace)), 248);
    }
}
