//! Miniature simulation with a policy that asks for more sampled objects (W-TinyLFU's
//! hill climber, `policy::Policy::miniature_samples`): its sizes get their own rates, and
//! nothing changes for the other policies of the pass.

use policy::PolicySpec;
use sim::mrc::{ApproxConfig, Method};

use crate::mrc_approx::{mixed_trace, run, sizes};

fn config(policies: &[&str], caps: &[u64], rate: f64, min_sampled: u64) -> ApproxConfig {
    ApproxConfig {
        sizes: sizes(caps),
        policies: policies
            .iter()
            .map(|p| PolicySpec::parse(p).unwrap())
            .collect(),
        min_sampled,
        ..ApproxConfig::new(Method::MiniSim(rate))
    }
}

#[test]
fn wtinylfu_sizes_hold_twice_the_sampled_objects_and_the_others_are_unchanged() {
    testutil::explore(|seed| {
        let reqs = mixed_trace(seed, 40_000, 20_000);
        let caps = [200, 800, 3_000, 12_000];
        let alone = run(&reqs, &config(&["lru", "arc"], &caps, 0.05, 50));
        let with = run(&reqs, &config(&["lru", "wtinylfu", "arc"], &caps, 0.05, 50));
        let curve = |r: &sim::mrc::ApproxResult, p: &str| {
            r.curves
                .iter()
                .find(|c| c.method == "minisim" && c.policy == p)
                .unwrap()
                .points
                .clone()
        };
        // LRU and ARC: the same points, rates and misses, with or without W-TinyLFU.
        for p in ["lru", "arc"] {
            assert_eq!(curve(&alone, p), curve(&with, p), "{seed}: {p}");
        }
        // Each raised size holds between `m` and `2 m` sampled objects of its factor's
        // `m`: 50 for LRU (its ladder halves from 50 / 200 = 0.25: 800 needs 0.0625),
        // 100 for W-TinyLFU (from 100 / 200 = 0.5: 800 needs 0.125); 3,000 and 12,000
        // hold enough for both at the base rate.
        let (lru, wt) = (curve(&with, "lru"), curve(&with, "wtinylfu"));
        let rates = |c: &[sim::mrc::histogram::CurvePoint]| -> Vec<f64> {
            c.iter().map(|p| p.rate).collect()
        };
        let base = lru[3].rate;
        assert!((base - 0.05).abs() < 1e-12);
        assert_eq!(rates(&lru), [0.25, 0.0625, base, base]);
        assert_eq!(rates(&wt), [0.5, 0.125, base, base]);
        // The static variant has no climber: the plain plan's rates.
        let st = run(
            &reqs,
            &config(&["wtinylfu:variant=static"], &caps, 0.05, 50),
        );
        assert_eq!(rates(&curve(&st, "wtinylfu:variant=static")), rates(&lru));
    });
}
