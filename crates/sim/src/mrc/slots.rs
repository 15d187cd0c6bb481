//! Keys in access order over a window of slots, two bits a slot, and the packed weight
//! above any slot: the stack under a stratified nested level
//! ([`super::weighted::WeightedStack`]).
//!
//! Each access takes the next slot of a window and leaves its old slot dead, so the held
//! keys sit in slot order from the least recent to the most. A slot has two bits, *live*
//! (a held key's latest access) and its key's *stratum* (promoted or hash-sampled), so
//! the weight above a key (promoted keys in the low half, sampled keys in the high half,
//! as [`super::hot`] packs them) is a count of bits: the popcounts of the words above its
//! own, kept in a Fenwick tree over the words, plus those of its own word above it.
//!
//! **Why words, not slots.** A Fenwick tree over slots (the stratified
//! [`super::stack::StreamingStack`]) holds a sum for every slot of a window several
//! times the keys held: for a level of 30,000 keys, a megabyte whose walks miss the
//! processor's caches at every step (46% of a `--hot` pass on the 50M Zipf trace before
//! 2026-11-25). Over words it is 64 times smaller (a few kilobytes for the same level):
//! a query or an update is a dozen additions in the first-level cache, whatever the
//! number of sizes the level answers. (A linked list with a marker per size, the level's
//! stack until 2026-11-25, moved every marker on every new key: 12 marker steps each,
//! mostly mispredicted branches, on the 50M traces. Blocks of 32 words with a count each
//! instead of the tree, which make an update two additions, took 9% more instructions
//! than the tree on the 50M Zipf trace's first 10M requests: the queries of deep keys
//! summed too many words. docs/mrc.md.)
//!
//! A key's slot and latest size are in its entry of a key table ([`KeySlots`]), which
//! an access reads and updates in one cache line; the window's own array of keys by slot
//! is read only from the bottom up (the oldest key leaving, a renumbering). There are two
//! tables, one per stratum: the promoted keys are few (at most `--hot`, 4,096 on the 50M
//! traces) and draw most of a level's accesses on a skewed trace (7.9M of Zipf's 11.3M),
//! and their own table of a hundred kilobytes stays in the processor's cache where the
//! sampled keys' megabyte does not.
//!
//! When the slots run out, the live keys are renumbered in order into the bottom of a
//! window four times their number, the bits and the tree rebuilt in linear time and the
//! table repointed one key at a time: amortized, a third of a table probe per access.

use super::hot::{STRATUM_HOT, STRATUM_SAMPLED};
use super::keyslots::KeySlots;

/// No slot.
pub const NONE: usize = usize::MAX;

/// Smallest window, so that short streams do not renumber often.
const MIN_SLOTS: usize = 1024;

/// The packed weight of one word's live slots, `hot` marking the promoted ones.
#[inline]
fn packed(live: u64, hot: u64) -> u64 {
    u64::from((live & !hot).count_ones()) * STRATUM_SAMPLED
        + u64::from((live & hot).count_ones()) * STRATUM_HOT
}

/// A held key's entry in the table of its stratum ([`SlotWindow::find_or_vacant`]).
#[derive(Clone, Copy, Debug)]
pub struct Held {
    e: usize,
    hot: bool,
}

/// Held keys by slot (see the module docs). Each live slot carries the key, its latest
/// size and its stratum.
#[derive(Debug)]
pub struct SlotWindow {
    /// Each held key's slot and latest size, in the table of the stratum of its latest
    /// access (`[sampled, promoted]`).
    tables: [KeySlots; 2],
    /// The key that took each slot.
    keys: Vec<u64>,
    /// Bit per slot: a held key's latest access.
    live: Vec<u64>,
    /// Bit per slot: its key was promoted at that access.
    hot: Vec<u64>,
    /// Fenwick tree over words (1-based inside): the packed weight of their live slots.
    tree: Vec<u64>,
    /// The packed weight of all live slots.
    total: u64,
    /// The next slot to take.
    next: usize,
    /// No live slot lies below this one.
    oldest: usize,
    /// The most recent live slot, [`NONE`] when empty.
    head: usize,
    len: usize,
}

impl Default for SlotWindow {
    fn default() -> Self {
        let words = MIN_SLOTS / 64;
        SlotWindow {
            tables: [KeySlots::default(), KeySlots::default()],
            keys: vec![0; MIN_SLOTS],
            live: vec![0; words],
            hot: vec![0; words],
            tree: vec![0; words + 1],
            total: 0,
            next: 0,
            oldest: 0,
            head: NONE,
            len: 0,
        }
    }
}

impl SlotWindow {
    /// Keys held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packed weight of the keys held.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The most recent key's slot, [`NONE`] when empty.
    #[inline]
    pub fn head(&self) -> usize {
        self.head
    }

    /// The least recent key's slot, [`NONE`] when empty.
    #[inline]
    pub fn tail(&mut self) -> usize {
        if self.len == 0 {
            return NONE;
        }
        let mut word = self.oldest / 64;
        let mut bits = self.live[word] & (u64::MAX << (self.oldest % 64));
        while bits == 0 {
            word += 1;
            bits = self.live[word];
        }
        self.oldest = word * 64 + bits.trailing_zeros() as usize;
        self.oldest
    }

    /// The entry of `key`, or (`Err`) the free entry of the table of stratum `hot` where
    /// it goes ([`KeySlots::probe`]). A key not in that table is looked for in the other
    /// one (a key changing stratum: once per promoted key in a pass). Renumbers the window
    /// first when no slot is left, so that a key found or added next has a slot to move
    /// to.
    #[inline]
    pub fn find_or_vacant(&mut self, key: u64, hot: bool) -> Result<Held, usize> {
        if self.next == self.keys.len() {
            self.compact();
        }
        match self.tables[usize::from(hot)].probe(key) {
            Ok(e) => Ok(Held { e, hot }),
            Err(free) => match self.tables[usize::from(!hot)].get(key) {
                Some(e) => Ok(Held { e, hot: !hot }),
                None => Err(free),
            },
        }
    }

    /// The slot and latest size of a held key.
    #[inline]
    pub fn at(&self, held: Held) -> (usize, u32) {
        self.tables[usize::from(held.hot)].at(held.e)
    }

    /// The slot of `key`, if held.
    pub fn find(&self, key: u64) -> Option<usize> {
        self.tables
            .iter()
            .find_map(|t| t.get(key).map(|e| t.at(e).0))
    }

    /// Whether the key at live `slot` was promoted at its latest access.
    #[inline]
    pub fn is_hot(&self, slot: usize) -> bool {
        self.hot[slot / 64] >> (slot % 64) & 1 != 0
    }

    /// The packed weight of the key at live `slot`.
    #[inline]
    pub fn weight(&self, slot: usize) -> u64 {
        if self.is_hot(slot) {
            STRATUM_HOT
        } else {
            STRATUM_SAMPLED
        }
    }

    /// The packed weight of the live slots above `slot` (more recent keys).
    #[inline]
    pub fn weight_above(&self, slot: usize) -> u64 {
        let word = slot / 64;
        // The bits of `word` at or below `slot`, and every word below it.
        let upto = u64::MAX >> (63 - slot % 64);
        let mut below = packed(self.live[word] & upto, self.hot[word]);
        let mut i = word;
        while i > 0 {
            below += self.tree[i];
            i &= i - 1;
        }
        self.total - below
    }

    /// A new key on top, in the free entry `e` [`SlotWindow::find_or_vacant`] gave it
    /// (the window unchanged since).
    #[inline]
    pub fn push(&mut self, e: usize, key: u64, size: u32, hot: bool) {
        let slot = self.take(key, hot);
        self.tables[usize::from(hot)].fill(e, key, slot, size);
    }

    /// Moves `key`, of held entry `e`, to the top with a new size and stratum (the window
    /// unchanged since [`SlotWindow::find_or_vacant`] found it). The key is the caller's:
    /// reading it from its old slot would be a cache miss.
    #[inline]
    pub fn move_to_top(&mut self, held: Held, key: u64, size: u32, hot: bool) {
        let (slot, _) = self.at(held);
        let table = usize::from(hot);
        if held.hot == hot {
            let to = if slot == self.head {
                slot
            } else {
                self.kill(slot);
                self.take(key, hot)
            };
            self.tables[table].set(held.e, to, size);
        } else {
            self.kill(slot);
            let to = self.take(key, hot);
            self.tables[usize::from(held.hot)].remove(key);
            let Err(free) = self.tables[table].probe(key) else {
                unreachable!("a key held in both tables");
            };
            self.tables[table].fill(free, key, to, size);
        }
    }

    /// Forgets the key at live `slot`: its latest size.
    pub fn remove(&mut self, slot: usize) -> u32 {
        let table = usize::from(self.is_hot(slot));
        self.kill(slot);
        self.tables[table].remove(self.keys[slot])
    }

    /// Takes the next slot for `key`.
    #[inline]
    fn take(&mut self, key: u64, hot: bool) -> usize {
        let slot = self.next;
        self.next += 1;
        self.keys[slot] = key;
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        self.live[word] |= bit;
        if hot {
            self.hot[word] |= bit;
        } else {
            self.hot[word] &= !bit;
        }
        self.add(word, self.weight(slot));
        self.head = slot;
        self.len += 1;
        slot
    }

    /// Marks live `slot` dead (the index unchanged).
    #[inline]
    fn kill(&mut self, slot: usize) {
        let w = self.weight(slot);
        let word = slot / 64;
        self.live[word] &= !(1u64 << (slot % 64));
        self.add(word, w.wrapping_neg());
        self.len -= 1;
        if slot == self.head {
            self.head = self.below(slot);
        }
    }

    /// The first live slot below `slot`, [`NONE`] if none.
    pub fn below(&self, slot: usize) -> usize {
        let mut word = slot / 64;
        let mut bits = self.live[word] & ((1u64 << (slot % 64)) - 1);
        while bits == 0 {
            if word * 64 <= self.oldest {
                return NONE;
            }
            word -= 1;
            bits = self.live[word];
        }
        word * 64 + 63 - bits.leading_zeros() as usize
    }

    /// Adds `delta` (two's complement for a subtraction) to `word`'s weight.
    #[inline]
    fn add(&mut self, word: usize, delta: u64) {
        self.total = self.total.wrapping_add(delta);
        let mut i = word + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Renumbers the live keys into slots `0..len`, in order, in a window four times
    /// their number (at least [`MIN_SLOTS`]), and rebuilds the bits and the tree.
    fn compact(&mut self) {
        let size = (4 * self.len).max(MIN_SLOTS).next_multiple_of(64);
        let words = size / 64;
        let mut hot = vec![0u64; words];
        let mut to = 0;
        for word in self.oldest / 64..self.next.div_ceil(64) {
            let mut bits = self.live[word];
            while bits != 0 {
                let slot = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                // `to <= slot`: no key not yet moved is overwritten.
                let key = self.keys[slot];
                self.keys[to] = key;
                let promoted = self.is_hot(slot);
                if promoted {
                    hot[to / 64] |= 1 << (to % 64);
                }
                let table = &mut self.tables[usize::from(promoted)];
                let e = table.get(key).expect("a live slot's key is held");
                let (_, size) = table.at(e);
                table.set(e, to, size);
                to += 1;
            }
        }
        debug_assert_eq!(to, self.len);
        self.keys.resize(size, 0);
        let mut live = vec![0u64; words];
        for (word, bits) in live.iter_mut().enumerate().take(to.div_ceil(64)) {
            let held = to - word * 64;
            *bits = if held >= 64 {
                u64::MAX
            } else {
                (1 << held) - 1
            };
        }
        let mut tree = vec![0u64; words + 1];
        for word in 0..words {
            tree[word + 1] = packed(live[word], hot[word]);
        }
        // Linear Fenwick build: push each node's sum into its parent.
        for i in 1..=words {
            let parent = i + (i & i.wrapping_neg());
            if parent <= words {
                tree[parent] = tree[parent].wrapping_add(tree[i]);
            }
        }
        self.live = live;
        self.hot = hot;
        self.tree = tree;
        self.next = to;
        self.oldest = 0;
        self.head = to.checked_sub(1).unwrap_or(NONE);
    }

    /// Bytes of state held now (tables at their allocated sizes).
    pub fn state_bytes(&self) -> usize {
        self.tables.iter().map(KeySlots::state_bytes).sum::<usize>()
            + self.keys.capacity() * 8
            + (self.live.capacity() + self.hot.capacity() + self.tree.capacity()) * 8
    }

    /// Checks the tree and the total against the bits.
    #[cfg(test)]
    pub fn check(&self) -> Result<(), String> {
        let mut sum = 0u64;
        for word in 0..self.live.len() {
            let mut prefix = 0u64;
            let mut i = word;
            while i > 0 {
                prefix = prefix.wrapping_add(self.tree[i]);
                i &= i - 1;
            }
            if prefix != sum {
                return Err(format!("words below {word}: tree {prefix}, bits {sum}"));
            }
            sum += packed(self.live[word], self.hot[word]);
        }
        let count: u32 = self.live.iter().map(|w| w.count_ones()).sum();
        if sum != self.total || count as usize != self.len {
            return Err(format!(
                "total {} len {}, bits {sum} {count}",
                self.total, self.len
            ));
        }
        Ok(())
    }
}
