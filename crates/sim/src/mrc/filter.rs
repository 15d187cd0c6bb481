//! Spatial sampling: keep a key when its hash falls under a threshold.
//!
//! SHARDS (Waldspurger et al., FAST'15) samples *keys*, not requests: a key is in the
//! sample when `hash(key) <= threshold`, so every request to a sampled key is kept and every
//! request to any other key is dropped. Reuse patterns of the kept keys survive intact,
//! which is what makes scaled stack distances (and miniature caches) faithful. The rate is
//! the fraction of the hash space under the threshold.
//!
//! The hash is [`core::hash::mix`], the project's fixed MurmurHash3 finalizer. It is a
//! bijection on `u64`, so two distinct keys never share a hash: the sample set can be keyed
//! by hash, and lowering the threshold below one key's hash drops exactly that key.

use bufcache_core::mix;

/// `2^64` as a float: rates are thresholds over the whole hash space.
const HASH_SPACE: f64 = 18_446_744_073_709_551_616.0;

/// Keeps keys whose hash is at most a threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpatialFilter {
    threshold: u64,
}

impl SpatialFilter {
    /// A filter that keeps a fraction `rate` (in `(0, 1]`) of the keys. Rate 1 keeps every
    /// key. Callers validate the rate ([`super::ApproxConfig::validate`]).
    pub fn with_rate(rate: f64) -> Self {
        debug_assert!(rate > 0.0 && rate <= 1.0, "rate {rate} out of (0, 1]");
        if rate >= 1.0 {
            return SpatialFilter::with_threshold(u64::MAX);
        }
        // Keys with hash in 0..=threshold: threshold + 1 values out of 2^64.
        let values = (rate * HASH_SPACE) as u64;
        SpatialFilter::with_threshold(values.saturating_sub(1))
    }

    /// A filter that keeps keys with `hash <= threshold`.
    pub fn with_threshold(threshold: u64) -> Self {
        SpatialFilter { threshold }
    }

    /// The largest hash kept.
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// The fraction of the hash space kept: `(threshold + 1) / 2^64`.
    pub fn rate(&self) -> f64 {
        (self.threshold as f64 + 1.0) / HASH_SPACE
    }

    /// The hash of `key` when it is sampled, `None` when it is not.
    #[inline]
    pub fn sample(&self, key: u64) -> Option<u64> {
        let h = mix(key);
        (h <= self.threshold).then_some(h)
    }
}

/// The hash every sampler uses; exposed so that callers can see which keys a threshold
/// keeps (tests, the benchmark of the filter).
#[inline]
pub fn key_hash(key: u64) -> u64 {
    mix(key)
}

/// The salt that [`salted_key_hash`] mixes into keys for sample seed `seed`.
///
/// Which keys a rate keeps is fixed by the hash, so one trace always gives the same
/// sample; the error of one run is then one draw, not a property of the method. A seed
/// picks another sample of the same rate, so that runs over several seeds show the spread
/// (libCacheSim's profiler takes a seed for the same reason). Seed 0 gives salt 0: the
/// plain [`key_hash`].
pub fn sample_salt(seed: u64) -> u64 {
    // mix(0) = 0, and mix is a bijection, so distinct seeds give distinct salts.
    mix(seed)
}

/// The hash of `key` under `salt` ([`sample_salt`]): still a bijection of the key (an xor,
/// then [`mix`]), so the sample can be keyed by it.
#[inline]
pub fn salted_key_hash(key: u64, salt: u64) -> u64 {
    mix(key ^ salt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_one_keeps_everything_and_rates_round_trip() {
        let all = SpatialFilter::with_rate(1.0);
        assert_eq!(all.threshold(), u64::MAX);
        assert_eq!(all.rate(), 1.0);
        for key in [0, 1, 2, u64::MAX] {
            assert!(all.sample(key).is_some());
        }
        let half = SpatialFilter::with_rate(0.5);
        assert_eq!(half.threshold(), (1 << 63) - 1);
        assert_eq!(half.rate(), 0.5);
        // mix(1) = 0xb456..., above half the space; mix(2) = 0x3abf..., below it.
        assert_eq!(half.sample(1), None);
        assert_eq!(half.sample(2), Some(key_hash(2)));
    }

    #[test]
    fn seed_zero_is_the_plain_hash_and_other_seeds_sample_other_keys() {
        assert_eq!(sample_salt(0), 0);
        assert_eq!(salted_key_hash(7, sample_salt(0)), key_hash(7));
        let f = SpatialFilter::with_rate(0.01);
        let kept = |seed: u64| -> Vec<u64> {
            let salt = sample_salt(seed);
            (0..100_000u64)
                .filter(|&k| salted_key_hash(k, salt) <= f.threshold())
                .collect()
        };
        let (a, b) = (kept(0), kept(1));
        // Two independent 1% samples of 100k keys share about 10 keys, not 1,000.
        let shared = a.iter().filter(|k| b.binary_search(k).is_ok()).count();
        assert!(shared < 60, "samples of seeds 0 and 1 share {shared} keys");
        assert!((800..1200).contains(&b.len()), "seed 1 kept {}", b.len());
    }

    #[test]
    fn the_kept_fraction_is_close_to_the_rate() {
        let f = SpatialFilter::with_rate(0.01);
        let kept = (0..1_000_000u64).filter(|&k| f.sample(k).is_some()).count();
        // 10,000 expected; the binomial standard deviation is about 99.
        assert!((9_500..=10_500).contains(&kept), "kept {kept}");
    }
}
