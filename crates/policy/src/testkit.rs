//! Test helpers shared by the policy tests, the simulator's tests and fuzzers.
//!
//! [`check_run`] drives any policy through a [`Cache`] with random pins, removals and
//! (optionally) sizes, and after every operation recounts the invariants every policy must
//! keep: occupancy never exceeds capacity; the policy agrees with the driver on how many
//! objects are resident; a victim is always resident and evictable; the victim list
//! agrees with what `evict` actually returns next.

use crate::{Access, Cache, FrameId, Policy};

/// One step of an invariant-checking run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Request `key` with `size` units.
    Access {
        /// Key.
        key: u64,
        /// Size in units.
        size: u32,
    },
    /// Invalidate `key` if resident.
    Remove(u64),
    /// Forbid evicting `key` while it is resident.
    Pin(u64),
    /// Allow evicting `key` again.
    Unpin(u64),
    /// A miss on `key` that makes room and then never fills it: the pool's read failed,
    /// or another thread mapped `key` meanwhile (so `key` may even be resident).
    AbandonedMiss(u64),
    /// A miss on `key` whose chosen victim is put back because it was pinned or dirtied
    /// meanwhile, as the pool does.
    RefusedVictim(u64),
}

/// Hit (true) or miss (false) for each unit-sized key of `trace`.
pub fn hits<P: Policy>(policy: P, capacity: u64, trace: &[u64]) -> Vec<bool> {
    let mut cache = Cache::new(policy, capacity);
    trace
        .iter()
        .enumerate()
        .map(|(t, &k)| cache.access(&Access::unit(k, t as u64)).is_hit())
        .collect()
}

/// Hits for unit-sized keys whose `next_access` is filled in (for offline policies).
pub fn hits_with_future<P: Policy>(policy: P, capacity: u64, trace: &[u64]) -> Vec<bool> {
    let next = next_access_times(trace);
    let mut cache = Cache::new(policy, capacity);
    trace
        .iter()
        .enumerate()
        .map(|(t, &k)| {
            let mut a = Access::unit(k, t as u64);
            a.next_access = next[t];
            cache.access(&a).is_hit()
        })
        .collect()
}

/// For each position, the position of the same key's next request, or [`crate::NEVER`].
pub fn next_access_times(trace: &[u64]) -> Vec<u64> {
    let mut next = vec![crate::NEVER; trace.len()];
    let mut seen = hashbrown::HashMap::new();
    for (t, &k) in trace.iter().enumerate().rev() {
        if let Some(later) = seen.insert(k, t as u64) {
            next[t] = later;
        }
    }
    next
}

/// Number of misses for unit-sized keys.
pub fn miss_count<P: Policy>(policy: P, capacity: u64, trace: &[u64]) -> usize {
    hits(policy, capacity, trace)
        .into_iter()
        .filter(|h| !h)
        .count()
}

/// After replaying `trace`, the resident keys in eviction order (the full victim list).
pub fn resident_after<P: Policy>(policy: P, capacity: u64, trace: &[u64]) -> Vec<u64> {
    let mut cache = Cache::new(policy, capacity);
    for (t, &k) in trace.iter().enumerate() {
        cache.access(&Access::unit(k, t as u64));
    }
    cache.victims(cache.len())
}

/// Keys evicted by each request of `trace` (unit sizes), for exact victim-order tests.
pub fn evictions<P: Policy>(policy: P, capacity: u64, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut cache = Cache::new(policy, capacity);
    trace
        .iter()
        .enumerate()
        .map(|(t, &k)| {
            cache.access(&Access::unit(k, t as u64));
            cache.evicted().to_vec()
        })
        .collect()
}

/// Drive `policy` through `steps` and check every invariant after each one. Panics with a
/// description of the first violation.
pub fn check_run<P: Policy + Clone>(policy: P, capacity: u64, steps: &[Step]) {
    let mut cache = Cache::new(policy, capacity);
    let mut pinned_keys: Vec<u64> = Vec::new();
    let mut future_next = vec![crate::NEVER; steps.len()];
    // next-access times over Access steps, so that offline policies are exercised too
    let mut last_seen = hashbrown::HashMap::new();
    for (i, s) in steps.iter().enumerate().rev() {
        if let Step::Access { key, .. } = s {
            if let Some(j) = last_seen.insert(*key, i as u64) {
                future_next[i] = j;
            }
        }
    }
    for (i, step) in steps.iter().enumerate() {
        let pinned: Vec<FrameId> = pinned_keys
            .iter()
            .filter_map(|&k| cache.frame_of(k))
            .collect();
        let evictable = |f: FrameId| !pinned.contains(&f);
        match *step {
            Step::Access { key, size } => {
                let access = Access {
                    key,
                    size,
                    time: i as u64,
                    next_access: future_next[i],
                    stream: (key % 3) as u32,
                };
                let before: Vec<u64> = pinned_keys
                    .iter()
                    .copied()
                    .filter(|&k| cache.contains(k))
                    .collect();
                cache.access_with(&access, &evictable);
                for k in before {
                    assert!(cache.contains(k), "step {i}: pinned key {k} was evicted");
                }
            }
            Step::Remove(key) => {
                let was = cache.contains(key);
                assert_eq!(cache.remove(key), was);
                assert!(!cache.contains(key));
            }
            Step::Pin(key) => {
                if !pinned_keys.contains(&key) {
                    pinned_keys.push(key)
                }
            }
            Step::Unpin(key) => pinned_keys.retain(|&k| k != key),
            Step::AbandonedMiss(key) | Step::RefusedVictim(key) => {
                let access = Access {
                    key,
                    size: 1,
                    time: i as u64,
                    next_access: future_next[i],
                    stream: (key % 3) as u32,
                };
                let resident = cache.len();
                if matches!(step, Step::AbandonedMiss(_)) {
                    if let Some(victim) = cache.evict_without_insert(&access, &evictable) {
                        assert!(
                            !pinned_keys.contains(&victim),
                            "step {i}: pinned key {victim} was evicted"
                        );
                        assert_eq!(cache.len(), resident - 1);
                    }
                } else if let Some(victim) = cache.refuse_victim(&access, &evictable) {
                    assert!(
                        cache.contains(victim),
                        "step {i}: refused victim {victim} is gone"
                    );
                    assert_eq!(cache.len(), resident);
                }
            }
        }
        check_state(&cache, &pinned_keys, i);
    }
}

fn check_state<P: Policy + Clone>(cache: &Cache<P>, pinned_keys: &[u64], step: usize) {
    let policy = cache.policy();
    assert!(
        cache.used() <= cache.capacity(),
        "step {step}: {} units used > capacity {}",
        cache.used(),
        cache.capacity()
    );
    assert_eq!(
        policy.len(),
        cache.len(),
        "step {step}: policy counts {} resident, driver {}",
        policy.len(),
        cache.len()
    );
    let pinned: Vec<FrameId> = pinned_keys
        .iter()
        .filter_map(|&k| cache.frame_of(k))
        .collect();
    let evictable = |f: FrameId| !pinned.contains(&f);
    let n = cache.len().min(6);
    let mut listed = Vec::new();
    policy.victims(n, &evictable, &mut listed);
    let mut copy = policy.clone();
    let phantom = Access::phantom();
    let mut evicted = Vec::new();
    for _ in 0..n {
        match copy.evict(&phantom, &evictable) {
            Some(f) => evicted.push(f),
            None => break,
        }
    }
    assert_eq!(
        listed, evicted,
        "step {step}: victim list disagrees with eviction"
    );
    let mut seen = Vec::new();
    for &f in &evicted {
        assert!(
            f.index() < usize::MAX && cache.frame_of(cache.key_of(f)) == Some(f),
            "step {step}: victim {f:?} is not resident"
        );
        assert!(evictable(f), "step {step}: victim {f:?} is pinned");
        assert!(!seen.contains(&f), "step {step}: victim {f:?} listed twice");
        seen.push(f);
    }
    let evictable_count = cache.len() - pinned.len();
    if n > 0 && evictable_count > 0 {
        assert!(
            !evicted.is_empty(),
            "step {step}: {evictable_count} evictable residents but evict found none"
        );
    }
}
