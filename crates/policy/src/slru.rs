//! Segmented LRU (SLRU): LRU lists stacked by how often an object proved itself; a hit
//! lifts an object one segment up, and each full segment pushes its least recent object
//! one segment down.
//!
//! Karedla, Love, Wherry, "Caching strategies to improve disk system performance", IEEE
//! Computer 27(3), 1994 (two segments: probationary and protected). Huang, Wang, Xu,
//! Jenkins, Abdolrahim, Li, Kumar, "An analysis of Facebook photo caching", SOSP 2013
//! (four segments, S4LRU, registered as [`crate::S4Lru`]).
//!
//! # Algorithm
//!
//! The cache is split into `segments` LRU lists, numbered from 0 (probation) up to
//! `segments - 1` (the most protected). A missed object enters the head of segment 0. A
//! hit on an object in segment `k < segments - 1` moves it to the head of segment `k + 1`;
//! a hit in the top segment moves it to that segment's head (plain LRU there). When a
//! segment above 0 holds more than its share, its tail object is demoted to the head of
//! the segment below, which may in turn overflow and demote, down to segment 0. Eviction
//! takes the tail of the lowest non-empty segment. One-hit wonders therefore never leave
//! probation, while an object must fall through every segment above before it can go.
//!
//! # Parameters
//!
//! * `segments` (2 for `slru`, as Karedla et al.; 4 for `s4lru`, as Huang et al.): how many
//!   lists, 1..=16. One segment is plain LRU.
//! * `variant` (`paper`): `libcachesim` places a newcomer in the *lowest segment with room*
//!   instead of always in segment 0, as libCacheSim's `SLRU` does, so that the cache fills
//!   bottom-up while it warms; the two agree once the cache is full and nothing is removed.
//!   With it, unit-size miss counts equal libCacheSim's digit for digit (see
//!   `crates/sim/tests/golden_libcachesim.rs`), when the capacity is a multiple of
//!   `segments`.
//!
//! Every segment's share is `capacity / segments` units, truncated as libCacheSim does;
//! the truncated remainder goes to segment 0, which is never full in the sense that
//! matters: demotions into it and insertions never cascade, the driver evicts instead.
//!
//! # Deviations and choices
//!
//! * When the capacity is not a multiple of `segments`, libCacheSim lets segment 0 absorb
//!   the remainder but then, when a demotion cascade reaches an over-full segment 0,
//!   *evicts* during a hit until segment 0 is back under its share. A policy here cannot
//!   evict on a hit (the driver owns the key map and evicts only for a newcomer), so
//!   segment 0 simply stays larger and the next miss evicts from it; miss counts can then
//!   differ slightly from libCacheSim's.
//! * libCacheSim refuses to cache an object larger than one segment's share; here the
//!   driver admits anything that fits the whole cache, and an object larger than the
//!   segment it is promoted to is demoted again at once (the cascade stops at segment 0).
//!   So in byte mode the two differ by design.
//! * Frames the caller may not evict are skipped in place: eviction walks segment 0 from
//!   its tail, then segment 1, and so on; skipping never reorders, so the victim list is
//!   the same walk.
//!
//! # Cost
//!
//! O(1) per miss; O(`segments`) per hit at worst (a cascade moves one object per level in
//! unit mode); eviction O(1) plus skipped protected frames. Memory per frame: 8 bytes of
//! links, 1 byte of segment number, 4 bytes of size = 13 bytes.

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// The most segments a segmented LRU may have (libCacheSim's bound too).
pub const SEGMENTS_MAX: usize = 16;

/// Segmented LRU. `DEFAULT_SEGMENTS` only chooses the default of the `segments` parameter
/// and the registered name (2: `slru`, 4: `s4lru`); the code is the same.
#[derive(Clone, Debug)]
pub struct Slru<const DEFAULT_SEGMENTS: usize = 2> {
    links: Links,
    /// Segment 0 is probation, the last one the most protected. Heads are the newest.
    lists: Vec<List>,
    /// Units held by each segment.
    used: Vec<u64>,
    /// Each segment's share in units (`capacity / segments`).
    share: u64,
    segment_of: Vec<u8>,
    sizes: Vec<u32>,
    /// libCacheSim's placement: a newcomer goes to the lowest segment with room.
    fill_lowest: bool,
}

impl<const DEFAULT_SEGMENTS: usize> Slru<DEFAULT_SEGMENTS> {
    /// A segmented LRU for `capacity` units in `segments` lists (1..=[`SEGMENTS_MAX`]), with
    /// the paper's placement (every newcomer into segment 0).
    pub fn new(capacity: u64, segments: usize) -> Self {
        assert!(
            (1..=SEGMENTS_MAX).contains(&segments),
            "a segmented LRU has 1..={SEGMENTS_MAX} segments"
        );
        let frames = crate::prealloc_frames(capacity);
        Slru {
            links: Links::with_capacity(frames),
            lists: vec![List::new(); segments],
            used: vec![0; segments],
            share: capacity / segments as u64,
            segment_of: vec![0; frames],
            sizes: vec![0; frames],
            fill_lowest: false,
        }
    }

    /// Place newcomers in the lowest segment with room, as libCacheSim does.
    pub fn with_libcachesim_placement(mut self, on: bool) -> Self {
        self.fill_lowest = on;
        self
    }

    /// Each segment from 0 (probation) up, its frames from head (newest) to tail.
    pub fn segments(&self) -> Vec<Vec<FrameId>> {
        self.lists
            .iter()
            .map(|l| self.links.iter_from_head(l).collect())
            .collect()
    }

    fn top(&self) -> usize {
        self.lists.len() - 1
    }

    /// Put the non-resident-on-any-list `frame` at the head of segment `k`.
    #[inline]
    fn enter(&mut self, frame: FrameId, k: usize) {
        self.links.push_front(&mut self.lists[k], frame);
        self.segment_of[frame.index()] = k as u8;
        self.used[k] += u64::from(self.sizes[frame.index()]);
    }

    /// Take `frame` off its segment.
    #[inline]
    fn leave(&mut self, frame: FrameId) -> usize {
        let k = usize::from(self.segment_of[frame.index()]);
        self.links.unlink(&mut self.lists[k], frame);
        self.used[k] -= u64::from(self.sizes[frame.index()]);
        k
    }

    /// Demote segment `k`'s tail to the head of segment `k - 1`, and let `k - 1` demote in
    /// turn while it is over its share. Recursion depth is at most `segments`. The order
    /// (one move, then drain the segment below, then the next move) is libCacheSim's.
    fn cool(&mut self, k: usize) {
        debug_assert!(k > 0);
        let Some(tail) = self.lists[k].tail() else {
            return;
        };
        self.leave(tail);
        self.enter(tail, k - 1);
        while k - 1 > 0 && self.used[k - 1] > self.share {
            self.cool(k - 1);
        }
    }
}

impl<const DEFAULT_SEGMENTS: usize> Policy for Slru<DEFAULT_SEGMENTS> {
    fn name(&self) -> &'static str {
        // the registered names (`NamedPolicy` exists only for 2 and 4)
        if DEFAULT_SEGMENTS == 4 {
            "s4lru"
        } else {
            "slru"
        }
    }

    fn len(&self) -> usize {
        self.lists.iter().map(List::len).sum()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let k = usize::from(self.segment_of[frame.index()]);
        if k == self.top() {
            self.links.move_to_front(&mut self.lists[k], frame);
            return;
        }
        self.leave(frame);
        self.enter(frame, k + 1);
        while self.used[k + 1] > self.share {
            self.cool(k + 1);
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.segment_of, frame, 0);
        ensure_slot(&mut self.sizes, frame, 0);
        self.sizes[frame.index()] = access.size;
        let size = u64::from(access.size);
        let k = if self.fill_lowest {
            (0..self.lists.len())
                .find(|&k| self.used[k] + size <= self.share)
                .unwrap_or(0)
        } else {
            0
        };
        self.enter(frame, k);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self
            .lists
            .iter()
            .flat_map(|l| self.links.iter_from_tail(l))
            .find(|&f| evictable(f))?;
        self.leave(victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.leave(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // Exact: evicting never reorders the frames left behind.
        let order = self.lists.iter().flat_map(|l| self.links.iter_from_tail(l));
        out.extend(order.filter(|&f| evictable(f)).take(n));
    }

    /// Exact: the only capacity-sized state is the share, `capacity / segments` as at
    /// construction. After a shrink, segments over the new share demote from the top
    /// down (each cascade as a hit's would), so every segment above probation is within
    /// its share again; a growth leaves room that hits fill.
    fn set_capacity(&mut self, capacity: u64) {
        self.share = capacity / self.lists.len() as u64;
        for k in (1..self.lists.len()).rev() {
            while self.used[k] > self.share {
                self.cool(k);
            }
        }
    }
}

/// The parameters both registered segmented LRUs take; only `segments`' default differs.
const fn params(default_segments: &'static str) -> [ParamInfo; 2] {
    [
        ParamInfo {
            name: "segments",
            default: default_segments,
            help: "number of LRU segments, 1..=16 (1 is plain LRU)",
        },
        ParamInfo {
            name: "variant",
            default: "paper",
            help: "paper: newcomers enter segment 0; libcachesim: the lowest segment with room",
        },
    ]
}

/// Builds either registered form from its validated parameters.
pub(crate) fn build_segmented<const D: usize>(
    ctx: &BuildContext,
    params: &Params,
) -> Result<Slru<D>, ConfigError> {
    let segments = params.integer("segments", 1, SEGMENTS_MAX as u64)? as usize;
    let fill_lowest = params.choice("variant", &["paper", "libcachesim"], "paper or libcachesim")?
        == "libcachesim";
    Ok(Slru::new(ctx.capacity, segments).with_libcachesim_placement(fill_lowest))
}

impl NamedPolicy for Slru<2> {
    const NAME: &'static str = "slru";
    const SUMMARY: &'static str =
        "segmented LRU: probation + protected LRU lists (Karedla, Love, Wherry 1994)";
    const PARAMS: &'static [ParamInfo] = &params("2");

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        build_segmented(ctx, params)
    }
}

impl NamedPolicy for Slru<4> {
    const NAME: &'static str = "s4lru";
    const SUMMARY: &'static str =
        "segmented LRU with four segments (Huang et al., Facebook photo caching, SOSP 2013)";
    const PARAMS: &'static [ParamInfo] = &params("4");

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        build_segmented(ctx, params)
    }
}

#[cfg(test)]
mod tests {
    use super::Slru;
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Cache};

    fn slru(capacity: u64, segments: usize) -> Slru<2> {
        Slru::new(capacity, segments)
    }

    /// A shrink mid-run: capacity 8, share 4. 1..=8 fill probation; hits on 1, 2, 3, 4
    /// lift them to protected (head..tail 4 3 2 1). Told 4 (share 2), protected demotes
    /// its tail twice, 1 then 2, each to probation's head.
    #[test]
    fn a_shrink_demotes_protected_tails_to_the_new_share() {
        use crate::{FrameId, Policy};
        let mut p = slru(8, 2);
        for k in 1..=8u32 {
            p.on_insert(FrameId(k), &Access::unit(u64::from(k), u64::from(k)));
        }
        for k in 1..=4u32 {
            p.on_hit(FrameId(k), &Access::unit(u64::from(k), 10 + u64::from(k)));
        }
        p.set_capacity(4);
        let ids = |seg: &Vec<crate::FrameId>| seg.iter().map(|f| f.0).collect::<Vec<_>>();
        let segs = p.segments();
        assert_eq!(ids(&segs[1]), [4, 3]);
        assert_eq!(ids(&segs[0]), [2, 1, 8, 7, 6, 5]);
    }

    #[test]
    fn hand_worked_two_segments() {
        // capacity 4, two segments, protected share 2.
        // 1 2 3 4 miss -> seg0 (head..tail) 4 3 2 1.
        // 1 hit -> seg1: 1.  2 hit -> seg1: 2 1.  3 hit -> seg1: 3 2 1, over its share:
        // its tail 1 is demoted -> seg0: 1 4, seg1: 3 2.
        // 5 misses: evicts seg0's tail 4 -> seg0: 5 1.  4 misses: evicts 1 -> seg0: 4 5.
        // 2 hits in the top segment: seg1 2 3.
        let trace = [1, 2, 3, 4, 1, 2, 3, 5, 4, 2];
        let mut expected = [false; 10];
        for i in [4, 5, 6, 9] {
            expected[i] = true;
        }
        assert_eq!(hits(slru(4, 2), 4, &trace), expected);
        let ev = evictions(slru(4, 2), 4, &trace);
        assert_eq!(ev[7], [4]);
        assert_eq!(ev[8], [1]);
        // victims: seg0 from its tail (5 4), then seg1 from its tail (3 2)
        assert_eq!(resident_after(slru(4, 2), 4, &trace), [5, 4, 3, 2]);
    }

    #[test]
    fn cascades_demote_one_level_at_a_time() {
        // capacity 3, three segments of 1 each. 1 2 3 -> seg0: 3 2 1.
        // 1 hit -> seg1: 1; 1 hit -> seg2: 1. 2 hit -> seg1: 2; 2 hit -> seg2: 2 1, over:
        // 1 demoted to seg1 (now 1, at its share). 3 hit -> seg1: 3 1, over: 1 demoted to
        // seg0. Final: seg0 [1], seg1 [3], seg2 [2].
        let trace = [1, 2, 3, 1, 1, 2, 2, 3];
        let mut cache = Cache::new(slru(3, 3), 3);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        let frame = |k| cache.frame_of(k).unwrap();
        assert_eq!(
            cache.policy().segments(),
            [vec![frame(1)], vec![frame(3)], vec![frame(2)]]
        );
        assert_eq!(cache.victims(3), [1, 3, 2]);
    }

    #[test]
    fn four_segments() {
        // capacity 4, four segments of 1. 1 2 3 4 -> seg0: 4 3 2 1. 1 1 1 lifts 1 to the
        // top. 2 -> seg1. 5 misses: seg0 (4 3) loses its tail 3 -> seg0: 5 4.
        // 2 2 lifts 2 to the top, over: 1 demoted to seg2.
        let trace = [1, 2, 3, 4, 1, 1, 1, 2, 5, 2, 2];
        let p = Slru::<4>::new(4, 4);
        assert_eq!(
            hits(p.clone(), 4, &trace),
            [false, false, false, false, true, true, true, true, false, true, true]
        );
        assert_eq!(evictions(p.clone(), 4, &trace)[8], [3]);
        assert_eq!(resident_after(p, 4, &trace), [4, 5, 1, 2]);
    }

    #[test]
    fn libcachesim_placement_fills_bottom_up() {
        // capacity 4, two segments of 2. paper: 1 2 3 4 all in seg0, so 5 6 7 evict 1 2 3.
        // libcachesim: 1 2 fill seg0 (2 1), 3 4 go to seg1 (4 3). 5 evicts seg0's tail 1
        // and, seg0 having room again, enters seg0 (5 2); 6 evicts 2 (seg0: 6 5); 7 evicts
        // 5, while 3 and 4 stay protected without ever being hit.
        let trace = [1, 2, 3, 4, 5, 6, 7];
        let paper: Vec<Vec<u64>> = evictions(slru(4, 2), 4, &trace);
        assert_eq!(paper[4..], [vec![1], vec![2], vec![3]]);
        let lcs = evictions(slru(4, 2).with_libcachesim_placement(true), 4, &trace);
        assert_eq!(lcs[4..], [vec![1], vec![2], vec![5]]);
    }

    #[test]
    fn one_segment_is_lru() {
        let trace = [1, 2, 3, 1, 4, 2, 1];
        assert_eq!(
            hits(slru(3, 1), 3, &trace),
            hits(crate::Lru::new(3), 3, &trace)
        );
    }
}
