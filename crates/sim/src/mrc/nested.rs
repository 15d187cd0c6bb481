//! Nested sampling rates: small caches sampled more densely than large ones.
//!
//! The error of a sampled curve at a size is set by how many sampled objects a cache of
//! that size holds, `R c` (docs/mrc.md): at `R = 0.01` a cache of 0.1% of a
//! three-million-object working set holds about 30, and its miss ratio is off by a
//! hundredth by luck alone. Raising the rate for the whole pass would cost the whole
//! pass; raising it only for the small sizes costs little, because their caches are small.
//!
//! **Why this is sound.** Spatial samples with one hash are nested: the keys whose hash is
//! at most `t` are a subset of those at most `t' > t`. So one pass can serve every rate at
//! once — a request's hash is compared with each rate's threshold, highest first, and
//! stops at the first it exceeds — and each rate's stream is exactly the sample a
//! separate pass at that rate would have drawn. Each size then takes the rate
//! [`rate_for`] gives it: the base rate, raised so that its scaled cache holds at least
//! `min_sampled` objects (in byte mode, `min_sampled` objects of the working set's mean
//! size), never above 1. Its estimate is the one its own rate gives (misses scaled by its
//! own `1 / R`, with the same adjustment), so a size given rate 1 is the full replay.
//!
//! **Levels.** Raised rates are rounded up to a ladder that halves from the highest rate
//! any size needs ([`level_rate`]), so a cache holds between `m` and `2 m` sampled objects
//! and the sizes of a grid share a few levels (on a grid 1.44 times apart, about two sizes
//! a level). Anchoring the ladder at the top rather than at the base rate keeps the widest
//! level, which costs the most, no wider than its smallest size needs. For
//! SHARDS a level is one estimator ([`NestedShards`]) that answers all its sizes from one
//! stack, bounded to the distances its largest size needs (a few thousand keys: it stays
//! in the processor's caches; in object mode a [`super::segments::SegmentedStack`] that
//! only tells which of the level's sizes a reuse hits at). For miniature simulation a level is one stream (one
//! numbering of keys, one clock) shared by its sizes' caches.
//!
//! **Cost.** Every request a level samples goes through it, and a level's sample contains
//! every narrower one's, so the levels together process the sum of their rates: with
//! levels a factor 2 apart, less than twice the widest, `m / c_min` (capped at 1): on the
//! issue's grid (0.1% to 100% of the working set) with `m = 500`, under 0.4
//! trace-equivalents on a 2.5M-object working set, 0.2 at 5M objects. SHARDS'
//! levels cost a bounded-stack access each (tens of nanoseconds); a miniature cache costs
//! a policy's access per size.

use super::filter::SpatialFilter;
use super::histogram::CurvePoint;
use super::shards::{stack_bound, Shards};

/// The default of [`super::ApproxConfig::min_sampled`]: a miniature cache of 500 sampled
/// objects estimates its miss ratio within a few thousandths on the traces of docs/mrc.md.
pub const DEFAULT_MIN_SAMPLED: u64 = 500;

/// The rate that serves `capacity`: `base`, raised to `min_sampled x unit / capacity` when
/// that is higher (a cache of `capacity` then holds `min_sampled` sampled objects of `unit`
/// units each), never above 1. `min_sampled` 0 leaves every size at `base`.
pub fn rate_for(capacity: u64, base: f64, min_sampled: u64, unit: f64) -> f64 {
    if min_sampled == 0 || capacity == 0 {
        return base;
    }
    let needed = min_sampled as f64 * unit / capacity as f64;
    needed.clamp(base, 1.0)
}

/// The level that serves a size needing rate `needed` ([`rate_for`]) when the highest
/// rate any size of the pass needs is `top`: `base` if that is enough, otherwise the
/// lowest of `top`, `top / 2`, `top / 4`, ... that reaches `needed`. Rates a factor 2
/// apart keep the levels few (one stream and one stack each) at the cost of up to twice
/// the sampled objects a size asked for.
pub fn level_rate(needed: f64, base: f64, top: f64) -> f64 {
    if needed <= base {
        return base;
    }
    let mut rate = top;
    while rate / 2.0 >= needed {
        rate /= 2.0;
    }
    rate
}

/// One size's place in a [`RatePlan`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlannedSize {
    /// Full-size capacity (units or bytes).
    pub capacity: u64,
    /// Index of its level in [`RatePlan::levels`].
    pub level: usize,
    /// The rate of that level (`(threshold + 1) / 2^64`, a hair off the decimal asked).
    pub rate: f64,
    /// The multiple of the pass's `min_sampled` it was planned to hold
    /// ([`RatePlan::with_factors`]; 1 for [`RatePlan::new`]).
    pub factor: u64,
}

/// The rates of one pass: the distinct sampling levels, widest first, and the level of
/// every size.
#[derive(Clone, Debug, PartialEq)]
pub struct RatePlan {
    levels: Vec<SpatialFilter>,
    sizes: Vec<PlannedSize>,
}

impl RatePlan {
    /// Plans `capacities` (any order) at `base`, raised per [`rate_for`] to their
    /// [`level_rate`].
    pub fn new(capacities: &[u64], base: f64, min_sampled: u64, unit: f64) -> Self {
        Self::with_factors(capacities, base, min_sampled, unit, &[1])
    }

    /// Plans every capacity once for each of `factors` (distinct, at least 1): for factor
    /// `f` a size is raised to hold `f x min_sampled` sampled objects, for the policies
    /// that ask for that many ([`policy::Policy::miniature_samples`]). Each factor has
    /// its own ladder, anchored at the highest rate its sizes need, so the sizes of factor
    /// 1 get exactly the levels [`RatePlan::new`] gives them; levels the factors share
    /// (a power-of-two factor's rungs are factor 1's, doubled, unless capped at rate 1)
    /// are one stream. Sizes are listed factor by factor, in the order given.
    pub fn with_factors(
        capacities: &[u64],
        base: f64,
        min_sampled: u64,
        unit: f64,
        factors: &[u64],
    ) -> Self {
        let wanted: Vec<(u64, u64, f64)> = factors
            .iter()
            .flat_map(|&f| {
                capacities
                    .iter()
                    .map(move |&c| (f, c, rate_for(c, base, min_sampled * f, unit)))
            })
            .collect();
        let top = |factor: u64| {
            wanted
                .iter()
                .filter(|w| w.0 == factor)
                .map(|w| w.2)
                .fold(base, f64::max)
        };
        let filters: Vec<SpatialFilter> = wanted
            .iter()
            .map(|&(f, _, n)| SpatialFilter::with_rate(level_rate(n, base, top(f))))
            .collect();
        let mut levels = filters.clone();
        levels.sort_unstable_by_key(|f| std::cmp::Reverse(f.threshold()));
        levels.dedup();
        let sizes = wanted
            .iter()
            .zip(&filters)
            .map(|(&(factor, capacity, _), f)| PlannedSize {
                capacity,
                level: levels
                    .iter()
                    .position(|l| l == f)
                    .expect("every size's filter is a level"),
                rate: f.rate(),
                factor,
            })
            .collect();
        RatePlan { levels, sizes }
    }

    /// The distinct filters, highest threshold first: a hash that passes level `k` passes
    /// every level before it.
    pub fn levels(&self) -> &[SpatialFilter] {
        &self.levels
    }

    /// Every size, in the order given.
    pub fn sizes(&self) -> &[PlannedSize] {
        &self.sizes
    }

    /// The sizes whose rate is above `base`'s, in the order given.
    pub fn raised(&self, base: f64) -> Vec<PlannedSize> {
        let base = SpatialFilter::with_rate(base).threshold();
        let levels = &self.levels;
        self.sizes
            .iter()
            .filter(|s| levels[s.level].threshold() > base)
            .copied()
            .collect()
    }

    /// The plan of `sizes` alone, their levels renumbered (the levels no size uses drop).
    pub fn only(&self, sizes: &[PlannedSize]) -> RatePlan {
        let mut levels: Vec<SpatialFilter> = sizes.iter().map(|s| self.levels[s.level]).collect();
        levels.sort_unstable_by_key(|f| std::cmp::Reverse(f.threshold()));
        levels.dedup();
        let sizes = sizes
            .iter()
            .map(|s| PlannedSize {
                level: levels
                    .iter()
                    .position(|l| *l == self.levels[s.level])
                    .expect("kept"),
                ..*s
            })
            .collect();
        RatePlan { levels, sizes }
    }
}

/// The raised sizes of SHARDS: bounded estimators (one per level for fixed size, one at
/// the widest level for fixed rate, [`NestedShards::merged`]), fed from the
/// same hashes as the base estimator.
#[derive(Debug)]
pub struct NestedShards {
    /// The estimators, widest first, with the sizes each answers (sorted).
    levels: Vec<(Shards, Vec<u64>)>,
    /// Stratified ([`NestedShards::stratified`]): the most promoted keys each level holds
    /// besides its sampled ones; 0 otherwise.
    hot_limit: usize,
}

impl NestedShards {
    /// The estimators of `plan`'s levels (plan the raised sizes only: [`RatePlan::only`]).
    pub fn new(plan: &RatePlan, byte_mode: bool) -> Self {
        let levels = plan
            .levels()
            .iter()
            .enumerate()
            .map(|(level, filter)| {
                let mut caps: Vec<u64> = plan
                    .sizes()
                    .iter()
                    .filter(|s| s.level == level)
                    .map(|s| s.capacity)
                    .collect();
                caps.sort_unstable();
                let shards = Shards::bounded(filter.rate(), caps.clone(), byte_mode);
                debug_assert_eq!(shards.filter(), *filter);
                (shards, caps)
            })
            .collect();
        NestedShards {
            levels,
            hot_limit: 0,
        }
    }

    /// The same levels stratified ([`super::hot`]): each keeps the promoted keys under
    /// its wider threshold, at weight `1 / sqrt(R)`, besides its hash sample
    /// ([`Shards::bounded_stratified`]; a [`super::weighted::WeightedStack`], since a
    /// promoted key and a sampled one move a position by different amounts), and holds up
    /// to `hot_limit` of them more. Object mode only.
    pub fn stratified(self, hot_limit: usize) -> Self {
        let levels = self
            .levels
            .into_iter()
            .map(|(level, caps)| {
                let rate = level.filter().rate();
                (Shards::bounded_stratified(rate, caps.clone()), caps)
            })
            .collect();
        NestedShards { levels, hot_limit }
    }

    /// One estimator at the widest of `plan`'s levels answering every size of the plan
    /// (fixed-rate SHARDS). Each size then holds at least as many sampled objects as its
    /// own level would give it (up to `R_top / R_level` times more), and the pass feeds
    /// one stack the widest level's sample instead of every level its own: the ladder's
    /// levels together see up to twice the widest one's requests. What it costs is the
    /// stack's bound, `R_top` times the largest raised size, a few thousand to tens of
    /// thousands of keys; a segmented stack's access costs about the same whatever its
    /// bound while it stays in the processor's caches. Fixed-size SHARDS keeps the ladder
    /// ([`NestedShards::new`]): its levels must fit half its sample budget.
    pub fn merged(plan: &RatePlan, byte_mode: bool) -> Self {
        let Some(widest) = plan.levels().first() else {
            return NestedShards {
                levels: Vec::new(),
                hot_limit: 0,
            };
        };
        let mut caps: Vec<u64> = plan.sizes().iter().map(|s| s.capacity).collect();
        caps.sort_unstable();
        caps.dedup();
        let shards = Shards::bounded(widest.rate(), caps.clone(), byte_mode);
        NestedShards {
            levels: vec![(shards, caps)],
            hot_limit: 0,
        }
    }

    /// Feeds a request whose key hashes to `hash` to every level that samples it: the
    /// levels are nested, so the walk stops at the first one the hash exceeds (at once
    /// for most requests).
    #[inline]
    pub fn access(&mut self, hash: u64, size: u32) {
        for (level, _) in &mut self.levels {
            if hash > level.filter().threshold() {
                break;
            }
            level.access(hash, size);
        }
    }

    /// Feeds a request to a promoted key to every level (stratified levels only; each
    /// keeps it when the hash passes its own promoted stratum's filter).
    #[inline]
    pub fn access_hot(&mut self, hash: u64, size: u32) {
        for (level, _) in &mut self.levels {
            level.access_hot(hash, size);
        }
    }

    /// The widest promoted stratum's filter of the levels (stratified levels; the keys
    /// that may be promoted at all), `None` without levels.
    pub fn hot_filter(&self) -> Option<SpatialFilter> {
        self.levels
            .iter()
            .map(|(l, _)| l.hot_filter())
            .max_by_key(|f| f.threshold())
    }

    /// Feeds a delete to every level that samples its key.
    pub fn delete(&mut self, hash: u64) {
        for (level, _) in &mut self.levels {
            // A promoted key may be held by any stratified level.
            if self.hot_limit == 0 && hash > level.filter().threshold() {
                break;
            }
            level.delete(hash);
        }
    }

    /// The most keys the levels hold together (object mode: each level's
    /// [`super::shards::stack_bound`], plus its promoted keys when stratified), whatever
    /// the trace.
    pub fn keys_bound(&self) -> usize {
        self.levels
            .iter()
            .map(|(_, caps)| caps.last().copied().unwrap_or(0))
            .zip(&self.levels)
            .map(|(largest, (l, _))| {
                stack_bound(l.filter().rate(), largest, false) as usize + self.hot_limit
            })
            .sum()
    }

    /// Bytes of state the levels hold now.
    pub fn state_bytes(&self) -> usize {
        self.levels.iter().map(|(l, _)| l.state_bytes()).sum()
    }

    /// Requests (deletes excluded) the levels served, summed over levels: the work of
    /// nesting.
    pub fn requests_served(&self) -> u64 {
        self.levels.iter().map(|(l, _)| l.requests()).sum()
    }

    /// Every level's points at its own sizes, over the trace's `requests` and `bytes`
    /// (what the base estimator counted), with or without the first-bucket adjustment.
    pub fn curves(mut self, requests: u64, bytes: u64, adjust: bool) -> Vec<CurvePoint> {
        let mut points = Vec::new();
        for (level, caps) in &mut self.levels {
            level.count_unseen(requests - level.requests(), bytes - level.bytes());
            points.extend(level.curve(caps, adjust));
        }
        points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_size_takes_the_rate_that_holds_min_sampled_objects() {
        // Base 0.01, at least 500 sampled objects: 500 / 1,000 = 0.5; 500 / 25,000 = 0.02;
        // 50,000 x 0.01 = 500 already (base); 400 objects would need 1.25: capped at 1.
        let caps = [1_000, 25_000, 50_000, 100_000, 400];
        let rates: Vec<f64> = caps.iter().map(|&c| rate_for(c, 0.01, 500, 1.0)).collect();
        assert_eq!(rates, [0.5, 0.02, 0.01, 0.01, 1.0]);
        // Byte mode: 500 objects of 4 KiB in a 4 MiB cache: 2,048,000 / 4,194,304.
        assert_eq!(
            rate_for(4 << 20, 0.01, 500, 4096.0),
            500.0 * 4096.0 / 4194304.0
        );
        // min_sampled 0 leaves every size at the base rate.
        assert_eq!(rate_for(1, 0.01, 0, 1.0), 0.01);

        let plan = RatePlan::new(&caps, 0.01, 500, 1.0);
        // The ladder halves from 1 (what 400 objects need): 0.5 is on it, 0.02 rounds up
        // to 1/32, and 50,000 and 100,000 stay at the base. Levels widest first.
        let level_rates: Vec<f64> = plan.levels().iter().map(|l| l.rate()).collect();
        assert_eq!(level_rates, [1.0, 0.5, 1.0 / 32.0, 0.01]);
        let levels: Vec<usize> = plan.sizes().iter().map(|s| s.level).collect();
        assert_eq!(levels, [1, 2, 3, 3, 0]);
        let raised: Vec<u64> = plan.raised(0.01).iter().map(|s| s.capacity).collect();
        assert_eq!(raised, [1_000, 25_000, 400]);
        // The plan of the raised sizes alone drops the base level.
        let only = plan.only(&plan.raised(0.01));
        assert_eq!(only.levels().len(), 3);
        let levels: Vec<usize> = only.sizes().iter().map(|s| s.level).collect();
        assert_eq!(levels, [1, 2, 0]);
    }

    #[test]
    fn a_factor_gets_its_own_ladder_and_leaves_factor_one_alone() {
        let caps = [1_000, 25_000, 50_000, 100_000, 400];
        let plain = RatePlan::new(&caps, 0.01, 500, 1.0);
        let plan = RatePlan::with_factors(&caps, 0.01, 500, 1.0, &[1, 2]);
        let of = |p: &RatePlan, f: u64| -> Vec<(u64, f64)> {
            let sizes = p.sizes().iter().filter(|s| s.factor == f);
            sizes.map(|s| (s.capacity, s.rate)).collect()
        };
        // Factor 1: the plain plan's rates, size for size.
        assert_eq!(of(&plan, 1), of(&plain, 1));
        // Factor 2, 1,000 sampled objects: 1,000 and 400 need rate 1 (the top); 25,000
        // needs 0.04, so 1/16 (1/32 is too little); 50,000 needs 0.02, so 1/32;
        // 100,000 holds 1,000 at the base.
        let rates: Vec<f64> = of(&plan, 2).iter().map(|s| s.1).collect();
        assert_eq!(rates, [1.0, 1.0 / 16.0, 1.0 / 32.0, 0.01, 1.0]);
        // The levels are the union, widest first, 1/32 and the base shared.
        let level_rates: Vec<f64> = plan.levels().iter().map(|l| l.rate()).collect();
        assert_eq!(level_rates, [1.0, 0.5, 1.0 / 16.0, 1.0 / 32.0, 0.01]);
        for s in plan.sizes() {
            assert_eq!(plan.levels()[s.level].rate(), s.rate, "{s:?}");
        }
    }

    #[test]
    fn levels_halve_from_the_highest_rate_needed() {
        assert_eq!(level_rate(0.3, 0.01, 1.0), 0.5);
        assert_eq!(level_rate(0.25, 0.01, 1.0), 0.25);
        assert_eq!(level_rate(0.005, 0.01, 1.0), 0.01);
        assert_eq!(level_rate(0.11, 0.01, 0.2), 0.2);
        assert_eq!(level_rate(0.1, 0.01, 0.2), 0.1);
        // A grid at base 0.01 and 500 sampled objects: sizes of 5,000, 10,000, 20,000,
        // 30,000, 50,000 and 60,000 objects need 0.1, 0.05, 0.025, 0.0167, 0.01 and
        // 0.0083. The ladder is 0.1, 0.05, 0.025 (0.0125 would be too little for 30,000);
        // the last two stay at the base. Each cache holds 500, 500, 500, 750, 500 and 600
        // sampled objects: at least 500, under 1,000.
        let caps = [5_000, 10_000, 20_000, 30_000, 50_000, 60_000];
        let plan = RatePlan::new(&caps, 0.01, 500, 1.0);
        let rates: Vec<f64> = plan.sizes().iter().map(|s| s.rate).collect();
        assert_eq!(rates, [0.1, 0.05, 0.025, 0.025, 0.01, 0.01]);
        let held: Vec<f64> = plan
            .sizes()
            .iter()
            .map(|s| (s.rate * s.capacity as f64).round())
            .collect();
        assert_eq!(held, [500.0, 500.0, 500.0, 750.0, 500.0, 600.0]);
        assert_eq!(plan.levels().len(), 4);
        assert_eq!(plan.raised(0.01).len(), 4);
    }

    #[test]
    fn merged_serves_every_size_at_the_widest_rung() {
        // The grid of `levels_halve_from_the_highest_rate_needed`: four raised sizes on
        // rungs 0.1, 0.05 and 0.025. Merged, one estimator at 0.1 answers all four, and its
        // stack holds at most floor(0.1 x 29,999) + 1 = 3,000 keys.
        let caps = [5_000, 10_000, 20_000, 30_000, 50_000, 60_000];
        let plan = RatePlan::new(&caps, 0.01, 500, 1.0);
        let raised = plan.only(&plan.raised(0.01));
        let ladder = NestedShards::new(&raised, false);
        let merged = NestedShards::merged(&raised, false);
        assert_eq!(ladder.levels.len(), 3);
        assert_eq!(merged.levels.len(), 1);
        assert_eq!(merged.levels[0].0.filter().rate(), 0.1);
        assert_eq!(merged.levels[0].1, [5_000, 10_000, 20_000, 30_000]);
        assert_eq!(merged.keys_bound(), 3_000);
        // Every point it gives is at 0.1, one per size.
        let points = merged.curves(1_000, 1_000, true);
        let rates: Vec<f64> = points.iter().map(|p| p.rate).collect();
        assert_eq!(rates, [0.1; 4]);
        // No raised size: no level.
        let none = NestedShards::merged(&plan.only(&[]), false);
        assert_eq!(none.requests_served(), 0);
        assert!(none.curves(10, 10, true).is_empty());
    }

    #[test]
    fn nested_levels_keep_supersets() {
        let plan = RatePlan::new(&[10, 100, 1000], 0.001, 50, 1.0);
        for key in 0..100_000u64 {
            let h = super::super::filter::key_hash(key);
            let passed: Vec<bool> = plan.levels().iter().map(|l| h <= l.threshold()).collect();
            // Once a level is failed, every narrower one is too.
            assert!(passed.windows(2).all(|w| w[0] || !w[1]), "key {key}");
        }
    }
}
