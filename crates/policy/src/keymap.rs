//! Maps from keys to small integers: hashed for arbitrary keys, an array for dense ones.
//!
//! Ghost lists, histories and the driver's key index all need "where is this key?". For
//! arbitrary `u64` keys that is a hash table. When the caller knows that keys are dense ids
//! `0..n` (the replay engine numbers a trace's objects in order of first use, see
//! [`crate::BuildContext::key_space`]) an array indexed by the key answers with one load
//! and no hashing, which is what makes ghost-keeping policies fast on replay.
//!
//! ```
//! use policy::keymap::KeyMap;
//!
//! for mut m in [KeyMap::hashed(4), KeyMap::dense(10)] {
//!     assert_eq!(m.insert(7, 70), None);
//!     assert_eq!(m.get(7), Some(70));
//!     assert_eq!(m.insert(7, 71), Some(70));
//!     assert!(!m.remove_if(7, 70));
//!     assert_eq!(m.remove(7), Some(71));
//!     assert!(m.is_empty());
//! }
//! ```

use hashbrown::HashMap;

const NONE: u32 = u32::MAX;

/// An array from dense keys to `u32` values (`u32::MAX` is reserved). 4 bytes per possible
/// key; grows if a larger key is inserted.
#[derive(Clone, Debug, Default)]
pub struct DenseMap {
    slots: Vec<u32>,
    len: usize,
}

impl DenseMap {
    /// A map for keys `0..keys`.
    pub fn new(keys: usize) -> Self {
        DenseMap {
            slots: vec![NONE; keys],
            len: 0,
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        match self.slots.get(key as usize) {
            Some(&v) if v != NONE => Some(v),
            _ => None,
        }
    }

    /// Set `key` to `value`; returns the old value.
    #[inline]
    pub fn insert(&mut self, key: u64, value: u32) -> Option<u32> {
        debug_assert_ne!(value, NONE);
        let i = usize::try_from(key).expect("dense key fits in memory");
        if i >= self.slots.len() {
            self.slots.resize(i + 1, NONE);
        }
        let old = std::mem::replace(&mut self.slots[i], value);
        if old == NONE {
            self.len += 1;
            None
        } else {
            Some(old)
        }
    }

    /// Remove `key`; returns its value.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let slot = self.slots.get_mut(key as usize)?;
        let old = std::mem::replace(slot, NONE);
        if old == NONE {
            None
        } else {
            self.len -= 1;
            Some(old)
        }
    }

    /// Remove `key` if its value is `value`; returns whether it was removed.
    #[inline]
    pub fn remove_if(&mut self, key: u64, value: u32) -> bool {
        match self.slots.get_mut(key as usize) {
            Some(slot) if *slot == value && value != NONE => {
                *slot = NONE;
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

    /// True when no key is present.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Key -> `u32` map, hashed or dense, chosen at construction.
#[derive(Clone, Debug)]
pub enum KeyMap {
    /// Any `u64` key.
    Hashed(HashMap<u64, u32>),
    /// Keys known to be dense ids.
    Dense(DenseMap),
}

impl KeyMap {
    /// A hash map with room for `entries`.
    pub fn hashed(entries: usize) -> Self {
        KeyMap::Hashed(HashMap::with_capacity(entries))
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
        self.get(key).is_some()
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

    /// Remove `key` if its value is `value` (one lookup); returns whether it was removed.
    /// Lets a structure with lazily deleted entries tell a live entry from a stale one.
    #[inline]
    pub fn remove_if(&mut self, key: u64, value: u32) -> bool {
        match self {
            KeyMap::Hashed(m) => match m.entry(key) {
                hashbrown::hash_map::Entry::Occupied(e) if *e.get() == value => {
                    e.remove();
                    true
                }
                _ => false,
            },
            KeyMap::Dense(m) => m.remove_if(key, value),
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

    /// True when no key is present.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
