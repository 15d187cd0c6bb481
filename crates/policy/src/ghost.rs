//! Ghost history: keys of recently evicted objects, without their data.
//!
//! 2Q's A1out, ARC's and CAR's B1/B2, S3-FIFO's ghost queue and others remember which keys
//! left the cache recently so that a quick return can be treated differently from a first
//! access. A [`GhostList`] is an ordered set of keys: insertion at the head, removal of any
//! key, and trimming from the tail are O(1) (amortized); a key map finds a key's entry.
//! Entries live in a vector that grows on demand up to twice the capacity fixed at
//! construction (so a large bound costs nothing until it is used) and is then compacted in
//! place: steady-state use never allocates.
//!
//! # Cost
//!
//! `push_front` appends to sequential memory and writes the key map; `pop_back` reads
//! sequential memory and clears the key (with dense keys, one bit in an L2-resident bitmap,
//! see [`crate::keymap::DenseMap`]); `remove` of a remembered key also marks its entry
//! dead (one random write), and of an unknown key costs one bit test. Memory: 16 bytes per
//! entry, up to twice the capacity, plus the key map.
//!
//! Measured with `bufcache bench replay` (Zipf 1.0, 1M keys, 20M requests, 10% cache, old
//! and new binaries interleaved on a shared machine): the previous linked slab (which
//! relinked neighbours and touched separate key and size arrays on every push and pop)
//! gave S3-FIFO 8.6-11.6 M requests/s and 2Q 7.7-14.8 M; the vector gave 11.5-14.4 and
//! 11.7-12.7; with dead marks and presence bits, 16.6-26.7 and 11.9-24.3.
//!
//! Each ghost entry can carry a size (in the policy's units) so that policies that bound
//! their history by total size (ARC with variable-size objects) can do so.

use crate::keymap::KeyMap;

/// One remembered key. Dead entries (removed or re-pushed keys) stay in place until they
/// are skipped by [`GhostList::pop_back`] or dropped by compaction.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    size: u32,
    /// Set when the key was removed (or pushed again, which makes a newer entry): the key
    /// map no longer points here. Kept in the entry so that `pop_back`, which reads entries
    /// in order, need not look the key up to know.
    dead: bool,
}

/// A bounded, ordered set of keys (newest at the head).
///
/// Entries are appended to a vector in insertion order, oldest first, and the key map
/// points each live key at its position. Removing a key deletes it from the map and marks
/// its entry *dead*; a dead entry is skipped when the tail reaches it, or dropped when the
/// vector is compacted. Popping the oldest live entry then needs no key lookup, only to
/// drop the key from the map (with dense keys, a bit). Compared with a linked slab this
/// makes `push_front` and `pop_back` touch sequential memory and the key map only (no
/// neighbours to relink), which is what a policy evicting one object per miss pays for.
#[derive(Clone, Debug)]
pub struct GhostList {
    /// Live key -> its position in `entries`.
    index: KeyMap,
    /// Oldest first; positions below `tail` are consumed.
    entries: Vec<Entry>,
    /// Position of the oldest entry that may still be live.
    tail: usize,
    /// Live entries.
    live: usize,
    capacity: usize,
    /// Length of `entries` at which it is compacted: twice the capacity, so that a
    /// compaction (O(length)) frees at least `capacity` positions and costs amortized O(1)
    /// per push.
    room: usize,
    size_sum: u64,
}

impl GhostList {
    /// A ghost list remembering at most `capacity` keys. Positions are `u32`, so the bound
    /// is capped at 2^31 keys (more than any policy asks for: policies bound entries at 2^24).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.min(1 << 31);
        let room = (2 * capacity).min(u32::MAX as usize);
        let initial = room.min(1 << 16);
        GhostList {
            index: KeyMap::hashed(capacity.min(1 << 16)),
            entries: Vec::with_capacity(initial),
            tail: 0,
            live: 0,
            capacity,
            room,
            size_sum: 0,
        }
    }

    /// Look keys up in an array instead of a hash table: keys are dense ids below
    /// `key_space` (see [`crate::BuildContext::key_space`]). Call before first use; `None`
    /// keeps hashing.
    pub fn set_key_space(&mut self, key_space: Option<u64>) {
        debug_assert!(self.is_empty());
        if key_space.is_some() {
            self.index = KeyMap::for_keys(key_space, 0);
        }
    }

    /// Number of keys remembered.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when nothing is remembered.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sum of the sizes of the remembered keys.
    #[inline]
    pub fn size_sum(&self) -> u64 {
        self.size_sum
    }

    /// True when `key` is remembered.
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        self.index.contains(key)
    }

    /// Remember `key` as the newest entry. If it is already present it is moved to the
    /// head. When full, the oldest key is forgotten first and returned.
    #[inline]
    pub fn push_front(&mut self, key: u64, size: u32) -> Option<u64> {
        if self.capacity == 0 {
            return Some(key);
        }
        self.remove(key);
        let dropped = if self.live == self.capacity {
            self.pop_back().map(|(k, _)| k)
        } else {
            None
        };
        if self.entries.len() == self.room {
            self.compact();
        }
        if self.entries.len() == self.entries.capacity() {
            // grow geometrically, but never past `room`
            let len = self.entries.len();
            self.entries.reserve_exact(len.max(16).min(self.room - len));
        }
        let pos = self.entries.len() as u32;
        self.entries.push(Entry {
            key,
            size,
            dead: false,
        });
        self.index.insert(key, pos);
        self.live += 1;
        self.size_sum += u64::from(size);
        dropped
    }

    /// Forget `key`; returns whether it was remembered.
    #[inline]
    pub fn remove(&mut self, key: u64) -> bool {
        self.take(key).is_some()
    }

    /// Forget `key` and return the number it was remembered with: its size, or whatever
    /// else the policy keeps in that field (MQ keeps a reference count).
    #[inline]
    pub fn take(&mut self, key: u64) -> Option<u32> {
        let pos = self.index.remove(key)?;
        let e = &mut self.entries[pos as usize];
        e.dead = true;
        let size = e.size;
        self.size_sum -= u64::from(size);
        self.forgot_one();
        Some(size)
    }

    /// Forget and return the oldest key and its size.
    #[inline]
    pub fn pop_back(&mut self) -> Option<(u64, u32)> {
        if self.live == 0 {
            return None;
        }
        // Some entry at or after `tail` is live, so this stops before the end.
        loop {
            let e = self.entries[self.tail];
            self.tail += 1;
            if !e.dead {
                self.index.forget(e.key);
                self.size_sum -= u64::from(e.size);
                self.forgot_one();
                return Some((e.key, e.size));
            }
        }
    }

    /// Keys from the newest to the oldest.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries[self.tail..]
            .iter()
            .rev()
            .filter(|e| !e.dead)
            .map(|e| e.key)
    }

    /// Bookkeeping after a live entry was dropped from the index: when none is left, every
    /// entry is dead and the vector can start over (cheaper than skipping them later).
    #[inline]
    fn forgot_one(&mut self) {
        self.live -= 1;
        if self.live == 0 {
            self.entries.clear();
            self.tail = 0;
        }
    }

    /// Remember at most `capacity` keys from now on (the policy's cache was resized):
    /// when shrinking, the oldest keys beyond it are forgotten now.
    pub fn set_capacity(&mut self, capacity: usize) {
        let capacity = capacity.min(1 << 31);
        while self.live > capacity {
            self.pop_back();
        }
        self.capacity = capacity;
        self.room = (2 * capacity).min(u32::MAX as usize);
        // Compaction triggers when the entries reach `room` exactly: never leave more.
        if self.entries.len() >= self.room {
            self.compact();
        }
    }

    /// Move the live entries, in order, to the front of `entries` and repoint the index.
    #[cold]
    fn compact(&mut self) {
        let mut kept = 0;
        for pos in self.tail..self.entries.len() {
            let e = self.entries[pos];
            if !e.dead {
                self.entries[kept] = e;
                self.index.insert(e.key, kept as u32);
                kept += 1;
            }
        }
        debug_assert_eq!(kept, self.live);
        self.entries.truncate(kept);
        self.tail = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_smaller_capacity_forgets_the_oldest_keys_and_a_larger_one_keeps_more() {
        let mut g = GhostList::new(4);
        for k in 1..=4 {
            g.push_front(k, 1);
        }
        g.set_capacity(2);
        assert_eq!(g.len(), 2);
        assert!(!g.contains(1) && !g.contains(2) && g.contains(3) && g.contains(4));
        g.set_capacity(3);
        g.push_front(5, 1);
        assert_eq!(g.len(), 3);
        g.push_front(6, 1); // full at 3: 3 goes
        assert!(!g.contains(3) && g.contains(4) && g.contains(5) && g.contains(6));
    }

    #[test]
    fn the_oldest_key_is_forgotten_when_full() {
        let mut g = GhostList::new(2);
        g.push_front(10, 1);
        g.push_front(20, 1);
        g.push_front(30, 1); // full: 10, the oldest, is forgotten
        assert!(!g.contains(10));
        assert!(g.remove(20));
        assert_eq!(g.len(), 1);
    }

    #[test]
    fn bounded_fifo_with_removal() {
        let mut g = GhostList::new(3);
        for k in 1..=3 {
            assert_eq!(g.push_front(k, k as u32), None);
        }
        assert_eq!(g.size_sum(), 6);
        assert_eq!(g.push_front(4, 4), Some(1));
        assert_eq!(g.iter().collect::<Vec<_>>(), [4, 3, 2]);
        assert!(g.remove(3));
        assert!(!g.remove(3));
        assert_eq!(g.size_sum(), 6);
        g.push_front(2, 2); // re-push moves to head
        assert_eq!(g.iter().collect::<Vec<_>>(), [2, 4]);
        assert_eq!(g.pop_back(), Some((4, 4)));
        assert_eq!(g.len(), 1);
    }

    /// Against a plain `VecDeque` model, with enough removals and re-pushes to leave dead
    /// entries behind, force compactions and empty the list now and then.
    /// Explores: fresh operations each run unless `BUFCACHE_SEED` is set.
    #[test]
    fn agrees_with_a_deque_model() {
        testutil::explore(agrees_with_a_deque_model_from);
    }

    fn agrees_with_a_deque_model_from(seed: testutil::Seed) {
        use std::collections::VecDeque;
        use testutil::Rng;
        for dense in [false, true] {
            let mut rng = seed.stream(u64::from(dense));
            let mut g = GhostList::new(7);
            if dense {
                g.set_key_space(Some(20));
            }
            let mut model: VecDeque<(u64, u32)> = VecDeque::new(); // newest first
            for _ in 0..20_000 {
                let key = rng.gen_range(0..20u64);
                match rng.gen_range(0..10) {
                    0..=4 => {
                        let size = rng.gen_range(1..4);
                        model.retain(|&(k, _)| k != key);
                        let expect = (model.len() == 7).then(|| model.pop_back().unwrap().0);
                        model.push_front((key, size));
                        assert_eq!(g.push_front(key, size), expect);
                    }
                    5..=7 => {
                        let was = model.iter().any(|&(k, _)| k == key);
                        model.retain(|&(k, _)| k != key);
                        assert_eq!(g.remove(key), was);
                    }
                    _ => assert_eq!(g.pop_back(), model.pop_back()),
                }
                assert_eq!(g.len(), model.len());
                let sum: u64 = model.iter().map(|&(_, s)| u64::from(s)).sum();
                assert_eq!(g.size_sum(), sum);
                let keys: Vec<u64> = model.iter().map(|&(k, _)| k).collect();
                assert_eq!(g.iter().collect::<Vec<_>>(), keys);
                assert!(g.entries.len() <= g.room);
            }
        }
    }

    #[test]
    fn zero_capacity_remembers_nothing() {
        let mut g = GhostList::new(0);
        assert_eq!(g.push_front(1, 1), Some(1));
        assert!(!g.contains(1));
    }
}
