//! SIEVE and Belady's OPT against tiny, obviously-correct reference models (Vec-based,
//! O(n) per access).

use policy::testkit::{hits, hits_with_future, next_access_times};
use policy::{Belady, Sieve};
use proptest::prelude::*;

/// Reference SIEVE: `q[0]` is the oldest object (the tail); the hand is an index into `q`
/// that moves towards the newest end and wraps to 0.
fn sieve_ref(capacity: usize, trace: &[u64]) -> Vec<bool> {
    let mut q: Vec<(u64, bool)> = Vec::new();
    let mut hand = 0usize;
    trace
        .iter()
        .map(|&k| {
            if let Some(e) = q.iter_mut().find(|e| e.0 == k) {
                e.1 = true;
                return true;
            }
            if q.len() == capacity {
                while q[hand].1 {
                    q[hand].1 = false;
                    hand = (hand + 1) % q.len();
                }
                // removing q[hand] shifts the newer objects down: the hand now points at
                // the object that was just newer than the victim
                q.remove(hand);
                if hand == q.len() {
                    // the victim was the newest: the hand wraps to the oldest, so that it
                    // does not point at the newcomer about to be appended
                    hand = 0;
                }
            }
            q.push((k, false));
            false
        })
        .collect()
}

/// Reference OPT: on a miss with a full cache, evict the resident key whose next request
/// (searched in the rest of the trace) is furthest away, or that is never requested again.
fn opt_ref(capacity: usize, trace: &[u64]) -> Vec<bool> {
    let mut resident: Vec<u64> = Vec::new();
    trace
        .iter()
        .enumerate()
        .map(|(t, &k)| {
            if resident.contains(&k) {
                return true;
            }
            if resident.len() == capacity {
                let next = |key: u64| {
                    trace[t + 1..]
                        .iter()
                        .position(|&x| x == key)
                        .unwrap_or(usize::MAX)
                };
                let (i, _) = resident
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, &r)| next(r))
                    .expect("cache is full");
                resident.swap_remove(i);
            }
            resident.push(k);
            false
        })
        .collect()
}

fn trace() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(0u64..30, 0..400)
}

proptest! {
    #[test]
    fn sieve_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(hits(Sieve::new(cap), cap as u64, &t), sieve_ref(cap, &t));
    }

    #[test]
    fn belady_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(hits_with_future(Belady::new(cap), cap as u64, &t), opt_ref(cap, &t));
    }

    /// Without future knowledge every next access is NEVER and OPT degenerates to evicting
    /// by frame number; with it, it must never miss more than LRU (a sanity check that the
    /// future is actually used).
    #[test]
    fn belady_uses_the_future(cap in 1usize..20, t in trace()) {
        let opt = hits_with_future(Belady::new(cap), cap as u64, &t);
        let lru = hits(policy::Lru::new(cap), cap as u64, &t);
        let misses = |h: &[bool]| h.iter().filter(|&&x| !x).count();
        prop_assert!(misses(&opt) <= misses(&lru));
        prop_assert_eq!(next_access_times(&t).len(), t.len());
    }
}
