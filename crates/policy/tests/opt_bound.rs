//! Belady's OPT is a lower bound: on random traces with unit sizes, no registered policy
//! misses less often than OPT at the same capacity.

use policy::testkit::hits_with_future;
use policy::{Belady, BuildContext, PolicySpec, POLICIES};
use proptest::prelude::*;

fn misses(h: &[bool]) -> usize {
    h.iter().filter(|&&x| !x).count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn opt_never_misses_more(
        capacity in 1u64..16,
        trace in proptest::collection::vec(0u64..40, 0..500),
    ) {
        let opt = misses(&hits_with_future(Belady::new(capacity as usize), capacity, &trace));
        for info in POLICIES {
            let policy = PolicySpec::parse(info.name)
                .unwrap()
                .build(&BuildContext::new(capacity, 9))
                .unwrap();
            let other = misses(&hits_with_future(policy, capacity, &trace));
            prop_assert!(
                opt <= other,
                "{} missed {} times, OPT {} (capacity {})",
                info.name, other, opt, capacity
            );
        }
    }
}
