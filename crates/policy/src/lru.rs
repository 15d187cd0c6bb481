//! LRU: evict the least recently used object.
//!
//! The classic recency policy; the baseline of every paper in `shared/papers`. Mattson et
//! al. (1970) showed it is a *stack algorithm*: the contents of a cache of size `c` are
//! always a subset of those of size `c + 1`, which is what makes one-pass miss-ratio curves
//! possible (`bufcache mrc`).
//!
//! Parameters: none.
//!
//! Cost: O(1) per hit, insertion and eviction (one intrusive list). Memory: 8 bytes per
//! frame for the links.
//!
//! The list itself is [`crate::recency::OneList`], shared with FIFO and the other of
//! LRU/MRU.

use crate::params::{ConfigError, ParamInfo, Params};
use crate::recency::OneList;
use crate::registry::{BuildContext, NamedPolicy};

/// Least recently used. Head of the list is the most recent.
pub type Lru = OneList<true, false>;

impl NamedPolicy for Lru {
    const NAME: &'static str = "lru";
    const SUMMARY: &'static str = "least recently used (Mattson et al. 1970)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Lru::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{hits, resident_after};
    use crate::Lru;

    #[test]
    fn hand_worked_sequence() {
        // capacity 3: a b c a d (evicts b) b (evicts c) a
        let trace = [1, 2, 3, 1, 4, 2, 1];
        assert_eq!(
            hits(Lru::new(3), 3, &trace),
            [false, false, false, true, false, false, true]
        );
        // victim order after the trace: LRU first: 4, 2, 1
        assert_eq!(resident_after(Lru::new(3), 3, &trace), [4, 2, 1]);
    }
}
