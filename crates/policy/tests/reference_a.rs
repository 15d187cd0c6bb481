//! MRU, LFU, Clock (and the variants that must reduce to them) against tiny,
//! obviously-correct reference models (Vec-based, O(n) per access).

use policy::testkit::{evictions, hits};
use policy::{Clock, Clock2Hand, Fifo, GClock, Lfu, Lru, LruK, Mru, SFifo};
use proptest::prelude::*;

/// Reference MRU: keys least recent first; the victim is the last one.
fn mru_ref(capacity: usize, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut q: Vec<u64> = Vec::new();
    trace
        .iter()
        .map(|&k| {
            if let Some(i) = q.iter().position(|&x| x == k) {
                q.remove(i);
                q.push(k);
                return vec![];
            }
            let mut ev = vec![];
            if q.len() == capacity {
                ev.push(q.pop().unwrap());
            }
            q.push(k);
            ev
        })
        .collect()
}

/// Reference LFU: (key, count, time of last reference); the victim has the least count,
/// then the oldest last reference. Counts are forgotten on eviction.
fn lfu_ref(capacity: usize, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut c: Vec<(u64, u64, usize)> = Vec::new();
    trace
        .iter()
        .enumerate()
        .map(|(t, &k)| {
            if let Some(e) = c.iter_mut().find(|e| e.0 == k) {
                e.1 += 1;
                e.2 = t;
                return vec![];
            }
            let mut ev = vec![];
            if c.len() == capacity {
                let i = (0..c.len()).min_by_key(|&i| (c[i].1, c[i].2)).unwrap();
                ev.push(c.remove(i).0);
            }
            c.push((k, 1, t));
            ev
        })
        .collect()
}

/// Reference Clock: the ring from the hand as a Vec of (key, reference bit).
fn clock_ref(capacity: usize, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut ring: Vec<(u64, bool)> = Vec::new();
    trace
        .iter()
        .map(|&k| {
            if let Some(e) = ring.iter_mut().find(|e| e.0 == k) {
                e.1 = true;
                return vec![];
            }
            let mut ev = vec![];
            if ring.len() == capacity {
                loop {
                    let (key, referenced) = ring.remove(0);
                    if referenced {
                        ring.push((key, false));
                    } else {
                        ev.push(key);
                        break;
                    }
                }
            }
            ring.push((k, false));
            ev
        })
        .collect()
}

fn trace() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(0u64..30, 0..400)
}

proptest! {
    #[test]
    fn mru_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(evictions(Mru::new(cap), cap as u64, &t), mru_ref(cap, &t));
    }

    #[test]
    fn lfu_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(evictions(Lfu::new(cap), cap as u64, &t), lfu_ref(cap, &t));
    }

    #[test]
    fn clock_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(evictions(Clock::new(cap), cap as u64, &t), clock_ref(cap, &t));
    }

    /// GCLOCK with a one-bit counter is Clock.
    #[test]
    fn gclock_max1_is_clock(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(
            evictions(GClock::new(cap, 1), cap as u64, &t),
            clock_ref(cap, &t)
        );
    }

    /// Two-handed clock with the hands together is FIFO.
    #[test]
    fn clock2hand_zero_spread_is_fifo(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(
            evictions(Clock2Hand::new(cap, 0.0), cap as u64, &t),
            evictions(Fifo::new(cap), cap as u64, &t)
        );
    }

    /// Segmented FIFO's limits: p = 0 is FIFO, p = 1 is LRU.
    #[test]
    fn sfifo_limits(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(
            evictions(SFifo::new(cap as u64, 0.0), cap as u64, &t),
            evictions(Fifo::new(cap), cap as u64, &t)
        );
        prop_assert_eq!(
            evictions(SFifo::new(cap as u64, 1.0), cap as u64, &t),
            evictions(Lru::new(cap), cap as u64, &t)
        );
    }

    /// LRU-1 is LRU.
    #[test]
    fn lru1_is_lru(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(
            hits(LruK::new(cap, 1, 0, cap), cap as u64, &t),
            hits(Lru::new(cap), cap as u64, &t)
        );
    }
}
