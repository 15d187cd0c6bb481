//! One fixed hash for `u64` keys, and the hash maps built on it.

use std::hash::{BuildHasherDefault, Hasher};

use hashbrown::HashMap;

/// A fixed, well-mixing hash of a `u64` (the finalizer of MurmurHash3): every bit of the
/// key reaches every bit of the result, so the low bits can pick a table slot and the high
/// bits serve as a tag. Deterministic across runs, so probe sequences, table growth and
/// the timings that depend on them are reproducible.
#[inline]
pub fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Hashes a key with [`mix`]. A fixed hash (rather than a per-process random seed) makes
/// every probe sequence, every table growth and therefore every allocation reproducible
/// from run to run; keys here come from traces, not from an adversary.
///
/// A `u64` key is taken whole; other keys are folded in byte by byte, which is slower but
/// still deterministic.
#[derive(Clone, Copy, Debug, Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    #[inline]
    fn finish(&self) -> u64 {
        mix(self.0)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// The [`std::hash::BuildHasher`] of [`MixHasher`], for maps and sets with other key types.
pub type FixedState = BuildHasherDefault<MixHasher>;

/// A hash map from `u64` keys with [`MixHasher`].
pub type FixedHashMap<V> = HashMap<u64, V, FixedState>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// 0 is a fixed point (every step maps 0 to 0); 1 and 2 give the values the
    /// finalizer's published constants produce (worked out independently of this code),
    /// so a change of constants or shifts, which would change every table layout, is caught.
    #[test]
    fn mix_is_the_murmur3_finalizer() {
        assert_eq!(mix(0), 0);
        assert_eq!(mix(1), 0xb456_bcfc_34c2_cb2c);
        assert_eq!(mix(2), 0x3abf_2a20_6506_83e7);
    }

    #[test]
    fn a_u64_key_hashes_to_its_mix() {
        let state = FixedState::default();
        for key in [0u64, 1, 42, u64::MAX] {
            assert_eq!(state.hash_one(key), mix(key));
        }
    }

    #[test]
    fn byte_keys_hash_the_same_in_every_hasher() {
        let state = FixedState::default();
        let a = state.hash_one("block 17");
        let b = FixedState::default().hash_one("block 17");
        assert_eq!(a, b);
        assert_ne!(a, state.hash_one("block 18"));
    }

    #[test]
    fn fixed_hash_map_iterates_in_the_same_order_every_time() {
        let build = || {
            let mut m: FixedHashMap<u64> = FixedHashMap::default();
            for k in (0..500u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
                m.insert(k, k / 3);
            }
            m.into_iter().collect::<Vec<_>>()
        };
        assert_eq!(build(), build());
    }
}
