//! Maps from keys to small integers: hashed for arbitrary keys, an array for dense ones.
//!
//! Ghost lists, histories and the driver's key index all need "where is this key?". For
//! arbitrary `u64` keys that is a hash table. When the caller knows that keys are dense ids
//! `0..n` (the replay engine numbers a trace's objects in order of first use, see
//! [`crate::BuildContext::key_space`]) an array indexed by the key answers with one load
//! and no hashing, which is what makes ghost-keeping policies fast on replay.
//!
//! The fixed hash itself (`MixHasher`, `FixedHashMap`) is in `bufcache-core`, shared with
//! the simulator.

use bufcache_core::FixedHashMap;

/// An array from dense keys to `u32` values, with a presence bit per key. 4 bytes and 1
/// bit per *possible* key; grows if a larger key is inserted.
///
/// The bits (1M keys: 128 KiB, which stays in a core's L2 cache) answer "is it here?"
/// without touching the 32 times larger value array, whose reads on a large key space
/// are cache and TLB misses. Most questions a ghost list asks are answered no (a miss whose
/// key was not remembered) or need no value (forgetting the oldest entry), so the values
/// are read only when they are used, and written without first being read.
#[derive(Clone, Debug, Default)]
pub struct DenseMap {
    slots: Vec<u32>,
    present: Vec<u64>,
    len: usize,
}

impl DenseMap {
    /// A map for keys `0..keys`.
    pub fn new(keys: usize) -> Self {
        DenseMap {
            slots: vec![0; keys],
            present: vec![0; keys.div_ceil(64)],
            len: 0,
        }
    }

    /// True when `key` is present.
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        let i = key as usize;
        match self.present.get(i / 64) {
            Some(&word) => word >> (i % 64) & 1 != 0,
            None => false,
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        // In bounds: a present key had its slot allocated by `insert`.
        self.contains(key).then(|| self.slots[key as usize])
    }

    /// Set `key` to `value`; returns the old value.
    #[inline]
    pub fn insert(&mut self, key: u64, value: u32) -> Option<u32> {
        let i = usize::try_from(key).expect("dense key fits in memory");
        if i >= self.slots.len() {
            self.slots.resize(i + 1, 0);
            self.present.resize(i / 64 + 1, 0);
        }
        let word = &mut self.present[i / 64];
        let bit = 1u64 << (i % 64);
        if *word & bit != 0 {
            Some(std::mem::replace(&mut self.slots[i], value))
        } else {
            *word |= bit;
            self.len += 1;
            self.slots[i] = value;
            None
        }
    }

    /// Remove `key`; returns its value.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        self.forget(key).then(|| self.slots[key as usize])
    }

    /// Remove `key` without reading its value; returns whether it was present.
    #[inline]
    pub fn forget(&mut self, key: u64) -> bool {
        let i = key as usize;
        match self.present.get_mut(i / 64) {
            Some(word) if *word >> (i % 64) & 1 != 0 => {
                *word &= !(1u64 << (i % 64));
                self.len -= 1;
                true
            }
            _ => false,
        }
    }

    /// Number of keys present.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
}

/// Key -> `u32` map, hashed or dense, chosen at construction.
#[derive(Clone, Debug)]
pub enum KeyMap {
    /// Any `u64` key.
    Hashed(FixedHashMap<u32>),
    /// Keys known to be dense ids.
    Dense(DenseMap),
}

impl KeyMap {
    /// A hash map with room for `entries`.
    pub fn hashed(entries: usize) -> Self {
        KeyMap::Hashed(FixedHashMap::with_capacity_and_hasher(
            entries,
            Default::default(),
        ))
    }

    /// An array for keys `0..keys`.
    pub fn dense(keys: usize) -> Self {
        KeyMap::Dense(DenseMap::new(keys))
    }

    /// Dense when the key space is known, hashed with room for `entries` otherwise.
    pub fn for_keys(key_space: Option<u64>, entries: usize) -> Self {
        match key_space {
            Some(n) => KeyMap::dense(n as usize),
            None => KeyMap::hashed(entries),
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        match self {
            KeyMap::Hashed(m) => m.get(&key).copied(),
            KeyMap::Dense(m) => m.get(key),
        }
    }

    /// True when `key` is present.
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        match self {
            KeyMap::Hashed(m) => m.contains_key(&key),
            KeyMap::Dense(m) => m.contains(key),
        }
    }

    /// Set `key` to `value`; returns the old value.
    #[inline]
    pub fn insert(&mut self, key: u64, value: u32) -> Option<u32> {
        match self {
            KeyMap::Hashed(m) => m.insert(key, value),
            KeyMap::Dense(m) => m.insert(key, value),
        }
    }

    /// Remove `key`; returns its value.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        match self {
            KeyMap::Hashed(m) => m.remove(&key),
            KeyMap::Dense(m) => m.remove(key),
        }
    }

    /// Remove `key` without reading its value; returns whether it was present (the dense
    /// map then touches only its presence bits).
    #[inline]
    pub fn forget(&mut self, key: u64) -> bool {
        match self {
            KeyMap::Hashed(m) => m.remove(&key).is_some(),
            KeyMap::Dense(m) => m.forget(key),
        }
    }

    /// Number of keys present.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            KeyMap::Hashed(m) => m.len(),
            KeyMap::Dense(m) => m.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{DenseMap, KeyMap};

    #[test]
    fn both_kinds_of_key_map_answer_alike() {
        for mut m in [KeyMap::hashed(4), KeyMap::dense(10)] {
            assert_eq!(m.insert(7, 70), None);
            assert_eq!(m.get(7), Some(70));
            assert_eq!(m.insert(7, 71), Some(70));
            assert_eq!(m.remove(7), Some(71));
            m.insert(8, 80);
            assert!(m.forget(8));
            assert!(!m.contains(8));
            assert_eq!(m.len(), 0);
        }
    }

    #[test]
    fn dense_map_grows_and_keeps_bits_and_values_apart() {
        let mut m = DenseMap::new(3);
        for k in [0u64, 2, 63, 64, 130] {
            assert_eq!(m.insert(k, k as u32 + 1), None);
        }
        assert_eq!(m.len(), 5);
        assert_eq!(m.get(1), None);
        assert_eq!(m.get(130), Some(131));
        assert_eq!(m.get(1000), None);
        assert!(m.forget(63));
        assert!(!m.forget(63));
        assert_eq!(m.get(63), None);
        // a stale value left by `forget` is not returned by a new insertion
        assert_eq!(m.insert(63, 7), None);
        assert_eq!(m.remove(63), Some(7));
        assert_eq!(m.remove(64), Some(65));
        assert!(!m.contains(64));
        assert_eq!(m.len(), 3);
    }
}
