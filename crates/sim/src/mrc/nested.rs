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
//! **Cost.** A size raised to rate `R_c = m / c` processes a fraction `m / c` of the
//! requests through a cache of about `m` objects. On a grid spaced evenly in log the raised
//! sizes' fractions form a geometric series: from 0.1% to 100% of the working set in 20
//! points (each 1.44 times the last), the raised sizes together process about
//! `3.3 m / c_min` trace-equivalents per policy, against `20 R` for the plain pass.

use super::filter::SpatialFilter;

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

/// One size's place in a [`RatePlan`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlannedSize {
    /// Full-size capacity (units or bytes).
    pub capacity: u64,
    /// Index of its level in [`RatePlan::levels`].
    pub level: usize,
    /// The rate of that level (`(threshold + 1) / 2^64`, a hair off the decimal asked).
    pub rate: f64,
}

/// The rates of one pass: the distinct sampling levels, widest first, and the level of
/// every size.
#[derive(Clone, Debug, PartialEq)]
pub struct RatePlan {
    levels: Vec<SpatialFilter>,
    sizes: Vec<PlannedSize>,
}

impl RatePlan {
    /// Plans `capacities` (any order) at `base`, raised per [`rate_for`].
    pub fn new(capacities: &[u64], base: f64, min_sampled: u64, unit: f64) -> Self {
        let filters: Vec<SpatialFilter> = capacities
            .iter()
            .map(|&c| SpatialFilter::with_rate(rate_for(c, base, min_sampled, unit)))
            .collect();
        let mut levels = filters.clone();
        levels.sort_unstable_by_key(|f| std::cmp::Reverse(f.threshold()));
        levels.dedup();
        let sizes = capacities
            .iter()
            .zip(&filters)
            .map(|(&capacity, f)| PlannedSize {
                capacity,
                level: levels
                    .iter()
                    .position(|l| l == f)
                    .expect("every size's filter is a level"),
                rate: f.rate(),
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
        // Levels widest first: 1, 0.5, 0.02, 0.01.
        let level_rates: Vec<f64> = plan.levels().iter().map(|l| l.rate()).collect();
        assert_eq!(level_rates, [1.0, 0.5, 0.02, 0.01]);
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
