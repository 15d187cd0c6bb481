//! A fixed split: file consumers hold at most a fixed number of pages between them,
//! memory consumers the rest (Nelson's fixed-size file cache, Section 4).
//!
//! A consumer whose kind is below its share takes the page from the other kind (its
//! oldest page); at or above its share, it recycles its own. Nothing adapts.

use crate::{best_by, Arbiter, ConsumerId, ConsumerView, Kind};

/// The fixed split.
#[derive(Debug, Clone)]
pub struct FixedSplit {
    file_pages: u64,
    memory_pages: u64,
    kinds: Vec<Kind>,
}

impl FixedSplit {
    /// `file_pages` of `memory_pages` for file data; `kinds` names each consumer's kind.
    pub fn new(file_pages: u64, memory_pages: u64, kinds: Vec<Kind>) -> Self {
        FixedSplit {
            file_pages,
            memory_pages,
            kinds,
        }
    }

    fn share(&self, kind: Kind) -> u64 {
        match kind {
            Kind::File => self.file_pages,
            Kind::Memory => self.memory_pages - self.file_pages,
        }
    }

    fn below_share(&self, requester: ConsumerId, consumers: &[ConsumerView]) -> bool {
        let kind = self.kinds[requester];
        let held: u64 = consumers
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| c.resident_pages)
            .sum();
        held < self.share(kind)
    }
}

impl Arbiter for FixedSplit {
    fn may_grow(&self, requester: ConsumerId, consumers: &[ConsumerView]) -> bool {
        self.below_share(requester, consumers)
    }

    fn pick(&mut self, requester: ConsumerId, consumers: &[ConsumerView]) -> Option<ConsumerId> {
        let kind = self.kinds[requester];
        let giving_kind = if self.below_share(requester, consumers) {
            match kind {
                Kind::File => Kind::Memory,
                Kind::Memory => Kind::File,
            }
        } else {
            kind
        };
        // The oldest page of the giving kind; if that kind has nothing to give, anyone.
        best_by(requester, consumers, |_, v| {
            (v.kind == giving_kind, v.oldest_idle.unwrap_or(0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_views::pair;

    #[test]
    fn below_its_share_a_kind_takes_from_the_other() {
        let mut a = FixedSplit::new(4, 10, vec![Kind::File, Kind::Memory]);
        // File holds 3 of its 4: the memory consumer gives, however young its page.
        assert_eq!(a.pick(0, &pair((3, Some(100)), (7, Some(1)))), Some(1));
        // File holds its 4: it recycles its own, however old memory's page is.
        assert_eq!(a.pick(0, &pair((4, Some(1)), (6, Some(100)))), Some(0));
        // Memory holds 6 of its 6: it recycles its own.
        assert_eq!(a.pick(1, &pair((4, Some(100)), (6, Some(1)))), Some(1));
        // Memory holds 5 of 6 (a page is free elsewhere): the file cache gives.
        assert_eq!(a.pick(1, &pair((5, Some(1)), (5, Some(100)))), Some(0));
    }
}
