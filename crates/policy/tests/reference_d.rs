//! Sampled eviction, SIZE and FIFO-merge against O(n)-per-request reference models.
//!
//! Sampling with far more draws than residents sees every resident (the chance that one of
//! six is missed by 4,096 draws is below 10^-320), so the sampled policies must then make
//! exactly the choices of the policy they approximate, or, where that policy's ties are
//! broken at random, a choice the reference allows.

use policy::testkit::evictions;
use policy::{Access, AnyPolicy, BuildContext, Cache, PolicySpec};
use proptest::prelude::*;

fn build(spec: &str, capacity: u64) -> AnyPolicy {
    PolicySpec::parse(spec)
        .unwrap()
        .build(&BuildContext::new(capacity, 3))
        .unwrap()
}

/// Reference LRU: residents least recent first.
fn lru_ref(capacity: usize, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut resident: Vec<u64> = Vec::new();
    let mut out = Vec::new();
    for &k in trace {
        let mut evicted = Vec::new();
        if let Some(i) = resident.iter().position(|&x| x == k) {
            resident.remove(i);
        } else if resident.len() == capacity {
            evicted.push(resident.remove(0));
        }
        resident.push(k);
        out.push(evicted);
    }
    out
}

/// Reference FIFO: residents oldest first.
fn fifo_ref(capacity: usize, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut resident: Vec<u64> = Vec::new();
    let mut out = Vec::new();
    for &k in trace {
        let mut evicted = Vec::new();
        if !resident.contains(&k) {
            if resident.len() == capacity {
                evicted.push(resident.remove(0));
            }
            resident.push(k);
        }
        out.push(evicted);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn exhaustive_sampled_lru_is_lru(
        capacity in 1usize..=6,
        trace in prop::collection::vec(0u64..12, 1..300),
    ) {
        let p = build("sampled:samples=4096", capacity as u64);
        prop_assert_eq!(evictions(p, capacity as u64, &trace), lru_ref(capacity, &trace));
    }

    /// With `log_factor=0` every hit adds one and `decay=0` keeps counts: each victim must
    /// hold the least count (5 + hits since it entered) among the residents.
    #[test]
    fn exhaustive_sampled_lfu_evicts_a_least_counted(
        capacity in 1usize..=6,
        trace in prop::collection::vec(0u64..12, 1..300),
    ) {
        let p = build("sampled:rank=lfu:samples=4096:log_factor=0:decay=0", capacity as u64);
        let mut cache = Cache::new(p, capacity as u64);
        let mut counts: Vec<(u64, u64)> = Vec::new();
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
            for &gone in cache.evicted() {
                let least = counts.iter().map(|e| e.1).min().unwrap();
                let i = counts.iter().position(|e| e.0 == gone).unwrap();
                prop_assert_eq!(counts[i].1, least, "victim {} at t={}", gone, t);
                counts.remove(i);
            }
            match counts.iter_mut().find(|e| e.0 == k) {
                Some(e) => e.1 = (e.1 + 1).min(255),
                None => counts.push((k, 5)),
            }
        }
    }

    /// SIZE in byte mode: every victim is a largest resident.
    #[test]
    fn size_evicts_a_largest(
        requests in prop::collection::vec((0u64..20, 1u32..=8), 1..300),
    ) {
        let capacity = 24;
        let mut cache = Cache::new(build("size", capacity), capacity);
        let mut sizes: Vec<(u64, u32)> = Vec::new();
        for (t, &(k, s)) in requests.iter().enumerate() {
            // an object keeps the size it entered with
            let s = sizes.iter().find(|e| e.0 == k).map_or(s, |e| e.1);
            cache.access(&Access { size: s, ..Access::unit(k, t as u64) });
            for &gone in cache.evicted() {
                let largest = sizes.iter().map(|e| e.1).max().unwrap();
                let i = sizes.iter().position(|e| e.0 == gone).unwrap();
                prop_assert_eq!(sizes[i].1, largest, "victim {} at t={}", gone, t);
                sizes.remove(i);
            }
            if !sizes.iter().any(|e| e.0 == k) {
                sizes.push((k, s));
            }
        }
    }

    /// FIFO-merge never holds more than `examine` objects here, so it is FIFO.
    #[test]
    fn fifo_merge_below_its_window_is_fifo(
        capacity in 1usize..=8,
        trace in prop::collection::vec(0u64..16, 1..300),
    ) {
        let p = build("fifomerge:examine=8:keep=4", capacity as u64);
        prop_assert_eq!(evictions(p, capacity as u64, &trace), fifo_ref(capacity, &trace));
    }
}
