//! The map behind key numbering: original key -> (dense id, largest size), open
//! addressing with linear probing, each key's whole entry in one 16-byte slot.
//!
//! Why not `hashbrown`: numbering a large trace is memory-bound. A million distinct keys
//! fit in no cache, so each request's lookup costs cache misses, and hashbrown keeps its
//! control bytes apart from its entries (two misses per lookup of a cold key). Here the
//! key sits in its slot (one miss), and, more important, [`KeyTable::touch`] reads a
//! key's home slot without a branch on what it finds: numbering touches a whole batch of
//! requests first, so that the misses of a batch overlap instead of being waited for one
//! at a time, and then numbers the batch in order from lines already in the cache.
//! hashbrown has no way to read where a key would be without probing.

/// One slot: a key, its id and its largest size. An empty slot has id [`EMPTY`].
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    id: u32,
    max_size: u32,
}

/// The id of an empty slot (so ids stay below it).
const EMPTY: u32 = u32::MAX;

const VACANT: Slot = Slot {
    key: 0,
    id: EMPTY,
    max_size: 0,
};

/// Slots in the smallest table.
const MIN_SLOTS: usize = 16;

/// Original key -> (dense id, largest size).
#[derive(Clone, Debug)]
pub(crate) struct KeyTable {
    /// A power of two of slots, at most half of them full (short probes).
    slots: Vec<Slot>,
    /// `64 - log2(slots.len())`: the hash's top bits pick the home slot.
    shift: u32,
    len: usize,
}

impl Default for KeyTable {
    fn default() -> Self {
        KeyTable {
            slots: vec![VACANT; MIN_SLOTS],
            shift: 64 - MIN_SLOTS.trailing_zeros(),
            len: 0,
        }
    }
}

/// What [`KeyTable::upsert`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Upserted {
    /// The key's id.
    pub(crate) id: u32,
    /// Whether the key was new (and got the id offered).
    pub(crate) new: bool,
}

/// Mixes every bit of the key into the top bits (the finalizer of SplitMix64), so that
/// sequential keys, block addresses with a common stride and hashed strings all spread.
#[inline]
fn mix(key: u64) -> u64 {
    let mut h = key;
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

impl KeyTable {
    /// Keys in the table.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (mix(key) >> self.shift) as usize
    }

    /// The key stored in `key`'s home slot, whatever it is: reading it brings the slot's
    /// line into the cache. Numbering calls it for a batch of keys before numbering any of
    /// them, so the batch's cache misses are in flight together.
    #[inline]
    pub(crate) fn touch(&self, key: u64) -> u64 {
        self.slots[self.home(key)].key
    }

    /// The id of `key`, if present.
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.id == EMPTY {
                return None;
            }
            if s.key == key {
                return Some(s.id);
            }
            i = (i + 1) & mask;
        }
    }

    /// Finds `key`, raising its largest size to `size`, or inserts it with id `new_id`
    /// (below `u32::MAX`) and size `size`.
    #[inline]
    pub(crate) fn upsert(&mut self, key: u64, new_id: u32, size: u32) -> Upserted {
        debug_assert_ne!(new_id, EMPTY, "ids stay below u32::MAX");
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &mut self.slots[i];
            if s.id == EMPTY {
                *s = Slot {
                    key,
                    id: new_id,
                    max_size: size,
                };
                self.len += 1;
                if self.len * 2 > self.slots.len() {
                    self.grow();
                }
                return Upserted {
                    id: new_id,
                    new: true,
                };
            }
            if s.key == key {
                s.max_size = s.max_size.max(size);
                return Upserted {
                    id: s.id,
                    new: false,
                };
            }
            i = (i + 1) & mask;
        }
    }

    /// Twice the slots, every key moved to its new home.
    fn grow(&mut self) {
        let doubled = vec![VACANT; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.id != EMPTY) {
            let mut i = self.home(s.key);
            while self.slots[i].id != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// Every key's largest size, in no order.
    pub(crate) fn max_sizes(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .filter(|s| s.id != EMPTY)
            .map(|s| s.max_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn upsert_numbers_new_keys_and_keeps_the_largest_size() {
        let mut t = KeyTable::default();
        assert_eq!(t.upsert(5, 0, 10), Upserted { id: 0, new: true });
        assert_eq!(t.upsert(0, 1, 3), Upserted { id: 1, new: true });
        assert_eq!(t.upsert(5, 2, 4), Upserted { id: 0, new: false });
        assert_eq!(t.upsert(5, 2, 12), Upserted { id: 0, new: false });
        assert_eq!((t.get(5), t.get(0), t.get(6)), (Some(0), Some(1), None));
        let mut sizes: Vec<u32> = t.max_sizes().collect();
        sizes.sort();
        assert_eq!(sizes, [3, 12]);
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn equals_a_hash_map_through_many_growths() {
        // keys with a common stride, all-ones and zero, repeated: the table grows from 16
        // slots to 2^16 and every answer matches the standard map's
        let mut t = KeyTable::default();
        let mut reference: HashMap<u64, (u32, u32)> = HashMap::new();
        for round in 0..3u64 {
            for k in (0..20_000u64).map(|k| k.wrapping_mul(4096) ^ (round * 7 % 3)) {
                let key = if k == 4096 { u64::MAX } else { k };
                let size = (key % 97) as u32 + round as u32;
                let next = reference.len() as u32;
                let e = reference.entry(key).or_insert((next, 0));
                e.1 = e.1.max(size);
                let want = Upserted {
                    id: e.0,
                    new: e.0 == next,
                };
                assert_eq!(t.upsert(key, next, size), want, "key {key}");
            }
        }
        assert_eq!(t.len(), reference.len());
        for (&k, &(id, _)) in &reference {
            assert_eq!(t.get(k), Some(id));
        }
        let mut got: Vec<u32> = t.max_sizes().collect();
        let mut want: Vec<u32> = reference.values().map(|v| v.1).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert!(t.slots.len() >= 2 * t.len());
    }
}
