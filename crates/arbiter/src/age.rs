//! Sprite's negotiation (Nelson 1990, Section 2), with the file-system penalty of
//! Section 6.
//!
//! Each consumer knows when each of its pages was last referenced. When one needs a page,
//! it compares the age of its oldest page with the oldest page of the other: if the
//! other's is older, the other gives it up; otherwise it recycles its own. The penalty
//! adds a fixed time to the reference time of every memory page, so a memory page idle
//! for less than the penalty looks younger than any file page and the file cache cannot
//! take it. Penalty 0 is plain Sprite.

use crate::{best_by, Arbiter, ConsumerId, ConsumerView, Kind};

/// Oldest page goes, memory pages `penalty` ticks younger than they are.
#[derive(Debug, Clone)]
pub struct OldestPage {
    penalty: u64,
}

impl OldestPage {
    /// With `penalty` ticks added to memory pages' reference times.
    pub fn new(penalty: u64) -> Self {
        OldestPage { penalty }
    }
}

impl Arbiter for OldestPage {
    fn pick(&mut self, requester: ConsumerId, consumers: &[ConsumerView]) -> Option<ConsumerId> {
        let penalty = i128::from(self.penalty);
        best_by(requester, consumers, |_, v| {
            let idle = i128::from(v.oldest_idle.unwrap_or(0));
            match v.kind {
                Kind::Memory => idle - penalty,
                Kind::File => idle,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_views::pair;

    #[test]
    fn the_older_page_goes_and_ties_stay_home() {
        let mut a = OldestPage::new(0);
        assert_eq!(a.pick(0, &pair((5, Some(10)), (5, Some(11)))), Some(1));
        assert_eq!(a.pick(0, &pair((5, Some(11)), (5, Some(10)))), Some(0));
        assert_eq!(a.pick(0, &pair((5, Some(10)), (5, Some(10)))), Some(0));
        assert_eq!(a.pick(1, &pair((5, Some(10)), (5, Some(10)))), Some(1));
        // A consumer that cannot give is skipped, even when it asks.
        assert_eq!(a.pick(0, &pair((1, None), (5, Some(0)))), Some(1));
        assert_eq!(a.pick(0, &pair((1, None), (0, None))), None);
    }

    #[test]
    fn the_penalty_protects_memory_pages_younger_than_it() {
        let mut a = OldestPage::new(120);
        // Memory page idle 100 looks like -20: the file cache recycles its page idle 5.
        assert_eq!(a.pick(0, &pair((5, Some(5)), (5, Some(100)))), Some(0));
        // Idle 130 looks like 10, older than 5: memory gives.
        assert_eq!(a.pick(0, &pair((5, Some(5)), (5, Some(130)))), Some(1));
        // Memory asking: a file page idle 0 is still older than a memory page at -120.
        assert_eq!(a.pick(1, &pair((5, Some(0)), (5, Some(0)))), Some(0));
    }
}
