//! The key table of a [`super::slots::SlotWindow`]: each held key's slot and latest size
//! in one 16-byte entry, the key itself inline.
//!
//! **Why not the policy crate's `HashIndex`.** That index keeps 8 bytes a key (a frame
//! number and 32 bits of hash) and confirms a match by reading the key from the caller's
//! array: two cache lines a lookup, in tables of about a megabyte each for a nested
//! level's 30,000 keys, and the two misses were half of a stratified level's access on the
//! 50M Zipf trace (docs/mrc.md). Here a lookup reads one line, and a hit updates the
//! key's slot and size in the same line.
//!
//! Open addressing with linear probing, at most three quarters full (a level's key count
//! is bounded, so the table stops growing early), and backward-shift deletion: no
//! tombstones under the constant churn of a bounded stack.

use bufcache_core::mix;

/// A free entry's slot.
const EMPTY: u32 = u32::MAX;

/// A key, its slot and its latest size.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    slot: u32,
    size: u32,
}

const FREE: Entry = Entry {
    key: 0,
    slot: EMPTY,
    size: 0,
};

/// Key to slot and size (see the module docs).
#[derive(Debug)]
pub struct KeySlots {
    entries: Vec<Entry>,
    /// `entries.len() - 1` (a power of two minus one).
    mask: usize,
    /// `64 - log2(entries.len())`: an entry's home is the top bits of its key's mix.
    shift: u32,
    len: usize,
}

impl Default for KeySlots {
    fn default() -> Self {
        KeySlots::with_entries(16)
    }
}

impl KeySlots {
    /// An empty table of `entries` (a power of two, at least 2).
    fn with_entries(entries: usize) -> Self {
        KeySlots {
            entries: vec![FREE; entries],
            mask: entries - 1,
            shift: 64 - entries.trailing_zeros(),
            len: 0,
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (mix(key) >> self.shift) as usize
    }

    /// The entry of `key`, or (`Err`) the free entry where it goes. Grows the table first
    /// when one more key would pass three quarters, so that the free entry stays valid for
    /// [`KeySlots::fill`] until the table changes.
    #[inline]
    pub fn probe(&mut self, key: u64) -> Result<usize, usize> {
        if (self.len + 1) * 4 > self.entries.len() * 3 {
            self.grow();
        }
        self.find(key)
    }

    /// The entry of `key` if it is held, or the free entry that ends its probe run.
    #[inline]
    fn find(&self, key: u64) -> Result<usize, usize> {
        let mut i = self.home(key);
        loop {
            let e = &self.entries[i];
            if e.slot == EMPTY {
                return Err(i);
            }
            if e.key == key {
                return Ok(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The entry of `key`, if held.
    pub fn get(&self, key: u64) -> Option<usize> {
        self.find(key).ok()
    }

    /// The slot and size of held entry `e`.
    #[inline]
    pub fn at(&self, e: usize) -> (usize, u32) {
        (self.entries[e].slot as usize, self.entries[e].size)
    }

    /// Records a new slot and size in held entry `e`.
    #[inline]
    pub fn set(&mut self, e: usize, slot: usize, size: u32) {
        self.entries[e].slot = slot as u32;
        self.entries[e].size = size;
    }

    /// Puts `key` in free entry `e` (what [`KeySlots::probe`] found for it).
    #[inline]
    pub fn fill(&mut self, e: usize, key: u64, slot: usize, size: u32) {
        debug_assert_eq!(self.entries[e].slot, EMPTY);
        self.entries[e] = Entry {
            key,
            slot: slot as u32,
            size,
        };
        self.len += 1;
    }

    /// Forgets held `key`; returns its size.
    pub fn remove(&mut self, key: u64) -> u32 {
        let Ok(mut hole) = self.find(key) else {
            debug_assert!(false, "removing a key that is not held");
            return 0;
        };
        let size = self.entries[hole].size;
        // Backward shift: move later members of the probe run into the hole when their
        // home is not cyclically between the hole and where they sit.
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let e = self.entries[j];
            if e.slot == EMPTY {
                break;
            }
            let home = self.home(e.key);
            if j.wrapping_sub(home) & self.mask >= j.wrapping_sub(hole) & self.mask {
                self.entries[hole] = e;
                hole = j;
            }
        }
        self.entries[hole] = FREE;
        self.len -= 1;
        size
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.entries);
        *self = KeySlots::with_entries(old.len() * 2);
        for e in old.into_iter().filter(|e| e.slot != EMPTY) {
            let Err(free) = self.find(e.key) else {
                unreachable!("a key held twice");
            };
            self.entries[free] = e;
            self.len += 1;
        }
    }

    /// Bytes of the table.
    pub fn state_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
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
                assert_eq!(table.len, model.len(), "{seed}: step {step}");
            }
            for (&key, &step) in &model {
                let e = table.get(key).expect("held");
                assert_eq!(table.at(e), (step as usize, step), "{seed}");
            }
            assert!(table.get(1 << 60).is_none());
        });
    }
}
