//! Ghost balance: ARC's adaptation (Megiddo & Modha 2003) applied to memory consumers,
//! with no tuned constant.
//!
//! Each consumer has a *target* number of pages; the targets add up to the memory and
//! start, at the first decision, as what each consumer then holds. A page
//! is taken from the consumer furthest above its target (the requester when it is at or
//! above its own), and that consumer gives its own oldest page. Each consumer also has a
//! *ghost list*: the keys of the last `memory` pages it gave up. A miss on a key in its
//! ghost list means that consumer would have hit with more memory, so its target grows —
//! by one page, or by the ratio of the other consumers' ghosts to its own when that is
//! larger (ARC's rule: the side whose ghosts are rarer relative to the others learns
//! faster), and the other targets shrink by as much, in proportion to their size.
//!
//! Why no constant is needed: the only quantities are the memory size (which bounds the
//! ghost lists, as ARC bounds them by the cache size) and the counts of refaults; both
//! consumers are measured in the same unit (a refault costs one page read, whoever it
//! belongs to), so there is no exchange rate to tune. Unlike Sprite's ages, it does not
//! matter how long a page was idle — only whether giving it up was a mistake.
//!
//! Cost per decision: O(consumers); per miss and eviction O(1) (ghost lists count their
//! entries as they change).

use crate::shadow::Shadows;
use crate::{best_by, Arbiter, ConsumerId, ConsumerView};

/// Targets moved by ghost hits.
#[derive(Debug, Clone)]
pub struct GhostBalance {
    memory_pages: f64,
    /// Empty until the first decision, when each consumer's target becomes what it holds
    /// (scaled to the whole memory): no split is assumed before there is evidence.
    targets: Vec<f64>,
    consumers: usize,
    ghosts: Vec<Shadows>,
    ghost_counts: Vec<u64>,
}

impl GhostBalance {
    /// For `consumers` consumers sharing `memory_pages`. The targets are set at the first
    /// decision to what each consumer then holds.
    pub fn new(memory_pages: u64, consumers: usize) -> Self {
        let capacity = usize::try_from(memory_pages).unwrap_or(usize::MAX);
        GhostBalance {
            memory_pages: memory_pages as f64,
            targets: Vec::new(),
            consumers,
            ghosts: (0..consumers).map(|_| Shadows::new(capacity)).collect(),
            ghost_counts: vec![0; consumers],
        }
    }

    /// Each consumer's current target, in pages (empty before the first decision).
    pub fn targets(&self) -> &[f64] {
        &self.targets
    }

    fn init_targets(&mut self, consumers: &[ConsumerView]) {
        if !self.targets.is_empty() {
            return;
        }
        let held: u64 = consumers.iter().map(|c| c.resident_pages).sum();
        self.targets = if held == 0 {
            vec![self.memory_pages / self.consumers.max(1) as f64; self.consumers]
        } else {
            consumers
                .iter()
                .map(|c| c.resident_pages as f64 * self.memory_pages / held as f64)
                .collect()
        };
    }
}

impl Arbiter for GhostBalance {
    fn pick(&mut self, requester: ConsumerId, consumers: &[ConsumerView]) -> Option<ConsumerId> {
        self.init_targets(consumers);
        best_by(requester, consumers, |c, v| {
            v.resident_pages as f64 + f64::from(u8::from(c == requester)) - self.targets[c]
        })
    }

    fn note_eviction(&mut self, consumer: ConsumerId, key: u64, _dirty: bool, _: &[ConsumerView]) {
        self.ghosts[consumer].insert(0, key, 0);
    }

    fn note_miss(&mut self, consumer: ConsumerId, key: u64, consumers: &[ConsumerView]) {
        if self.ghosts[consumer].take(0, key).is_none() {
            return;
        }
        self.init_targets(consumers);
        for (c, g) in self.ghosts.iter().enumerate() {
            self.ghost_counts[c] = g.count(0) as u64;
        }
        let own = (self.ghost_counts[consumer] + 1) as f64;
        let others: u64 = (0..self.ghosts.len())
            .filter(|&c| c != consumer)
            .map(|c| self.ghost_counts[c])
            .sum();
        let step = (others as f64 / own).max(1.0);
        let grown = (self.targets[consumer] + step).min(self.memory_pages);
        let taken = grown - self.targets[consumer];
        self.targets[consumer] = grown;
        let rest: f64 = (0..self.targets.len())
            .filter(|&c| c != consumer)
            .map(|c| self.targets[c])
            .sum();
        if rest > 0.0 {
            for c in (0..self.targets.len()).filter(|&c| c != consumer) {
                self.targets[c] -= taken * self.targets[c] / rest;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_views::pair;

    #[test]
    fn the_consumer_furthest_above_its_target_gives() {
        let mut a = GhostBalance::new(100, 2);
        // Targets start as held: 50/50.
        assert_eq!(a.pick(0, &pair((50, Some(1)), (50, Some(1)))), Some(0));
        assert_eq!(a.targets(), &[50.0, 50.0]);
        // File at 60 is above: it gives, even when memory asks.
        assert_eq!(a.pick(1, &pair((60, Some(1)), (40, Some(1)))), Some(0));
        // File at 50 asking: counting the page it wants it would be at 51, memory at 50.
        assert_eq!(a.pick(0, &pair((50, Some(1)), (50, Some(1)))), Some(0));
        assert_eq!(a.pick(0, &pair((49, Some(1)), (51, Some(1)))), Some(1));
    }

    #[test]
    fn ghost_hits_move_the_target_by_the_ghost_ratio() {
        let mut a = GhostBalance::new(100, 2);
        let v = pair((25, Some(1)), (25, Some(1)));
        for k in 0..9 {
            a.note_eviction(0, k, false, &v);
        }
        a.note_eviction(1, 100, false, &v);
        a.note_miss(1, 100, &v); // memory ghost hit: own ghosts 0 (+1), others 9 → step 9
        assert_eq!(a.targets(), &[41.0, 59.0]);
        a.note_miss(0, 3, &v); // file ghost hit: own 9 (+1), others 0 → step 1
        assert_eq!(a.targets(), &[42.0, 58.0]);
        a.note_miss(0, 3, &v); // already taken: not a ghost any more
        assert_eq!(a.targets(), &[42.0, 58.0]);
    }
}
