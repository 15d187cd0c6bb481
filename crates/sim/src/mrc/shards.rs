//! SHARDS: the LRU curve from a spatially sampled stream (Waldspurger et al., FAST'15).
//!
//! Only requests to sampled keys ([`SpatialFilter`]) reach the stack. At rate `R` the
//! sampled keys are a fraction `R` of all keys, so each sampled request stands for `1 / R`
//! requests (and its size for `size / R` bytes), and a sampled stack distance stands for a
//! scaled one ([`scaled_distance`]).
//!
//! **Scaling a distance.** A sampled distance `d` counts the key itself plus the `d - 1`
//! *other* sampled keys touched since its previous access. The key itself is in the sample
//! for sure (we are looking at its request); each of the `D - 1` other keys of the true
//! distance `D` is in it with probability `R`, so `d - 1` is about `R (D - 1)` and the
//! estimate is `D = 1 + (d - 1) / R`. The paper scales the whole of `d`, `d / R`, which
//! counts the key itself `1 / R` times: every distance comes out `1 / R - 1` too long, so
//! every reuse hits only from a cache `1 / R - 1` objects larger than it should (99 objects
//! at `R = 0.01`). That shift is nothing at large sizes and a large bias at small ones (at
//! 900 objects, 11% of the size: on a Zipf 0.9 trace, 0.007 of miss ratio). In byte mode
//! the key's own size takes the place of the 1. At `R = 1` both are the exact distance.
//!
//! * **Fixed rate**: `R` is set once; state grows with the sampled keys, `R` times the
//!   working set.
//! * **Fixed size**: at most `s` keys are held. The threshold starts at the whole hash
//!   space; when a new key would make `s + 1`, the key with the largest hash leaves the
//!   sample and the threshold drops just below its hash. Each sample stands for `1 / R`
//!   requests at the rate `R` of its own time, and its distance is scaled by that rate.
//!   (The paper counts samples as 1, rescales the histogram by `R_new / R_old` at each
//!   drop and divides by the final rate: the same weights.) State is bounded by `s`
//!   whatever the trace.
//! * **First-bucket adjustment** (the paper's SHARDS_adj): the sample over- or
//!   under-represents the trace by chance — a few very hot keys in or out of it move the
//!   count of sampled requests far from its expectation `N R`. The difference (expected
//!   minus actual, in requests stood for: `N - sum of weights`) is added to the
//!   distance-zero bucket, which hits at every size; the curve is normalized by `N`.
//!   Without it, the curve is normalized by the sampled weight.
//!
//! * **Stratified** ([`Shards::stratified`], [`super::hot`]): requests to promoted keys
//!   ([`Shards::access_hot`]) are kept when their hash passes the promoted stratum's wider
//!   filter (rate `sqrt(R)`, [`super::hot::hot_rate`]; at fixed size, rate 1), at weight
//!   `1 / sqrt(R)`, and count as that many objects in the distances above them; the rest
//!   is sampled as above. At fixed size the promoted keys count against the budget.
//!
//! Deletes drop the key from the stack (its next access is cold), and are not requests.

use std::collections::BinaryHeap;

use hashbrown::HashSet;

use super::filter::SpatialFilter;
use super::histogram::{Buckets, CurvePoint, DistanceHistogram, Weight};
use super::hot::{Strata, STRATUM_SAMPLED};
use super::segments::SegmentedStack;
use super::stack::StreamingStack;
use super::weighted::WeightedStack;

/// How the sample is bounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// Keep a fixed fraction of the keys (`0 < rate <= 1`).
    Rate(f64),
    /// Keep at most this many keys, lowering the rate as needed (at least 1).
    Samples(usize),
}

/// A SHARDS estimator fed one request at a time.
#[derive(Debug)]
pub struct Shards {
    filter: SpatialFilter,
    /// `filter.rate()`, kept at hand for the per-request path.
    rate: f64,
    /// Hashes of the held keys, largest on top, and the budget (fixed size only).
    held: Option<(BinaryHeap<u64>, usize)>,
    /// Stratified: distances weigh promoted keys as `1 / hot_rate` objects each.
    stratified: bool,
    /// Stratified: the promoted stratum's rate and the largest hash it keeps (rate 1 at
    /// fixed size, whose rate falls from 1 during the pass).
    hot_rate: f64,
    hot_threshold: u64,
    /// Fixed size, stratified: hashes in `held` whose keys were promoted since (they left
    /// the hash-sampled stratum; the heap cannot drop them in place).
    promoted_in_heap: HashSet<u64>,
    stack: Stack,
    histogram: DistanceHistogram,
    requests: u64,
    bytes: u64,
    sampled_requests: u64,
    peak_state_bytes: usize,
}

/// The distance in the whole trace that a sampled distance `sampled` stands for at `rate`:
/// the key's own weight `own` (1, or its size in byte mode) counted once, the other
/// sampled keys' weight scaled by `1 / rate` (see the module docs for why not `sampled /
/// rate`).
#[inline]
pub fn scaled_distance(sampled: u64, own: u64, rate: f64) -> f64 {
    debug_assert!(own <= sampled, "a distance includes the key's own weight");
    own as f64 + (sampled - own) as f64 / rate
}

/// The bound of [`Shards::bounded`]'s stack for sizes up to `largest` at `rate`: the
/// weight above a reused key that still hits at `largest`, plus 1 (the stack holds a key
/// while the weight above it is below the bound). In object mode it is also the most keys
/// the stack holds.
pub fn stack_bound(rate: f64, largest: u64, byte_mode: bool) -> u64 {
    let others = if byte_mode {
        largest
    } else {
        largest.saturating_sub(1)
    };
    // A hair over the product, so that float rounding of `rate x others` (an integer at
    // rate 1) never holds one key too few; at rate 1 the bound is `others + 1`.
    (rate * others as f64 * (1.0 + 1e-12)).floor() as u64 + 1
}

/// The most other sampled keys (object mode) a reuse may have above it at `rate` and
/// still hit in a cache of `capacity` objects: the largest `w` with
/// [`scaled_distance`]`(w + 1, 1, rate) <= capacity`, computed with the very float
/// comparison the histogram makes, so that a stack cut at this depth scores every reuse as
/// the exact distance would. `None` when nothing hits (capacity 0).
pub fn hit_depth(rate: f64, capacity: u64) -> Option<u64> {
    let hits = |w: u64| scaled_distance(w + 1, 1, rate) <= capacity as f64;
    if !hits(0) {
        return None;
    }
    // The product is within a unit of the answer; step to the exact edge.
    let mut w = (rate * capacity.saturating_sub(1) as f64).floor() as u64;
    while w > 0 && !hits(w) {
        w -= 1;
    }
    while hits(w + 1) {
        w += 1;
    }
    Some(w)
}

/// The stack behind an estimator: the Fenwick window (any distance, or bounded), or, for
/// a bounded object-mode estimator, a stack that reports bands: the segmented one (plain)
/// or the weighted one (stratified).
#[derive(Debug)]
enum Stack {
    Window(StreamingStack),
    Segments(SegmentedStack),
    Weighted(WeightedStack),
}

impl Stack {
    /// Accesses `key` (`hot`: promoted): its distance in the stack, or the band a
    /// weighted stack found it in ([`Stack::scaled`] reads either), `None` for a key not
    /// held.
    #[inline]
    fn access(&mut self, key: u64, size: u32, hot: bool) -> Option<u64> {
        match self {
            Stack::Window(s) => s.access_as(key, size, hot),
            Stack::Segments(s) => s.access(key, size),
            Stack::Weighted(s) => s.access(key, size, hot).map(|band| band as u64),
        }
    }

    /// The distance in the whole trace that what [`Stack::access`] returned stands for at
    /// `rate`: the stack distance scaled (`stratified`: promoted keys above count one
    /// object each, [`strata_objects`]), or a weighted stack's band's own size.
    #[inline]
    fn scaled(&self, found: u64, size: u32, hot: bool, strata: Strata, stratified: bool) -> f64 {
        match self {
            Stack::Weighted(s) => s.band_distance(found as usize),
            Stack::Window(s) if stratified => {
                1.0 + strata.objects(found - s.stratum_weight(size, hot))
            }
            Stack::Window(s) => scaled_distance(found, s.stratum_weight(size, hot), strata.rate),
            Stack::Segments(_) => scaled_distance(found, 1, strata.rate),
        }
    }

    fn remove(&mut self, key: u64) -> Option<u32> {
        match self {
            Stack::Window(s) => s.remove(key),
            Stack::Segments(s) => s.remove(key),
            Stack::Weighted(s) => s.remove(key),
        }
    }

    /// Summed weights of the keys held and, of their bytes, the promoted keys' (both as
    /// [`StreamingStack::live_weight`] and [`StreamingStack::hot_bytes`]).
    fn strata_totals(&self) -> (u64, u64) {
        match self {
            Stack::Window(s) => (s.live_weight(), s.hot_bytes()),
            Stack::Segments(s) => (s.len() as u64 * STRATUM_SAMPLED, 0),
            Stack::Weighted(s) => (s.live_weight(), s.hot_bytes()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Stack::Window(s) => s.len(),
            Stack::Segments(s) => s.len(),
            Stack::Weighted(s) => s.len(),
        }
    }

    fn live_bytes(&self) -> u64 {
        match self {
            Stack::Window(s) => s.live_bytes(),
            Stack::Segments(s) => s.live_bytes(),
            Stack::Weighted(s) => s.live_bytes(),
        }
    }

    fn state_bytes(&self) -> usize {
        match self {
            Stack::Window(s) => s.state_bytes(),
            Stack::Segments(s) => s.state_bytes(),
            Stack::Weighted(s) => s.state_bytes(),
        }
    }
}

impl Shards {
    /// A fresh estimator. `byte_mode`: distances weigh objects by their size (capacities
    /// in bytes); otherwise every object is one unit.
    pub fn new(sampling: Sampling, buckets: Buckets, byte_mode: bool) -> Self {
        let (filter, held) = match sampling {
            Sampling::Rate(r) => (SpatialFilter::with_rate(r), None),
            Sampling::Samples(s) => (
                SpatialFilter::with_rate(1.0),
                Some((BinaryHeap::with_capacity(s + 1), s.max(1))),
            ),
        };
        let mut shards = Shards {
            filter,
            rate: filter.rate(),
            held,
            stratified: false,
            hot_rate: 1.0,
            hot_threshold: u64::MAX,
            promoted_in_heap: HashSet::new(),
            stack: Stack::Window(StreamingStack::new(byte_mode)),
            histogram: DistanceHistogram::new(buckets),
            requests: 0,
            bytes: 0,
            sampled_requests: 0,
            peak_state_bytes: 0,
        };
        shards.note_state();
        shards
    }

    /// An estimator at `rate` that answers only `capacities` (objects, or bytes in
    /// `byte_mode`; sorted), keeping only the distances they need: a reuse hits at `c` when
    /// the weight of the other sampled keys since its previous access is at most `rate (c -
    /// 1)` objects (`rate c` bytes; see [`scaled_distance`]), so its stack is bounded just
    /// above that for the largest ([`StreamingStack::bounded`]) and anything farther counts
    /// as a miss at every one of them, like a first access. Its working-set estimate
    /// counts only the keys held. The nested levels ([`super::nested`]) are made of these.
    ///
    /// In object mode the stack is a [`SegmentedStack`] cut at the sizes' depths
    /// ([`hit_depth`]): it reports, instead of a reuse's distance, the deepest distance of
    /// the band between two sizes that it falls in, which every size of the estimator
    /// scores the same way, at a fraction of the Fenwick stack's cost.
    pub fn bounded(rate: f64, capacities: Vec<u64>, byte_mode: bool) -> Self {
        let largest = capacities.iter().copied().max().unwrap_or(0);
        let mut depths: Vec<u64> = capacities
            .iter()
            .filter_map(|&c| hit_depth(rate, c))
            .collect();
        depths.sort_unstable();
        depths.dedup();
        let mut shards = Shards::new(Sampling::Rate(rate), Buckets::Edges(capacities), byte_mode);
        shards.stack = if byte_mode || depths.is_empty() {
            Stack::Window(StreamingStack::bounded(
                byte_mode,
                stack_bound(rate, largest, byte_mode),
            ))
        } else {
            Stack::Segments(SegmentedStack::new(&depths))
        };
        shards
    }

    /// A stratified estimator (object mode, [`super::hot`]): [`Shards::access`] for the
    /// hash-sampled stratum, [`Shards::access_hot`] for promoted keys.
    pub fn stratified(sampling: Sampling, buckets: Buckets) -> Self {
        let plain = Shards::new(sampling, buckets, false);
        // A fixed-size sample starts at rate 1, and so does its promoted stratum.
        let strata = Strata::at(plain.rate);
        Shards {
            stratified: true,
            hot_rate: strata.hot_rate,
            hot_threshold: strata.hot_filter().threshold(),
            stack: Stack::Window(StreamingStack::strata()),
            ..plain
        }
    }

    /// [`Shards::bounded`], stratified (object mode): its stack holds a key while the
    /// keys above it stand for at most the largest capacity less one objects (promoted
    /// keys `1 / sqrt(rate)` each, [`Strata::at`]), so it drops only keys whose next
    /// access misses at every capacity.
    /// It holds at most the sampled keys of [`stack_bound`] plus the promoted ones. The
    /// stack is a [`WeightedStack`], which reports the band between two capacities a
    /// reuse falls in: its curve is the stratified Fenwick stack's
    /// ([`StreamingStack::strata_bounded`]) exactly, for a fraction of the work (it counts
    /// the weight above a key in words of slot bits, and keys each stratum in its own
    /// table).
    pub fn bounded_stratified(rate: f64, capacities: Vec<u64>) -> Self {
        let largest = capacities.iter().copied().max().unwrap_or(0);
        let mut sizes = capacities.clone();
        sizes.sort_unstable();
        sizes.dedup();
        let bound = largest.saturating_sub(1);
        // A weighted stack's band is the bucket of these edges.
        let plain = Shards::new(Sampling::Rate(rate), Buckets::Edges(sizes.clone()), false);
        let strata = Strata::at(plain.rate);
        let stack = if sizes.is_empty() {
            Stack::Window(StreamingStack::strata_bounded(strata, bound))
        } else {
            Stack::Weighted(WeightedStack::new(&sizes, strata, bound))
        };
        Shards {
            stratified: true,
            hot_rate: strata.hot_rate,
            hot_threshold: strata.hot_filter().threshold(),
            stack,
            ..plain
        }
    }

    /// Counts `requests` of `bytes` that another filter dropped before this estimator saw
    /// them (a nested level is fed only its own sample), so that its first-bucket
    /// adjustment and its curve are over the whole trace.
    pub fn count_unseen(&mut self, requests: u64, bytes: u64) {
        self.requests += requests;
        self.bytes += bytes;
    }

    /// The sampling filter as it stands (its threshold falls over time at fixed size).
    pub fn filter(&self) -> SpatialFilter {
        self.filter
    }

    /// Requests seen (sampled or not; deletes excluded).
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Bytes of the requests seen (sampled or not).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Requests that were sampled.
    pub fn sampled_requests(&self) -> u64 {
        self.sampled_requests
    }

    /// Keys held now.
    pub fn sampled_keys(&self) -> usize {
        self.stack.len()
    }

    /// The most state held at any time, in bytes (stack, histogram, heap).
    pub fn peak_state_bytes(&self) -> usize {
        self.peak_state_bytes
    }

    /// Counts a request that the caller's own pre-filter dropped (its hash is above this
    /// estimator's threshold), so that the adjustment knows the trace's totals.
    #[inline]
    pub fn skip(&mut self, size: u32) {
        self.requests += 1;
        self.bytes += u64::from(size);
    }

    /// Feeds a read or write of the key whose hash is `hash` ([`super::filter::key_hash`]).
    #[inline]
    pub fn access(&mut self, hash: u64, size: u32) {
        self.requests += 1;
        self.bytes += u64::from(size);
        if hash > self.filter.threshold() {
            return;
        }
        self.record(hash, size, false);
    }

    /// Feeds a read or write of a promoted key (a stratified estimator,
    /// [`Shards::stratified`]): kept when its hash passes the promoted stratum's filter
    /// ([`Shards::hot_filter`]), at weight `1 / hot_rate`.
    #[inline]
    pub fn access_hot(&mut self, hash: u64, size: u32) {
        debug_assert!(
            self.stratified,
            "a promoted key in an unstratified estimator"
        );
        self.requests += 1;
        self.bytes += u64::from(size);
        if hash > self.hot_threshold {
            return;
        }
        self.record(hash, size, true);
    }

    /// The rates of the two strata now (a stratified estimator's; the promoted one is
    /// the sampled one's in a plain estimator, where it is not used).
    fn strata(&self) -> Strata {
        Strata {
            rate: self.rate,
            hot_rate: if self.stratified {
                self.hot_rate
            } else {
                self.rate
            },
        }
    }

    /// The largest hash a promoted key may have to be kept (`u64::MAX` at rate 1).
    pub fn hot_filter(&self) -> SpatialFilter {
        SpatialFilter::with_threshold(self.hot_threshold)
    }

    /// Scores a kept request: its weight (`1 / R`, or 1 for a promoted key) at its scaled
    /// distance, or as a first access.
    #[inline]
    fn record(&mut self, hash: u64, size: u32, hot: bool) {
        self.sampled_requests += 1;
        let strata = self.strata();
        let scale = 1.0 / if hot { strata.hot_rate } else { strata.rate };
        let weight = Weight {
            requests: scale,
            bytes: f64::from(size) * scale,
        };
        match self.stack.access(hash, size, hot) {
            Some(found) => {
                if let Stack::Weighted(_) = self.stack {
                    // A band, and the histogram's edges are the stack's sizes.
                    self.histogram.add_to(found as usize, weight);
                } else {
                    let distance = self.stack.scaled(found, size, hot, strata, self.stratified);
                    self.histogram.add(distance, weight);
                }
                if hot && self.held.is_some() && hash <= self.filter.threshold() {
                    // It may have been held as a sampled key: its hash stays in the
                    // heap, which must not count it again.
                    self.promoted_in_heap.insert(hash);
                }
            }
            None => {
                self.histogram.add_cold(weight);
                if self.held.is_some() {
                    self.admit(hash, hot);
                }
            }
        }
    }

    /// Feeds a delete of the key whose hash is `hash`.
    pub fn delete(&mut self, hash: u64) {
        let kept = self.stratified || hash <= self.filter.threshold();
        if kept && self.stack.remove(hash).is_some() {
            if let Some((heap, _)) = &mut self.held {
                // Rebuilding is linear, but deletes of sampled keys are rare next to
                // requests; the heap must not keep a hash the stack no longer holds.
                heap.retain(|&h| h != hash);
            }
        }
    }

    /// A new key entered a fixed-size sample (`hot`: a promoted one, which the heap does
    /// not hold: it leaves only by a delete): while the keys held exceed the budget, the
    /// sampled key with the largest hash leaves and the threshold drops below it.
    fn admit(&mut self, hash: u64, hot: bool) {
        let Some((heap, budget)) = &mut self.held else {
            return;
        };
        if !hot {
            heap.push(hash);
        }
        while self.stack.len() > *budget {
            let Some(top) = heap.pop() else {
                // Only promoted keys left: the budget is checked against the limit of
                // promoted keys (ApproxConfig::validate), so this does not happen.
                break;
            };
            if self.promoted_in_heap.remove(&top) {
                continue;
            }
            self.filter = SpatialFilter::with_threshold(top - 1);
            self.rate = self.filter.rate();
            // The stack is keyed by hash (a bijection of the key), so the hash names it.
            self.stack.remove(top);
        }
        self.note_state();
    }

    fn note_state(&mut self) {
        self.peak_state_bytes = self.peak_state_bytes.max(self.state_bytes());
    }

    /// Bytes of state held now (stack, histogram, heap).
    pub fn state_bytes(&self) -> usize {
        let heap = self.held.as_ref().map_or(0, |(h, _)| h.capacity() * 8)
            + self.promoted_in_heap.capacity() * 8;
        heap + self.stack.state_bytes() + self.histogram.state_bytes()
    }

    /// The curve at `capacities` (units, or bytes in byte mode), with or without the
    /// first-bucket adjustment.
    pub fn curve(&mut self, capacities: &[u64], adjust: bool) -> Vec<CurvePoint> {
        self.note_state();
        let sampled = self.histogram.total();
        let total = if adjust {
            Weight {
                requests: self.requests as f64,
                bytes: self.bytes as f64,
            }
        } else {
            sampled
        };
        let mut points = self.histogram.curve(capacities, total, self.rate);
        for p in &mut points {
            p.hot = self.stratified;
        }
        points
    }

    /// The first-bucket adjustment in requests and bytes: the trace's totals minus what
    /// the samples stand for (negative when the sample drew more than its share).
    pub fn adjustment(&self) -> Weight {
        let sampled = self.histogram.total();
        Weight {
            requests: self.requests as f64 - sampled.requests,
            bytes: self.bytes as f64 - sampled.bytes,
        }
    }

    /// Estimated distinct objects and bytes of the trace: the held keys (at their latest
    /// sizes) scaled by the rate. Deleted keys are not counted.
    pub fn working_set(&self) -> Weight {
        if self.stratified {
            // Each stratum scaled by its own rate.
            let (weight, hot_bytes) = self.stack.strata_totals();
            let bytes = self.stack.live_bytes();
            let strata = self.strata();
            return Weight {
                requests: strata.objects(weight),
                bytes: hot_bytes as f64 / strata.hot_rate
                    + (bytes - hot_bytes) as f64 / strata.rate,
            };
        }
        Weight {
            requests: self.stack.len() as f64 / self.rate,
            bytes: self.stack.live_bytes() as f64 / self.rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_depth_is_the_deepest_reuse_that_fits() {
        // At rate 1/2 a reuse with w others above it stands for 1 + 2w objects: a cache
        // of 10 takes w = 4 (9 objects), one of 11 takes w = 5 (exactly 11).
        assert_eq!(hit_depth(0.5, 10), Some(4));
        assert_eq!(hit_depth(0.5, 11), Some(5));
        // A cache of 1 holds the key alone; a cache of 0 holds nothing.
        assert_eq!(hit_depth(0.5, 1), Some(0));
        assert_eq!(hit_depth(0.5, 0), None);
        // At rate 1 it is the exact depth, c - 1.
        assert_eq!(hit_depth(1.0, 4_445), Some(4_444));
        // At the filter's rate for 0.01 (a hair above it), 4,445 objects take 44 others.
        let rate = SpatialFilter::with_rate(0.01).rate();
        assert_eq!(hit_depth(rate, 4_445), Some(44));
        assert!(scaled_distance(45, 1, rate) <= 4_445.0 && scaled_distance(46, 1, rate) > 4_445.0);
    }
}
