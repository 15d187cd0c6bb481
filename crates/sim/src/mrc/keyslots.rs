//! The key table of a [`super::slots::SlotWindow`]: each held key's slot and latest size
//! in one 16-byte entry, the key itself inline.
//!
//! The table is the simulator's one open-addressing table (`crate::inline_table`), which
//! key numbering uses too. **Why not the policy crate's `HashIndex`.** That index keeps 8
//! bytes a key (a frame number and 32 bits of hash) and confirms a match by reading the
//! key from the caller's array: two cache lines a lookup, in tables of about a megabyte
//! each for a nested level's 30,000 keys, and the two misses were half of a stratified
//! level's access on the 50M Zipf trace (docs/mrc.md). Here a lookup reads one line, and
//! a hit updates the key's slot and size in the same line.
//!
//! At most three quarters full: a level's key count is bounded, so the table stops
//! growing early.

use crate::inline_table::{Entry, InlineTable};

/// Key to slot and size (see the module docs): an entry's `a` is the slot, `b` the size.
#[derive(Debug, Default)]
pub struct KeySlots {
    table: InlineTable<3>,
}

impl KeySlots {
    /// The entry of `key`, or (`Err`) the free entry where it goes. Grows the table first
    /// when one more key would pass three quarters, so that the free entry stays valid for
    /// [`KeySlots::fill`] until the table changes.
    #[inline]
    pub fn probe(&mut self, key: u64) -> Result<usize, usize> {
        self.table.probe(key)
    }

    /// The entry of `key`, if held.
    pub fn get(&self, key: u64) -> Option<usize> {
        self.table.find(key).ok()
    }

    /// The slot and size of held entry `e`.
    #[inline]
    pub fn at(&self, e: usize) -> (usize, u32) {
        let e = self.table.at(e);
        (e.a as usize, e.b)
    }

    /// Records a new slot and size in held entry `e`.
    #[inline]
    pub fn set(&mut self, e: usize, slot: usize, size: u32) {
        let e = self.table.at_mut(e);
        e.a = slot as u32;
        e.b = size;
    }

    /// Puts `key` in free entry `e` (what [`KeySlots::probe`] found for it).
    #[inline]
    pub fn fill(&mut self, e: usize, key: u64, slot: usize, size: u32) {
        self.table.fill(
            e,
            Entry {
                key,
                a: slot as u32,
                b: size,
            },
        );
    }

    /// Forgets held `key`; returns its size.
    pub fn remove(&mut self, key: u64) -> u32 {
        let Some(e) = self.table.remove(key) else {
            debug_assert!(false, "removing a key that is not held");
            return 0;
        };
        e.b
    }

    /// Bytes of the table.
    pub fn state_bytes(&self) -> usize {
        self.table.state_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a `HashMap` under seeded inserts, updates and removals, with keys that
    /// share their home as well as random ones, through several growths.
    #[test]
    fn agrees_with_a_map() {
        use rand::Rng;
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            let mut table = KeySlots::default();
            let mut model = std::collections::HashMap::new();
            for step in 0..20_000u32 {
                let key = if rng.gen_bool(0.5) {
                    rng.gen_range(0..64u64) << 40
                } else {
                    rng.gen_range(0..3_000u64)
                };
                if rng.gen_ratio(1, 3) {
                    if let Some(size) = model.remove(&key) {
                        assert_eq!(table.remove(key), size, "{seed}: step {step}");
                    }
                } else {
                    match table.probe(key) {
                        Ok(e) => table.set(e, step as usize, step),
                        Err(e) => table.fill(e, key, step as usize, step),
                    }
                    model.insert(key, step);
                }
                assert_eq!(table.table.len(), model.len(), "{seed}: step {step}");
            }
            for (&key, &step) in &model {
                let e = table.get(key).expect("held");
                assert_eq!(table.at(e), (step as usize, step), "{seed}");
            }
            assert!(table.get(1 << 60).is_none());
        });
    }
}
