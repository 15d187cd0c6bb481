//! The file-cache consumer: file blocks in exact LRU order (Sprite's file cache sees every
//! access, since all go through `read` and `write`; Nelson 1990 Section 2), with delayed
//! writes.
//!
//! Blocks are ordered by (time of last access, access sequence number) in a `BTreeMap`,
//! so the oldest block is the first entry and every operation is O(log n) — plain and
//! deterministic, for caches of a few thousand blocks. A block written is dirty until the
//! flusher writes it (after `delay`, Sprite's 30 seconds) or it is evicted (written first)
//! or its file is deleted (dropped unwritten).

use std::collections::{BTreeMap, HashMap, HashSet};

use super::super::time::VTime;
use super::workload::FileNo;

/// A block's key for the arbiter: `file << 32 | block`.
pub(crate) fn block_key(file: FileNo, block: u32) -> u64 {
    (u64::from(file) << 32) | u64::from(block)
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    stamp: (VTime, u64),
    dirty_since: Option<VTime>,
}

/// The cached blocks.
#[derive(Debug, Default)]
pub(crate) struct FileCache {
    entries: HashMap<u64, Entry>,
    lru: BTreeMap<(VTime, u64), u64>,
    seq: u64,
    /// Blocks evicted and not since deleted: a miss on one of them is a refault.
    evicted: HashSet<u64>,
}

impl FileCache {
    /// Blocks cached.
    pub fn resident(&self) -> u64 {
        self.entries.len() as u64
    }

    /// Access `key` if cached (moving it to the most recent end, and dirtying it with
    /// `write`); false on a miss.
    pub fn access(&mut self, key: u64, write: bool, now: VTime) -> bool {
        let Some(e) = self.entries.get_mut(&key) else {
            return false;
        };
        self.lru.remove(&e.stamp);
        self.seq += 1;
        e.stamp = (now, self.seq);
        if write && e.dirty_since.is_none() {
            e.dirty_since = Some(now);
        }
        self.lru.insert(e.stamp, key);
        true
    }

    /// The cached keys, least recently used first.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.lru.values().copied()
    }

    /// Whether `key` is cached (without counting an access).
    pub fn contains(&self, key: u64) -> bool {
        self.entries.contains_key(&key)
    }

    /// Whether a miss on `key` is a refault (the block was cached before).
    pub fn was_cached(&self, key: u64) -> bool {
        self.evicted.contains(&key)
    }

    /// Cache `key` (just read, or written whole), as most recent.
    pub fn insert(&mut self, key: u64, write: bool, now: VTime) {
        self.seq += 1;
        let e = Entry {
            stamp: (now, self.seq),
            dirty_since: write.then_some(now),
        };
        let old = self.entries.insert(key, e);
        debug_assert!(old.is_none(), "block {key:#x} cached twice");
        self.lru.insert(e.stamp, key);
        self.evicted.remove(&key);
    }

    /// How long the least recently used block has been idle.
    pub fn oldest_idle(&self, now: VTime) -> Option<u64> {
        self.lru.keys().next().map(|&(t, _)| now.since(t))
    }

    /// Give up the least recently used block: its key and whether it must be written.
    pub fn evict(&mut self) -> Option<(u64, bool)> {
        let (_, key) = self.lru.pop_first()?;
        let e = self.entries.remove(&key).expect("lru and map agree");
        self.evicted.insert(key);
        Some((key, e.dirty_since.is_some()))
    }

    /// Drop every block of `file` (deleted) with keys below `blocks`; the number dropped
    /// and how many of them were dirty.
    pub fn delete(&mut self, file: FileNo, blocks: u32) -> (u64, u64) {
        let (mut dropped, mut dirty) = (0, 0);
        for b in 0..blocks {
            let key = block_key(file, b);
            self.evicted.remove(&key);
            if let Some(e) = self.entries.remove(&key) {
                self.lru.remove(&e.stamp);
                dropped += 1;
                dirty += u64::from(e.dirty_since.is_some());
            }
        }
        (dropped, dirty)
    }

    /// Mark clean, and return, the blocks dirty since `cutoff` or earlier (the flusher's
    /// pass), in LRU order.
    pub fn flush_older_than(&mut self, cutoff: VTime) -> Vec<u64> {
        let mut out = Vec::new();
        for key in self.lru.values() {
            let e = self.entries.get_mut(key).expect("lru and map agree");
            if e.dirty_since.is_some_and(|t| t <= cutoff) {
                e.dirty_since = None;
                out.push(*key);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_lru_with_delayed_writes() {
        let t = VTime::from_ns;
        let mut c = FileCache::default();
        c.insert(block_key(1, 0), false, t(0));
        c.insert(block_key(1, 1), true, t(1));
        c.insert(block_key(2, 0), false, t(1));
        assert!(c.access(block_key(1, 0), false, t(5)));
        assert_eq!(c.oldest_idle(t(6)), Some(5));
        assert_eq!(c.flush_older_than(t(0)), Vec::<u64>::new());
        assert_eq!(c.flush_older_than(t(1)), vec![block_key(1, 1)]);
        assert_eq!(c.evict(), Some((block_key(1, 1), false)));
        assert!(c.was_cached(block_key(1, 1)));
        assert_eq!(c.evict(), Some((block_key(2, 0), false)));
        assert!(c.access(block_key(1, 0), true, t(7)));
        assert_eq!(c.delete(1, 2), (1, 1));
        assert!(!c.was_cached(block_key(1, 1)));
        assert_eq!(c.resident(), 0);
        assert_eq!(c.evict(), None);
    }
}
