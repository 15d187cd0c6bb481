//! String keys (`user:42`, URLs, content hashes) turned into the 64-bit keys every reader
//! produces.
//!
//! The hash is XXH3-64 with seed 0 (`xxhash-rust`): its output is fixed by a published
//! specification, independent of platform, endianness and crate version, so the same trace
//! gives the same keys on every machine and in every run, and results stay comparable with
//! tools that hash with XXH3 too. It is also fast on short inputs (a few ns per key), which
//! matters when every request of a large trace is hashed. A randomly seeded hasher
//! (`ahash`, std's SipHash) would change the keys from run to run; FNV-1a (used here before)
//! is slower on long keys and mixes poorly.
//!
//! Two distinct strings get the same key with probability 2⁻⁶⁴; among `n` distinct
//! strings, the chance that any two collide is about `n² / 2⁶⁵`
//! ([`collision_probability`]): 3·10⁻⁸ for a million keys, 0.03 for a billion.

/// The 64-bit key of a string key's bytes.
#[inline]
pub fn key_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// The chance that at least two of `distinct` strings share a key (birthday bound,
/// `1 - exp(-n(n-1)/2⁶⁵)`), for reports.
pub fn collision_probability(distinct: u64) -> f64 {
    let n = distinct as f64;
    let pairs = n * (n - 1.0).max(0.0) / 2.0;
    -(-pairs / 2f64.powi(64)).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_values() {
        // XXH3-64 of the empty input with seed 0, from the specification's test vectors.
        assert_eq!(key_hash(b""), 0x2d06_8005_38d3_94c2);
        assert_eq!(key_hash(b"user:42"), key_hash(b"user:42"));
        assert_ne!(key_hash(b"user:42"), key_hash(b"user:43"));
    }

    #[test]
    fn collision_bound() {
        assert_eq!(collision_probability(0), 0.0);
        assert_eq!(collision_probability(1), 0.0);
        let p = collision_probability(1_000_000);
        assert!((p - 2.7105e-8).abs() < 1e-11, "{p}");
        let p = collision_probability(1 << 32);
        assert!((p - (1.0 - (-0.5f64).exp())).abs() < 1e-6, "{p}");
    }
}
