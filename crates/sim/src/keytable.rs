//! The map behind key numbering: original key -> (dense id, largest size), in the
//! simulator's open-addressing table ([`crate::inline_table`]), each key's whole entry in
//! one 16-byte slot.
//!
//! Why not `hashbrown`: numbering a large trace is memory-bound. A million distinct keys
//! fit in no cache, so each request's lookup costs cache misses, and hashbrown keeps its
//! control bytes apart from its entries (two misses per lookup of a cold key). Here the
//! key sits in its slot (one miss), and, more important, [`KeyTable::touch`] reads a
//! key's home slot without a branch on what it finds: numbering touches a whole batch of
//! requests first, so that the misses of a batch overlap instead of being waited for one
//! at a time, and then numbers the batch in order from lines already in the cache.
//! hashbrown has no way to read where a key would be without probing.

use crate::inline_table::{Entry, InlineTable};

/// Original key -> (dense id, largest size): an entry's `a` is the id, `b` the largest
/// size; at most half full (short probes).
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyTable {
    table: InlineTable<2>,
}

/// What [`KeyTable::upsert`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Upserted {
    /// The key's id.
    pub(crate) id: u32,
    /// Whether the key was new (and got the id offered).
    pub(crate) new: bool,
}

impl KeyTable {
    /// Keys in the table.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// The key stored in `key`'s home slot, whatever it is: reading it brings the slot's
    /// line into the cache. Numbering calls it for a batch of keys before numbering any of
    /// them, so the batch's cache misses are in flight together.
    #[inline]
    pub(crate) fn touch(&self, key: u64) -> u64 {
        self.table.touch(key)
    }

    /// The id of `key`, if present.
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        let i = self.table.find(key).ok()?;
        Some(self.table.at(i).a)
    }

    /// Finds `key`, raising its largest size to `size`, or inserts it with id `new_id`
    /// (below `u32::MAX`) and size `size`.
    #[inline]
    pub(crate) fn upsert(&mut self, key: u64, new_id: u32, size: u32) -> Upserted {
        match self.table.probe(key) {
            Ok(i) => {
                let e = self.table.at_mut(i);
                e.b = e.b.max(size);
                Upserted {
                    id: e.a,
                    new: false,
                }
            }
            Err(i) => {
                self.table.fill(
                    i,
                    Entry {
                        key,
                        a: new_id,
                        b: size,
                    },
                );
                Upserted {
                    id: new_id,
                    new: true,
                }
            }
        }
    }

    /// Every key's largest size, in no order.
    pub(crate) fn max_sizes(&self) -> impl Iterator<Item = u32> + '_ {
        self.table.held().map(|e| e.b)
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
        assert!(t.table.entries_len() >= 2 * t.len());
    }
}
