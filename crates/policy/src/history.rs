//! A bounded map from keys of evicted objects to a few numbers about them.
//!
//! [`crate::ghost::GhostList`] remembers *which* keys left recently; some policies also
//! need *what* they knew about each: LRU-K keeps a non-resident page's last K reference
//! times (O'Neil et al.'s "retained information"), the Linux model keeps the eviction
//! counter value of a page's shadow entry. A [`HistoryRing`] stores `stride` `u64`s per
//! key in a ring of slots: a new entry overwrites the oldest one, so the memory is
//! bounded at construction (and allocated as the ring first fills) and the oldest history is forgotten first (the order in which the
//! keys were evicted). Taking an entry back (the key returned to the cache) frees its slot
//! lazily: the slot is only marked dead and is reused when the ring comes round.
//!
//! Cost: one key-map lookup per `insert` and `take`; forgetting the key whose slot is
//! overwritten touches only the map's presence bit when keys are dense
//! ([`crate::keymap::DenseMap`]). Memory per slot: 8 bytes of key, `8 * stride` bytes of
//! data, 1 byte of liveness, plus the key map.

use crate::keymap::KeyMap;

/// Bounded key -> `[u64; stride]` map; the oldest insertion is forgotten first.
#[derive(Clone, Debug)]
pub(crate) struct HistoryRing {
    index: KeyMap,
    keys: Vec<u64>,
    live: Vec<bool>,
    data: Vec<u64>,
    stride: usize,
    /// The ring's size; the vectors grow lazily up to it.
    slots: usize,
    next: usize,
}

impl HistoryRing {
    /// A ring of `slots` entries of `stride` numbers each. `slots == 0` remembers nothing.
    pub(crate) fn new(slots: usize, stride: usize) -> Self {
        let initial = slots.min(1 << 16);
        HistoryRing {
            index: KeyMap::hashed(initial),
            keys: Vec::with_capacity(initial),
            live: Vec::with_capacity(initial),
            data: Vec::with_capacity(initial * stride),
            stride,
            slots,
            next: 0,
        }
    }

    /// Look keys up in an array: keys are dense ids below `key_space`
    /// ([`crate::BuildContext::key_space`]). Call before first use; `None` keeps hashing.
    pub(crate) fn set_key_space(&mut self, key_space: Option<u64>) {
        if key_space.is_some() {
            self.index = KeyMap::for_keys(key_space, 0);
        }
    }

    /// Number of live entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// Remember `values` (of length `stride`) for `key`, replacing any older entry for it.
    pub(crate) fn insert(&mut self, key: u64, values: &[u64]) {
        debug_assert_eq!(values.len(), self.stride);
        if self.slots == 0 {
            return;
        }
        if let Some(old) = self.index.remove(key) {
            self.live[old as usize] = false;
        }
        let slot = self.next;
        self.next += 1;
        if self.next == self.slots {
            self.next = 0;
        }
        if slot == self.keys.len() {
            // first time round the ring: grow it by one slot
            self.keys.push(0);
            self.live.push(false);
            self.data.resize(self.data.len() + self.stride, 0);
        }
        if self.live[slot] {
            self.index.forget(self.keys[slot]);
        }
        self.keys[slot] = key;
        self.live[slot] = true;
        self.data[slot * self.stride..(slot + 1) * self.stride].copy_from_slice(values);
        self.index.insert(key, slot as u32);
    }

    /// Forget `key`, copying its values into `out` (length `stride`). False if unknown.
    pub(crate) fn take(&mut self, key: u64, out: &mut [u64]) -> bool {
        match self.index.remove(key) {
            Some(slot) => {
                let slot = slot as usize;
                self.live[slot] = false;
                out.copy_from_slice(&self.data[slot * self.stride..(slot + 1) * self.stride]);
                true
            }
            None => false,
        }
    }

    /// Forget `key` without reading it.
    pub(crate) fn forget(&mut self, key: u64) {
        if let Some(slot) = self.index.remove(key) {
            self.live[slot as usize] = false;
        }
    }

    /// Hold `slots` entries from now on (the policy's cache was resized): the newest
    /// live entries are kept, in their order, and the oldest beyond `slots` forgotten.
    /// O(entries), once per resize.
    pub(crate) fn set_slots(&mut self, slots: usize) {
        let len = self.keys.len();
        // The oldest slot: `next` once the ring has come round, else the first.
        let start = if len == self.slots { self.next } else { 0 };
        let order: Vec<usize> = (0..len)
            .map(|i| (start + i) % len)
            .filter(|&slot| self.live[slot])
            .collect();
        let forget = order.len().saturating_sub(slots);
        let kept: Vec<(u64, Vec<u64>)> = order[forget..]
            .iter()
            .map(|&slot| {
                let values = self.data[slot * self.stride..(slot + 1) * self.stride].to_vec();
                (self.keys[slot], values)
            })
            .collect();
        for &slot in &order {
            self.index.remove(self.keys[slot]);
        }
        self.keys.clear();
        self.live.clear();
        self.data.clear();
        self.next = 0;
        self.slots = slots;
        for (key, values) in kept {
            self.insert(key, &values);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HistoryRing;

    #[test]
    fn resizing_keeps_the_newest_entries_in_order() {
        let mut ring = HistoryRing::new(4, 1);
        // 1..=6 into 4 slots: 3, 4, 5, 6 remain (the ring has come round); 4 is taken.
        for k in 1..=6 {
            ring.insert(k, &[k * 10]);
        }
        let mut out = [0];
        assert!(ring.take(4, &mut out));
        ring.set_slots(2);
        assert_eq!(ring.len(), 2);
        assert!(
            !ring.take(3, &mut out),
            "the oldest live entry is forgotten"
        );
        // Growing keeps both, and the ring fills up to 3 before 5 is overwritten.
        ring.set_slots(3);
        ring.insert(7, &[70]);
        assert_eq!(ring.len(), 3);
        ring.insert(8, &[80]);
        assert!(!ring.take(5, &mut out), "5 was the oldest");
        for (k, v) in [(6, 60), (7, 70), (8, 80)] {
            assert!(ring.take(k, &mut out));
            assert_eq!(out, [v]);
        }
        ring.set_slots(0);
        ring.insert(9, &[90]);
        assert_eq!(ring.len(), 0);
    }

    #[test]
    fn oldest_is_forgotten_and_take_frees() {
        let mut h = HistoryRing::new(2, 2);
        h.insert(1, &[10, 11]);
        h.insert(2, &[20, 21]);
        h.insert(3, &[30, 31]); // overwrites key 1's slot
        let mut out = [0; 2];
        assert!(!h.take(1, &mut out));
        assert!(h.take(2, &mut out));
        assert_eq!(out, [20, 21]);
        assert_eq!(h.len(), 1);
        h.insert(4, &[40, 41]); // slot 1: key 2 was taken, the slot is dead
        h.insert(5, &[50, 51]); // slot 0: forgets 3
        assert!(!h.take(3, &mut out));
        assert!(h.take(4, &mut out));
        assert_eq!(out, [40, 41]);
        h.insert(5, &[55, 56]); // re-insert replaces
        assert!(h.take(5, &mut out));
        assert_eq!(out, [55, 56]);
        assert_eq!(h.len(), 0);
        let mut none = HistoryRing::new(0, 1);
        none.insert(1, &[1]);
        assert!(!none.take(1, &mut [0]));
    }
}
