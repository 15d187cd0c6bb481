//! A bounded LRU stack that only tells which of a few depth bands a reuse falls in.
//!
//! A nested SHARDS level ([`super::nested`]) answers two or three sizes, so of a reuse it
//! needs only one thing: the smallest of its sizes the reuse hits at. In object mode that
//! is a question about the key's *position* in the LRU stack (the keys accessed since
//! its previous access): it hits at `c` when the position is at most the depth `c`
//! allows (`a_c`, see [`SegmentedStack::new`]). So the stack is cut into segments at those
//! depths, each an LRU list of fixed capacity, and a key's segment is its answer. An
//! access moves the key to the top of the first segment and each segment above the
//! key's old one passes its bottom key down to the next: `O(sizes)` pointer moves and one
//! probe of the key index, where a Fenwick tree over slots
//! ([`super::stack::StreamingStack::bounded`]) takes two or three updates and a prefix
//! sum of a dozen steps each. The last segment's overflow leaves the stack, as the
//! bounded stack drops a key that no size can hit with any more.
//!
//! **Equivalence.** A reuse at position `p` is reported as the depth of its segment
//! (`a_i + 1`, the distance of a key at the bottom of segment `i`). Every size of the
//! level hits at that depth exactly when it hits at the true one, because the segments'
//! bottoms are the sizes' own depths: so the estimator's histogram, bucketed at those
//! sizes, is the same as with the exact distances (tested against the Fenwick stack).
//! Object mode only: in byte mode a position is a weight of bytes and a key moving down
//! may cross several depths.

use policy::{FrameId, HashIndex, KeyIndex};

/// No node.
const NIL: u32 = u32::MAX;

/// One depth band: an LRU list of keys, most recent at `head`.
#[derive(Clone, Copy, Debug)]
struct Segment {
    head: u32,
    tail: u32,
    len: u32,
    /// Keys it holds when full.
    cap: u32,
    /// Distance reported for a reuse found in it: its deepest position plus one.
    depth: u64,
}

/// An LRU stack cut into segments at given depths (see the module docs).
#[derive(Debug)]
pub struct SegmentedStack {
    /// Key to node.
    index: HashIndex,
    /// Per node: its key (the index confirms a match against it), size, links and
    /// segment.
    keys: Vec<u64>,
    sizes: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    segment: Vec<u32>,
    segments: Vec<Segment>,
    /// Nodes freed by keys that left.
    free: Vec<u32>,
    live_bytes: u64,
}

impl SegmentedStack {
    /// A stack whose segment `i` holds the keys with between `depths[i - 1] + 1` and
    /// `depths[i]` keys above them (segment 0: 0 to `depths[0]`). `depths` is sorted and
    /// without repeats; a key with more than the last depth above it leaves the stack.
    pub fn new(depths: &[u64]) -> Self {
        debug_assert!(!depths.is_empty());
        debug_assert!(depths.windows(2).all(|w| w[0] < w[1]));
        let segments = depths
            .iter()
            .enumerate()
            .map(|(i, &d)| Segment {
                head: NIL,
                tail: NIL,
                len: 0,
                cap: u32::try_from(if i == 0 { d + 1 } else { d - depths[i - 1] })
                    .expect("a level holds fewer than 2^32 keys"),
                depth: d + 1,
            })
            .collect();
        SegmentedStack {
            index: HashIndex::default(),
            keys: Vec::new(),
            sizes: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            segment: Vec::new(),
            segments,
            free: Vec::new(),
            live_bytes: 0,
        }
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Summed latest sizes of the keys held.
    pub fn live_bytes(&self) -> u64 {
        self.live_bytes
    }

    /// Bytes of state held now (tables at their allocated sizes), for the memory report.
    pub fn state_bytes(&self) -> usize {
        let index = self.index.len().max(8).next_power_of_two() * 2 * 8;
        index + self.keys.capacity() * (8 + 4 * 4)
    }

    /// Accesses `key` with `size`: the depth of the segment it was found in (see the
    /// module docs), or `None` when it was not held.
    pub fn access(&mut self, key: u64, size: u32) -> Option<u64> {
        if let Some(FrameId(node)) = self.index.get(key, &self.keys) {
            let s = self.segment[node as usize] as usize;
            self.live_bytes =
                self.live_bytes - u64::from(self.sizes[node as usize]) + u64::from(size);
            self.sizes[node as usize] = size;
            self.unlink(node);
            self.push_front(0, node);
            // Segments above `s` pass their bottom key down; `s` has room for one.
            for i in 0..s {
                if !self.overflow(i) {
                    break;
                }
            }
            return Some(self.segments[s].depth);
        }
        let node = self.new_node(key, size);
        self.index.insert(key, FrameId(node), &self.keys);
        self.live_bytes += u64::from(size);
        self.push_front(0, node);
        for i in 0..self.segments.len() {
            if !self.overflow(i) {
                break;
            }
        }
        None
    }

    /// Forgets `key` (a delete). The keys below it move up one position, as in an LRU
    /// stack. Returns its latest size if it was held.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let FrameId(node) = self.index.get(key, &self.keys)?;
        let s = self.segment[node as usize] as usize;
        self.unlink(node);
        self.index.remove(key, &self.keys);
        self.free.push(node);
        let size = self.sizes[node as usize];
        self.live_bytes -= u64::from(size);
        // Each segment below pulls the top key of the next one up into its own bottom.
        for i in s..self.segments.len() - 1 {
            let top = self.segments[i + 1].head;
            if top == NIL {
                break;
            }
            self.unlink(top);
            self.push_back(i, top);
        }
        Some(size)
    }

    /// If segment `i` holds more than its capacity, its bottom key moves to the top of
    /// the next segment, or leaves the stack from the last one. True when it moved.
    fn overflow(&mut self, i: usize) -> bool {
        let seg = self.segments[i];
        if seg.len <= seg.cap {
            return false;
        }
        let bottom = seg.tail;
        self.unlink(bottom);
        if i + 1 < self.segments.len() {
            self.push_front(i + 1, bottom);
        } else {
            let b = bottom as usize;
            self.index.remove(self.keys[b], &self.keys);
            self.live_bytes -= u64::from(self.sizes[b]);
            self.free.push(bottom);
        }
        true
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
        self.segment.push(0);
        node
    }

    /// Takes `node` out of its segment's list.
    fn unlink(&mut self, node: u32) {
        let n = node as usize;
        let seg = &mut self.segments[self.segment[n] as usize];
        let (p, q) = (self.prev[n], self.next[n]);
        if p == NIL {
            seg.head = q;
        } else {
            self.next[p as usize] = q;
        }
        if q == NIL {
            seg.tail = p;
        } else {
            self.prev[q as usize] = p;
        }
        seg.len -= 1;
    }

    /// Puts `node` at the top of segment `i`.
    fn push_front(&mut self, i: usize, node: u32) {
        let n = node as usize;
        let seg = &mut self.segments[i];
        self.segment[n] = i as u32;
        self.prev[n] = NIL;
        self.next[n] = seg.head;
        if seg.head == NIL {
            seg.tail = node;
        } else {
            self.prev[seg.head as usize] = node;
        }
        seg.head = node;
        seg.len += 1;
    }

    /// Puts `node` at the bottom of segment `i`.
    fn push_back(&mut self, i: usize, node: u32) {
        let n = node as usize;
        let seg = &mut self.segments[i];
        self.segment[n] = i as u32;
        self.next[n] = NIL;
        self.prev[n] = seg.tail;
        if seg.tail == NIL {
            seg.head = node;
        } else {
            self.next[seg.tail as usize] = node;
        }
        seg.tail = node;
        seg.len += 1;
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
