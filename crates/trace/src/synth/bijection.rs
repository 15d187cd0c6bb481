//! A seeded bijection on `[0, n)`: a 4-round Feistel network on the smallest even number
//! of bits covering `n`, with cycle-walking to stay inside `[0, n)`.
//!
//! Used to scramble Zipf ranks into keys (so the popular keys are not 0, 1, 2, ... and do
//! not sit next to each other, which would flatter sequential or range-based policies) and
//! to order loop workloads. The Feistel domain is under 4n, so cycle-walking takes fewer
//! than 4 rounds on average; it terminates because following a permutation from a point
//! inside `[0, n)` must come back to that point.

/// SplitMix64 finaliser: a cheap, well-mixing 64-bit hash.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A permutation of `[0, n)` chosen by a seed.
#[derive(Clone, Debug)]
pub struct Bijection {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Bijection {
    /// `1 <= n <= 2^62`.
    pub fn new(n: u64, seed: u64) -> Option<Self> {
        if n == 0 || n > 1 << 62 {
            return None;
        }
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let mut keys = [0; 4];
        for (i, k) in keys.iter_mut().enumerate() {
            *k = mix64(seed ^ mix64(i as u64 + 1));
        }
        Some(Bijection { n, half_bits, keys })
    }

    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = mix64(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The image of `x` (`x < n`).
    pub fn apply(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mut y = self.feistel(x);
        while y >= self.n {
            y = self.feistel(y);
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_a_permutation() {
        for n in [1u64, 2, 3, 4, 5, 17, 64, 1000, 4097] {
            for seed in 0..3 {
                let b = Bijection::new(n, seed).unwrap();
                let mut seen = vec![false; n as usize];
                for x in 0..n {
                    let y = b.apply(x);
                    assert!(y < n && !seen[y as usize], "n={n} seed={seed}");
                    seen[y as usize] = true;
                }
            }
        }
        // Seeds matter and the map is not the identity.
        let a: Vec<u64> = (0..10)
            .map(|x| Bijection::new(1000, 1).unwrap().apply(x))
            .collect();
        let b: Vec<u64> = (0..10)
            .map(|x| Bijection::new(1000, 2).unwrap().apply(x))
            .collect();
        assert_ne!(a, b);
        assert_ne!(a, (0..10).collect::<Vec<_>>());
        assert!(Bijection::new(0, 1).is_none());
        assert!(Bijection::new((1 << 62) + 1, 1).is_none());
    }
}
