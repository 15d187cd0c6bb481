//! Regret: the consumer whose recent evictions cost least gives the page. Ours, with no
//! tuned constant.
//!
//! An eviction is a bet that the page will not be needed while memory could still hold
//! it. Each consumer's recent bets are on record: for its last `memory` evictions (the
//! most pages it could have kept had it held the whole memory), which pages came back,
//! and what each eviction cost in transfers. The cost of an eviction is counted, not
//! weighed: the write made to free the frame if the page was dirty, and the read that
//! brings the page back if it refaulted while still on record. A write is known at once,
//! a read only when the page comes back; that is why writes count: a program asleep
//! shows what losing its pages costs only when it wakes, but the pages it dirtied show
//! it as they leave.
//!
//! A consumer's *regret* is its average cost per eviction on record. When a page is
//! needed, the consumer with the least regret gives one. Another consumer's page is taken
//! only on evidence: both the requester and the giver must have evictions on record, and
//! the giver's regret must be strictly lower; otherwise the requester recycles its own
//! page (Sprite's rule for ties), which starts its record. Only a requester that cannot
//! give at all takes a page without evidence. Giving from the consumer whose evictions
//! have been the cheapest mistakes minimises the expected transfers of the next eviction.
//!
//! Why it needs no constant: the record's length is the memory size (as ARC bounds its
//! ghost lists by the cache size); the costs are transfers, one unit for a read and one
//! for a write, whoever makes them, so there is no exchange rate between consumers; idle
//! time plays no part (a page idle for a minute that will be touched again is as costly
//! to lose as one idle for a second). What it measures is *how often* a consumer's
//! evictions come back, which is what tells a program that will touch all its pages again
//! (every eviction is a mistake) from a stream of file blocks read or written once (most
//! evictions are not).
//!
//! Cost per decision: O(consumers); per eviction and miss O(1) (a hash map and a ring per
//! consumer); memory: `memory` entries per consumer.

use std::collections::{HashMap, VecDeque};

use crate::{best_by, Arbiter, ConsumerId, ConsumerView};

/// Each consumer's record of its last evictions; the least regretted consumer gives.
#[derive(Debug, Clone)]
pub struct Regret {
    records: Vec<EvictionRecord>,
}

impl Regret {
    /// For `consumers` consumers sharing `memory_pages` pages.
    pub fn new(memory_pages: u64, consumers: usize) -> Self {
        let capacity = usize::try_from(memory_pages).unwrap_or(usize::MAX).max(1);
        Regret {
            records: (0..consumers)
                .map(|_| EvictionRecord::new(capacity))
                .collect(),
        }
    }

    /// Consumer `c`'s regret: transfers caused per eviction on record (0 with none).
    pub fn regret(&self, c: ConsumerId) -> f64 {
        self.records[c].regret()
    }
}

impl Arbiter for Regret {
    fn pick(&mut self, requester: ConsumerId, consumers: &[ConsumerView]) -> Option<ConsumerId> {
        let on_record = |c: ConsumerId| !self.records[c].entries.is_empty();
        let evidence = on_record(requester);
        best_by(requester, consumers, |c, _| {
            (c == requester || (evidence && on_record(c)))
                .then(|| std::cmp::Reverse(self.records[c].cost()))
        })
    }

    fn note_eviction(&mut self, consumer: ConsumerId, key: u64, dirty: bool, _: &[ConsumerView]) {
        self.records[consumer].evicted(key, dirty);
    }

    fn note_miss(&mut self, consumer: ConsumerId, key: u64, _: &[ConsumerView]) {
        self.records[consumer].refaulted(key);
    }
}

/// A consumer's cost per eviction as an exact fraction (`transfers / evictions`), so that
/// comparisons and ties do not depend on rounding.
#[derive(Debug, Clone, Copy)]
struct Cost {
    transfers: u64,
    evictions: u64,
}

impl Cost {
    const ZERO: Cost = Cost {
        transfers: 0,
        evictions: 1,
    };
}

impl PartialEq for Cost {
    fn eq(&self, other: &Self) -> bool {
        self.partial_cmp(other) == Some(std::cmp::Ordering::Equal)
    }
}

impl PartialOrd for Cost {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        let a = u128::from(self.transfers) * u128::from(other.evictions);
        let b = u128::from(other.transfers) * u128::from(self.evictions);
        Some(a.cmp(&b))
    }
}

/// One consumer's last `capacity` evictions: which came back, and the transfers each
/// caused.
#[derive(Debug, Clone)]
struct EvictionRecord {
    /// Oldest first: the key and the transfers its eviction caused so far.
    entries: VecDeque<(u64, u8)>,
    /// Keys not yet refaulted → the sequence number of their entry.
    waiting: HashMap<u64, u64>,
    /// Sequence number of `entries[0]`.
    first_seq: u64,
    capacity: usize,
    /// Sum of the entries' transfers.
    transfers: u64,
}

impl EvictionRecord {
    fn new(capacity: usize) -> Self {
        EvictionRecord {
            entries: VecDeque::new(),
            waiting: HashMap::new(),
            first_seq: 0,
            capacity,
            transfers: 0,
        }
    }

    fn cost(&self) -> Cost {
        if self.entries.is_empty() {
            return Cost::ZERO;
        }
        Cost {
            transfers: self.transfers,
            evictions: self.entries.len() as u64,
        }
    }

    fn regret(&self) -> f64 {
        let c = self.cost();
        c.transfers as f64 / c.evictions as f64
    }

    fn evicted(&mut self, key: u64, write: bool) {
        if self.entries.len() == self.capacity {
            let (old, t) = self.entries.pop_front().expect("the record is full");
            self.transfers -= u64::from(t);
            if self.waiting.get(&old) == Some(&self.first_seq) {
                self.waiting.remove(&old);
            }
            self.first_seq += 1;
        }
        let seq = self.first_seq + self.entries.len() as u64;
        self.entries.push_back((key, u8::from(write)));
        self.transfers += u64::from(write);
        self.waiting.insert(key, seq);
    }

    fn refaulted(&mut self, key: u64) {
        if let Some(seq) = self.waiting.remove(&key) {
            let i = usize::try_from(seq - self.first_seq).expect("on record");
            self.entries[i].1 += 1;
            self.transfers += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_views::pair;

    const FILE: usize = 0;
    const VM: usize = 1;

    #[test]
    fn the_consumer_whose_evictions_came_back_least_gives() {
        let mut a = Regret::new(4, 2);
        let v = pair((2, Some(1)), (2, Some(1)));
        // Nothing on record: no evidence either way, the requester gives its own page.
        assert_eq!(a.pick(FILE, &v), Some(FILE));
        assert_eq!(a.pick(VM, &v), Some(VM));
        // File evicts 1, 2, 3 (all clean), and 2 comes back: one read in three evictions.
        a.note_eviction(FILE, 1, false, &v);
        a.note_eviction(FILE, 2, false, &v);
        a.note_eviction(FILE, 3, false, &v);
        a.note_miss(FILE, 2, &v);
        a.note_miss(FILE, 2, &v); // refaults once per eviction
        a.note_miss(FILE, 9, &v); // never evicted: no refault
        assert_eq!(a.regret(FILE), 1.0 / 3.0);
        // Memory has nothing on record: no evidence that its pages are cheaper, so the
        // file cache recycles its own; memory asking recycles its own too.
        assert_eq!(a.pick(FILE, &v), Some(FILE));
        assert_eq!(a.pick(VM, &v), Some(VM));
        // ... unless the requester cannot give at all.
        assert_eq!(a.pick(FILE, &pair((2, None), (2, Some(1)))), Some(VM));
        // Memory evicts 7 dirty (a write at once: 1 for 1 eviction); file asking, file
        // gives (1/3 < 1).
        a.note_eviction(VM, 7, true, &v);
        assert_eq!(a.regret(VM), 1.0);
        assert_eq!(a.pick(FILE, &v), Some(FILE));
        // 7 comes back (a read: 2 for 1); memory asking, file gives.
        a.note_miss(VM, 7, &v);
        assert_eq!(a.regret(VM), 2.0);
        assert_eq!(a.pick(VM, &v), Some(FILE));
        // File's dirty evictions count their writes: 8 and 9 dirty, 9 back; 1 falls off
        // the record of 4: 2 (a read), 3 (nothing), 8 (a write), 9 (both) = 4 / 4 < 2.
        a.note_eviction(FILE, 8, true, &v);
        a.note_eviction(FILE, 9, true, &v);
        a.note_miss(FILE, 9, &v);
        assert_eq!(a.regret(FILE), 1.0);
        assert_eq!(a.pick(VM, &v), Some(FILE));
        // Memory evicts 10, 11, 12 clean, none back: (2 + 0 + 0 + 0) / 4 = 0.5 < 1: now
        // memory gives, to either requester.
        for k in [10, 11, 12] {
            a.note_eviction(VM, k, false, &v);
        }
        assert_eq!(a.regret(VM), 0.5);
        assert_eq!(a.pick(FILE, &v), Some(VM));
        assert_eq!(a.pick(VM, &v), Some(VM));
        // A consumer that cannot give is passed over whatever its regret.
        assert_eq!(a.pick(FILE, &pair((2, Some(1)), (2, None))), Some(FILE));
        // Equal regrets: the requester gives (Sprite's tie rule).
        a.note_eviction(FILE, 13, false, &v); // file: 3, 8, 9, 13 = (0 + 1 + 2 + 0) / 4
        a.note_eviction(VM, 14, false, &v); // memory: 10, 11, 12, 14 = 0 / 4
        a.note_miss(VM, 10, &v);
        a.note_miss(VM, 11, &v);
        a.note_miss(VM, 12, &v); // memory: 3 / 4, file 3 / 4
        assert_eq!((a.regret(FILE), a.regret(VM)), (0.75, 0.75));
        assert_eq!(a.pick(FILE, &v), Some(FILE));
        assert_eq!(a.pick(VM, &v), Some(VM));
    }

    #[test]
    fn the_record_keeps_the_last_memory_evictions() {
        let mut a = Regret::new(2, 2);
        let v = pair((1, Some(1)), (1, Some(1)));
        a.note_eviction(FILE, 1, false, &v);
        a.note_miss(FILE, 1, &v); // 1/1
        assert_eq!(a.regret(FILE), 1.0);
        a.note_eviction(FILE, 2, false, &v); // 1/2
        assert_eq!(a.regret(FILE), 0.5);
        a.note_eviction(FILE, 3, false, &v); // 1 falls off the record: 0/2
        assert_eq!(a.regret(FILE), 0.0);
        a.note_eviction(FILE, 3, false, &v); // 3 again: 2 falls off; 3's older entry
        a.note_miss(FILE, 3, &v); // is superseded: the refault marks the newest
        assert_eq!(a.records[FILE].entries, [(3, 0), (3, 1)]);
        a.note_eviction(FILE, 4, false, &v); // the first 3 falls off, the marked stays
        a.note_miss(FILE, 2, &v); // 2 is off the record: not a refault
        assert_eq!(a.records[FILE].entries, [(3, 1), (4, 0)]);
        assert_eq!(a.regret(FILE), 0.5);
    }
}
