//! Replay numbers a trace's objects densely and finds them by array index. That is an
//! optimization only: for every policy whose decisions do not hash keys, the results must be
//! exactly those of driving the library's `Cache` (hashed keys, original key values) over
//! the same requests.

use policy::testkit::next_access_times;
use policy::{Access, BuildContext, Cache, PolicySpec, POLICIES};
use sim::{replay, CacheSize, CompactTrace, ReplayOptions};
use testutil::{Rng, TestRng};
use trace::Request;

/// Explores: a fresh trace each run unless `BUFCACHE_SEED` is set.
#[test]
fn dense_replay_equals_hashed_driver() {
    testutil::explore(|seed| dense_equals_hashed(&mut seed.rng()));
}

fn dense_equals_hashed(rng: &mut TestRng) {
    // sparse, large key values with skew, so that renumbering really changes them
    let keys: Vec<u64> = (0..30_000)
        .map(|_| {
            let r: f64 = rng.gen();
            ((r * r * 2_000.0) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        })
        .collect();
    let reqs: Vec<Request> = keys
        .iter()
        .map(|&key| Request {
            key,
            size: 1,
            ..Request::default()
        })
        .collect();
    let trace = CompactTrace::from_requests(&reqs);
    let next = next_access_times(&keys);
    // A policy that hashes key values (W-TinyLFU's sketch) says so: renumbering changes
    // its collisions, so only the others must agree exactly.
    for info in POLICIES.iter().filter(|p| !p.hashes_keys) {
        for capacity in [10u64, 150, 700] {
            let spec = PolicySpec::parse(info.name).unwrap();
            let got = replay(
                &trace,
                std::slice::from_ref(&spec),
                &[CacheSize::units(capacity)],
                ReplayOptions {
                    ignore_size: true,
                    seed: 3,
                },
                &|_| {},
            )
            .unwrap();
            let policy = spec.build(&BuildContext::new(capacity, 3)).unwrap();
            let mut cache = Cache::new(policy, capacity);
            let mut hits = 0;
            for (t, &key) in keys.iter().enumerate() {
                let mut a = Access::unit(key, t as u64);
                a.next_access = next[t];
                hits += u64::from(cache.access(&a).is_hit());
            }
            assert_eq!(
                got[0].counts.hits, hits,
                "{} at {capacity}: dense replay and hashed driver disagree",
                info.name
            );
        }
    }
}
