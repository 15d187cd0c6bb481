//! S4LRU: segmented LRU with four segments, as Facebook's photo caching study ran it.
//!
//! Huang, Wang, Xu, Jenkins, Abdolrahim, Li, Kumar, "An analysis of Facebook photo
//! caching", SOSP 2013: four LRU queues of equal size; a miss enters queue 0, a hit moves
//! an object to the head of the next queue up, and a full queue demotes its tail to the
//! queue below; evictions come from queue 0. It is [`Slru`] with `segments=4`, registered
//! under its own name because papers (and libCacheSim, whose `SLRU` defaults to four
//! segments and calls itself S4LRU) compare against it by that name. The algorithm, its
//! parameters (`segments`, `variant`), deviations and cost are documented in `slru.rs`.

use crate::slru::Slru;

/// Segmented LRU whose `segments` parameter defaults to 4.
pub type S4Lru = Slru<4>;

#[cfg(test)]
mod tests {
    use crate::testkit::resident_after;
    use crate::{BuildContext, Policy, PolicySpec};

    #[test]
    fn registered_with_four_segments() {
        let ctx = BuildContext::new(8, 0);
        let p = PolicySpec::parse("s4lru").unwrap().build(&ctx).unwrap();
        assert_eq!(p.name(), "s4lru");
        // 8 units in four segments of 2. 1..=8 fill probation; 1 hit three times climbs to
        // the top segment, 2 hit twice to segment 2, 3 hit once to segment 1. Victims:
        // probation from its tail (4..=8), then 3, 2, 1.
        let trace = [1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 2, 2, 3];
        assert_eq!(resident_after(p, 8, &trace), [4, 5, 6, 7, 8, 3, 2, 1]);
    }
}
