//! `Policy::set_capacity`: a policy told a new capacity runs at it. For every registered
//! online policy, one built at 32 units and told 64 before any request must choose exactly
//! what one built at 64 chooses, on a random trace of unit-sized requests — where it does
//! not, the policy keeps something sized at construction and is approximate after a
//! resize (the test prints them; `docs/policies.md` names them). The policies listed
//! below must be exact: those whose partitions the pool's resize relies on (ARC, 2Q,
//! S3-FIFO), those with no capacity-sized state, and those whose sizes, histories and
//! sketches follow the capacity.
//!
//! Explores: fresh traces each run unless `BUFCACHE_SEED` is set.

use policy::{Access, BuildContext, Cache, Policy, PolicySpec, POLICIES};
use testutil::{Rng, TestRng};

fn hits(mut policy: policy::AnyPolicy, told: Option<u64>, trace: &[u64]) -> Vec<bool> {
    if let Some(c) = told {
        policy.set_capacity(c);
    }
    let mut cache = Cache::new(policy, 64);
    trace
        .iter()
        .enumerate()
        .map(|(t, &k)| cache.access(&Access::unit(k, t as u64)).is_hit())
        .collect()
}

/// Names of the online policies whose resized copy differs from a fresh one.
fn approximate(rng: &mut TestRng) -> Vec<&'static str> {
    // A skewed loop over 160 keys: enough reuse for partitions and ghosts to matter.
    let trace: Vec<u64> = (0..4000)
        .map(|_| {
            if rng.gen_bool(0.6) {
                rng.gen_range(0..40)
            } else {
                rng.gen_range(0..160)
            }
        })
        .collect();
    let mut out = Vec::new();
    for info in POLICIES {
        let spec = PolicySpec::parse(info.name).unwrap();
        let built = |c| spec.build(&BuildContext::new(c, 7)).unwrap();
        if built(64).needs_future() {
            continue;
        }
        if hits(built(32), Some(64), &trace) != hits(built(64), None, &trace) {
            out.push(info.name);
        }
    }
    out
}

#[test]
fn a_policy_told_a_new_capacity_runs_at_it() {
    testutil::explore(|seed| {
        let approx = approximate(&mut seed.rng());
        eprintln!("approximate after a resize: {approx:?}");
        for exact in [
            "arc",
            "twoq",
            "s3fifo",
            "fifo",
            "lru",
            "clock",
            "sieve",
            "lfu",
            "mru",
            "sfifo",
            "slru",
            "s4lru",
            "car",
            "lirs",
            "pinrange",
            "lruk",
            "clockpro",
            "lecar",
            "cacheus",
            "clock2qplus",
            "wtinylfu",
            "mq",
            "tinyufo",
        ] {
            assert!(
                !approx.contains(&exact),
                "{exact} must run at its new capacity exactly (approximate: {approx:?})"
            );
        }
    });
}

/// Shrinking then growing a policy in the middle of a run keeps it within the driver's
/// contract: every policy still evicts a resident frame when asked.
#[test]
fn every_policy_survives_a_shrink_and_a_growth_mid_run() {
    for info in POLICIES {
        let spec = PolicySpec::parse(info.name).unwrap();
        let mut p = spec.build(&BuildContext::new(16, 3)).unwrap();
        if p.needs_future() {
            continue;
        }
        for f in 0..16u32 {
            p.on_insert(
                policy::FrameId(f),
                &Access::unit(u64::from(f), u64::from(f)),
            );
        }
        // the driver evicts down to 8, then tells the policy
        for t in 0..8u64 {
            p.evict(&Access::unit(100 + t, 16 + t), &|_| true)
                .unwrap_or_else(|| panic!("{}: nothing to evict", info.name));
        }
        p.set_capacity(8);
        assert_eq!(p.len(), 8, "{}", info.name);
        p.set_capacity(24);
        for (i, f) in (16..32u32).enumerate() {
            p.on_insert(
                policy::FrameId(f),
                &Access::unit(200 + i as u64, 30 + i as u64),
            );
        }
        assert_eq!(p.len(), 24, "{}", info.name);
        for t in 0..24u64 {
            assert!(
                p.evict(&Access::unit(300 + t, 50 + t), &|_| true).is_some(),
                "{}: could not evict after a resize",
                info.name
            );
        }
        assert!(p.is_empty(), "{}", info.name);
    }
}

/// `Cache::set_capacity` evicts down to the new size in policy order before telling the
/// policy. LRU over 1 2 3 4 shrunk to 2 drops 1 and 2; then 3 hits, and 1 misses and
/// evicts 4, the least recent; grown to 3, a new key evicts nothing.
#[test]
fn a_cache_shrinks_in_policy_order_and_grows() {
    let lru = PolicySpec::parse("lru").unwrap();
    let mut cache = Cache::new(lru.build(&BuildContext::new(4, 1)).unwrap(), 4);
    for k in 1..=4 {
        cache.access(&Access::unit(k, k));
    }
    cache.set_capacity(2);
    assert_eq!(cache.evicted(), &[1, 2]);
    assert_eq!((cache.len(), cache.capacity()), (2, 2));
    assert!(cache.access(&Access::unit(3, 5)).is_hit());
    assert!(!cache.access(&Access::unit(1, 6)).is_hit());
    assert_eq!(cache.evicted(), &[4]);
    cache.set_capacity(3);
    assert!(cache.evicted().is_empty());
    assert!(!cache.access(&Access::unit(9, 7)).is_hit());
    assert!(cache.evicted().is_empty());
    assert_eq!(cache.len(), 3);
}
