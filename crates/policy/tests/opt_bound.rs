//! Belady's OPT is a lower bound: on random traces with unit sizes, no registered policy
//! misses less often than OPT at the same capacity. A policy that may turn newcomers away
//! (`Policy::contests`, TinyUFO) is held to OPT with bypass instead, the optimum among
//! policies that may leave a missed object out (Belady's OPT admits every miss, so it is
//! no bound for them).

use policy::testkit::hits_with_future;
use policy::testkit::next_access_times;
use policy::{Belady, BuildContext, Policy, PolicySpec, NEVER, POLICIES};
use proptest::prelude::*;

fn misses(h: &[bool]) -> usize {
    h.iter().filter(|&&x| !x).count()
}

/// OPT with bypass, by its definition: on a miss with a full cache, of the residents and
/// the newcomer, the one requested furthest in the future is left out (the newcomer
/// itself, when it is that one).
fn bypass_opt_misses(capacity: u64, trace: &[u64]) -> usize {
    let next = next_access_times(trace);
    // resident key -> its next request
    let mut resident: Vec<(u64, u64)> = Vec::new();
    let mut misses = 0;
    for (t, &k) in trace.iter().enumerate() {
        if let Some(r) = resident.iter_mut().find(|r| r.0 == k) {
            r.1 = next[t];
            continue;
        }
        misses += 1;
        if (resident.len() as u64) < capacity {
            resident.push((k, next[t]));
            continue;
        }
        let (far, &(_, far_next)) = resident
            .iter()
            .enumerate()
            .max_by_key(|(_, r)| r.1)
            .expect("capacity is at least 1");
        if next[t] < far_next || (next[t] == NEVER && far_next == NEVER) {
            resident[far] = (k, next[t]);
        }
    }
    misses
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn opt_never_misses_more(
        capacity in 1u64..16,
        trace in proptest::collection::vec(0u64..40, 0..500),
    ) {
        let opt = misses(&hits_with_future(Belady::new(capacity as usize), capacity, &trace));
        let bypass_opt = bypass_opt_misses(capacity, &trace);
        prop_assert!(bypass_opt <= opt);
        for info in POLICIES {
            let policy = PolicySpec::parse(info.name)
                .unwrap()
                .build(&BuildContext::new(capacity, 9))
                .unwrap();
            let opt = if policy.contests() { bypass_opt } else { opt };
            let other = misses(&hits_with_future(policy, capacity, &trace));
            prop_assert!(
                opt <= other,
                "{} missed {} times, OPT {} (capacity {})",
                info.name, other, opt, capacity
            );
        }
    }
}
