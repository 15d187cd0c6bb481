//! Stratified SHARDS (`sim::mrc::hot`): with nothing promoted it is plain SHARDS, with
//! every key promoted it is plain SHARDS at the promoted stratum's rate (the exact curve
//! at fixed size, whose promoted stratum is at rate 1), distances weigh each stratum by
//! hand, and on
//! seeded skewed traces its error is within bounds and below the plain sample's. (That
//! fixed size keeps its budget with promoted keys is tested with the plain budget, in
//! `mrc_approx`.)

use rand::Rng;
use sim::mrc::histogram::Buckets;
use sim::mrc::hot::HotConfig;
use sim::mrc::stack::StreamingStack;
use sim::mrc::{ApproxConfig, ApproxResult, Method, Sampling, Shards, StackDistances};
use sim::{CacheSize, CompactTrace};
use trace::Request;

use crate::mrc_approx::{mixed_trace, run, sizes, unit_requests, with_deletes};

/// Every request detected, promoted at its first: every key is hot from its first access.
fn promote_all(limit: usize) -> HotConfig {
    HotConfig {
        limit,
        every: 1,
        threshold: 1,
    }
}

/// A detector that never promotes (no key is ever counted that often).
fn promote_none() -> HotConfig {
    HotConfig {
        limit: 100,
        every: 1,
        threshold: u32::MAX,
    }
}

/// Zipf(`alpha`) over `keys` keys (rank 0 the hottest), `n` unit requests from `seed`.
fn zipf_trace(seed: testutil::Seed, n: usize, keys: usize, alpha: f64) -> Vec<Request> {
    let mut cdf: Vec<f64> = (1..=keys).map(|r| (r as f64).powf(-alpha)).collect();
    let total: f64 = cdf.iter().sum();
    let mut acc = 0.0;
    for w in &mut cdf {
        acc += *w / total;
        *w = acc;
    }
    let mut rng = seed.rng();
    let keys: Vec<u64> = (0..n)
        .map(|_| {
            let u: f64 = rng.gen();
            cdf.partition_point(|&c| c < u).min(cdf.len() - 1) as u64
        })
        .collect();
    unit_requests(&keys)
}

/// `method` at `caps` objects with `min_sampled`, `hot` and `sample_seed`.
fn config_at(
    caps: &[u64],
    sample_seed: u64,
    method: Method,
    min_sampled: u64,
    hot: HotConfig,
) -> ApproxConfig {
    ApproxConfig {
        sizes: sizes(caps),
        min_sampled,
        sample_seed,
        hot,
        ..ApproxConfig::new(method)
    }
}

fn misses(r: &ApproxResult) -> Vec<f64> {
    r.curves[0].points.iter().map(|p| p.misses).collect()
}

#[test]
fn with_nothing_promoted_it_is_plain_shards() {
    testutil::explore(|seed| {
        let plain_trace = mixed_trace(seed, 30_000, 3_000);
        let deleting = with_deletes(plain_trace.clone(), 97);
        let caps = [20, 100, 300, 1_000, 2_000];
        let config =
            |method, min_sampled, hot| config_at(&caps, seed.value(), method, min_sampled, hot);
        // Without levels, at a fixed rate and at fixed size: point for point.
        for method in [Method::ShardsRate(0.05), Method::ShardsSize(800)] {
            let plain = run(&deleting, &config(method, 0, HotConfig::off()));
            let stratified = run(&deleting, &config(method, 0, promote_none()));
            assert_eq!(stratified.hot_keys, 0);
            assert_eq!(misses(&stratified), misses(&plain), "{seed}: {method:?}");
            assert_eq!(stratified.working_set, plain.working_set, "{seed}");
            assert_eq!(
                stratified.curves[0].method,
                format!("{}+hot", method.name())
            );
        }
        // With a level (40 sampled objects at 0.05: 20 objects need rate 2, so 1): the
        // stratified level serves every size within its reach, here all five, and each
        // point is the plain pass's at the point's rate. (Fixed size with levels is left
        // out: its levels keep room in the budget for the promoted keys they may hold,
        // so its levels differ.)
        let stratified = run(
            &plain_trace,
            &config(Method::ShardsRate(0.05), 40, promote_none()),
        );
        for (i, p) in stratified.curves[0].points.iter().enumerate() {
            assert!(p.hot && p.rate == 1.0, "{seed}: {p:?}");
            let plain = run(
                &plain_trace,
                &config(Method::ShardsRate(p.rate), 0, HotConfig::off()),
            );
            let q = &plain.curves[0].points[i];
            assert!((p.misses - q.misses).abs() < 1e-6, "{seed}: {p:?} {q:?}");
        }
    });
}

/// True when two curves' misses agree to rounding (the promoted stratum's rate and a
/// plain sample's, asked as the same decimal, may differ in the last bits).
fn same_misses(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(1.0))
}

#[test]
fn with_every_key_promoted_it_is_plain_shards_at_the_promoted_rate() {
    testutil::explore(|seed| {
        let reqs = mixed_trace(seed, 30_000, 3_000);
        let exact = StackDistances::compute(&CompactTrace::from_requests(&reqs)).unwrap();
        let caps: Vec<u64> = (1..=20).map(|i| i * 150).collect();
        let config =
            |method, min_sampled, hot| config_at(&caps, seed.value(), method, min_sampled, hot);
        // Fixed size starts at rate 1, and so does its promoted stratum: with every key
        // promoted (and a budget that holds them all) every point is exact.
        let got = run(
            &reqs,
            &config(Method::ShardsSize(1 << 16), 0, promote_all(1 << 13)),
        );
        assert_eq!(got.hot_keys, exact.cold_misses(), "{seed}");
        assert_eq!(got.hot_requests, reqs.len() as u64);
        for p in &got.curves[0].points {
            assert_eq!(
                p.misses,
                exact.misses_at(p.capacity) as f64,
                "{seed}: {p:?}"
            );
        }
        assert_eq!(got.working_set.objects, exact.cold_misses() as f64);
        // At a fixed rate R the promoted stratum is sampled at sqrt(R): with every key
        // that may be promoted promoted, the stratified sample is plain SHARDS at sqrt(R),
        // point for point. Without levels (the base estimator stratified, 0.01 -> 0.1) and
        // with them (30 sampled objects at 0.01: every size below 3,000 is raised, to one
        // level at 0.2, whose reach also takes 3,000; promoted keys at sqrt(0.2)).
        for (min_sampled, promoted_rate) in [(0, 0.1), (30, 0.2f64.sqrt())] {
            let got = run(
                &reqs,
                &config(Method::ShardsRate(0.01), min_sampled, promote_all(1 << 13)),
            );
            let plain = run(
                &reqs,
                &config(Method::ShardsRate(promoted_rate), 0, HotConfig::off()),
            );
            assert!(got.curves[0].points.iter().all(|p| p.hot), "{seed}");
            assert!(
                same_misses(&misses(&got), &misses(&plain)),
                "{seed}: min_sampled {min_sampled}: {:?} against {:?}",
                misses(&got),
                misses(&plain)
            );
            let candidates = reqs
                .iter()
                .filter(|r| {
                    let hash = sim::mrc::filter::salted_key_hash(
                        r.key,
                        sim::mrc::filter::sample_salt(seed.value()),
                    );
                    hash <= sim::mrc::filter::SpatialFilter::with_rate(promoted_rate).threshold()
                })
                .count();
            assert_eq!(got.hot_requests, candidates as u64, "{seed}");
            if min_sampled == 0 {
                assert!((got.working_set.objects - plain.working_set.objects).abs() < 1e-6);
            } else {
                let rate = got.curves[0].points[0].rate;
                assert!(got.curves[0].points.iter().all(|p| p.rate == rate));
                assert!((rate - 0.2).abs() < 1e-12, "{seed}: level rate {rate}");
            }
        }
        // With deletes, against plain SHARDS at the promoted rate (its stack with
        // removals).
        let deleting = with_deletes(reqs, 53);
        let all = run(
            &deleting,
            &config(Method::ShardsRate(0.01), 0, promote_all(1 << 13)),
        );
        let plain = run(
            &deleting,
            &config(Method::ShardsRate(0.1), 0, HotConfig::off()),
        );
        assert!(same_misses(&misses(&all), &misses(&plain)), "{seed}");
    });
}

#[test]
fn weighted_distances_by_hand() {
    // Rate 1/4 keeps hashes below 2^62, and promoted keys are kept at sqrt(1/4) = 1/2,
    // hashes below 2^63: a promoted key stands for 2 objects, a sampled one for 4. a
    // (hash 1) is promoted, b (5) and c (7) are sampled, x (2^63 + 5) is neither.
    // Stream: a b c x a b, then y (2^62 + 9: kept only as promoted) and z (2^63 + 7:
    // promoted, but past the promoted stratum's filter) promoted, then c promoted.
    let (a, b, c, x) = (1u64, 5u64, 7u64, (1 << 63) + 5);
    let (y, z) = ((1u64 << 62) + 9, (1u64 << 63) + 7);
    let mut s = Shards::stratified(Sampling::Rate(0.25), Buckets::Edges(vec![3, 7, 9]));
    assert_eq!(s.hot_filter().threshold(), (1 << 63) - 1);
    s.access_hot(a, 1);
    s.access(b, 1);
    s.access(c, 1);
    s.access(x, 1);
    // a's reuse: itself, no promoted key and two sampled ones above: 1 + 0 + 2 x 4 = 9
    // objects, weight 2. b's: c sampled and a promoted above: 1 + 2 + 4 = 7, weight 4.
    s.access_hot(a, 1);
    s.access(b, 1);
    // Cold weight: a 2, b 4, c 4. Misses at 3: cold 10 + a 2 + b 4; at 7: 10 + a 2; at
    // 9: 10.
    let points = s.curve(&[3, 7, 9], false);
    let got: Vec<f64> = points.iter().map(|p| p.misses).collect();
    assert_eq!(got, [16.0, 12.0, 10.0]);
    assert!(points.iter().all(|p| p.hot));
    // Six requests; the samples stand for 2 + 4 + 4 + 2 + 4 = 16: the adjustment is -10.
    assert_eq!(s.requests(), 6);
    assert_eq!(s.adjustment().requests, -10.0);
    // y, promoted, is kept (a first access of weight 2); z is not, and counts as a
    // request only. c, sampled, is promoted: its reuse counts a and y (2 objects each)
    // and b (4) above it, plus itself: 9, at weight 2, a hit at 9 only.
    s.access_hot(y, 1);
    s.access_hot(z, 1);
    s.access_hot(c, 1);
    let got: Vec<f64> = s
        .curve(&[3, 7, 9], false)
        .iter()
        .map(|p| p.misses)
        .collect();
    assert_eq!(got, [20.0, 16.0, 12.0]);
    assert_eq!(s.requests(), 9);
    // The working set: a, c and y promoted (2 objects each), b sampled (4).
    assert_eq!(s.working_set().requests, 10.0);

    // The stack behind it packs the two strata: promoted keys in the low half.
    let mut stack = StreamingStack::strata();
    assert_eq!(stack.access_as(a, 1, true), None);
    assert_eq!(stack.access_as(b, 1, false), None);
    assert_eq!(stack.access_as(c, 1, false), None);
    let d = stack.access_as(a, 1, true).unwrap();
    assert_eq!(d, 1 + (2 << 32));
    let strata = sim::mrc::hot::Strata {
        rate: 0.25,
        hot_rate: 0.5,
    };
    assert_eq!(strata.objects(d - 1), 8.0);
    // One promoted key above at 1/2 and two sampled at 1/4: 2 + 8 objects.
    assert_eq!(strata.objects(1 + (2 << 32)), 10.0);
    // Bounded at 4 objects at rate 1/2: after a b c, a has 2 sampled keys (4 objects)
    // above and stays; one more sampled key (6 objects) drops it.
    let mut bounded = StreamingStack::strata_bounded(
        sim::mrc::hot::Strata {
            rate: 0.5,
            hot_rate: 1.0,
        },
        4,
    );
    for (k, hot) in [(a, true), (b, false), (c, false)] {
        bounded.access_as(k, 1, hot);
    }
    assert_eq!(bounded.len(), 3);
    bounded.access_as(9, 1, false);
    assert_eq!(bounded.len(), 3);
    assert_eq!(bounded.access_as(a, 1, true), None);
}

#[test]
fn stratified_is_within_bounds_of_the_exact_curve_and_closer_than_plain() {
    // Zipf 0.9 over 50,000 keys, 400,000 requests; 20 sizes from 100 to 20,000 objects;
    // rate 0.02 (about 1,000 sampled keys; a cache of 100 objects holds 2 of them) with no
    // nesting, so every size rests on the base estimator, and 500 keys promoted (kept at
    // sqrt(0.02) = 0.14). Over 8 sample seeds on the default trace seed, stratified mean
    // MAE 0.018 (0.016 with promoted keys at rate 1, before 2026-11-25's second stratum),
    // plain 0.0055-0.056 (mean 0.030): at this thin a sample both are coarse, and what
    // is checked is that no seed is off by more than 0.06 and that the mean over the
    // seeds is within 0.02 and under three quarters of the plain sample's.
    testutil::fixed(12, |seed| {
        let reqs = zipf_trace(seed, 400_000, 50_000, 0.9);
        let exact = StackDistances::compute(&CompactTrace::from_requests(&reqs)).unwrap();
        let caps: Vec<u64> = (0..20)
            .map(|i| (100.0 * 200f64.powf(i as f64 / 19.0)).round() as u64)
            .collect();
        let mae = |hot: HotConfig, sample_seed: u64| {
            let config = ApproxConfig {
                sizes: caps.iter().map(|&c| CacheSize::units(c)).collect(),
                min_sampled: 0,
                sample_seed,
                hot,
                ..ApproxConfig::new(Method::ShardsRate(0.02))
            };
            let got = run(&reqs, &config);
            let n = reqs.len() as f64;
            got.curves[0]
                .points
                .iter()
                .map(|p| (p.miss_ratio - exact.misses_at(p.capacity) as f64 / n).abs())
                .sum::<f64>()
                / caps.len() as f64
        };
        let (mut plain, mut stratified) = (0.0, 0.0);
        for s in 0..8 {
            let m = mae(HotConfig::new(500), s);
            assert!(m <= 0.06, "{seed}: sample seed {s}: stratified MAE {m}");
            stratified += m / 8.0;
            plain += mae(HotConfig::off(), s) / 8.0;
        }
        assert!(
            stratified <= 0.02 && stratified < 0.75 * plain,
            "{seed}: mean MAE stratified {stratified}, plain {plain}"
        );
        eprintln!("{seed}: mean MAE stratified {stratified:.4}, plain {plain:.4}");
    });
}

#[test]
fn bad_combinations_are_typed_errors() {
    let check = |config: ApproxConfig, text: &str| {
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains(text), "{err}");
    };
    let hot = HotConfig::new(100);
    check(
        ApproxConfig {
            byte_mode: true,
            hot,
            ..ApproxConfig::new(Method::ShardsRate(0.1))
        },
        "object curves only",
    );
    check(
        ApproxConfig {
            hot,
            ..ApproxConfig::new(Method::MiniSim(0.1))
        },
        "miniature",
    );
    check(
        ApproxConfig {
            hot,
            ..ApproxConfig::new(Method::ShardsSize(799))
        },
        "eighth",
    );
    assert!(ApproxConfig {
        hot,
        ..ApproxConfig::new(Method::ShardsSize(800))
    }
    .validate()
    .is_ok());
}
