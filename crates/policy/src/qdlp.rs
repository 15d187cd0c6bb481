//! QD-LP: quick demotion and lazy promotion, a probationary FIFO and a ghost in front of a
//! main cache, as libCacheSim ships it (`QDLP.c`, main cache `Clock2`).
//!
//! Yang, Qiu, Zhang, Yue, Rashmi, "FIFO can be Better than LRU: the Power of Lazy
//! Promotion and Quick Demotion", HotOS 2023.
//!
//! # Algorithm
//!
//! A missed object enters a small probationary FIFO S, unless its key is in the ghost
//! FIFO G, in which case it goes straight to the main cache M. A hit only counts (lazy
//! promotion: nothing moves on a hit). To make room, S gives up its oldest object whenever
//! S holds anything (quick demotion: a new object gets one short stay in S to prove
//! itself): if it was hit while in S it moves to M, otherwise it is evicted and its key
//! remembered in G. M is a clock with 2-bit counters (a hit raises the counter to at most
//! 3; the hand decrements a positive counter and moves the object to the head, and evicts
//! an object whose counter is 0); M has a fixed share of the capacity and makes room on
//! its own when an object moves in.
//!
//! The paper's point: most objects are never reused, and demoting them quickly after a
//! short probation, with any reasonable main algorithm behind, beats LRU's slow drift to
//! the tail, while promotion on eviction instead of on every hit costs nothing on hits.
//!
//! It shares its queues with S3-FIFO ([`crate::s3fifo`]); the two differ in when S gives
//! up its tail (S3-FIFO: only when S holds at least its share) and in how M makes room
//! (S3-FIFO: a later eviction comes from M when M is over its share; QD-LP: M evicts as
//! the promoted object joins it).
//!
//! # Parameters
//!
//! * `small` (0.1): S's share of the capacity; M gets the rest (libCacheSim's
//!   `fifo-size-ratio`, truncated to whole units as libCacheSim does).
//! * `ghost` (0.9): G's size as a fraction of the *whole* capacity (libCacheSim's
//!   `ghost-size-ratio`), in the policy's units.
//! * `promote` (1): hits in S that move an object to M when it leaves S (libCacheSim's
//!   `move-to-main-threshold`), 1..=3.
//!
//! # Deviations and choices
//!
//! * libCacheSim's QD-LP runs any of its policies as M; here M is its default, the clock
//!   with 2-bit counters.
//! * When a ghost hit enters M while M is full, libCacheSim's M evicts at once, after the
//!   evictions that made room in the whole cache, leaving the cache one object short of
//!   full; a bufcache driver evicts only while the newcomer does not fit, so here M is left
//!   one object over its share and the next eviction comes from M. In byte mode the same
//!   holds for a promotion that needs more than one eviction from M. Miss counts therefore
//!   differ slightly from libCacheSim's (`crates/sim/tests/golden_libcachesim_more.rs`
//!   bounds the difference and says how large it is).
//! * libCacheSim does not admit an object at least as large as S's share; bufcache's
//!   drivers admit any object that fits in the cache (byte mode only).
//! * Pinned frames: a pinned tail of S that was hit still moves to M (not an eviction); one
//!   that was not stays and the scan goes on towards the head; in M a pinned frame with
//!   counter 0 stays in place. Scans are bounded as in S3-FIFO.
//!
//! # Cost
//!
//! O(1) per hit and insertion (plus a ghost lookup on insertion), amortized O(1) per
//! eviction. Memory per frame as S3-FIFO: 21 bytes, plus the ghost's entries.

use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::s3fifo::{S3FifoVariant, SmallMainGhost};

/// QD-LP with a 2-bit clock as its main cache.
pub type Qdlp = SmallMainGhost<true>;

impl Qdlp {
    /// QD-LP for `capacity` units: S's share `small`, G's size `ghost` (a fraction of the
    /// whole capacity), and `promote` hits in S to move to M.
    pub fn qdlp(capacity: u64, small: f64, ghost: f64, promote: u8) -> Self {
        assert!(promote >= 1, "an object needs at least one hit to be promoted");
        Self::with_variant(capacity, small, ghost, promote - 1, S3FifoVariant::LibCacheSim)
    }
}

impl NamedPolicy for Qdlp {
    const NAME: &'static str = "qdlp";
    const SUMMARY: &'static str =
        "quick demotion + lazy promotion: probation FIFO, ghost, 2-bit clock main (Yang et al., HotOS 2023)";
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "small",
            default: "0.1",
            help: "share of the capacity for the probation FIFO, 0..=1",
        },
        ParamInfo {
            name: "ghost",
            default: "0.9",
            help: "ghost FIFO size as a fraction of the whole capacity, 0..=4",
        },
        ParamInfo {
            name: "promote",
            default: "1",
            help: "hits in the probation FIFO that earn a move to main, 1..=3",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let small = params.fraction("small", 0.0, 1.0)?;
        let ghost = params.fraction("ghost", 0.0, 4.0)?;
        let promote = params.integer("promote", 1, 3)? as u8;
        let mut q = Qdlp::qdlp(ctx.capacity, small, ghost, promote);
        q.set_key_space(ctx.key_space);
        Ok(q)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits};
    use crate::Qdlp;

    #[test]
    fn quick_demotion_then_lazy_promotion() {
        // capacity 10: S's share 1, M 9, G floor(0.9 * 10) = 9 keys.
        // 1..=10 fill S. 1 hit (freq 1). 11: S is not empty, so its tail goes whatever its
        // share: 1 was hit -> moves to M (M has room, nothing evicted), then 2 (never hit)
        // is evicted into G. 12: 3 evicted. 2 (in G) -> M, after evicting 4 from S.
        // 2 and 1 now hit in M (counters 1).
        let trace = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 11, 12, 2, 2, 1];
        let ev = evictions(Qdlp::qdlp(10, 0.1, 0.9, 1), 10, &trace);
        let want: [&[u64]; 16] = [
            &[], &[], &[], &[], &[], &[], &[], &[], &[], &[], &[], &[2], &[3], &[4], &[], &[],
        ];
        assert_eq!(ev, want);
        let mut expected = vec![false; 10];
        expected.extend([true, false, false, false, true, true]);
        assert_eq!(hits(Qdlp::qdlp(10, 0.1, 0.9, 1), 10, &trace), expected);
    }

    #[test]
    fn a_full_main_makes_room_before_the_promoted_object_joins() {
        // capacity 3, small 1/3 -> S's share 1, M 2; no ghost. 1 2 3 fill S; 1 and 2 hit.
        // 4: S's tail 1 (hit) -> M {1}; 2 (hit) -> M {2 1}, now full; 3 evicted. 4 into S.
        // 1 and 2 hit in M (counters 1), 4 hits in S. 5: S's tail 4 was hit, M is full, so
        // M's hand runs first: 1 (counter 1 -> 0, to the head), 2 (the same), 1 (0):
        // evicted; then 4 joins M. Had 4 joined before the hand ran, the hand would have
        // reached 4 (counter 0) first and evicted it.
        let trace = [1, 2, 3, 1, 2, 4, 1, 2, 4, 5];
        let p = || Qdlp::qdlp(3, 1.0 / 3.0, 0.0, 1);
        let ev = evictions(p(), 3, &trace);
        let want: [&[u64]; 10] = [&[], &[], &[], &[], &[], &[3], &[], &[], &[], &[1]];
        assert_eq!(ev, want);
        let h = hits(p(), 3, &trace);
        assert_eq!(h, [false, false, false, true, true, false, true, true, true, false]);
    }
}
