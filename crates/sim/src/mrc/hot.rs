//! Stratified sampling: the hottest keys sampled at a higher rate than the rest.
//!
//! **Why.** A spatial sample at rate `R` makes every sampled key stand for `1 / R` keys. On
//! a skewed trace a few thousand keys fill every small cache and carry a large share of
//! the requests; at `R = 0.01` a sample holds a handful of them, and whether it holds one
//! more or one fewer moves every stack distance by `1 / R` objects and every small size's
//! misses by a hot key's worth. Sampling those keys at a higher rate than the rest (at
//! rate 1 they would be exact) removes most of their share of the variance.
//!
//! **Two strata.** A key is *promoted* once its count in a request sample ([`HotKeys`])
//! reaches a threshold, up to a bound of `limit` keys. Every other key is kept when its
//! hash is under the rate's threshold, at weight `1 / R`. A promoted key is kept when its
//! hash is under a wider threshold, that of rate `sqrt(R)` ([`hot_rate`]), at weight
//! `1 / sqrt(R)`; at fixed size, whose rate starts at 1, promoted keys are kept at rate 1.
//! A stack distance is the sum of the weights of the distinct keys above (the stack
//! stores each key's stratum with its latest access: [`STRATUM_SAMPLED`] and
//! [`STRATUM_HOT`] packed into one integer, so one Fenwick tree, or the word counts of a
//! nested level's [`super::weighted::WeightedStack`], count both exactly), and a reuse
//! scores `1 + hot others / sqrt(R) + sampled others / R` objects ([`Strata::objects`]).
//! The first-bucket adjustment is unchanged: the trace's requests minus the samples'
//! weight.
//!
//! **Promoted keys are sampled too** (since 2026-11-25; before, every request of a
//! promoted key was kept, at weight 1). What stratifying removes is the variance of the
//! hot keys' misses, `(1 / R - 1) m^2` for a key with `m` misses at a size; kept at rate
//! `p` a key adds `(1 / p - 1) m^2` and costs `p` of its requests. At `p = 1` the hot
//! keys cost every one of their requests (on a Zipf 0.9 trace the top 4,096 keys draw a
//! third of all requests, and each goes through a nested level's stack); at
//! `p = sqrt(R)`, the geometric mean of `R` and 1, a hot key costs `sqrt(R)` of its
//! requests and keeps a variance `sqrt(R)` times the hash stratum's. With the same
//! number of promoted keys, found among the keys under the wider threshold (so they are
//! about the `limit / sqrt(R)` hottest), the variance model (`scripts/mrc-variance-model.py`,
//! docs/mrc.md) gives the same expected error on the 50M Zipf trace's level (rate 0.1125)
//! as promoting the top `limit` at rate 1, for 40% of the hot requests. Only keys under
//! the wider threshold are candidates, so the detector looks at no other request.
//!
//! **Why it stays unbiased.** Which keys are promoted depends on the trace, on a request
//! sample drawn with a seeded generator, and on whether a key's hash is under the wider
//! threshold, never on where under it: so given that a key is a candidate, its hash is
//! uniform there, and it is under the hash stratum's threshold with probability `R / p`.
//! A promoted key is kept with probability `p` at weight `1 / p`, any other key with
//! probability `R` at weight `1 / R`: each the inverse of its inclusion probability. A
//! key counts in a distance with the stratum of its latest access: unbiased either way.
//! What promotion costs is its moment: a promoted key that was not in the hash sample is
//! not in the stack, so its first access after promotion is scored as a first access
//! (a miss of its weight at every size) though it may hit. That is at most `limit`
//! requests in the whole trace: a bias of at most `limit / (p N)` of miss ratio (4,096
//! keys at `p = 0.34` in 50 million requests: 2.4e-4).
//!
//! **Finding the hot keys** in one pass, cheaply: a request sample (gaps drawn uniformly
//! from `1..2 every`, from a seeded generator, so that no periodic pattern aliases with it)
//! feeds a SpaceSaving summary of `5 limit` counters (Metwally et al., 2005: a key more
//! frequent than `1 / counters` of the sample is always held, and each count is at most
//! its error above the truth). A key is promoted when its count less that error, a lower
//! bound of its sampled requests, reaches `threshold`. Every request asks first whether
//! its key is promoted: a bitmap of 65,536 bits indexed by the hash's top bits (8 KiB,
//! in the processor's cache) answers no for most keys, and a set of at most `limit`
//! hashes answers the rest.

use bufcache_core::FixedHashMap;
use policy::{FrameId, HashIndex, KeyIndex};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::filter::SpatialFilter;

/// The stack weight of a hash-sampled key: its count goes in the high half of a packed
/// weight.
pub const STRATUM_SAMPLED: u64 = 1 << 32;
/// The stack weight of a promoted key: its count goes in the low half.
pub const STRATUM_HOT: u64 = 1;

/// The rate of the promoted stratum of an estimator sampling the other keys at `rate`:
/// `sqrt(rate)`, the geometric mean of `rate` and 1 (see the module docs, "Promoted keys
/// are sampled too"). At rate 1 it is 1.
pub fn hot_rate(rate: f64) -> f64 {
    rate.sqrt()
}

/// The two strata's rates of a stratified estimator: hash-sampled keys at `rate`, promoted
/// keys at `hot_rate` (at least `rate`). Each counts `1 / rate` of its stratum's objects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strata {
    /// The rate of the hash-sampled stratum.
    pub rate: f64,
    /// The rate of the promoted stratum.
    pub hot_rate: f64,
}

impl Strata {
    /// The strata of an estimator at `rate`, promoted keys kept under the filter of
    /// [`hot_rate`]`(rate)` ([`Strata::hot_filter`]) and weighed by its exact rate.
    pub fn at(rate: f64) -> Self {
        Strata {
            rate,
            hot_rate: SpatialFilter::with_rate(hot_rate(rate)).rate(),
        }
    }

    /// Both strata at rate 1: promoted keys kept whatever their hash, at weight 1 (the
    /// unbounded stratified stack, whose distances are converted by its estimator).
    pub fn exact() -> Self {
        Strata {
            rate: 1.0,
            hot_rate: 1.0,
        }
    }

    /// The filter a promoted key's hash must pass to be kept.
    pub fn hot_filter(&self) -> SpatialFilter {
        SpatialFilter::with_rate(self.hot_rate)
    }

    /// Objects a packed weight of other keys stands for: each promoted key `1 / hot_rate`
    /// objects, each hash-sampled key `1 / rate`.
    #[inline]
    pub fn objects(&self, packed: u64) -> f64 {
        (packed & (STRATUM_SAMPLED - 1)) as f64 / self.hot_rate + (packed >> 32) as f64 / self.rate
    }
}

/// How hot keys are found ([`super::ApproxConfig::hot`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HotConfig {
    /// The most keys promoted (0: no stratification).
    pub limit: usize,
    /// Mean gap between the requests the detector samples (1: every request).
    pub every: u32,
    /// Sampled requests (a lower bound of them) that promote a key.
    pub threshold: u32,
}

impl HotConfig {
    /// `limit` keys, found from one request in 8 on average, promoted at 8 of them (about
    /// 64 requests): early enough that the top keys are exact for nearly the whole trace,
    /// late enough that a key seen a few times by chance is not taken.
    pub fn new(limit: usize) -> Self {
        HotConfig {
            limit,
            every: 8,
            threshold: 8,
        }
    }

    /// No stratification.
    pub fn off() -> Self {
        HotConfig::new(0)
    }

    /// True when keys may be promoted.
    pub fn enabled(&self) -> bool {
        self.limit > 0
    }
}

/// SpaceSaving counters per promotable key: four for candidates, one more because a
/// promoted key keeps its counter for a while.
const COUNTERS_PER_KEY: usize = 5;

/// Bits of the bitmap in front of the promoted set.
const FILTER_BITS: u32 = 16;

/// Finds and remembers the promoted keys (see the module docs).
#[derive(Debug)]
pub struct HotKeys {
    config: HotConfig,
    /// The keys that may be promoted: those the widest promoted stratum keeps.
    candidates: SpatialFilter,
    /// Bit `hash >> (64 - FILTER_BITS)` is set when some promoted key has those top bits.
    filter: Vec<u64>,
    /// The promoted keys' hashes.
    promoted: FixedHashMap<()>,
    /// Requests until the detector's next sample.
    countdown: u32,
    rng: Xoshiro256PlusPlus,
    summary: SpaceSaving,
    /// Requests of promoted keys seen (from their promotion on).
    hot_requests: u64,
    /// Requests observed.
    seen: u64,
    /// The request (counted from 1) that promoted the last key, once `limit` are.
    filled_at: Option<u64>,
}

impl HotKeys {
    /// A detector for `config`, its request sample drawn from `seed`, promoting only keys
    /// whose hash `candidates` keeps (the widest [`Strata::hot_filter`] of the estimators
    /// it serves: no other key could be kept as promoted, so the detector neither counts
    /// nor remembers them).
    pub fn new(config: HotConfig, seed: u64, candidates: SpatialFilter) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let countdown = gap(&mut rng, config.every);
        HotKeys {
            config,
            candidates,
            filter: vec![0; 1 << (FILTER_BITS - 6)],
            promoted: FixedHashMap::default(),
            countdown,
            rng,
            summary: SpaceSaving::new(config.limit.saturating_mul(COUNTERS_PER_KEY)),
            hot_requests: 0,
            seen: 0,
            filled_at: None,
        }
    }

    /// True when the key hashing to `hash` is promoted (it may be promoted by this very
    /// request): the detector sees every request through here, and samples those of
    /// candidate keys.
    #[inline]
    pub fn observe(&mut self, hash: u64) -> bool {
        self.seen += 1;
        if hash > self.candidates.threshold() {
            return false;
        }
        if self.is_promoted(hash) {
            self.hot_requests += 1;
            return true;
        }
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        self.countdown = gap(&mut self.rng, self.config.every);
        if self.filled_at.is_some() {
            return false;
        }
        if self.summary.count(hash) < u64::from(self.config.threshold) {
            return false;
        }
        self.promoted.insert(hash, ());
        let top = (hash >> (64 - FILTER_BITS)) as usize;
        self.filter[top / 64] |= 1 << (top % 64);
        self.hot_requests += 1;
        if self.promoted.len() == self.config.limit {
            self.filled_at = Some(self.seen);
        }
        true
    }

    /// The request (counted from 1) at which the last of `limit` keys was promoted, if
    /// that many were: from there on the detector stops.
    pub fn filled_at(&self) -> Option<u64> {
        self.filled_at
    }

    /// True when the key hashing to `hash` is promoted.
    #[inline]
    pub fn is_promoted(&self, hash: u64) -> bool {
        let top = (hash >> (64 - FILTER_BITS)) as usize;
        self.filter[top / 64] & (1 << (top % 64)) != 0 && self.promoted.contains_key(&hash)
    }

    /// Keys promoted so far.
    pub fn promoted(&self) -> usize {
        self.promoted.len()
    }

    /// Requests to promoted keys, from each one's promotion on (all of them are
    /// candidates).
    pub fn hot_requests(&self) -> u64 {
        self.hot_requests
    }

    /// The configuration.
    pub fn config(&self) -> HotConfig {
        self.config
    }

    /// Bytes of state: the bitmap, the promoted set and the summary.
    pub fn state_bytes(&self) -> usize {
        self.filter.len() * 8 + self.promoted.capacity() * 16 + self.summary.state_bytes()
    }
}

/// A gap drawn uniformly from `1..2 every` (mean `every`; exactly 1 when `every` is 1).
fn gap(rng: &mut Xoshiro256PlusPlus, every: u32) -> u32 {
    let every = every.max(1);
    if every == 1 {
        1
    } else {
        rng.gen_range(1..2 * every)
    }
}

/// SpaceSaving (Metwally, Agrawal, El Abbadi, 2005) over `capacity` counters, kept in an
/// order sorted by count, so that the least counted key, the one a new key replaces
/// (inheriting its count as its error), is the first. Counts only grow by one, so an
/// increment swaps the key with the last one of its count and stays sorted: `O(1)` with
/// the last position of every count (the paper's "stream summary" in flat arrays).
///
/// Each counter has a fixed *home* (its key, count and error never move), found from the
/// key with the policy crate's [`HashIndex`]; only the order of homes is permuted, so a
/// swap touches two positions and no index entry. The last position of a count is a
/// vector indexed by count: counts stay small, since a key whose count less its error
/// reaches the threshold is promoted and no longer counted, so every count is at most
/// the least one when its key came in (at most the sampled requests over the counters)
/// plus the threshold. A promoted key keeps its counter until it becomes the least counted.
#[derive(Debug)]
struct SpaceSaving {
    /// Per home: its key, count (0: vacant) and error.
    keys: Vec<u64>,
    counts: Vec<u32>,
    errors: Vec<u32>,
    /// Homes in ascending order of count, and each home's position in it.
    order: Vec<u32>,
    position: Vec<u32>,
    /// Key to its home (vacant homes are not indexed).
    index: HashIndex,
    /// `last[count]`: the last position holding `count`, valid while some home does.
    last: Vec<u32>,
}

impl SpaceSaving {
    /// `capacity` vacant counters (count 0, no key).
    fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(1, u32::MAX as usize / 2);
        let homes: Vec<u32> = (0..capacity as u32).collect();
        SpaceSaving {
            keys: vec![0; capacity],
            counts: vec![0; capacity],
            errors: vec![0; capacity],
            order: homes.clone(),
            position: homes,
            index: HashIndex::with_capacity(capacity),
            last: vec![capacity as u32 - 1],
        }
    }

    /// Counts one occurrence of `key`; returns the lower bound of its occurrences (its
    /// count less its error).
    fn count(&mut self, key: u64) -> u64 {
        let home = match self.index.get(key, &self.keys) {
            Some(FrameId(home)) => home as usize,
            None => {
                // The least counted key's home, or a vacant one (count 0) while some are.
                let home = self.order[0] as usize;
                if self.counts[home] > 0 {
                    self.index.remove(self.keys[home], &self.keys);
                }
                self.errors[home] = self.counts[home];
                self.keys[home] = key;
                self.index.insert(key, FrameId(home as u32), &self.keys);
                home
            }
        };
        self.increment(home);
        u64::from(self.counts[home] - self.errors[home])
    }

    /// Adds one to `home`'s count, moving it to the end of its count's run.
    fn increment(&mut self, home: usize) {
        let count = self.counts[home];
        let at = self.position[home] as usize;
        let end = self.last[count as usize] as usize;
        if at != end {
            let other = self.order[end];
            self.order.swap(at, end);
            self.position[home] = end as u32;
            self.position[other as usize] = at as u32;
        }
        if end > 0 && self.counts[self.order[end - 1] as usize] == count {
            self.last[count as usize] = end as u32 - 1;
        }
        self.counts[home] += 1;
        let next = count as usize + 1;
        let next_run = self
            .order
            .get(end + 1)
            .is_some_and(|&h| self.counts[h as usize] == count + 1);
        if next == self.last.len() {
            self.last.push(end as u32);
        } else if !next_run {
            // The first of its new count: the run of `count + 1` starts and ends here.
            self.last[next] = end as u32;
        }
    }

    fn state_bytes(&self) -> usize {
        self.keys.capacity() * (8 + 4 * 4) + self.index.table_bytes() + self.last.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_saving_holds_the_frequent_keys_and_bounds_their_counts() {
        // Two counters; stream a a b c a d a: a stays (4 of 7 > 1/2), and its count less
        // its error is a lower bound of its true count.
        let mut s = SpaceSaving::new(2);
        let mut last = 0;
        for key in [1, 1, 2, 3, 1, 4, 1] {
            let bound = s.count(key);
            if key == 1 {
                last = bound;
            }
        }
        assert!(s.keys.contains(&1));
        assert!((2..=4).contains(&last), "lower bound {last}");
        let sorted: Vec<u32> = s.order.iter().map(|&h| s.counts[h as usize]).collect();
        assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        // c replaced b and inherited its count 1 as error: its bound is 1, not 2.
        let mut t = SpaceSaving::new(2);
        t.count(1);
        t.count(2);
        assert_eq!(t.count(3), 1);
        assert_eq!(t.count(1), 2);
        assert_eq!(
            (t.keys, t.counts, t.errors),
            (vec![1, 3], vec![2, 2], vec![0, 1])
        );
    }

    #[test]
    fn every_request_detected_at_threshold_one_promotes_every_key_at_once() {
        let mut hot = HotKeys::new(
            HotConfig {
                limit: 3,
                every: 1,
                threshold: 1,
            },
            7,
            SpatialFilter::with_rate(1.0),
        );
        assert!(hot.observe(10));
        assert!(hot.observe(20));
        assert!(hot.observe(10));
        assert!(hot.observe(30));
        // The limit is reached: a fourth key stays in the hash stratum.
        assert!(!hot.observe(40));
        assert!(!hot.is_promoted(40));
        assert_eq!(hot.promoted(), 3);
        assert_eq!(hot.hot_requests(), 4);
    }

    #[test]
    fn the_hottest_keys_are_promoted_and_rare_ones_are_not() {
        // Key 1 is half of the requests, keys 1000.. are each seen once: at one request in
        // 8 and a threshold of 8, key 1 is promoted within its first ~130 requests and no
        // key seen once ever is.
        let mut hot = HotKeys::new(HotConfig::new(16), 3, SpatialFilter::with_rate(1.0));
        let mut first_hot = None;
        for i in 0..20_000u64 {
            let key = if i % 2 == 0 { 1 } else { 1000 + i };
            if hot.observe(key) && first_hot.is_none() {
                first_hot = Some(i);
            }
        }
        assert_eq!(hot.promoted(), 1);
        assert!(hot.is_promoted(1));
        let at = first_hot.expect("key 1 promoted");
        assert!(at < 400, "key 1 promoted at request {at}");
    }
}
