//! Prefetching through the cache driver, on sequences worked out by hand.

use policy::{Access, Cache, Lru, Outcome, PrefetchSpec, PrefetchStats};

fn run(spec: &str, capacity: u64, keys: &[u64]) -> (Vec<bool>, Cache<Lru>) {
    let prefetcher = PrefetchSpec::parse(spec).unwrap().build().unwrap();
    let mut cache = Cache::new(Lru::new(capacity as usize), capacity).with_prefetch(prefetcher);
    let hits = keys
        .iter()
        .enumerate()
        .map(|(t, &k)| cache.access(&Access::unit(k, t as u64)).is_hit())
        .collect();
    (hits, cache)
}

#[test]
fn obl_under_lru_by_hand() {
    // LRU of 3, obl (k=1), oldest first:
    // 10 m [10]
    // 11 m [10 11], 11 follows 10: prefetch 12 -> [10 11 12]
    // 12 h (a prefetch hit) [10 11 12], follows 11: prefetch 13, evicting 10 -> [11 12 13]
    // 20 m evicts 11 -> [12 13 20]
    // 21 m evicts 13 (prefetched, never used) -> [12 20 21]; prefetch 22 evicts 12
    let (hits, cache) = run("obl", 3, &[10, 11, 12, 20, 21]);
    assert_eq!(hits, vec![false, false, true, false, false]);
    assert_eq!(
        cache.prefetch_stats(),
        PrefetchStats {
            issued: 3,
            used: 1,
            evicted_unused: 1,
        }
    );
    let mut resident: Vec<u64> = [20, 21, 22, 12, 13]
        .into_iter()
        .filter(|&k| cache.contains(k))
        .collect();
    resident.sort_unstable();
    assert_eq!(resident, vec![20, 21, 22]);
}

#[test]
fn readahead_turns_a_scan_into_hits() {
    // depth 4, k=1, room for 8: 0 m, 1 m (prefetch 2..=5), 2..=5 h (each prefetches the
    // next four that are missing), so only the first two requests of the scan miss.
    let keys: Vec<u64> = (0..20).collect();
    let (hits, cache) = run("readahead:depth=4", 8, &keys);
    assert_eq!(hits.iter().filter(|&&h| !h).count(), 2);
    let s = cache.prefetch_stats();
    assert_eq!((s.issued, s.used), (22, 18));
}

#[test]
fn a_cache_without_prefetcher_counts_nothing() {
    let mut cache = Cache::new(Lru::new(2), 2);
    for k in 0..5 {
        assert!(matches!(
            cache.access(&Access::unit(k, k)),
            Outcome::Miss { .. }
        ));
    }
    assert_eq!(cache.prefetch_stats(), PrefetchStats::default());
}
