//! MRU: evict the most recently used object.
//!
//! The mirror image of LRU. It is the optimal *online* choice for a cyclic scan over a
//! file slightly larger than the cache: LRU then misses on every request, while MRU keeps
//! a fixed prefix of the loop resident. Chou & DeWitt (1985, "An evaluation of buffer
//! management strategies for relational database systems") recommend it for looping
//! sequential access; Burnett (2006, ch.3) emulates it on top of Linux with InfoReplace and
//! reports it as the hardest target, because its preferences are the opposite of the
//! kernel's.
//!
//! One recency list, head = most recent. A hit moves the frame to the head; eviction takes
//! the head. Because the driver calls `evict` *before* `on_insert`, the victim of a miss is
//! the object used by the previous request, never the newcomer.
//!
//! Protected frames: eviction walks from the head towards the tail and takes the first
//! evictable frame; skipped frames keep their place.
//!
//! Parameters: none.
//!
//! Cost: O(1) per hit, insertion and eviction (plus the skipped protected frames).
//! Memory: 8 bytes per frame (the list links).
//!
//! The list itself is [`crate::recency::OneList`], shared with FIFO and the other of
//! LRU/MRU.

use crate::params::{ConfigError, ParamInfo, Params};
use crate::recency::OneList;
use crate::registry::{BuildContext, NamedPolicy};

/// Most recently used. Head of the list is the most recent and the next victim.
pub type Mru = OneList<true, true>;

impl NamedPolicy for Mru {
    const NAME: &'static str = "mru";
    const SUMMARY: &'static str = "most recently used (Chou & DeWitt 1985); good for loops";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Mru::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::Mru;

    #[test]
    fn hand_worked_sequence() {
        // capacity 3, trace 1 2 3 1 4 2 1 3
        //  1,2,3 miss                      recency (MRU first): 3 2 1
        //  1 hits                                               1 3 2
        //  4 misses, evicts 1 (the MRU)                          4 3 2
        //  2 hits                                               2 4 3
        //  1 misses, evicts 2                                   1 4 3
        //  3 hits                                               3 1 4
        let trace = [1, 2, 3, 1, 4, 2, 1, 3];
        assert_eq!(
            hits(Mru::new(3), 3, &trace),
            [false, false, false, true, false, true, false, true]
        );
        let ev = evictions(Mru::new(3), 3, &trace);
        assert_eq!(ev[4], [1]);
        assert_eq!(ev[6], [2]);
        assert_eq!(resident_after(Mru::new(3), 3, &trace), [3, 1, 4]);
    }

    #[test]
    fn loop_beats_lru() {
        // A loop over 4 keys in a 3-frame cache: LRU misses all 12 requests.
        // recency lists are written MRU first.
        // pass 1: 1 2 3 miss; 4 misses and evicts 3          -> 4 2 1
        // pass 2: 1 hit (1 4 2); 2 hit (2 1 4); 3 misses,
        //         evicts 2 (3 1 4); 4 hit                   -> 4 3 1
        // pass 3: 1 hit (1 4 3); 2 misses, evicts 1 (2 4 3);
        //         3 hit (3 2 4); 4 hit                      -> 4 3 2
        let trace: Vec<u64> = (0..3).flat_map(|_| 1..=4).collect();
        assert_eq!(
            hits(Mru::new(3), 3, &trace),
            [
                false, false, false, false, //
                true, true, false, true, //
                true, false, true, true
            ]
        );
        let ev = evictions(Mru::new(3), 3, &trace);
        let all: Vec<u64> = ev.into_iter().flatten().collect();
        assert_eq!(all, [3, 2, 1]);
    }
}
