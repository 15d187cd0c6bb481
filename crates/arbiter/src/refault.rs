//! Linux's balance between file and anonymous memory, as a consumer arbiter.
//!
//! Linux (mm/workingset.c, mm/vmscan.c) answers Nelson's question with two mechanisms:
//!
//! 1. **Refault distance.** When a page is evicted, a shadow entry keeps a snapshot of a
//!    counter of evictions (the lruvec's "non-resident age"). When the page faults back,
//!    the counter has moved by the *refault distance*: the number of evictions since it
//!    left. Had its list been that many pages longer, the page would still be resident.
//!    If the distance is no larger than the memory the *other* lists hold (what the page
//!    could have taken from them), the refault is of the working set.
//! 2. **Cost-split pressure** (`lru_note_cost`, `get_scan_count`). Each list accumulates a
//!    cost: one unit per working-set refault and per page written out to make room.
//!    Reclaim pressure is then divided so a list's share falls as its cost rises:
//!    with total cost `T`, list `i` gets weight `prio_i / (T + cost_i + 1)`, where
//!    `prio` is `swappiness` for anonymous memory and `200 - swappiness` for files. The
//!    `T +` term keeps a list whose cost dominates at about a third of the pressure
//!    (1/(2T) against 1/T). Costs are halved when they exceed a quarter of memory, so old
//!    history fades.
//!
//! The model here: each consumer is one list (no active/inactive split: a consumer gives
//! its own oldest page), the eviction counter is shared by all consumers, and the
//! pressure is turned into victims by a deficit counter: each decision adds every eligible
//! consumer's share to its credit, and the consumer with the most credit gives the page.
//! Linux scans in batches of 32 and rotates referenced pages; neither is modelled.
//!
//! Cost per decision: O(consumers); shadow lookups O(1); memory: shadows for twice the
//! memory's pages.

use crate::shadow::Shadows;
use crate::{Arbiter, ConsumerId, ConsumerView, Kind};

/// Refault-distance detection with cost-split pressure.
#[derive(Debug, Clone)]
pub struct RefaultCost {
    swappiness: u32,
    kinds: Vec<Kind>,
    cost: Vec<f64>,
    credit: Vec<f64>,
    evictions: u64,
    shadows: Shadows,
    workingset_refaults: Vec<u64>,
}

impl RefaultCost {
    /// For consumers of `kinds` sharing `memory_pages` pages.
    pub fn new(swappiness: u32, memory_pages: u64, kinds: Vec<Kind>) -> Self {
        let n = kinds.len();
        RefaultCost {
            swappiness,
            kinds,
            cost: vec![0.0; n],
            credit: vec![0.0; n],
            evictions: 0,
            shadows: Shadows::new(
                usize::try_from(memory_pages.saturating_mul(2)).unwrap_or(usize::MAX),
            ),
            workingset_refaults: vec![0; n],
        }
    }

    /// Refaults judged to be of the working set, per consumer.
    pub fn workingset_refaults(&self) -> &[u64] {
        &self.workingset_refaults
    }

    /// The accumulated costs, per consumer.
    pub fn costs(&self) -> &[f64] {
        &self.cost
    }

    fn charge(&mut self, consumer: ConsumerId, consumers: &[ConsumerView]) {
        self.cost[consumer] += 1.0;
        let resident: u64 = consumers.iter().map(|c| c.resident_pages).sum();
        let total: f64 = self.cost.iter().sum();
        if total > resident as f64 / 4.0 {
            for c in &mut self.cost {
                *c /= 2.0;
            }
        }
    }

    fn priority(&self, consumer: ConsumerId) -> f64 {
        f64::from(match self.kinds[consumer] {
            Kind::Memory => self.swappiness,
            Kind::File => 200 - self.swappiness,
        })
    }
}

impl Arbiter for RefaultCost {
    fn pick(&mut self, requester: ConsumerId, consumers: &[ConsumerView]) -> Option<ConsumerId> {
        let total: f64 = self.cost.iter().sum();
        let weights: Vec<f64> = (0..consumers.len())
            .map(|c| {
                if consumers[c].can_give() {
                    self.priority(c) / (total + self.cost[c] + 1.0)
                } else {
                    0.0
                }
            })
            .collect();
        let sum: f64 = weights.iter().sum();
        if sum == 0.0 {
            // Every eligible consumer has priority 0 (swappiness 0 or 200): take from
            // anyone who can give, the requester first.
            return crate::best_by(requester, consumers, |_, _| 0u8);
        }
        for (credit, w) in self.credit.iter_mut().zip(&weights) {
            *credit += w / sum;
        }
        let victim = crate::best_by(requester, consumers, |c, _| {
            if weights[c] > 0.0 {
                self.credit[c]
            } else {
                f64::NEG_INFINITY
            }
        })?;
        self.credit[victim] -= 1.0;
        Some(victim)
    }

    fn note_eviction(
        &mut self,
        consumer: ConsumerId,
        key: u64,
        dirty: bool,
        consumers: &[ConsumerView],
    ) {
        self.shadows.insert(consumer, key, self.evictions);
        self.evictions += 1;
        if dirty {
            self.charge(consumer, consumers);
        }
    }

    fn note_miss(&mut self, consumer: ConsumerId, key: u64, consumers: &[ConsumerView]) {
        let Some(stamp) = self.shadows.take(consumer, key) else {
            return;
        };
        let distance = self.evictions - stamp;
        let others: u64 = consumers
            .iter()
            .enumerate()
            .filter(|&(c, _)| c != consumer)
            .map(|(_, v)| v.resident_pages)
            .sum();
        if distance <= others {
            self.workingset_refaults[consumer] += 1;
            self.charge(consumer, consumers);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_views::pair;

    fn arbiter() -> RefaultCost {
        RefaultCost::new(100, 100, vec![Kind::File, Kind::Memory])
    }

    #[test]
    fn equal_costs_alternate_the_pressure() {
        let mut a = arbiter();
        let v = pair((50, Some(1)), (50, Some(1)));
        // Equal weights: credits 0.5/0.5, requester wins the tie, then the other.
        let picks: Vec<_> = (0..4).map(|_| a.pick(0, &v).unwrap()).collect();
        assert_eq!(picks, [0, 1, 0, 1]);
    }

    #[test]
    fn a_near_refault_charges_a_far_one_does_not() {
        let mut a = arbiter();
        let v = pair((50, Some(1)), (50, Some(1)));
        a.note_eviction(1, 7, false, &v);
        for k in 0..10 {
            a.note_eviction(0, k, false, &v);
        }
        a.note_miss(1, 7, &v); // distance 10 <= 50 file pages
        assert_eq!(a.workingset_refaults(), &[0, 1]);
        a.note_eviction(1, 8, false, &v);
        for k in 10..70 {
            a.note_eviction(0, k, false, &v);
        }
        a.note_miss(1, 8, &v); // distance 60 > 50
        assert_eq!(a.workingset_refaults(), &[0, 1]);
        assert_eq!(a.costs(), &[0.0, 1.0]);
    }

    #[test]
    fn the_costly_consumer_keeps_about_a_third_of_the_pressure() {
        let mut a = arbiter();
        let v = pair((500, Some(1)), (500, Some(1)));
        // Memory refaults constantly: its cost dominates.
        for k in 0..100 {
            a.note_eviction(1, k, false, &v);
            a.note_miss(1, k, &v);
        }
        let picks: Vec<_> = (0..300).map(|_| a.pick(0, &v).unwrap()).collect();
        let memory = picks.iter().filter(|&&c| c == 1).count();
        // Weight 1/(2T+1) against 1/(T+1): just over a third.
        assert!((95..=105).contains(&memory), "memory gave {memory} of 300");
    }
}
