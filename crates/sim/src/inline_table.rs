//! One open-addressing table for the simulator's key maps whose lookups miss the caches:
//! each entry's key and two 32-bit values in one 16-byte slot, so that finding a key
//! reads one cache line.
//!
//! Why not `hashbrown`: it keeps its control bytes apart from its entries, two misses per
//! lookup of a cold key; and the policy crate's `HashIndex` keeps 8 bytes a key and
//! confirms a match by reading the key from the caller's array, two lines again. The two
//! users here are memory-bound: key numbering of a large trace ([`crate::keytable`]) and
//! the key tables of `--hot`'s stratified level (`mrc::keyslots`).
//!
//! Linear probing from a home given by the top bits of the key's [`mix`] (SplitMix64's
//! finalizer, which key numbering has always used: with the core crate's MurmurHash3
//! finalizer instead, `bufcache mrc`'s exact pass, which numbers every key, was slower in
//! 7 of 9 alternated runs on a 20M Zipf trace, median 8.22 against 7.58 s of user CPU,
//! 2026-11-25; not explained further), at most
//! `QUARTERS / 4` full (the table doubles before an insertion would pass that), and
//! backward-shift deletion, so no tombstones build up under constant churn.

/// SplitMix64's finalizer: every bit of the key into the top bits, so that sequential
/// keys, block addresses with a common stride and hashed strings all spread.
#[inline]
fn mix(key: u64) -> u64 {
    let mut h = key;
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// `a` of a free entry (so `a` stays below it in held ones).
pub(crate) const EMPTY: u32 = u32::MAX;

/// One entry: a key and two values, whose meaning is the user's; `a == EMPTY` is free.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub(crate) key: u64,
    pub(crate) a: u32,
    pub(crate) b: u32,
}

const FREE: Entry = Entry {
    key: 0,
    a: EMPTY,
    b: 0,
};

/// Key -> two `u32`s, at most `QUARTERS / 4` full (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct InlineTable<const QUARTERS: usize> {
    entries: Vec<Entry>,
    /// `entries.len() - 1` (a power of two minus one).
    mask: usize,
    /// `64 - log2(entries.len())`: an entry's home is the top bits of its key's mix.
    shift: u32,
    len: usize,
}

impl<const QUARTERS: usize> Default for InlineTable<QUARTERS> {
    fn default() -> Self {
        Self::with_entries(16)
    }
}

impl<const QUARTERS: usize> InlineTable<QUARTERS> {
    /// An empty table of `entries` (a power of two, at least 2).
    fn with_entries(entries: usize) -> Self {
        debug_assert!(entries.is_power_of_two() && entries >= 2);
        InlineTable {
            entries: vec![FREE; entries],
            mask: entries - 1,
            shift: 64 - entries.trailing_zeros(),
            len: 0,
        }
    }

    /// Keys held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Entries, free or held (a power of two; the tests check the load bound).
    #[cfg(test)]
    pub(crate) fn entries_len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (mix(key) >> self.shift) as usize
    }

    /// The key stored in `key`'s home entry, whatever it is: reading it brings the entry's
    /// line into the cache, so a caller can start a batch's misses before it needs them.
    #[inline]
    pub(crate) fn touch(&self, key: u64) -> u64 {
        self.entries[self.home(key)].key
    }

    /// The entry of `key`, or (`Err`) the free entry where it goes. Grows the table first
    /// when one more key would pass the load bound, so that the free entry stays valid
    /// for [`InlineTable::fill`] until the table changes.
    #[inline]
    pub(crate) fn probe(&mut self, key: u64) -> Result<usize, usize> {
        if (self.len + 1) * 4 > self.entries.len() * QUARTERS {
            self.grow();
        }
        self.find(key)
    }

    /// The entry of `key` if it is held, or the free entry that ends its probe run.
    #[inline]
    pub(crate) fn find(&self, key: u64) -> Result<usize, usize> {
        let mut i = self.home(key);
        loop {
            let e = &self.entries[i];
            if e.a == EMPTY {
                return Err(i);
            }
            if e.key == key {
                return Ok(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Held entry `i`.
    #[inline]
    pub(crate) fn at(&self, i: usize) -> &Entry {
        &self.entries[i]
    }

    /// Held entry `i`, to change its values (not its key).
    #[inline]
    pub(crate) fn at_mut(&mut self, i: usize) -> &mut Entry {
        &mut self.entries[i]
    }

    /// Puts `e` in free entry `i` (what [`InlineTable::probe`] found for its key).
    #[inline]
    pub(crate) fn fill(&mut self, i: usize, e: Entry) {
        debug_assert_eq!(self.entries[i].a, EMPTY);
        debug_assert_ne!(e.a, EMPTY, "a held entry's `a` stays below EMPTY");
        self.entries[i] = e;
        self.len += 1;
    }

    /// Forgets `key`; returns its entry, if it was held.
    pub(crate) fn remove(&mut self, key: u64) -> Option<Entry> {
        let mut hole = self.find(key).ok()?;
        let removed = self.entries[hole];
        // Backward shift: move later members of the probe run into the hole when their
        // home is not cyclically between the hole and where they sit.
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let e = self.entries[j];
            if e.a == EMPTY {
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
        Some(removed)
    }

    /// Twice the entries, every key moved to its new home.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.entries);
        *self = Self::with_entries(old.len() * 2);
        for e in old.into_iter().filter(|e| e.a != EMPTY) {
            let Err(free) = self.find(e.key) else {
                unreachable!("a key held twice");
            };
            self.fill(free, e);
        }
    }

    /// Every held entry, in no order.
    pub(crate) fn held(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.entries.iter().filter(|e| e.a != EMPTY)
    }

    /// Bytes of the table.
    pub(crate) fn state_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
    }
}
