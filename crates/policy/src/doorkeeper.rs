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

/// The filter's size for about `keys` insertions: 10 bits each, a power of two, at least
/// 512.
fn bits_for(keys: usize) -> usize {
    keys.saturating_mul(10)
        .clamp(512, 1 << 32)
        .next_power_of_two()
}

impl Doorkeeper {
    /// A filter for about `keys` insertions between clears (10 bits each, at least 512).
    pub fn new(keys: usize, seed: u64) -> Self {
        let bits = bits_for(keys);
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

    /// Resize for about `keys` insertions between clears, as [`Doorkeeper::new`] sizes it,
    /// keeping what the filter holds. A probe is a bit index masked to the filter's
    /// power-of-two size, so a key's probes in a smaller filter are its probes in the larger
    /// one with the top bits dropped: shrinking ORs the halves together, which gives exactly
    /// the filter that inserting the same keys at the smaller size would have built.
    /// Growing cannot tell which half a bit came from, so each bit is copied to every
    /// position it may have come from: every key inserted is still found (no false
    /// negative), at the old filter's false-positive rate until the next clear.
    pub fn resize(&mut self, keys: usize) {
        let words = bits_for(keys) / 64;
        let old = self.bits.len();
        if words < old {
            for i in words..old {
                self.bits[i % words] |= self.bits[i];
            }
            self.bits.truncate(words);
        } else {
            self.bits = (0..words).map(|i| self.bits[i % old]).collect();
        }
        self.mask = (words * 64) as u64 - 1;
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

    #[test]
    fn a_shrunk_filter_is_the_small_one_and_a_grown_one_keeps_every_key() {
        // 1,000 keys take 16,384 bits, 100 keys 1,024.
        let keys: Vec<u64> = (0..80).map(|k| k * 7919).collect();
        let mut big = Doorkeeper::new(1_000, 3);
        let mut small = Doorkeeper::new(100, 3);
        for &k in &keys {
            big.insert(k);
            small.insert(k);
        }
        let mut shrunk = big.clone();
        shrunk.resize(100);
        assert_eq!(
            (shrunk.bits.clone(), shrunk.mask),
            (small.bits.clone(), 1023)
        );
        small.resize(1_000);
        assert_eq!((small.bits.len(), small.mask), (256, 16_383));
        assert!(keys.iter().all(|&k| small.contains(k)));
        // a grown filter is the small one repeated: 16 copies
        assert_eq!(small.bits[..16], small.bits[240..]);
    }
}
