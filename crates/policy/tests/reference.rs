//! Policies against tiny, obviously-correct reference models (Vec-based, O(n) per access).

use policy::testkit::hits;
use policy::{Fifo, Lru};
use proptest::prelude::*;

/// Reference FIFO: a queue of keys, oldest first.
fn fifo_ref(capacity: usize, trace: &[u64]) -> Vec<bool> {
    let mut q: Vec<u64> = Vec::new();
    trace
        .iter()
        .map(|&k| {
            if q.contains(&k) {
                return true;
            }
            if q.len() == capacity {
                q.remove(0);
            }
            q.push(k);
            false
        })
        .collect()
}

/// Reference LRU: a list of keys, least recent first.
fn lru_ref(capacity: usize, trace: &[u64]) -> Vec<bool> {
    let mut q: Vec<u64> = Vec::new();
    trace
        .iter()
        .map(|&k| {
            if let Some(i) = q.iter().position(|&x| x == k) {
                q.remove(i);
                q.push(k);
                return true;
            }
            if q.len() == capacity {
                q.remove(0);
            }
            q.push(k);
            false
        })
        .collect()
}

fn trace() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(0u64..30, 0..400)
}

proptest! {
    #[test]
    fn fifo_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(hits(Fifo::new(cap), cap as u64, &t), fifo_ref(cap, &t));
    }

    #[test]
    fn lru_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(hits(Lru::new(cap), cap as u64, &t), lru_ref(cap, &t));
    }

    /// Mattson's inclusion property: an LRU cache one larger never misses where the smaller hits.
    #[test]
    fn lru_inclusion_across_sizes(cap in 1usize..20, t in trace()) {
        let small = hits(Lru::new(cap), cap as u64, &t);
        let large = hits(Lru::new(cap + 1), cap as u64 + 1, &t);
        for (i, (s, l)) in small.iter().zip(&large).enumerate() {
            prop_assert!(!s || *l, "request {} hit at size {} but missed at {}", i, cap, cap + 1);
        }
    }
}
