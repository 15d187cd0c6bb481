//! Nelson 1990's findings, checked on the memory simulator (the acceptance tests of
//! `bufcache experiment nelson`). Each assertion is one sentence of the paper; each can
//! fail (the last test shows the checks reject a configuration that behaves otherwise).

use arbiter::ArbiterSpec;
use rayon::prelude::*;
use sim::experiments::nelson::{
    self, ecd_point, ifs_point, EcdPoint, IfsPoint, FIXED_MB, MEMORY_MB, SLEEPS_S,
};

fn fixed(file_mb: f64) -> ArbiterSpec {
    ArbiterSpec::Fixed {
        file_pages: (file_mb * 256.0) as u64,
    }
}

/// Our arbiters with no tuned constant, each held to the goal on ECD.
const UNTUNED: [ArbiterSpec; 2] = [ArbiterSpec::Balance, ArbiterSpec::Regret];

/// ECD at one memory size: every fixed size, then Sprite's variable cache, then each of
/// [`UNTUNED`].
fn ecd_at(memory_mb: f64) -> (Vec<EcdPoint>, EcdPoint, Vec<EcdPoint>) {
    let mut specs: Vec<(Option<f64>, ArbiterSpec)> =
        FIXED_MB.iter().map(|&f| (Some(f), fixed(f))).collect();
    specs.push((None, ArbiterSpec::SPRITE));
    specs.extend(UNTUNED.iter().map(|a| (None, a.clone())));
    let mut points: Vec<EcdPoint> = specs
        .into_par_iter()
        .map(|(f, a)| ecd_point(memory_mb, f, a))
        .collect();
    let untuned = points.split_off(FIXED_MB.len() + 1);
    let variable = points.pop().unwrap();
    (points, variable, untuned)
}

#[test]
fn ecd_the_smallest_fixed_cache_wins_and_the_variable_cache_matches_it() {
    for memory_mb in MEMORY_MB {
        let (fixed_points, variable, untuned) = ecd_at(memory_mb);
        assert!(fixed_points.iter().all(|p| p.finished) && variable.finished);
        let smallest = &fixed_points[0];
        // Section 4: "a small fixed-size cache is best": no larger cache is faster (by
        // more than 0.5%: at 16 MB the 0.5 and 1 MB caches both leave the VM all it
        // needs and tie to within a tenth of a second) ...
        for p in &fixed_points[1..] {
            assert!(
                smallest.elapsed_s <= 1.005 * p.elapsed_s,
                "{memory_mb} MB: {} MB cache {:.1} s beats the smallest {:.1} s",
                p.fixed_cache_mb.unwrap(),
                p.elapsed_s,
                smallest.elapsed_s
            );
        }
        // ... and the largest is clearly slower, because the VM pages more (Figure 2).
        let largest = fixed_points.last().unwrap();
        assert!(
            largest.elapsed_s > 1.03 * smallest.elapsed_s,
            "{memory_mb} MB"
        );
        assert!(largest.vm_mb > smallest.vm_mb, "{memory_mb} MB");
        // Section 5.1: the variable-size cache is about as good as the best fixed one
        // (Figure 3), while its size moves between the minimum and much more (Table 2).
        // "About": within 7%. Ours is within 3% at 10-12 and 16 MB and 5.9% slower at
        // 14 MB (docs/experiments/nelson.md discusses it).
        let best = fixed_points
            .iter()
            .map(|p| p.elapsed_s)
            .fold(f64::INFINITY, f64::min);
        assert!(
            variable.elapsed_s <= 1.07 * best,
            "{memory_mb} MB: variable {:.1} s, best fixed {best:.1} s",
            variable.elapsed_s
        );
        assert!(variable.cache_max_mb > 2.0 * variable.cache_min_mb);
        // Beyond the paper: the ghost balance and regret, with no tuned constant, within
        // 5% of the best fixed split at every memory size.
        for p in &untuned {
            assert!(
                p.finished && p.elapsed_s <= 1.05 * best,
                "{memory_mb} MB: {} {:.1} s, best fixed {best:.1} s",
                p.arbiter,
                p.elapsed_s
            );
        }
    }
}

fn ifs(arbiter: ArbiterSpec, standalone: f64) -> Vec<IfsPoint> {
    SLEEPS_S
        .iter()
        .map(|&s| ifs_point(s, arbiter.clone(), standalone))
        .collect()
}

#[test]
fn ifs_without_penalty_response_grows_with_sleep_and_the_penalty_and_regret_fix_it() {
    let standalone = nelson::sort_standalone_s();
    let plain = ifs(ArbiterSpec::SPRITE, standalone);
    let penalty = ifs(ArbiterSpec::Age { penalty_s: 120.0 }, standalone);
    // Table 3: the response gets worse as the sleep interval grows, to seconds at 30 s ...
    for w in plain.windows(2) {
        assert!(
            w[1].response_mean_s >= w[0].response_mean_s,
            "sleep {} s: mean response {:.2} s < {:.2} s at {} s",
            w[1].sleep_s,
            w[1].response_mean_s,
            w[0].response_mean_s,
            w[0].sleep_s
        );
    }
    let at_30 = plain.last().unwrap();
    assert!(at_30.response_mean_s >= 1.0, "{at_30:?}");
    assert!(at_30.page_ins > 0 && at_30.cache_max_kb > 2 * penalty[3].cache_max_kb);
    // ... and the sort degrades against running alone.
    assert!(plain.iter().all(|p| p.sort_degradation > 0.05), "{plain:?}");
    // Table 4: with a 120 s penalty the response is near zero at every interval, no page
    // goes to swap, and the sort is faster than without the penalty.
    for p in &penalty {
        assert_eq!((p.page_ins, p.page_outs), (0, 0), "{p:?}");
    }
    assert_protects("the penalty", &penalty, &plain);
    assert!(penalty[3].sort_s < plain[3].sort_s);
    // Beyond the paper: regret, with no constant, protects the interactive program as
    // the penalty does (responses under 0.2 s at every interval) and the sort is no
    // slower than without penalty.
    let regret = ifs(ArbiterSpec::Regret, standalone);
    assert_protects("regret", &regret, &plain);
}

/// At every interval: `points`' worst response is under 0.2 s, and its sort no slower
/// than `plain`'s (Sprite without penalty).
fn assert_protects(who: &str, points: &[IfsPoint], plain: &[IfsPoint]) {
    for (p, q) in points.iter().zip(plain) {
        assert!(p.response_max_s < 0.2, "{who}: {p:?}");
        assert!(
            p.sort_s <= q.sort_s,
            "sleep {}: {who}'s sort {} > {} without penalty",
            p.sleep_s,
            p.sort_s,
            q.sort_s
        );
    }
}

/// File-cache sizes, in pages, for the fixed splits of IFS: from the cache's minimum to
/// three times what memory leaves beside the interactive program's 5.7 MB.
const IFS_FIXED_PAGES: [u64; 8] = [16, 56, 128, 224, 256, 384, 512, 768];

#[test]
fn on_ifs_regret_is_within_5_percent_of_the_best_fixed_split() {
    // The goal on the second benchmark: at every sleep interval, regret's sort is
    // within 5% of the fastest fixed split's (whatever that split does to the interactive
    // program), and its mean response within 5% of the best fixed split's. Measured: the
    // fastest sort at 30 s is a 768-page cache (61.7 s, with 23 s responses); regret keeps
    // the cache at 56 pages, as good as a fixed split gets for responses (63.5 s, 0.04
    // s; at 5 s a 16-page cache answers 1% faster on average, paging one page).
    let standalone = nelson::sort_standalone_s();
    let regret = ifs(ArbiterSpec::Regret, standalone);
    let fixed: Vec<Vec<IfsPoint>> = IFS_FIXED_PAGES
        .par_iter()
        .map(|&file_pages| ifs(ArbiterSpec::Fixed { file_pages }, standalone))
        .collect();
    for (i, r) in regret.iter().enumerate() {
        let fastest = fixed.iter().map(|f| f[i].sort_s).fold(f64::MAX, f64::min);
        let best_response = fixed
            .iter()
            .map(|f| f[i].response_mean_s)
            .fold(f64::MAX, f64::min);
        assert!(
            r.sort_s <= 1.05 * fastest,
            "sleep {} s: regret's sort {} s against the fastest fixed split's {} s",
            r.sleep_s,
            r.sort_s,
            fastest
        );
        assert!(
            r.response_mean_s <= 1.05 * best_response,
            "sleep {} s: regret's mean response {} s against the best fixed split's {} s",
            r.sleep_s,
            r.response_mean_s,
            best_response
        );
    }
}

#[test]
fn the_checks_can_fail_a_zero_penalty_is_not_a_protection() {
    // Self-test: the penalty's and regret's assertions above reject plain Sprite at a
    // 30 s sleep.
    let standalone = nelson::sort_standalone_s();
    let p = ifs_point(30.0, ArbiterSpec::Age { penalty_s: 0.0 }, standalone);
    assert!(p.response_max_s >= 0.2 && p.page_ins > 0, "{p:?}");
}

#[test]
fn runs_are_deterministic() {
    let standalone = nelson::sort_standalone_s();
    let a = ifs_point(10.0, ArbiterSpec::Balance, standalone);
    let b = ifs_point(10.0, ArbiterSpec::Balance, standalone);
    assert_eq!(a, b);
}
