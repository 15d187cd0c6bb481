//! Shadow entries: what an arbiter remembers of pages after they are evicted — the
//! consumer, the page key and a stamp taken at eviction — in a bounded ring, so that
//! memory stays fixed however many pages a run evicts (the oldest entries are forgotten).

use std::collections::{HashMap, VecDeque};

/// A bounded set of `(consumer, key) → stamp` entries, forgetting the oldest first.
#[derive(Debug, Clone)]
pub(crate) struct Shadows {
    stamps: HashMap<(usize, u64), u64>,
    order: VecDeque<(usize, u64, u64)>,
    capacity: usize,
    /// Entries remembered per consumer, kept as entries come and go.
    live: Vec<usize>,
}

impl Shadows {
    /// Room for `capacity` entries (at least one).
    pub fn new(capacity: usize) -> Self {
        Shadows {
            stamps: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
            live: Vec::new(),
        }
    }

    /// Remember that `consumer` evicted `key` at `stamp`.
    pub fn insert(&mut self, consumer: usize, key: u64, stamp: u64) {
        if self.order.len() == self.capacity {
            let (c, k, s) = self.order.pop_front().expect("ring is full");
            // Only forget the entry if it was not renewed since (a renewed entry has a
            // later stamp and its own place in the ring).
            if self.stamps.get(&(c, k)) == Some(&s) {
                self.stamps.remove(&(c, k));
                self.live[c] -= 1;
            }
        }
        if self.live.len() <= consumer {
            self.live.resize(consumer + 1, 0);
        }
        if self.stamps.insert((consumer, key), stamp).is_none() {
            self.live[consumer] += 1;
        }
        self.order.push_back((consumer, key, stamp));
    }

    /// The stamp of `consumer`'s `key`, forgetting it (a page refaults once per eviction).
    pub fn take(&mut self, consumer: usize, key: u64) -> Option<u64> {
        let stamp = self.stamps.remove(&(consumer, key))?;
        self.live[consumer] -= 1;
        Some(stamp)
    }

    /// Entries remembered for `consumer`.
    pub fn count(&self, consumer: usize) -> usize {
        self.live.get(consumer).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_the_oldest_and_keeps_renewed_entries() {
        let mut s = Shadows::new(2);
        s.insert(0, 1, 10);
        s.insert(0, 2, 11);
        s.insert(0, 1, 12); // renews key 1; the ring drops the (1, 10) slot
        assert_eq!(s.take(0, 1), Some(12));
        s.insert(1, 3, 13); // drops (2, 11)
        assert_eq!(s.take(0, 2), None);
        assert_eq!((s.count(0), s.count(1)), (0, 1));
        assert_eq!(s.take(1, 3), Some(13));
        assert_eq!((s.count(0), s.count(1), s.count(7)), (0, 0, 0));
    }
}
