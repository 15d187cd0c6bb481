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

/// Reference LRU-K (O'Neil et al. with a correlated reference period and retained
/// history, as documented in `lruk.rs`), per key and O(n) per eviction: the victim is the
/// eligible resident key of least (HIST(K), LAST); times are unique, so there are no ties.
/// Retained history is that of the last `history` evictions (an entry taken back leaves
/// a hole until it ages out, as in the implementation's ring).
fn lruk_ref(capacity: usize, k: usize, crp: u64, history: usize, trace: &[u64]) -> Vec<Vec<u64>> {
    use std::collections::{HashMap, VecDeque};
    let mut resident: HashMap<u64, (Vec<u64>, u64)> = HashMap::new();
    let mut retained: VecDeque<Option<(u64, Vec<u64>)>> = VecDeque::new();
    let mut out = Vec::new();
    for (i, &key) in trace.iter().enumerate() {
        let t = i as u64 + 1;
        let mut evicted = Vec::new();
        if let Some((h, last)) = resident.get_mut(&key) {
            if t - *last > crp {
                let correl = *last - h[0];
                for j in (1..k).rev() {
                    h[j] = if h[j - 1] == 0 { 0 } else { h[j - 1] + correl };
                }
                h[0] = t;
            }
            *last = t;
        } else {
            if resident.len() == capacity {
                let least = |ok: &dyn Fn(u64) -> bool| {
                    resident
                        .iter()
                        .filter(|(_, (_, last))| ok(*last))
                        .min_by_key(|(_, (h, last))| (h[k - 1], *last))
                        .map(|(&key, _)| key)
                };
                let victim = least(&|last| t - last > crp).or_else(|| least(&|_| true));
                let victim = victim.expect("a full cache has a victim");
                let (h, last) = resident.remove(&victim).unwrap();
                let mut kept = h;
                kept.push(last);
                retained.push_back(Some((victim, kept)));
                if retained.len() > history {
                    retained.pop_front();
                }
                evicted.push(victim);
            }
            let mut h = vec![0; k];
            let found = retained
                .iter_mut()
                .find(|e| e.as_ref().is_some_and(|(rk, _)| *rk == key));
            if let Some((_, old)) = found.and_then(Option::take) {
                h[1..k].copy_from_slice(&old[..k - 1]);
            }
            h[0] = t;
            resident.insert(key, (h, t));
        }
        out.push(evicted);
    }
    out
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

    /// LRU-K for K = 2 and 3, with and without a correlated period, with a retained
    /// history shorter and longer than the cache, against the reference (victim by victim).
    #[test]
    fn lruk_matches_reference(
        cap in 1usize..20,
        k in 2usize..4,
        crp in prop_oneof![Just(0u64), 1u64..6],
        history in 1usize..40,
        t in trace(),
    ) {
        prop_assert_eq!(
            evictions(LruK::new(cap, k, crp, history), cap as u64, &t),
            lruk_ref(cap, k, crp, history, &t)
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
