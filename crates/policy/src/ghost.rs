//! Ghost history: keys of recently evicted objects, without their data.
//!
//! 2Q's A1out, ARC's and CAR's B1/B2, S3-FIFO's ghost queue and others remember which keys
//! left the cache recently so that a quick return can be treated differently from a first
//! access. A [`GhostList`] is an ordered set of keys in a fixed slab: insertion at the head,
//! removal of any key, and trimming from the tail are O(1); a hash map finds a key's slot.
//! The slab grows on demand up to the capacity fixed at construction (so a large bound
//! costs nothing until it is used) and is then reused: steady-state use never allocates.
//!
//! Each ghost entry can carry a size (in the policy's units) so that policies that bound
//! their history by total size (ARC with variable-size objects) can do so.
//!
//! ```
//! use policy::ghost::GhostList;
//!
//! let mut g = GhostList::new(2);
//! g.push_front(10, 1);
//! g.push_front(20, 1);
//! g.push_front(30, 1); // full: 10, the oldest, is forgotten
//! assert!(!g.contains(10));
//! assert!(g.remove(20));
//! assert_eq!(g.len(), 1);
//! ```

use crate::keymap::KeyMap;
use crate::list::{Links, List};
use crate::FrameId;

/// A bounded, ordered set of keys (newest at the head).
#[derive(Clone, Debug)]
pub struct GhostList {
    index: KeyMap,
    keys: Vec<u64>,
    sizes: Vec<u32>,
    links: Links,
    order: List,
    free: Vec<u32>,
    capacity: usize,
    size_sum: u64,
}

impl GhostList {
    /// A ghost list remembering at most `capacity` keys.
    pub fn new(capacity: usize) -> Self {
        let initial = capacity.min(1 << 16);
        GhostList {
            index: KeyMap::hashed(initial),
            keys: Vec::with_capacity(initial),
            sizes: Vec::with_capacity(initial),
            links: Links::with_capacity(initial),
            order: List::new(),
            free: Vec::new(),
            capacity,
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
        self.order.len()
    }

    /// True when nothing is remembered.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Maximum number of keys remembered.
    pub fn capacity(&self) -> usize {
        self.capacity
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
    pub fn push_front(&mut self, key: u64, size: u32) -> Option<u64> {
        if self.capacity == 0 {
            return Some(key);
        }
        self.remove(key);
        let dropped = if self.order.len() == self.capacity {
            self.pop_back().map(|(k, _)| k)
        } else {
            None
        };
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                // the slab is smaller than the bound: grow it by one slot
                self.keys.push(0);
                self.sizes.push(0);
                (self.keys.len() - 1) as u32
            }
        };
        self.keys[slot as usize] = key;
        self.sizes[slot as usize] = size;
        self.size_sum += u64::from(size);
        self.links.push_front(&mut self.order, FrameId(slot));
        self.index.insert(key, slot);
        dropped
    }

    /// Forget `key`; returns whether it was remembered.
    #[inline]
    pub fn remove(&mut self, key: u64) -> bool {
        match self.index.remove(key) {
            Some(slot) => {
                self.release(slot);
                true
            }
            None => false,
        }
    }

    /// Forget and return the oldest key and its size.
    pub fn pop_back(&mut self) -> Option<(u64, u32)> {
        let slot = self.order.tail()?.0;
        let key = self.keys[slot as usize];
        let size = self.sizes[slot as usize];
        self.index.remove(key);
        self.release(slot);
        Some((key, size))
    }

    /// Keys from the newest to the oldest.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.links
            .iter_from_head(&self.order)
            .map(|f| self.keys[f.index()])
    }

    fn release(&mut self, slot: u32) {
        self.links.unlink(&mut self.order, FrameId(slot));
        self.size_sum -= u64::from(self.sizes[slot as usize]);
        self.free.push(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn zero_capacity_remembers_nothing() {
        let mut g = GhostList::new(0);
        assert_eq!(g.push_front(1, 1), Some(1));
        assert!(!g.contains(1));
    }
}
