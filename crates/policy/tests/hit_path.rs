//! Every policy is held to the [`HitPath`] it declares. A concurrent driver (the buffer
//! pool) trusts the declaration: for `Counter { cap }` it only counts hits per frame and
//! feeds at most `cap` of them to the policy just before it evicts; for `Ignore` it feeds
//! none. Replaying random traces through such a deferring driver must then evict exactly
//! what the plain driver (every hit reported at once, in order) evicts.

use std::collections::HashMap;

use policy::{Access, AnyPolicy, BuildContext, FrameId, HitPath, Policy, PolicySpec, POLICIES};
use proptest::prelude::*;
use testutil::Rng;

/// How a driver reports hits.
#[derive(Clone, Copy)]
enum Report {
    /// Each hit at once.
    Each,
    /// Counted per frame, at most `cap` of them fed before each miss (0: none).
    Deferred { cap: u8 },
}

/// Replay `keys` through `policy` with `capacity` frames; the keys evicted, in order. Like
/// the pool, the driver stamps every event it reports with the next logical time.
fn evictions(mut policy: AnyPolicy, capacity: usize, keys: &[u64], report: Report) -> Vec<u64> {
    let mut clock = 0u64;
    let mut stamp = move |key: u64| {
        clock += 1;
        Access::unit(key, clock)
    };
    let mut frame_of: HashMap<u64, FrameId> = HashMap::new();
    let mut key_of: Vec<Option<u64>> = vec![None; capacity];
    let mut free: Vec<FrameId> = (0..capacity as u32).rev().map(FrameId).collect();
    let mut counts = vec![0u32; capacity];
    let mut out = Vec::new();
    for &key in keys {
        if let Some(&f) = frame_of.get(&key) {
            match report {
                Report::Each => policy.on_hit(f, &stamp(key)),
                Report::Deferred { .. } => counts[f.index()] += 1,
            }
            continue;
        }
        if let Report::Deferred { cap } = report {
            for (i, c) in counts.iter_mut().enumerate() {
                for _ in 0..(*c).min(u32::from(cap)) {
                    let k = key_of[i].expect("a counted frame is resident");
                    policy.on_hit(FrameId(i as u32), &stamp(k));
                }
                *c = 0;
            }
        }
        let access = stamp(key);
        let frame = match free.pop() {
            Some(f) => f,
            None => {
                let f = policy
                    .evict(&access, &|_| true)
                    .unwrap_or_else(|| panic!("{}: a full cache has no victim", policy.name()));
                let old = key_of[f.index()].take().expect("victims are resident");
                frame_of.remove(&old);
                out.push(old);
                f
            }
        };
        policy.on_insert(frame, &access);
        frame_of.insert(key, frame);
        key_of[frame.index()] = Some(key);
    }
    out
}

fn build(name: &str, capacity: usize) -> AnyPolicy {
    PolicySpec::parse(name)
        .unwrap()
        .build(&BuildContext::new(capacity as u64, 7))
        .unwrap()
}

/// Keys with skew (a few hot keys, many cold) so that runs of hits repeat keys.
fn trace() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec((0u64..100, 0u64..8, any::<bool>()), 50..600).prop_map(|v| {
        v.into_iter()
            .map(|(cold, hot, h)| if h { hot } else { 8 + cold })
            .collect()
    })
}

/// Policies whose parameters choose their hit path, with the non-default choice.
const PATH_PARAMS: &[&str] = &["gclock:max=5", "hyperbolic:insertion_age=true"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_policy_keeps_the_hit_path_it_declares(keys in trace(), capacity in 2usize..24) {
        // every registered policy with its defaults, and the parameters that change a
        // policy's hit path
        let specs = POLICIES.iter().map(|i| i.name).chain(PATH_PARAMS.iter().copied());
        for name in specs {
            let deferred = match build(name, capacity).hit_path() {
                HitPath::Ignore => Report::Deferred { cap: 0 },
                HitPath::Counter { cap } => Report::Deferred { cap },
                // Reported one by one and in order, as they happen: nothing to check.
                HitPath::Ordered | HitPath::Offline => continue,
            };
            prop_assert_eq!(
                evictions(build(name, capacity), capacity, &keys, Report::Each),
                evictions(build(name, capacity), capacity, &keys, deferred),
                "{} declares {:?}", name, build(name, capacity).hit_path()
            );
        }
    }
}

/// The check has teeth: for each policy whose hits reorder it, some small trace tells
/// the deferring driver from the plain one; and gclock's cap follows its parameter.
/// A fixed seed (`BUFCACHE_SEED` overrides it): "some trace among 500" is a search, not a
/// property of every seed.
#[test]
fn ordered_policies_would_fail_the_counter_check() {
    testutil::fixed(0x2545_F491_4F6C_DD1D, |seed| {
        let mut rng = seed.rng();
        for name in ["lru", "mru", "arc", "twoq", "lirs", "lruk", "hyperbolic"] {
            assert_eq!(build(name, 4).hit_path(), HitPath::Ordered, "{name}");
            let told_apart = (0..500).any(|_| {
                let keys: Vec<u64> = (0..60).map(|_| rng.gen_range(0..7)).collect();
                evictions(build(name, 4), 4, &keys, Report::Each)
                    != evictions(build(name, 4), 4, &keys, Report::Deferred { cap: 1 })
            });
            assert!(
                told_apart,
                "{name}: deferred hits never changed an eviction"
            );
        }
    });
    assert_eq!(
        build("gclock:max=5", 4).hit_path(),
        HitPath::Counter { cap: 5 }
    );
    assert_eq!(
        build("hyperbolic:insertion_age=true", 4).hit_path(),
        HitPath::Counter { cap: 255 }
    );
    assert_eq!(build("belady", 4).hit_path(), HitPath::Offline);
}
