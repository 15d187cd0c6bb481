//! A bounded LRU stack with weighted positions that only tells which of a stratified
//! level's sizes a reuse hits at.
//!
//! A stratified nested SHARDS level ([`super::nested`], [`super::hot`]) answers a few
//! sizes, so of a reuse it needs only one thing: the smallest of its sizes the reuse hits
//! at. A promoted key above the reused one counts `1 / p` objects (`p`, the promoted
//! stratum's rate, is `sqrt(R)` or 1: [`super::hot::Strata`]) and a hash-sampled key
//! `1 / R`, and a size `c` hits when `1 + hot keys above / p + sampled keys above / R <= c`,
//! the very expression the stratified Fenwick stack's distance is scored with
//! ([`super::stack::StreamingStack::strata_bounded`]). (A plain level, where every key
//! weighs one, has a simpler stack whose markers move one key at a time:
//! [`super::segments::SegmentedStack`]. Serving plain levels with this one cost 10% more
//! CPU on a loop, docs/mrc.md.)
//!
//! So the stack is one LRU list with a *marker* per size: the deepest key whose position
//! still hits at that size, with the summed weight of the keys from the top down to it
//! (weights packed as in [`super::hot`], promoted keys in the low half and sampled keys in
//! the high half, so the sums are exact integers). Each key carries its *band*, the
//! smallest size it hits at. When a key moves to the top, every key above its old place
//! moves down by its weight: each marker above it takes that weight on and steps up while
//! its key no longer fits, each step moving one key into the next band. That is
//! `O(markers + keys crossing)` per access, where the Fenwick tree over slots takes four
//! walks of a dozen or more steps; and the most common access on a skewed trace, a
//! promoted key already in the top band, touches no marker at all. Removing a key (a
//! delete, a key that turned from sampled to promoted and so changed weight, or the key
//! that passed the stack's bound) pulls each marker at or below it down over the keys
//! that fit again.
//!
//! The stack holds a key while the keys above it stand for at most `bound` objects
//! (`largest - 1`, with the Fenwick stack's own comparison): a key may sit past the last
//! marker but within the bound (float rounding at the edge), a reuse reported as band
//! `markers`, which misses at every size.
//!
//! **Equivalence.** A reuse is reported by its band, which the estimator scores at the
//! band's own size ([`WeightedStack::band_distance`]): every size of the level hits at
//! that distance exactly when it hits at the true one, so the estimator's histogram,
//! bucketed at those sizes, is the same as with exact distances, and the stack holds and
//! drops the same keys at the same requests (tested against the stratified Fenwick stack,
//! with deletes and promotions). Object mode only.

use policy::{FrameId, HashIndex, KeyIndex};

use super::hot::{Strata, STRATUM_HOT, STRATUM_SAMPLED};

/// No node.
const NIL: u32 = u32::MAX;

/// The sizes, what a marker's position means, and how far the stack reaches: marker `i`
/// holds the keys with `1 + strata.objects(above) <= caps[i]`; the stack holds those with
/// `strata.objects(above) <= bound`.
#[derive(Debug)]
struct Fit {
    caps: Vec<u64>,
    strata: Strata,
    bound: u64,
    /// Per marker, indexed by the sampled keys above: how many promoted keys above still
    /// fit (see [`promoted_that_fit`]).
    fitting: Vec<Vec<u32>>,
}

/// For a size of `cap` objects at `strata`'s rates, indexed by `s` sampled keys above a reuse:
/// the number of promoted keys above it that still let it hit, i.e. it hits with `h`
/// promoted keys above exactly when `h` is below the entry (and `s` within the table).
/// Each entry is found with the very float comparison the Fenwick stack's distance is
/// scored with, so a marker asks a table instead of dividing, and answers the same. Its
/// length is the sampled keys a reuse at that size may have above it, at most `rate x
/// cap`: a few thousand entries, of which a marker touches the few around where it sits.
fn promoted_that_fit(cap: u64, strata: Strata) -> Vec<u32> {
    let fits = |h: u64, s: u64| 1.0 + strata.objects(s << 32 | h) <= cap as f64;
    let mut table = Vec::new();
    let mut s = 0u64;
    while s < u64::from(u32::MAX) && fits(0, s) {
        // Within a unit of the answer; step to the exact edge.
        let room = cap as f64 - 1.0 - s as f64 / strata.rate;
        let mut h = (room * strata.hot_rate).max(0.0) as u64;
        while h > 0 && !fits(h, s) {
            h -= 1;
        }
        while h + 1 < u64::from(u32::MAX) && fits(h + 1, s) {
            h += 1;
        }
        table.push(u32::try_from(h + 1).unwrap_or(u32::MAX));
        s += 1;
    }
    table
}

impl Fit {
    /// True when a key with `above` over it hits at marker `i`'s size.
    #[inline]
    fn fits(&self, i: usize, above: u64) -> bool {
        self.fitting[i]
            .get((above >> 32) as usize)
            .is_some_and(|&h| above & (STRATUM_SAMPLED - 1) < u64::from(h))
    }

    /// True when a key with `above` over it stays in the stack.
    #[inline]
    fn holds(&self, above: u64) -> bool {
        self.strata.objects(above) <= self.bound as f64
    }

    /// Bytes of the tables.
    fn state_bytes(&self) -> usize {
        self.fitting.iter().map(|t| t.len() * 4).sum()
    }
}

/// A held key's place: its links (toward the top: `prev`), latest size, band, and whether
/// it was promoted at its latest access (its weight). One 16-byte record, so that a
/// marker stepping over a key reads and writes one cache line.
#[derive(Clone, Copy, Debug)]
struct Node {
    prev: u32,
    next: u32,
    size: u32,
    band: u16,
    hot: bool,
}

/// An LRU stack with a marker per size (see the module docs).
#[derive(Debug)]
pub struct WeightedStack {
    /// Each held key's node (the policy crate's key index, over `keys`).
    index: HashIndex,
    /// Per node: its key (apart, for the index's probes) and the rest of it.
    keys: Vec<u64>,
    nodes: Vec<Node>,
    /// Most recent and least recent keys.
    head: u32,
    tail: u32,
    /// Keys held.
    len: usize,
    fit: Fit,
    /// Per marker: its key ([`NIL`] while no key hits at its size) and the summed weight
    /// of the keys from the top down to it, itself included.
    bottoms: Vec<u32>,
    sums: Vec<u64>,
    /// Summed weight of the keys held.
    total: u64,
    /// The band of a key on top (the first size that holds a key with nothing above it).
    top_band: u16,
    /// Nodes freed by keys that left.
    free: Vec<u32>,
    live_bytes: u64,
    hot_bytes: u64,
}

impl WeightedStack {
    /// A stratified stack at `strata`'s rates for the sizes `caps` (objects, sorted,
    /// without repeats, not empty): band `i` holds the keys whose reuse hits first at
    /// `caps[i]`, a promoted key weighing `1 / hot_rate` objects and a sampled one
    /// `1 / rate`; a key leaves once the keys above it stand for more than `bound` objects
    /// (as [`super::stack::StreamingStack::strata_bounded`]).
    pub fn new(caps: &[u64], strata: Strata, bound: u64) -> Self {
        assert!(!caps.is_empty(), "a segmented stack needs a size");
        debug_assert!(caps.windows(2).all(|w| w[0] < w[1]));
        let fit = Fit {
            caps: caps.to_vec(),
            strata,
            bound,
            fitting: caps.iter().map(|&c| promoted_that_fit(c, strata)).collect(),
        };
        let markers = caps.len();
        let markers_fit = u16::try_from(markers).is_ok_and(|m| m < u16::MAX);
        assert!(markers_fit, "a segmented stack has fewer than 65,535 sizes");
        let top_band = (0..markers).find(|&i| fit.fits(i, 0)).unwrap_or(markers) as u16;
        WeightedStack {
            index: HashIndex::default(),
            keys: Vec::new(),
            nodes: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
            fit,
            bottoms: vec![NIL; markers],
            sums: vec![0; markers],
            total: 0,
            top_band,
            free: Vec::new(),
            live_bytes: 0,
            hot_bytes: 0,
        }
    }

    /// The scaled distance that stands for a reuse in `band` (what [`WeightedStack::access`]
    /// returned): the deepest distance that band holds, which every size of the level
    /// scores as it would the exact one; past the last marker, a distance no size holds.
    pub fn band_distance(&self, band: usize) -> f64 {
        self.fit.caps.get(band).map_or(f64::INFINITY, |&c| c as f64)
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

    /// Of [`WeightedStack::live_bytes`], the promoted keys'.
    pub fn hot_bytes(&self) -> u64 {
        self.hot_bytes
    }

    /// Summed weights of the keys held (packed as [`super::hot`]'s in a stratified stack).
    pub fn live_weight(&self) -> u64 {
        self.total
    }

    /// Bytes of state held now (tables at their allocated sizes), for the memory report.
    pub fn state_bytes(&self) -> usize {
        self.index.table_bytes()
            + self.keys.capacity() * (8 + std::mem::size_of::<Node>())
            + self.fit.state_bytes()
    }

    /// Accesses `key` with `size`, `hot` when it is promoted (a plain stack is never
    /// given `true`): the band it was found in (see [`WeightedStack::band_distance`]),
    /// or `None` when it was not held.
    pub fn access(&mut self, key: u64, size: u32, hot: bool) -> Option<usize> {
        match self.index.find_or_vacant(key, &self.keys) {
            Ok(FrameId(node)) => {
                let n = node as usize;
                let band = self.nodes[n].band as usize;
                self.set_size(n, size, hot);
                if self.nodes[n].hot == hot {
                    // The weights held stay the same, so only a new oldest key may have
                    // passed the bound.
                    let was_oldest = node == self.tail;
                    self.move_to_top(node, band);
                    if was_oldest {
                        self.trim();
                    }
                } else {
                    // A sampled key promoted: it weighs less from now on, below it too.
                    self.take_out(node);
                    self.nodes[n].hot = hot;
                    self.put_on_top(node);
                    self.trim();
                }
                Some(band)
            }
            Err(vacant) => {
                let node = self.new_node(key, size, hot);
                self.index.fill(vacant, FrameId(node));
                self.live_bytes += u64::from(size);
                if hot {
                    self.hot_bytes += u64::from(size);
                }
                self.put_on_top(node);
                self.trim();
                None
            }
        }
    }

    /// Forgets `key` (a delete): the keys below it move up by its weight, as in an LRU
    /// stack. Returns its latest size if it was held.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let FrameId(node) = self.index.get(key, &self.keys)?;
        Some(self.forget(node))
    }

    #[inline]
    fn weight(&self, n: usize) -> u64 {
        if self.nodes[n].hot {
            STRATUM_HOT
        } else {
            STRATUM_SAMPLED
        }
    }

    /// Records a held node's new size and stratum in the byte totals.
    fn set_size(&mut self, n: usize, size: u32, hot: bool) {
        let (old, was_hot) = (u64::from(self.nodes[n].size), self.nodes[n].hot);
        self.live_bytes = self.live_bytes - old + u64::from(size);
        if was_hot {
            self.hot_bytes -= old;
        }
        if hot {
            self.hot_bytes += u64::from(size);
        }
        self.nodes[n].size = size;
    }

    /// The node after marker `i`'s key: the first key not in its bands.
    #[inline]
    fn after(&self, i: usize) -> u32 {
        match self.bottoms[i] {
            NIL => self.head,
            b => self.nodes[b as usize].next,
        }
    }

    /// Marker `i` gained weight above its key: it steps up while its key no longer fits,
    /// each key it passes going to the next band.
    #[inline]
    fn step_up(&mut self, i: usize) {
        loop {
            let b = self.bottoms[i];
            if b == NIL {
                return;
            }
            let w = self.weight(b as usize);
            if self.fit.fits(i, self.sums[i] - w) {
                return;
            }
            self.sums[i] -= w;
            self.nodes[b as usize].band = self.nodes[b as usize].band.max(i as u16 + 1);
            self.bottoms[i] = self.nodes[b as usize].prev;
        }
    }

    /// Marker `i` lost weight above its key: it steps down while the next key fits, each
    /// key it passes coming into its band.
    #[inline]
    fn step_down(&mut self, i: usize) {
        loop {
            let q = self.after(i);
            if q == NIL || !self.fit.fits(i, self.sums[i]) {
                return;
            }
            self.sums[i] += self.weight(q as usize);
            self.nodes[q as usize].band = self.nodes[q as usize].band.min(i as u16);
            self.bottoms[i] = q;
        }
    }

    /// Moves held `node` (in `band`, its weight unchanged) to the top. The markers of the
    /// bands above it gain its weight; those below it hold the same keys with the same
    /// weights above them. A marker sitting on it passes to the key above it, which now
    /// has the moved key's weight above it instead of its own: with weights that differ,
    /// that may not fit, so it steps up too.
    fn move_to_top(&mut self, node: u32, band: usize) {
        if node == self.head {
            return;
        }
        let n = node as usize;
        let above = self.nodes[n].prev;
        let markers = self.bottoms.len();
        let on_node = (band..markers)
            .find(|&i| self.bottoms[i] != node)
            .unwrap_or(markers);
        for i in band..on_node {
            self.bottoms[i] = above;
        }
        self.unlink(node);
        self.link_front(node);
        self.gain(self.weight(n), band.min(markers));
        for i in band..on_node {
            self.step_up(i);
        }
        self.nodes[n].band = self.top_band;
    }

    /// A key of weight `w` went on top, above markers `0..markers`: each takes its
    /// weight and steps up while its key no longer fits (or, with no key yet, down over
    /// the new one).
    fn gain(&mut self, w: u64, markers: usize) {
        for i in 0..markers {
            if self.bottoms[i] == NIL {
                self.step_down(i);
            } else {
                self.sums[i] += w;
                self.step_up(i);
            }
        }
    }

    /// Takes held `node` out of the list (not out of the index): the markers at or below
    /// it lose its weight and step down over the keys that now fit.
    fn take_out(&mut self, node: u32) {
        let n = node as usize;
        let w = self.weight(n);
        let band = self.nodes[n].band as usize;
        for i in band..self.bottoms.len() {
            self.sums[i] -= w;
            if self.bottoms[i] == node {
                self.bottoms[i] = self.nodes[n].prev;
            }
        }
        self.unlink(node);
        self.total -= w;
        for i in band..self.bottoms.len() {
            self.step_down(i);
        }
    }

    /// Puts `node` (not in the list) on top: every marker gains its weight.
    fn put_on_top(&mut self, node: u32) {
        let n = node as usize;
        self.link_front(node);
        let w = self.weight(n);
        self.total += w;
        self.nodes[n].band = self.top_band;
        self.gain(w, self.bottoms.len());
    }

    /// Drops the oldest keys while the weight above the oldest is past the bound. The
    /// oldest key has the most weight above it, so afterwards every held key is within.
    fn trim(&mut self) {
        while self.tail != NIL {
            let t = self.tail;
            let w = self.weight(t as usize);
            if self.fit.holds(self.total - w) {
                return;
            }
            self.forget(t);
        }
    }

    /// Takes `node` out of the list and the index; returns its size.
    fn forget(&mut self, node: u32) -> u32 {
        self.take_out(node);
        let n = node as usize;
        self.index.remove(self.keys[n], &self.keys);
        self.free.push(node);
        let size = self.nodes[n].size;
        self.live_bytes -= u64::from(size);
        if self.nodes[n].hot {
            self.hot_bytes -= u64::from(size);
        }
        size
    }

    /// A node for a new key: a freed one, or a new one.
    fn new_node(&mut self, key: u64, size: u32, hot: bool) -> u32 {
        if let Some(node) = self.free.pop() {
            let n = node as usize;
            self.keys[n] = key;
            self.nodes[n].size = size;
            self.nodes[n].hot = hot;
            return node;
        }
        let node = u32::try_from(self.keys.len()).expect("a level holds fewer than 2^32 keys");
        self.keys.push(key);
        self.nodes.push(Node {
            prev: NIL,
            next: NIL,
            size,
            band: 0,
            hot,
        });
        node
    }

    fn unlink(&mut self, node: u32) {
        let n = node as usize;
        let (p, q) = (self.nodes[n].prev, self.nodes[n].next);
        if p == NIL {
            self.head = q;
        } else {
            self.nodes[p as usize].next = q;
        }
        if q == NIL {
            self.tail = p;
        } else {
            self.nodes[q as usize].prev = p;
        }
        self.len -= 1;
    }

    fn link_front(&mut self, node: u32) {
        let n = node as usize;
        self.nodes[n].prev = NIL;
        self.nodes[n].next = self.head;
        if self.head == NIL {
            self.tail = node;
        } else {
            self.nodes[self.head as usize].prev = node;
        }
        self.head = node;
        self.len += 1;
    }
    /// Walks the list and checks every band, marker and sum against their definitions.
    #[cfg(test)]
    fn check(&self) -> Result<(), String> {
        let markers = self.bottoms.len();
        let mut above = 0u64;
        let mut node = self.head;
        let mut last = vec![NIL; markers];
        let mut sums = vec![0u64; markers];
        while node != NIL {
            let n = node as usize;
            let band = (0..markers)
                .find(|&i| self.fit.fits(i, above))
                .unwrap_or(markers);
            if self.nodes[n].band as usize != band {
                return Err(format!(
                    "node {n} in band {} not {band}",
                    self.nodes[n].band
                ));
            }
            above += self.weight(n);
            for i in band..markers {
                last[i] = node;
                sums[i] = above;
            }
            node = self.nodes[n].next;
        }
        if last != self.bottoms || sums != self.sums || above != self.total {
            return Err(format!(
                "markers {:?} {:?} not {last:?} {sums:?}",
                self.bottoms, self.sums
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::hot::hot_rate;
    use crate::mrc::stack::StreamingStack;

    /// Sampled keys at `rate`, promoted ones at `hot_rate`.
    fn strata(rate: f64, hot_rate: f64) -> Strata {
        Strata { rate, hot_rate }
    }

    #[test]
    fn promoted_that_fit_by_hand() {
        // Rate 1/2, 4 objects: 1 + h + 2 s <= 4, so h <= 3 with no sampled key above,
        // h <= 1 with one, and two sampled keys never fit.
        assert_eq!(promoted_that_fit(4, strata(0.5, 1.0)), [4, 2]);
        // Rate 1: the exact depth, whatever the stratum.
        assert_eq!(promoted_that_fit(3, strata(1.0, 1.0)), [3, 2, 1]);
        assert!(promoted_that_fit(0, strata(0.5, 1.0)).is_empty());
        // Sampled keys at 1/4 (4 objects each), promoted ones at 1/2 (2 objects each), 10
        // objects: 1 + 2 h + 4 s <= 10, so h <= 4 with no sampled key above, h <= 2 with
        // one, h = 0 with two, and three never fit.
        assert_eq!(promoted_that_fit(10, strata(0.25, 0.5)), [5, 3, 1]);
    }

    #[test]
    fn hand_worked_weighted_segments() {
        // Rate 1/2: a sampled key above stands for 2 objects, a promoted one for 1. Sizes
        // 2 and 4 objects: a reuse hits at 2 with at most 1 object above it, at 4 with at
        // most 3, and a key stays while at most 3 objects are above it.
        let mut s = WeightedStack::new(&[2, 4], strata(0.5, 1.0), 3);
        assert_eq!(s.access(1, 1, false), None);
        assert_eq!(s.access(10, 1, true), None);
        assert_eq!(s.access(2, 1, false), None);
        // Stack 2 10 1: above 1, 2 + 1 = 3 objects: hits at 4 only (band 1, scored at 4).
        assert_eq!(s.access(1, 1, false), Some(1));
        assert_eq!(s.band_distance(1), 4.0);
        assert_eq!(s.band_distance(2), f64::INFINITY);
        // Stack 1 2 10: 10 has 2 + 2 = 4 objects above it, past the bound: it left.
        assert_eq!(s.len(), 2);
        assert_eq!(s.access(10, 1, true), None);
        // Stack 10 1 2: above 2, 1 + 2 = 3 objects (band 1); above 1, 1 object (band 0).
        assert_eq!(s.access(1, 1, false), Some(0));
        assert_eq!(s.access(2, 1, false), Some(1));
        // Stack 2 1 10: above 10, 2 + 2 = 4 objects: it left again.
        assert_eq!(s.len(), 2);
        // 1 is promoted at this access, with 2 objects above it (band 1); from now on it
        // weighs 1.
        assert_eq!(s.access(1, 3, true), Some(1));
        assert_eq!(s.hot_bytes(), 3);
        assert_eq!(s.access(10, 1, true), None);
        // Stack 10 1 2: above 2, 1 + 1 = 2 objects (band 1).
        assert_eq!(s.access(2, 1, false), Some(1));
        // Stack 2 10 1: above 1, 2 + 1 = 3 objects (band 1), and it stays.
        assert_eq!(s.access(1, 3, true), Some(1));
        // Stack 1 2 10. Deleting 2 (2 objects) brings 10 to 1 object above: band 0.
        assert_eq!(s.remove(2), Some(1));
        assert_eq!(s.access(10, 1, true), Some(0));
        // Stack 10 1, a new sampled key 3 on top: above 1, 2 + 1 = 3 objects.
        assert_eq!(s.access(3, 1, false), None);
        // 3 is promoted on top: it weighs 1 below it from now on, so 10 has 1 object
        // above it (band 0), where it would have had 2 (band 1).
        assert_eq!(s.access(3, 1, true), Some(0));
        assert_eq!(s.access(10, 1, true), Some(0));
        assert_eq!(s.live_weight(), 3 * STRATUM_HOT);
        assert_eq!((s.live_bytes(), s.hot_bytes()), (5, 5));
    }

    #[test]
    fn hand_worked_promoted_stratum_below_rate_one() {
        // Sampled keys at 1/4 (4 objects each), promoted ones at 1/2 (2 objects each).
        // Sizes 5 and 9 objects: a reuse hits at 5 with at most 4 objects above it, at 9
        // with at most 8, and a key stays while at most 8 objects are above it.
        let mut s = WeightedStack::new(&[5, 9], strata(0.25, 0.5), 8);
        assert_eq!(s.access(1, 1, false), None);
        assert_eq!(s.access(10, 1, true), None);
        assert_eq!(s.access(2, 1, false), None);
        // Stack 2 10 1: above 1, 4 + 2 = 6 objects: 1 + 6 = 7 hits at 9 only (band 1).
        assert_eq!(s.access(1, 1, false), Some(1));
        // Stack 1 2 10: above 10, 4 + 4 = 8 objects, at the bound: held, band 1.
        assert_eq!(s.access(10, 1, true), Some(1));
        // Stack 10 1 2: above 2, 2 + 4 = 6 objects (band 1).
        assert_eq!(s.access(2, 1, false), Some(1));
        // Stack 2 10 1: above 10, 4 objects: 1 + 4 = 5 hits at 5 (band 0).
        assert_eq!(s.access(10, 1, true), Some(0));
        s.check().unwrap();
        // Stack 10 2 1, then a new sampled key 3 on top: above 1, 4 + 2 + 4 = 10 objects,
        // past the bound: 1 leaves.
        assert_eq!(s.access(3, 1, false), None);
        assert_eq!(s.len(), 3);
        // 1 comes back as a new key on top (stack 1 3 10 2), and 2, now under 4 + 4 + 2 =
        // 10 objects, leaves in turn.
        assert_eq!(s.access(1, 1, false), None);
        s.check().unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.live_weight(), STRATUM_HOT + 2 * STRATUM_SAMPLED);
    }

    /// A count drawn from `count` of values drawn from `values`, sorted, without repeats.
    fn sorted_draws(
        rng: &mut impl rand::Rng,
        count: std::ops::Range<usize>,
        values: std::ops::Range<u64>,
    ) -> Vec<u64> {
        let n = rng.gen_range(count);
        let mut drawn: Vec<u64> = (0..n).map(|_| rng.gen_range(values.clone())).collect();
        drawn.sort_unstable();
        drawn.dedup();
        drawn
    }

    /// Stratified: the band reported is the first size the Fenwick stratified stack's
    /// distance hits at (the histogram's own comparison), and the two hold the same keys,
    /// on seeded streams where keys are promoted along the way (a sampled key turning
    /// promoted changes its weight below it) and some are deleted.
    #[test]
    fn weighted_segments_are_the_bands_of_the_stratified_distance() {
        use rand::Rng;
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            for _ in 0..40 {
                let keys = rng.gen_range(2..500u64);
                let rate = [1.0, 0.5, 0.3, 0.1125, 0.01][rng.gen_range(0..5)];
                // Promoted keys at rate 1, at the rule's rate, or between.
                let hot_rate = [1.0, hot_rate(rate), (1.0 + rate) / 2.0][rng.gen_range(0..3)];
                let strata = strata(rate, hot_rate);
                let caps = sorted_draws(&mut rng, 1..6, 1..keys * 3);
                let bound = caps.last().expect("a size") - 1;
                let mut segmented = WeightedStack::new(&caps, strata, bound);
                let mut fenwick = StreamingStack::strata_bounded(strata, bound);
                // Keys at or under `promoted` are hot; it rises through the stream.
                let mut promoted = 0;
                for step in 0..4_000 {
                    if rng.gen_ratio(1, 200) {
                        promoted = rng.gen_range(promoted..=keys);
                    }
                    let key = rng.gen_range(0..keys);
                    if rng.gen_ratio(1, 60) {
                        assert_eq!(segmented.remove(key), fenwick.remove(key));
                        segmented
                            .check()
                            .unwrap_or_else(|e| panic!("{seed}: step {step} remove: {e}"));
                        continue;
                    }
                    let hot = key < promoted;
                    let size = 1 + (key % 7) as u32;
                    let want = fenwick.access_as(key, size, hot).map(|d| {
                        let own = fenwick.stratum_weight(size, hot);
                        let distance = 1.0 + strata.objects(d - own);
                        caps.partition_point(|&c| (c as f64) < distance)
                    });
                    let got = segmented.access(key, size, hot);
                    segmented
                        .check()
                        .unwrap_or_else(|e| panic!("{seed}: step {step} {key} {hot} {got:?}: {e}"));
                    assert_eq!(got, want, "{seed}: step {step}, {strata:?}, caps {caps:?}");
                    assert_eq!(segmented.len(), fenwick.len(), "{seed}: step {step}");
                    assert_eq!(segmented.live_weight(), fenwick.live_weight());
                    assert_eq!(segmented.hot_bytes(), fenwick.hot_bytes());
                }
            }
        });
    }
}
