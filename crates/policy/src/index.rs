//! The driver's key index: which frame holds a key.
//!
//! Two implementations behind [`KeyIndex`]:
//!
//! * [`HashIndex`] for arbitrary `u64` keys: an open-addressing table of *frame numbers*
//!   (Python-dict style). The keys themselves already live in the driver's per-frame
//!   array, so a slot stores only the frame (4 bytes) and 32 bits of the key's hash (to
//!   skip most non-matching frames without touching the key array): 8 bytes per slot, at
//!   most half the slots used, about 16 to 21 bytes per resident key. Linear probing with
//!   backward-shift deletion leaves no tombstones, so a table sized for the cache never
//!   needs to rehash or allocate in steady state (a general-purpose hash map with
//!   tombstones eventually rehashes, and at high load grows, under constant churn).
//! * [`DenseIndex`] for keys known to be dense ids `0..n` (the replay engine numbers a
//!   trace's objects): one array read per lookup, 4 bytes per possible key.
//!
//! ```
//! use policy::{HashIndex, KeyIndex, FrameId};
//!
//! let keys = [70u64, 71, 1 << 40];
//! let mut index = HashIndex::with_capacity(3);
//! for (f, &k) in keys.iter().enumerate() {
//!     index.insert(k, FrameId(f as u32), &keys);
//! }
//! assert_eq!(index.get(1 << 40, &keys), Some(FrameId(2)));
//! index.remove(71, &keys);
//! assert_eq!(index.get(71, &keys), None);
//! assert_eq!(index.len(), 2);
//! ```

use crate::keymap::DenseMap;
use crate::FrameId;
use bufcache_core::mix;

/// Finds the frame of a resident key. `keys[f]` is the key held by frame `f`, as the
/// driver keeps it; the index may read it to confirm a match.
pub trait KeyIndex {
    /// The frame holding `key`, if resident.
    fn get(&self, key: u64, keys: &[u64]) -> Option<FrameId>;
    /// Record that `key` (not resident; already stored in `keys[frame]`) occupies `frame`.
    fn insert(&mut self, key: u64, frame: FrameId, keys: &[u64]);
    /// Forget `key`, which is resident.
    fn remove(&mut self, key: u64, keys: &[u64]);
    /// Number of resident keys.
    fn len(&self) -> usize;
    /// True when no key is resident.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

const EMPTY: u32 = u32::MAX;

/// Where a key [`HashIndex::find_or_vacant`] did not find goes: its free slot and hash
/// tag, for [`HashIndex::fill`].
#[derive(Clone, Copy, Debug)]
pub struct Vacant {
    slot: usize,
    tag: u32,
}

/// Open-addressing table of frame numbers for arbitrary keys. See the module docs.
#[derive(Clone, Debug)]
pub struct HashIndex {
    /// `(frame, hash tag)`; `frame == EMPTY` marks a free slot.
    slots: Vec<(u32, u32)>,
    /// `slots.len() - 1` (a power of two minus one).
    mask: usize,
    /// `32 - log2(slots.len())`: a slot's home is `tag >> shift`.
    shift: u32,
    len: usize,
}

impl Default for HashIndex {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl HashIndex {
    /// Room for `keys` resident keys at load factor at most 1/2.
    pub fn with_capacity(keys: usize) -> Self {
        let slots = (keys.max(8) * 2).next_power_of_two();
        HashIndex {
            slots: vec![(EMPTY, 0); slots],
            mask: slots - 1,
            shift: 32 - slots.trailing_zeros(),
            len: 0,
        }
    }

    #[inline]
    fn tag(key: u64) -> u32 {
        (mix(key) >> 32) as u32
    }

    #[inline]
    fn home(&self, tag: u32) -> usize {
        // shift == 32 only for a single-slot table, which with_capacity never builds
        (tag >> self.shift) as usize
    }

    /// `Ok(slot)` holding `key`, or `Err(slot)`: the free slot that ends its probe run,
    /// where an insertion of it would go.
    #[inline]
    fn probe(&self, key: u64, tag: u32, keys: &[u64]) -> Result<usize, usize> {
        let mut i = self.home(tag);
        loop {
            let (frame, t) = self.slots[i];
            if frame == EMPTY {
                return Err(i);
            }
            if t == tag && keys[frame as usize] == key {
                return Ok(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Slot holding `key`, if any.
    #[inline]
    fn find(&self, key: u64, keys: &[u64]) -> Option<usize> {
        self.probe(key, Self::tag(key), keys).ok()
    }

    /// The frame of `key`, or, when it is not indexed, where inserting it goes: one probe
    /// for callers that insert what they do not find (a lookup then an insertion would
    /// walk the probe run twice). Grows the table first when an insertion would pass
    /// load 1/2, so the [`Vacant`] stays valid for [`HashIndex::fill`] as long as the
    /// index is not changed in between.
    #[inline]
    pub fn find_or_vacant(&mut self, key: u64, keys: &[u64]) -> Result<FrameId, Vacant> {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let tag = Self::tag(key);
        match self.probe(key, tag, keys) {
            Ok(i) => Ok(FrameId(self.slots[i].0)),
            Err(slot) => Err(Vacant { slot, tag }),
        }
    }

    /// Index the key `vacant` was found for (`keys[frame]` must now hold it) at `frame`.
    #[inline]
    pub fn fill(&mut self, vacant: Vacant, frame: FrameId) {
        debug_assert_eq!(
            self.slots[vacant.slot].0, EMPTY,
            "the index changed between find_or_vacant and fill"
        );
        self.slots[vacant.slot] = (frame.0, vacant.tag);
        self.len += 1;
    }

    /// Bytes the table holds (its slots), for callers that report their memory.
    pub fn table_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<(u32, u32)>()
    }

    /// Points `key`, if indexed, at `frame` instead (`keys[frame]` must already be `key`)
    /// and returns the frame it had; `None`, and no change, when it is not indexed. One
    /// probe where a removal and an insertion would take two: for callers whose keys move
    /// between frames (the simulator's stack-distance window).
    #[inline]
    pub fn relocate(&mut self, key: u64, frame: FrameId, keys: &[u64]) -> Option<FrameId> {
        let i = self.find(key, keys)?;
        let old = self.slots[i].0;
        self.slots[i].0 = frame.0;
        Some(FrameId(old))
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        *self = HashIndex::with_capacity(old.len());
        for (frame, tag) in old {
            if frame != EMPTY {
                self.place(frame, tag);
            }
        }
    }

    #[inline]
    fn place(&mut self, frame: u32, tag: u32) {
        let mut i = self.home(tag);
        while self.slots[i].0 != EMPTY {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = (frame, tag);
        self.len += 1;
    }
}

impl KeyIndex for HashIndex {
    #[inline]
    fn get(&self, key: u64, keys: &[u64]) -> Option<FrameId> {
        self.find(key, keys).map(|i| FrameId(self.slots[i].0))
    }

    #[inline]
    fn insert(&mut self, key: u64, frame: FrameId, keys: &[u64]) {
        debug_assert!(self.find(key, keys).is_none(), "key already indexed");
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        self.place(frame.0, Self::tag(key));
    }

    #[inline]
    fn remove(&mut self, key: u64, keys: &[u64]) {
        let Some(mut hole) = self.find(key, keys) else {
            debug_assert!(false, "removing a key that is not indexed");
            return;
        };
        // Backward-shift deletion: move later members of the probe run into the hole
        // when their home is not between the hole and their slot (cyclically).
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let (frame, tag) = self.slots[j];
            if frame == EMPTY {
                break;
            }
            let home = self.home(tag);
            let distance_home_to_j = j.wrapping_sub(home) & self.mask;
            let distance_hole_to_j = j.wrapping_sub(hole) & self.mask;
            if distance_home_to_j >= distance_hole_to_j {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole] = (EMPTY, 0);
        self.len -= 1;
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// An array indexed by the key itself, for keys that are dense ids `0..n`: 4 bytes per
/// *possible* key, resident or not. Grows if a larger key is inserted.
#[derive(Clone, Debug, Default)]
pub struct DenseIndex(DenseMap);

impl DenseIndex {
    /// An index for keys `0..keys`.
    pub fn new(keys: usize) -> Self {
        DenseIndex(DenseMap::new(keys))
    }
}

impl KeyIndex for DenseIndex {
    #[inline]
    fn get(&self, key: u64, _: &[u64]) -> Option<FrameId> {
        self.0.get(key).map(FrameId)
    }
    #[inline]
    fn insert(&mut self, key: u64, frame: FrameId, _: &[u64]) {
        self.0.insert(key, frame.0);
    }
    #[inline]
    fn remove(&mut self, key: u64, _: &[u64]) {
        self.0.remove(key);
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn relocate_moves_an_indexed_key_and_leaves_others_alone() {
        let keys = [5u64, 6, 5];
        let mut index = HashIndex::with_capacity(2);
        index.insert(5, FrameId(0), &keys);
        assert_eq!(index.relocate(5, FrameId(2), &keys), Some(FrameId(0)));
        assert_eq!(index.get(5, &keys), Some(FrameId(2)));
        assert_eq!(index.relocate(6, FrameId(1), &keys), None);
        assert_eq!((index.get(6, &keys), index.len()), (None, 1));
    }

    proptest! {
        /// Against a std HashMap model under random inserts (by `insert` or by
        /// `find_or_vacant` and `fill`) and removes, with keys chosen to collide in the top
        /// hash bits as well as at random.
        #[test]
        fn hash_index_matches_model(ops in proptest::collection::vec((0u64..64, any::<bool>()), 1..600)) {
            let mut keys: Vec<u64> = Vec::new();
            let mut free: Vec<u32> = Vec::new();
            let mut model = std::collections::HashMap::new();
            let mut index = HashIndex::with_capacity(2);
            for (k, insert) in ops {
                let key = k.wrapping_mul(0x1000_0000_0000);
                match (insert, model.get(&key).copied()) {
                    (true, None) => {
                        let f = free.pop().unwrap_or_else(|| { keys.push(0); keys.len() as u32 - 1 });
                        keys[f as usize] = key;
                        // Half the insertions through the one-probe entry.
                        if k % 2 == 0 {
                            index.insert(key, FrameId(f), &keys);
                        } else {
                            let vacant = index.find_or_vacant(key, &keys);
                            prop_assert!(vacant.is_err(), "found a key never inserted");
                            if let Err(v) = vacant {
                                index.fill(v, FrameId(f));
                            }
                        }
                        model.insert(key, f);
                    }
                    (true, Some(f)) => {
                        prop_assert_eq!(index.find_or_vacant(key, &keys).ok(), Some(FrameId(f)));
                    }
                    (false, Some(f)) => {
                        index.remove(key, &keys);
                        model.remove(&key);
                        free.push(f);
                    }
                    _ => {}
                }
                prop_assert_eq!(index.len(), model.len());
                for probe in 0..64u64 {
                    let key = probe.wrapping_mul(0x1000_0000_0000);
                    prop_assert_eq!(index.get(key, &keys).map(|f| f.0), model.get(&key).copied());
                }
            }
        }
    }
}
