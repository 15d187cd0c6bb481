//! Weighted histograms of (scaled) stack distances, and the curve they give.
//!
//! Every sampled reuse adds its weight — the number of requests, and of bytes, it stands
//! for (`1/R` and `size/R` at rate `R`) — to the bucket of its scaled distance. A request
//! with distance `d` hits in every LRU cache of at least `d` units, so the misses at
//! capacity `c` are the cold weight plus the weight of every distance above `c`.
//!
//! Two bucketings:
//!
//! * [`Buckets::Edges`] when the capacities are known before the pass: one bucket per
//!   interval between consecutive capacities, so the curve at those capacities is exact
//!   (no rounding at all: at rate 1 it is the exact LRU curve).
//! * [`Buckets::LogLinear`] when they are not (fractions of a working set the pass itself
//!   estimates): exact below `2^P` units, and `2^(P-1)` buckets per power of two above, so a
//!   bucket is never wider than `1/2^(P-1)` of its values (0.1% at `P = 11`). The size is
//!   bounded (at most 60,000 buckets for 64-bit distances) and grows only as far as the
//!   largest distance seen. A capacity inside a bucket takes the part of its weight that
//!   lies above it, as if spread evenly over the bucket.

/// Precision bits of the log-linear buckets.
pub const PRECISION_BITS: u32 = 11;

/// How distances are grouped.
#[derive(Clone, Debug, PartialEq)]
pub enum Buckets {
    /// Bucket `i` holds distances in `(edges[i-1], edges[i]]` (`edges[-1]` = 0); the last
    /// bucket, `edges.len()`, holds everything above the largest edge. Edges are sorted.
    Edges(Vec<u64>),
    /// Log-linear buckets (see the module docs).
    LogLinear,
}

/// Requests and bytes a bucket stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Weight {
    /// Requests.
    pub requests: f64,
    /// Bytes.
    pub bytes: f64,
}

impl Weight {
    fn add(&mut self, other: Weight) {
        self.requests += other.requests;
        self.bytes += other.bytes;
    }

    fn scaled(self, f: f64) -> Weight {
        Weight {
            requests: self.requests * f,
            bytes: self.bytes * f,
        }
    }
}

/// Miss ratios at one capacity.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CurvePoint {
    /// Capacity in units (objects, or bytes for byte curves).
    pub capacity: u64,
    /// Estimated requests that miss.
    pub misses: f64,
    /// Fraction of requests that miss.
    pub miss_ratio: f64,
    /// Fraction of requested bytes that miss.
    pub byte_miss_ratio: f64,
    /// The sampling rate this point was estimated at (1 for an exact one). Small sizes
    /// may be served by a higher rate than the curve's ([`super::nested`]).
    pub rate: f64,
    /// False when the sample is too thin to see this size at all: a capacity that holds
    /// less than one sampled object ([`super::approx::min_resolved_capacity`]).
    pub resolved: bool,
    /// True when the estimator that served this point sampled promoted keys apart, at a
    /// higher rate than the rest (stratified SHARDS, [`super::hot`]).
    pub hot: bool,
}

/// A weighted histogram of distances.
#[derive(Clone, Debug)]
pub struct DistanceHistogram {
    buckets: Buckets,
    weights: Vec<Weight>,
    cold: Weight,
}

impl DistanceHistogram {
    /// An empty histogram.
    pub fn new(buckets: Buckets) -> Self {
        let weights = match &buckets {
            Buckets::Edges(edges) => {
                debug_assert!(edges.windows(2).all(|w| w[0] <= w[1]));
                vec![Weight::default(); edges.len() + 1]
            }
            Buckets::LogLinear => Vec::new(),
        };
        DistanceHistogram {
            buckets,
            weights,
            cold: Weight::default(),
        }
    }

    /// Bytes held (for the memory report).
    pub fn state_bytes(&self) -> usize {
        self.weights.capacity() * std::mem::size_of::<Weight>()
    }

    /// Records a reuse at `distance` (already scaled) standing for `weight`.
    pub fn add(&mut self, distance: f64, weight: Weight) {
        let i = match &self.buckets {
            // Most reuses (all but a few of a hot key's) hit at the smallest size.
            Buckets::Edges(edges) if edges.first().is_some_and(|&e| distance <= e as f64) => 0,
            Buckets::Edges(edges) => edges.partition_point(|&e| (e as f64) < distance),
            Buckets::LogLinear => {
                let i = log_linear_index(distance.ceil() as u64);
                if i >= self.weights.len() {
                    self.weights.resize(i + 1, Weight::default());
                }
                i
            }
        };
        self.weights[i].add(weight);
    }

    /// Records a reuse in bucket `i` of an [`Buckets::Edges`] histogram (its distance above
    /// `edges[i - 1]` and at most `edges[i]`; `edges.len()`: above them all), for a caller
    /// that knows it without the distance (a nested level's band,
    /// [`super::weighted::WeightedStack`]): the same as [`DistanceHistogram::add`] at
    /// that distance, without the search.
    #[inline]
    pub fn add_to(&mut self, i: usize, weight: Weight) {
        debug_assert!(matches!(self.buckets, Buckets::Edges(_)));
        self.weights[i].add(weight);
    }

    /// Records a first access.
    pub fn add_cold(&mut self, weight: Weight) {
        self.cold.add(weight);
    }

    /// Everything recorded.
    pub fn total(&self) -> Weight {
        let mut t = self.cold;
        for &w in &self.weights {
            t.add(w);
        }
        t
    }

    /// The curve at `capacities`, over `total` requests and bytes (the sampled weight plus
    /// any first-bucket adjustment, which hits at every size), from a sample at `rate`.
    pub fn curve(&self, capacities: &[u64], total: Weight, rate: f64) -> Vec<CurvePoint> {
        capacities
            .iter()
            .map(|&capacity| {
                let mut missed = self.cold;
                missed.add(self.weight_above(capacity));
                CurvePoint {
                    capacity,
                    misses: missed.requests,
                    miss_ratio: clamp_ratio(missed.requests, total.requests),
                    byte_miss_ratio: clamp_ratio(missed.bytes, total.bytes),
                    rate,
                    resolved: true,
                    hot: false,
                }
            })
            .collect()
    }

    /// Weight of the distances above `capacity`.
    fn weight_above(&self, capacity: u64) -> Weight {
        let mut above = Weight::default();
        match &self.buckets {
            Buckets::Edges(edges) => {
                // Buckets past the last edge not above `capacity`.
                let first = edges.partition_point(|&e| e <= capacity);
                for &w in &self.weights[first..] {
                    above.add(w);
                }
            }
            Buckets::LogLinear => {
                for (i, &w) in self.weights.iter().enumerate() {
                    let (lo, hi) = log_linear_bounds(i);
                    if lo > capacity {
                        above.add(w);
                    } else if hi > capacity {
                        let part = (hi - capacity) as f64 / (hi - lo + 1) as f64;
                        above.add(w.scaled(part));
                    }
                }
            }
        }
        above
    }
}

/// `a / b` within `[0, 1]` (an adjusted total can make an estimate step outside), 0 for an
/// empty total.
fn clamp_ratio(a: f64, b: f64) -> f64 {
    if b <= 0.0 {
        0.0
    } else {
        (a / b).clamp(0.0, 1.0)
    }
}

/// The log-linear bucket of `v`.
pub fn log_linear_index(v: u64) -> usize {
    let exact = 1u64 << PRECISION_BITS;
    if v < exact {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let shift = e - (PRECISION_BITS - 1);
    let half = 1u64 << (PRECISION_BITS - 1);
    (exact + u64::from(e - PRECISION_BITS) * half + ((v >> shift) - half)) as usize
}

/// The smallest and largest value of log-linear bucket `i`.
pub fn log_linear_bounds(i: usize) -> (u64, u64) {
    let exact = 1usize << PRECISION_BITS;
    if i < exact {
        return (i as u64, i as u64);
    }
    let half = 1usize << (PRECISION_BITS - 1);
    let j = i - exact;
    let e = PRECISION_BITS as usize + j / half;
    let mantissa = (j % half + half) as u64;
    let shift = e - (PRECISION_BITS as usize - 1);
    let lo = mantissa << shift;
    (lo, lo + ((1u64 << shift) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_linear_buckets_tile_the_values() {
        let exact = 1u64 << PRECISION_BITS;
        assert_eq!(log_linear_index(exact - 1), exact as usize - 1);
        assert_eq!(log_linear_bounds(exact as usize), (exact, exact + 1));
        let mut expected_lo = 0u64;
        for i in 0..40_000 {
            let (lo, hi) = log_linear_bounds(i);
            assert_eq!(lo, expected_lo, "bucket {i}");
            assert_eq!(log_linear_index(lo), i);
            assert_eq!(log_linear_index(hi), i);
            // Never wider than 1/1024 of its smallest value beyond the exact range.
            assert!(lo < exact || (hi - lo + 1) * 1024 <= lo);
            expected_lo = hi + 1;
        }
        assert!(log_linear_index(u64::MAX) < 60_000);
    }

    #[test]
    fn edges_give_the_misses_at_each_capacity() {
        let one = Weight {
            requests: 1.0,
            bytes: 10.0,
        };
        let mut h = DistanceHistogram::new(Buckets::Edges(vec![2, 4]));
        h.add_cold(one);
        for d in [1.0, 2.0, 3.0, 4.0, 5.0] {
            h.add(d, one);
        }
        let total = h.total();
        let c = h.curve(&[2, 4], total, 1.0);
        // Misses at 2: cold + {3, 4, 5}; at 4: cold + {5}.
        assert_eq!((c[0].misses, c[1].misses), (4.0, 2.0));
        assert_eq!(c[1].byte_miss_ratio, 20.0 / 60.0);
    }

    #[test]
    fn log_linear_interpolates_inside_a_bucket() {
        let mut h = DistanceHistogram::new(Buckets::LogLinear);
        let exact = 1u64 << PRECISION_BITS;
        // Bucket [exact, exact + 1] holds 2 requests.
        h.add(
            exact as f64,
            Weight {
                requests: 2.0,
                bytes: 2.0,
            },
        );
        let total = h.total();
        let c = h.curve(&[exact - 1, exact, exact + 1], total, 1.0);
        let misses: Vec<f64> = c.iter().map(|p| p.misses).collect();
        assert_eq!(misses, [2.0, 1.0, 0.0]);
    }
}
