//! FIFO: evict the object that entered the cache first; hits change nothing.
//!
//! The simplest policy and the one that shows Belady's anomaly (a larger cache can miss
//! more). Dust identifies it by its sensitivity to initial-access order only
//! (Burnett ch.2).
//!
//! Parameters: none.
//!
//! Cost: O(1) per insertion and eviction, nothing on a hit. Memory: 8 bytes per frame.
//! The list itself is [`crate::recency::OneList`], shared with LRU and MRU.

use crate::params::{ConfigError, ParamInfo, Params};
use crate::recency::OneList;
use crate::registry::{BuildContext, NamedPolicy};

/// First in, first out. Head of the queue is the newest.
pub type Fifo = OneList<false, false>;

impl NamedPolicy for Fifo {
    const NAME: &'static str = "fifo";
    const SUMMARY: &'static str = "first in, first out; hits do not reorder";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Fifo::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{hits, miss_count, resident_after};
    use crate::Fifo;

    #[test]
    fn hand_worked_sequence() {
        let trace = [1, 2, 3, 1, 4, 2, 1];
        // 4 evicts 1 (oldest, despite its hit); 2 hits; 1 misses and evicts 2
        assert_eq!(
            hits(Fifo::new(3), 3, &trace),
            [false, false, false, true, false, true, false]
        );
        assert_eq!(resident_after(Fifo::new(3), 3, &trace), [3, 4, 1]);
    }

    #[test]
    fn belady_anomaly() {
        // The textbook reference string: FIFO misses 9 times with 3 frames, 10 with 4.
        let trace = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5];
        assert_eq!(miss_count(Fifo::new(3), 3, &trace), 9);
        assert_eq!(miss_count(Fifo::new(4), 4, &trace), 10);
    }
}
