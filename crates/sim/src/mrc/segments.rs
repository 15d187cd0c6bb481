//! A bounded LRU stack that only tells which of a few depth bands a reuse falls in.
//!
//! A nested SHARDS level ([`super::nested`]) answers two or three sizes, so of a reuse it
//! needs only one thing: the smallest of its sizes the reuse hits at. In object mode that
//! is a question about the key's *position* in the LRU stack (the number of keys accessed
//! since its previous access): it hits at a size when the position is at most the depth
//! that size allows ([`super::shards::hit_depth`]). So the stack is one LRU list with a
//! marker at each depth (the key sitting exactly there), and each key carries the
//! number of its band. When a key moves to the top, every key above its old place moves
//! down one, so each marker above it steps to the key before it, whose band number goes
//! up by one: `O(sizes)` steps and one probe of the key table, where a Fenwick tree over
//! slots ([`super::stack::StreamingStack::bounded`]) takes two or three updates and a
//! prefix sum of a dozen steps each. The key that passes the last depth leaves the stack,
//! as the bounded stack drops a key no size can hit with any more.
//!
//! Where the time goes (a nested level on a loop, where every access is a new key): the
//! key index's probes, the insertion and the removal of the key that leaves. The index is
//! the policy crate's [`HashIndex`] over node numbers, asked with
//! [`HashIndex::find_or_vacant`]: one probe both finds a key and, when it is absent, gives
//! the slot it goes to (a lookup then an insertion would walk the probe run twice).
//!
//! **Equivalence.** A reuse at position `p` is reported as the depth of its band plus one
//! (the distance of a key at the band's bottom). Every size of the level hits at that
//! distance exactly when it hits at the true one, because the bands' bottoms are the
//! sizes' own depths: so the estimator's histogram, bucketed at those sizes, is the same
//! as with exact distances (tested against the Fenwick stack, with removals). Object mode
//! only: in byte mode a position is a weight of bytes, and a key moving down may cross
//! several depths at once.

use policy::{FrameId, HashIndex, KeyIndex};

/// No node.
const NIL: u32 = u32::MAX;

/// An LRU stack with markers at given depths (see the module docs).
#[derive(Debug)]
pub struct SegmentedStack {
    /// Each held key's node (the policy crate's key index, over `keys`).
    index: HashIndex,
    /// Per node: its key, latest size, links (toward the top: `prev`) and band.
    keys: Vec<u64>,
    sizes: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    band: Vec<u32>,
    /// Most recent and least recent keys.
    head: u32,
    tail: u32,
    /// Keys held.
    len: usize,
    /// The depths, increasing: band `i` holds positions `depths[i - 1] + 1 ..= depths[i]`.
    depths: Vec<u64>,
    /// The node at position `depths[i]`, [`NIL`] while the stack is shorter.
    bottoms: Vec<u32>,
    /// Nodes freed by keys that left.
    free: Vec<u32>,
    live_bytes: u64,
}

impl SegmentedStack {
    /// A stack whose band `i` holds the keys with between `depths[i - 1] + 1` and
    /// `depths[i]` keys above them (band 0: 0 to `depths[0]`). `depths` is sorted, without
    /// repeats, and not empty; a key with more than the last depth above it leaves.
    pub fn new(depths: &[u64]) -> Self {
        assert!(!depths.is_empty(), "a segmented stack needs a depth");
        debug_assert!(depths.windows(2).all(|w| w[0] < w[1]));
        SegmentedStack {
            index: HashIndex::default(),
            keys: Vec::new(),
            sizes: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            band: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
            depths: depths.to_vec(),
            bottoms: vec![NIL; depths.len()],
            free: Vec::new(),
            live_bytes: 0,
        }
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Summed latest sizes of the keys held.
    pub fn live_bytes(&self) -> u64 {
        self.live_bytes
    }

    /// Bytes of state held now (tables at their allocated sizes), for the memory report.
    pub fn state_bytes(&self) -> usize {
        self.index.table_bytes() + self.keys.capacity() * (8 + 4 * 4)
    }

    /// Accesses `key` with `size`: the depth of the band it was found in plus one (see
    /// the module docs), or `None` when it was not held.
    pub fn access(&mut self, key: u64, size: u32) -> Option<u64> {
        match self.index.find_or_vacant(key, &self.keys) {
            Ok(FrameId(node)) => {
                let n = node as usize;
                self.live_bytes = self.live_bytes - u64::from(self.sizes[n]) + u64::from(size);
                self.sizes[n] = size;
                let band = self.band[n] as usize;
                if node != self.head {
                    self.move_to_top(node, band);
                }
                Some(self.depths[band] + 1)
            }
            Err(vacant) => {
                let node = self.new_node(key, size);
                self.index.fill(vacant, FrameId(node));
                self.live_bytes += u64::from(size);
                self.push_front(node);
                self.push_down_from_top();
                None
            }
        }
    }

    /// Forgets `key` (a delete). The keys below it move up one position, as in an LRU
    /// stack. Returns its latest size if it was held.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let FrameId(node) = self.index.get(key, &self.keys)?;
        // Each marker at or below the key steps to the key after it, which moves up into
        // its band.
        for i in self.band[node as usize] as usize..self.depths.len() {
            let bottom = self.bottoms[i];
            if bottom == NIL {
                break;
            }
            let after = self.next[bottom as usize];
            self.bottoms[i] = after;
            if after != NIL {
                self.band[after as usize] = i as u32;
            }
        }
        Some(self.forget(node))
    }

    /// A new key went on top: every key moves down one, so each marker steps to the key
    /// above it (whose band goes up by one), a marker is set where the stack just reached
    /// its depth, and the key pushed past the last depth leaves.
    fn push_down_from_top(&mut self) {
        // Positions run 0..len; the stack was len - 1 long before the new key.
        let before = self.len - 1;
        for i in 0..self.depths.len() {
            let depth = self.depths[i] as usize;
            if before > depth {
                let bottom = self.bottoms[i];
                self.band[bottom as usize] = i as u32 + 1;
                self.bottoms[i] = self.prev[bottom as usize];
            } else {
                if before == depth {
                    self.bottoms[i] = self.tail;
                }
                break;
            }
        }
        let last = *self.depths.last().expect("not empty") as usize;
        if self.len > last + 1 {
            self.forget(self.tail);
        }
    }

    /// Moves held `node` (not the top one), in `band`, to the top: the keys above it move
    /// down one, so each marker above its band steps up (the key there crosses into the
    /// next band), and its own band's marker, if it was that marker, passes to the key
    /// above it.
    fn move_to_top(&mut self, node: u32, band: usize) {
        let n = node as usize;
        if self.bottoms[band] == node {
            self.bottoms[band] = self.prev[n];
        }
        for i in 0..band {
            let bottom = self.bottoms[i];
            self.band[bottom as usize] = i as u32 + 1;
            let above = self.prev[bottom as usize];
            // The marker at depth 0 was the top key; the moved key takes its place.
            self.bottoms[i] = if above == NIL { node } else { above };
        }
        self.unlink(node);
        self.push_front(node);
    }

    /// Takes `node` out of the list and the index; returns its size.
    fn forget(&mut self, node: u32) -> u32 {
        self.unlink(node);
        self.index.remove(self.keys[node as usize], &self.keys);
        self.free.push(node);
        let size = self.sizes[node as usize];
        self.live_bytes -= u64::from(size);
        size
    }

    /// A node for a new key: a freed one, or a new one.
    fn new_node(&mut self, key: u64, size: u32) -> u32 {
        if let Some(node) = self.free.pop() {
            self.keys[node as usize] = key;
            self.sizes[node as usize] = size;
            return node;
        }
        let node = u32::try_from(self.keys.len()).expect("a level holds fewer than 2^32 keys");
        self.keys.push(key);
        self.sizes.push(size);
        self.prev.push(NIL);
        self.next.push(NIL);
        self.band.push(0);
        node
    }

    fn unlink(&mut self, node: u32) {
        let n = node as usize;
        let (p, q) = (self.prev[n], self.next[n]);
        if p == NIL {
            self.head = q;
        } else {
            self.next[p as usize] = q;
        }
        if q == NIL {
            self.tail = p;
        } else {
            self.prev[q as usize] = p;
        }
        self.len -= 1;
    }

    fn push_front(&mut self, node: u32) {
        let n = node as usize;
        self.band[n] = 0;
        self.prev[n] = NIL;
        self.next[n] = self.head;
        if self.head == NIL {
            self.tail = node;
        } else {
            self.prev[self.head as usize] = node;
        }
        self.head = node;
        self.len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::stack::StreamingStack;

    #[test]
    fn hand_worked_segments() {
        // Depths 0 and 2: segment 0 is the top key, segment 1 the next two.
        let mut s = SegmentedStack::new(&[0, 2]);
        for k in [1, 2, 3] {
            assert_eq!(s.access(k, 1), None);
        }
        // Stack 3 2 1: 1 has two keys above it, in segment 1 (reported depth 3).
        assert_eq!(s.access(1, 1), Some(3));
        // Stack 1 3 2: 1 on top (depth 1), then 3 (segment 1).
        assert_eq!(s.access(1, 1), Some(1));
        assert_eq!(s.access(3, 1), Some(3));
        // Stack 3 1 2; a fourth key pushes 2 (three keys above it) out.
        assert_eq!(s.access(4, 1), None);
        assert_eq!(s.len(), 3);
        assert_eq!(s.access(2, 1), None);
        // Stack 2 4 3 (1 went out). Removing 4 pulls 3 up to position 1.
        assert_eq!(s.remove(4), Some(1));
        assert_eq!(s.access(3, 5), Some(3));
        assert_eq!(s.live_bytes(), 6);
        assert_eq!(s.remove(9), None);
    }

    /// The segment reported is the one the exact distance falls in, and a key is held
    /// exactly while the Fenwick bounded stack holds it: seeded random streams with
    /// removals, against [`StreamingStack::bounded`] at the last depth plus one.
    #[test]
    fn segments_are_the_bands_of_the_exact_distance() {
        use rand::Rng;
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            for _ in 0..40 {
                let keys = rng.gen_range(2..400u64);
                let bands = rng.gen_range(1..4);
                let mut depths: Vec<u64> = (0..bands).map(|_| rng.gen_range(0..keys)).collect();
                depths.sort_unstable();
                depths.dedup();
                let last = *depths.last().expect("at least one");
                let mut segmented = SegmentedStack::new(&depths);
                let mut fenwick = StreamingStack::bounded(false, last + 1);
                for _ in 0..3_000 {
                    let key = rng.gen_range(0..keys);
                    if rng.gen_ratio(1, 50) {
                        assert_eq!(
                            segmented.remove(key).is_some(),
                            fenwick.remove(key).is_some()
                        );
                        continue;
                    }
                    let want = fenwick
                        .access(key, 1)
                        .map(|d| depths[depths.partition_point(|&a| a < d - 1)] + 1);
                    assert_eq!(segmented.access(key, 1), want, "{seed} depths {depths:?}");
                    assert_eq!(segmented.len(), fenwick.len());
                }
            }
        });
    }
}
