//! A bounded LRU stack with weighted positions that only tells which of a stratified
//! level's sizes a reuse hits at.
//!
//! A stratified nested SHARDS level ([`super::nested`], [`super::hot`]) answers a few
//! sizes, so of a reuse it needs only one thing: the smallest of its sizes the reuse hits
//! at. A promoted key above the reused one counts `1 / p` objects (`p`, the promoted
//! stratum's rate, is `sqrt(R)` or 1: [`super::hot::Strata`]) and a hash-sampled key
//! `1 / R`, and a size `c` hits when `1 + hot keys above / p + sampled keys above / R <= c`,
//! the very expression the stratified Fenwick stack's distance is scored with
//! ([`super::stack::StreamingStack::strata_bounded`]). (A plain level, where every key
//! weighs one, has a simpler stack whose markers move one key at a time:
//! [`super::segments::SegmentedStack`]. Serving plain levels with this one cost 10% more
//! CPU on a loop, docs/mrc.md.)
//!
//! So the stack keeps its keys in LRU order over a window of slots ([`SlotWindow`]),
//! where the packed weight of the keys above any key (promoted keys in the low half,
//! sampled keys in the high half, as [`super::hot`] packs them) is a count of bits: a
//! dozen additions in the processor's first-level cache. A reuse's band, the smallest
//! size it hits at, is found from that weight with the Fenwick stack's own comparison.
//! Nothing else moves when a key does: the cost of an access does not grow
//! with the number of sizes, and a new key costs two updates of the word counts (its
//! own slot, and the oldest key's when it passes the bound).
//!
//! (Until 2026-11-25 the stack was one linked list with a *marker* per size, the deepest
//! key still hitting there, and each key kept its band; on every new key each of the 12
//! markers of the 50M traces' levels stepped over a key, a dependent load and a
//! mispredicted branch each: a fifth of a `--hot` pass on Zipf, more on the loop.
//! docs/mrc.md has the measurements.)
//!
//! The stack holds a key while the keys above it stand for at most `bound` objects
//! (`largest - 1`, with the Fenwick stack's own comparison): a key may sit past the
//! largest size but within the bound (float rounding at the edge), a reuse reported as
//! band `caps.len()`, which misses at every size.
//!
//! **Equivalence.** A reuse is reported by its band, which the estimator scores at the
//! band's own size ([`WeightedStack::band_distance`]): every size of the level hits at
//! that distance exactly when it hits at the true one, so the estimator's histogram,
//! bucketed at those sizes, is the same as with exact distances, and the stack holds and
//! drops the same keys at the same requests (tested against the stratified Fenwick stack,
//! with deletes and promotions). Object mode only.

use super::hot::Strata;
use super::slots::{SlotWindow, NONE};

/// The sizes and how far the stack reaches: a reuse hits at size `i` when `1 +
/// strata.objects(above) <= caps[i]`, and the stack holds a key while
/// `strata.objects(above) <= bound`: the very float expressions the stratified Fenwick
/// stack is scored and trimmed with. (Per-size tables of how many promoted keys fit under
/// each count of sampled ones answered the same without dividing, but a reuse's lookup
/// landed anywhere in tables of tens of thousands of entries: a cache miss each, dearer
/// than the two divisions.)
#[derive(Debug)]
struct Fit {
    caps: Vec<u64>,
    strata: Strata,
    bound: u64,
}

impl Fit {
    /// The first size a key with the packed weight `above` over it hits at
    /// (`caps.len()`: none).
    #[inline]
    fn band(&self, above: u64) -> usize {
        let distance = 1.0 + self.strata.objects(above);
        self.caps
            .iter()
            .position(|&c| distance <= c as f64)
            .unwrap_or(self.caps.len())
    }

    /// True when a key with `above` over it stays in the stack.
    #[inline]
    fn holds(&self, above: u64) -> bool {
        self.strata.objects(above) <= self.bound as f64
    }
}

/// An LRU stack that tells the band of a reuse (see the module docs).
#[derive(Debug)]
pub struct WeightedStack {
    /// The held keys in access order, with their strata.
    window: SlotWindow,
    fit: Fit,
    live_bytes: u64,
    hot_bytes: u64,
}

impl WeightedStack {
    /// A stratified stack at `strata`'s rates for the sizes `caps` (objects, sorted,
    /// without repeats, not empty): band `i` holds the keys whose reuse hits first at
    /// `caps[i]`, a promoted key weighing `1 / hot_rate` objects and a sampled one
    /// `1 / rate`; a key leaves once the keys above it stand for more than `bound` objects
    /// (as [`super::stack::StreamingStack::strata_bounded`]).
    pub fn new(caps: &[u64], strata: Strata, bound: u64) -> Self {
        assert!(!caps.is_empty(), "a segmented stack needs a size");
        debug_assert!(caps.windows(2).all(|w| w[0] < w[1]));
        WeightedStack {
            window: SlotWindow::default(),
            fit: Fit {
                caps: caps.to_vec(),
                strata,
                bound,
            },
            live_bytes: 0,
            hot_bytes: 0,
        }
    }

    /// The scaled distance that stands for a reuse in `band` (what [`WeightedStack::access`]
    /// returned): the deepest distance that band holds, which every size of the level
    /// scores as it would the exact one; past the last size, a distance no size holds.
    pub fn band_distance(&self, band: usize) -> f64 {
        self.fit.caps.get(band).map_or(f64::INFINITY, |&c| c as f64)
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.window.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.window.is_empty()
    }

    /// Summed latest sizes of the keys held.
    pub fn live_bytes(&self) -> u64 {
        self.live_bytes
    }

    /// Of [`WeightedStack::live_bytes`], the promoted keys'.
    pub fn hot_bytes(&self) -> u64 {
        self.hot_bytes
    }

    /// Summed weights of the keys held (packed as [`super::hot`]'s).
    pub fn live_weight(&self) -> u64 {
        self.window.total()
    }

    /// Bytes of state held now (tables at their allocated sizes), for the memory report.
    pub fn state_bytes(&self) -> usize {
        self.window.state_bytes()
    }

    /// Accesses `key` with `size`, `hot` when it is promoted: the band it was found in
    /// (see [`WeightedStack::band_distance`]), or `None` when it was not held.
    pub fn access(&mut self, key: u64, size: u32, hot: bool) -> Option<usize> {
        let found = match self.window.find_or_vacant(key, hot) {
            Ok(e) => {
                let (slot, old_size) = self.window.at(e);
                let band = self.fit.band(self.window.weight_above(slot));
                self.count_bytes(old_size, self.window.is_hot(slot), false);
                self.window.move_to_top(e, key, size, hot);
                Some(band)
            }
            Err(e) => {
                self.window.push(e, key, size, hot);
                None
            }
        };
        self.count_bytes(size, hot, true);
        // Only the oldest key may have passed the bound: its weight above grew by the
        // key on top, or by the moved key's change of stratum.
        self.trim();
        found
    }

    /// Forgets `key` (a delete): the keys below it move up by its weight, as in an LRU
    /// stack. Returns its latest size if it was held.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let slot = self.window.find(key)?;
        Some(self.forget(slot))
    }

    /// Adds (`gain`) or takes out a key of `size` and stratum `hot` in the byte totals.
    #[inline]
    fn count_bytes(&mut self, size: u32, hot: bool, gain: bool) {
        let size = u64::from(size);
        let hot_size = if hot { size } else { 0 };
        if gain {
            self.live_bytes += size;
            self.hot_bytes += hot_size;
        } else {
            self.live_bytes -= size;
            self.hot_bytes -= hot_size;
        }
    }

    /// Drops the oldest keys while the weight above the oldest is past the bound. The
    /// oldest key has the most weight above it, so afterwards every held key is within.
    #[inline]
    fn trim(&mut self) {
        loop {
            let tail = self.window.tail();
            if tail == NONE
                || self
                    .fit
                    .holds(self.window.total() - self.window.weight(tail))
            {
                return;
            }
            self.forget(tail);
        }
    }

    /// Takes the key at live `slot` out of the stack; returns its size.
    fn forget(&mut self, slot: usize) -> u32 {
        let hot = self.window.is_hot(slot);
        let size = self.window.remove(slot);
        self.count_bytes(size, hot, false);
        size
    }

    /// Checks the window's counts, and every held key's band against the weights above
    /// it counted one key at a time from the top.
    #[cfg(test)]
    fn check(&self) -> Result<(), String> {
        self.window.check()?;
        let mut above = 0u64;
        let mut slot = self.window.head();
        while slot != NONE {
            let counted = self.window.weight_above(slot);
            if counted != above {
                return Err(format!("slot {slot}: {counted} above, not {above}"));
            }
            above += self.window.weight(slot);
            slot = self.window.below(slot);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::hot::{hot_rate, STRATUM_HOT, STRATUM_SAMPLED};
    use crate::mrc::stack::StreamingStack;

    /// Sampled keys at `rate`, promoted ones at `hot_rate`.
    fn strata(rate: f64, hot_rate: f64) -> Strata {
        Strata { rate, hot_rate }
    }

    #[test]
    fn bands_by_hand() {
        // `h` promoted keys and `s` sampled ones above, packed.
        let above = |h: u64, s: u64| s * STRATUM_SAMPLED + h * STRATUM_HOT;
        // Rate 1/2, sizes 2 and 4 objects: 1 + h + 2 s <= 2 hits at 2, <= 4 at 4. Then
        // sampled keys at 1/4 (4 objects each), promoted ones at 1/2 (2 objects each),
        // sizes 5 and 10: at 10, h <= 4 with no sampled key above, h <= 2 with one, h = 0
        // with two, and three never fit. Each case: (h, s) and the band.
        let halves = Fit {
            caps: vec![2, 4],
            strata: strata(0.5, 1.0),
            bound: 3,
        };
        let quarters = Fit {
            caps: vec![5, 10],
            strata: strata(0.25, 0.5),
            bound: 9,
        };
        let check = |fit: &Fit, bands: &[(u64, u64, usize)]| {
            for &(h, s, band) in bands {
                assert_eq!(fit.band(above(h, s)), band, "{h} promoted, {s} sampled");
            }
        };
        check(
            &halves,
            &[(0, 0, 0), (1, 0, 0), (2, 0, 1), (1, 1, 1), (0, 2, 2)],
        );
        check(
            &quarters,
            &[
                (2, 0, 0),
                (4, 0, 1),
                (5, 0, 2),
                (2, 1, 1),
                (3, 1, 2),
                (0, 2, 1),
                (1, 2, 2),
                (0, 3, 2),
            ],
        );
        // The bound, 3 objects above: a sampled key and a promoted one are held, two
        // sampled ones are not.
        assert!(halves.holds(above(1, 1)) && !halves.holds(above(0, 2)));
    }

    #[test]
    fn hand_worked_weighted_segments() {
        // Rate 1/2: a sampled key above stands for 2 objects, a promoted one for 1. Sizes
        // 2 and 4 objects: a reuse hits at 2 with at most 1 object above it, at 4 with at
        // most 3, and a key stays while at most 3 objects are above it.
        let mut s = WeightedStack::new(&[2, 4], strata(0.5, 1.0), 3);
        assert_eq!(s.access(1, 1, false), None);
        assert_eq!(s.access(10, 1, true), None);
        assert_eq!(s.access(2, 1, false), None);
        // Stack 2 10 1: above 1, 2 + 1 = 3 objects: hits at 4 only (band 1, scored at 4).
        assert_eq!(s.access(1, 1, false), Some(1));
        assert_eq!(s.band_distance(1), 4.0);
        assert_eq!(s.band_distance(2), f64::INFINITY);
        // Stack 1 2 10: 10 has 2 + 2 = 4 objects above it, past the bound: it left.
        assert_eq!(s.len(), 2);
        assert_eq!(s.access(10, 1, true), None);
        // Stack 10 1 2: above 2, 1 + 2 = 3 objects (band 1); above 1, 1 object (band 0).
        assert_eq!(s.access(1, 1, false), Some(0));
        assert_eq!(s.access(2, 1, false), Some(1));
        // Stack 2 1 10: above 10, 2 + 2 = 4 objects: it left again.
        assert_eq!(s.len(), 2);
        // 1 is promoted at this access, with 2 objects above it (band 1); from now on it
        // weighs 1.
        assert_eq!(s.access(1, 3, true), Some(1));
        assert_eq!(s.hot_bytes(), 3);
        assert_eq!(s.access(10, 1, true), None);
        // Stack 10 1 2: above 2, 1 + 1 = 2 objects (band 1).
        assert_eq!(s.access(2, 1, false), Some(1));
        // Stack 2 10 1: above 1, 2 + 1 = 3 objects (band 1), and it stays.
        assert_eq!(s.access(1, 3, true), Some(1));
        // Stack 1 2 10. Deleting 2 (2 objects) brings 10 to 1 object above: band 0.
        assert_eq!(s.remove(2), Some(1));
        assert_eq!(s.access(10, 1, true), Some(0));
        // Stack 10 1, a new sampled key 3 on top: above 1, 2 + 1 = 3 objects.
        assert_eq!(s.access(3, 1, false), None);
        // 3 is promoted on top: it weighs 1 below it from now on, so 10 has 1 object
        // above it (band 0), where it would have had 2 (band 1).
        assert_eq!(s.access(3, 1, true), Some(0));
        assert_eq!(s.access(10, 1, true), Some(0));
        assert_eq!(s.live_weight(), 3 * STRATUM_HOT);
        assert_eq!((s.live_bytes(), s.hot_bytes()), (5, 5));
    }

    #[test]
    fn hand_worked_promoted_stratum_below_rate_one() {
        // Sampled keys at 1/4 (4 objects each), promoted ones at 1/2 (2 objects each).
        // Sizes 5 and 9 objects: a reuse hits at 5 with at most 4 objects above it, at 9
        // with at most 8, and a key stays while at most 8 objects are above it.
        let mut s = WeightedStack::new(&[5, 9], strata(0.25, 0.5), 8);
        assert_eq!(s.access(1, 1, false), None);
        assert_eq!(s.access(10, 1, true), None);
        assert_eq!(s.access(2, 1, false), None);
        // Stack 2 10 1: above 1, 4 + 2 = 6 objects: 1 + 6 = 7 hits at 9 only (band 1).
        assert_eq!(s.access(1, 1, false), Some(1));
        // Stack 1 2 10: above 10, 4 + 4 = 8 objects, at the bound: held, band 1.
        assert_eq!(s.access(10, 1, true), Some(1));
        // Stack 10 1 2: above 2, 2 + 4 = 6 objects (band 1).
        assert_eq!(s.access(2, 1, false), Some(1));
        // Stack 2 10 1: above 10, 4 objects: 1 + 4 = 5 hits at 5 (band 0).
        assert_eq!(s.access(10, 1, true), Some(0));
        s.check().unwrap();
        // Stack 10 2 1, then a new sampled key 3 on top: above 1, 4 + 2 + 4 = 10 objects,
        // past the bound: 1 leaves.
        assert_eq!(s.access(3, 1, false), None);
        assert_eq!(s.len(), 3);
        // 1 comes back as a new key on top (stack 1 3 10 2), and 2, now under 4 + 4 + 2 =
        // 10 objects, leaves in turn.
        assert_eq!(s.access(1, 1, false), None);
        s.check().unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.live_weight(), STRATUM_HOT + 2 * STRATUM_SAMPLED);
    }

    /// A count drawn from `count` of values drawn from `values`, sorted, without repeats.
    fn sorted_draws(
        rng: &mut impl rand::Rng,
        count: std::ops::Range<usize>,
        values: std::ops::Range<u64>,
    ) -> Vec<u64> {
        let n = rng.gen_range(count);
        let mut drawn: Vec<u64> = (0..n).map(|_| rng.gen_range(values.clone())).collect();
        drawn.sort_unstable();
        drawn.dedup();
        drawn
    }

    /// Stratified: the band reported is the first size the Fenwick stratified stack's
    /// distance hits at (the histogram's own comparison), and the two hold the same keys,
    /// on seeded streams where keys are promoted along the way (a sampled key turning
    /// promoted changes its weight below it) and some are deleted.
    #[test]
    fn weighted_segments_are_the_bands_of_the_stratified_distance() {
        use rand::Rng;
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            for _ in 0..40 {
                let keys = rng.gen_range(2..500u64);
                let rate = [1.0, 0.5, 0.3, 0.1125, 0.01][rng.gen_range(0..5)];
                // Promoted keys at rate 1, at the rule's rate, or between.
                let hot_rate = [1.0, hot_rate(rate), (1.0 + rate) / 2.0][rng.gen_range(0..3)];
                let strata = strata(rate, hot_rate);
                let caps = sorted_draws(&mut rng, 1..6, 1..keys * 3);
                let bound = caps.last().expect("a size") - 1;
                let mut segmented = WeightedStack::new(&caps, strata, bound);
                let mut fenwick = StreamingStack::strata_bounded(strata, bound);
                // Keys at or under `promoted` are hot; it rises through the stream.
                let mut promoted = 0;
                for step in 0..4_000 {
                    if rng.gen_ratio(1, 200) {
                        promoted = rng.gen_range(promoted..=keys);
                    }
                    let key = rng.gen_range(0..keys);
                    if rng.gen_ratio(1, 60) {
                        assert_eq!(segmented.remove(key), fenwick.remove(key));
                        segmented
                            .check()
                            .unwrap_or_else(|e| panic!("{seed}: step {step} remove: {e}"));
                        continue;
                    }
                    let hot = key < promoted;
                    let size = 1 + (key % 7) as u32;
                    let want = fenwick.access_as(key, size, hot).map(|d| {
                        let own = fenwick.stratum_weight(size, hot);
                        let distance = 1.0 + strata.objects(d - own);
                        caps.partition_point(|&c| (c as f64) < distance)
                    });
                    let got = segmented.access(key, size, hot);
                    segmented
                        .check()
                        .unwrap_or_else(|e| panic!("{seed}: step {step} {key} {hot} {got:?}: {e}"));
                    assert_eq!(got, want, "{seed}: step {step}, {strata:?}, caps {caps:?}");
                    assert_eq!(segmented.len(), fenwick.len(), "{seed}: step {step}");
                    assert_eq!(segmented.live_weight(), fenwick.live_weight());
                    assert_eq!(segmented.hot_bytes(), fenwick.hot_bytes());
                }
            }
        });
    }
}
