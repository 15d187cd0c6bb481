//! A Bloom filter that stands in front of a frequency sketch (TinyLFU's *doorkeeper*).
//!
//! Most keys are seen once between two resets of the sketch. TinyLFU (Einziger, Friedman,
//! Manes, ACM ToS 2017, section 3.4.2) lets a key's first access set bits here instead of
//! counters there, so one-time keys do not inflate the sketch's counters of the keys they
//! collide with; a key's estimate is its sketch count plus one when it is in the filter.
//! The filter is cleared whenever the sketch halves its counters.

/// A Bloom filter over `u64` keys with `2^k` bits and three probes per key.
#[derive(Clone, Debug)]
pub struct Doorkeeper {
    bits: Vec<u64>,
    mask: u64,
    seed: u64,
}

/// Probes per key: with about 10 bits per key inserted between clears, three probes give a
/// false-positive rate near 1.7%, and a false positive only adds one to an estimate.
const PROBES: u64 = 3;

impl Doorkeeper {
    /// A filter for about `keys` insertions between clears (10 bits each, at least 512).
    pub fn new(keys: usize, seed: u64) -> Self {
        let bits = keys
            .saturating_mul(10)
            .clamp(512, 1 << 32)
            .next_power_of_two();
        Doorkeeper {
            bits: vec![0; bits / 64],
            mask: bits as u64 - 1,
            seed: crate::wtinylfu::mix(seed ^ 0x6a09_e667_f3bc_c908),
        }
    }

    /// The bit positions of `key`: double hashing over one 64-bit mix.
    #[inline]
    fn probes(&self, key: u64) -> impl Iterator<Item = u64> {
        let h = crate::wtinylfu::mix(key ^ self.seed);
        let (h1, h2) = (h & 0xffff_ffff, (h >> 32) | 1);
        let mask = self.mask;
        (0..PROBES).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) & mask)
    }

    /// Whether `key` may have been inserted since the last clear (never false for one that
    /// was).
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        self.probes(key)
            .all(|b| self.bits[(b >> 6) as usize] & (1 << (b & 63)) != 0)
    }

    /// Insert `key`; true when it was (as far as the filter can tell) already there.
    #[inline]
    pub fn insert(&mut self, key: u64) -> bool {
        let mut present = true;
        for b in self.probes(key) {
            let word = &mut self.bits[(b >> 6) as usize];
            let bit = 1 << (b & 63);
            present &= *word & bit != 0;
            *word |= bit;
        }
        present
    }

    /// Forget every key.
    pub fn clear(&mut self) {
        self.bits.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::Doorkeeper;

    #[test]
    fn first_insert_reports_absent_then_present() {
        let mut d = Doorkeeper::new(100, 1);
        assert!(!d.contains(5));
        assert!(!d.insert(5));
        assert!(d.contains(5));
        assert!(d.insert(5));
        d.clear();
        assert!(!d.contains(5));
    }

    #[test]
    fn false_positives_stay_rare_at_the_sized_load() {
        // 1,000 keys in a filter sized for them; 10,000 other keys probed: at 10 bits a
        // key and three probes the expected rate is about 1.7%.
        let mut d = Doorkeeper::new(1_000, 7);
        for k in 0..1_000 {
            d.insert(k);
        }
        assert!((0..1_000).all(|k| d.contains(k)));
        let fp = (1_000_000..1_010_000).filter(|&k| d.contains(k)).count();
        assert!(fp < 400, "{fp} false positives in 10,000");
    }
}
