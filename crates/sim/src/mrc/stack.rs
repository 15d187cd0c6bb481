//! Stack distances of an unbounded stream in memory proportional to its live keys.
//!
//! The exact curve ([`super::StackDistances`]) sizes its Fenwick tree by the length of the
//! whole trace. A stream has no known length, and a sampler forgets keys, so here the tree
//! covers a window of *slots*: each access takes the next slot, and the tree holds the
//! weight of every live key at the slot of its latest access. The distance of a reuse is
//! the weight of the slots after the key's previous one, plus its own weight. When the
//! slots run out the live keys are renumbered in order into the bottom of a window twice
//! their number and the tree is rebuilt in linear time: amortized O(log n) per access, and
//! memory stays proportional to the keys held (about 40 bytes each), whatever the length
//! of the stream.
//!
//! Weights are 1 per key for object curves and the object's size for byte curves (the
//! byte-weighted stack distance: the bytes of distinct objects touched since the previous
//! access, the object included). A stratified stack ([`StreamingStack::strata`]) weighs
//! each key by the stratum of its latest access, promoted or hash-sampled, packed so that
//! one distance counts both exactly ([`super::hot`]).
//!
//! **Bounded stacks** ([`StreamingStack::bounded`]). An estimator that only answers sizes
//! up to some capacity never needs a distance beyond it: a reuse farther down misses at
//! every size it serves, exactly as a first access does. So a bounded stack forgets a key
//! as soon as the weight of the keys above it (more recent, itself excluded) reaches the
//! bound, and reports its next access as a first one. It holds about `bound` keys
//! whatever the stream (a few thousand for the nested SHARDS levels in byte mode,
//! [`super::nested`]; object-mode levels use [`super::segments`]):
//! its map and tree stay in the processor's caches, where an unbounded stack over millions
//! of keys misses memory on every access. Held keys' distances are the unbounded stack's
//! exactly, and while no key is removed and no key changes size, so is every answer. A
//! removal, or a key above re-accessed at a smaller size, makes the weight above older
//! keys shrink; a key dropped earlier then stays out, as it would from an LRU cache.

use policy::{FrameId, HashIndex, KeyIndex};

use super::hot::{Strata, STRATUM_HOT, STRATUM_SAMPLED};

/// Smallest window, so that small streams do not rebuild often.
const MIN_SLOTS: usize = 1024;

/// What a key weighs in a [`StreamingStack`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Weighing {
    /// One per key.
    Objects,
    /// Its size, at least 1.
    Bytes,
    /// [`STRATUM_HOT`] or [`STRATUM_SAMPLED`] by the stratum of its latest access; the
    /// strata's rates convert the weight above a key to objects for a bounded stack's
    /// trimming.
    Strata(Strata),
}

/// A live slot: the size and stratum of the access that took it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Held {
    size: u32,
    hot: bool,
}

/// LRU stack distances over a stream of keys, with removals.
#[derive(Debug)]
pub struct StreamingStack {
    /// Key to the slot of its latest access (the policy crate's open-addressing index:
    /// no tombstones under the constant churn of a bounded stack, and a key that moves to
    /// a new slot is repointed in one probe).
    index: HashIndex,
    /// Fenwick tree over slots (1-based inside), sums of weights.
    tree: Vec<u64>,
    /// Key that took each slot (the index confirms a match against it).
    slot_keys: Vec<u64>,
    /// Size and stratum of the key at each live slot; `None` once it moved on or left.
    slots: Vec<Option<Held>>,
    /// Next free slot.
    next: usize,
    weighing: Weighing,
    /// Summed latest sizes of the live keys.
    live_bytes: u64,
    /// Of which promoted keys' (stratified stacks).
    hot_bytes: u64,
    /// Summed weights of the live keys (their number, their sizes of at least 1, or
    /// packed strata counts).
    live_weight: u64,
    /// A held key is dropped once the weight above it reaches this ([`StreamingStack::bounded`]).
    bound: Option<u64>,
    /// No live key sits in a slot below this one (where a bounded stack looks for its
    /// oldest key).
    oldest: usize,
}

impl StreamingStack {
    /// An empty stack; `byte_weights` makes each key weigh its size (a size of 0 weighs 1,
    /// as it occupies one unit of a cache), otherwise every key weighs 1.
    pub fn new(byte_weights: bool) -> Self {
        StreamingStack::with_weighing(if byte_weights {
            Weighing::Bytes
        } else {
            Weighing::Objects
        })
    }

    fn with_weighing(weighing: Weighing) -> Self {
        StreamingStack {
            index: HashIndex::default(),
            tree: vec![0; MIN_SLOTS + 1],
            slot_keys: vec![0; MIN_SLOTS],
            slots: vec![None; MIN_SLOTS],
            next: 0,
            weighing,
            live_bytes: 0,
            hot_bytes: 0,
            live_weight: 0,
            bound: None,
            oldest: 0,
        }
    }

    /// An empty stack that holds a key only while the weight of the keys accessed since
    /// its latest access (itself excluded) is below `bound` (at least 1): an access whose
    /// distance minus its own weight would be `bound` or more returns `None`, as a first
    /// access does (see the module docs).
    pub fn bounded(byte_weights: bool, bound: u64) -> Self {
        StreamingStack {
            bound: Some(bound.max(1)),
            ..StreamingStack::new(byte_weights)
        }
    }

    /// An empty stratified stack (object mode, [`super::hot`]): a key accessed as
    /// promoted weighs [`STRATUM_HOT`], otherwise [`STRATUM_SAMPLED`], so that a distance
    /// less the key's own weight packs the promoted and the sampled keys above it
    /// ([`Strata::objects`]).
    pub fn strata() -> Self {
        StreamingStack::with_weighing(Weighing::Strata(Strata::exact()))
    }

    /// A bounded stratified stack: it holds a key while the keys above it stand for at
    /// most `bound` objects at `strata`'s rates ([`Strata::objects`]), so that a stack
    /// serving sizes up to `bound + 1` objects drops only keys whose next access misses at
    /// all of them.
    pub fn strata_bounded(strata: Strata, bound: u64) -> Self {
        StreamingStack {
            bound: Some(bound),
            ..StreamingStack::with_weighing(Weighing::Strata(strata))
        }
    }

    /// Summed latest sizes of the keys held.
    pub fn live_bytes(&self) -> u64 {
        self.live_bytes
    }

    /// Of [`StreamingStack::live_bytes`], the promoted keys' (stratified stacks).
    pub fn hot_bytes(&self) -> u64 {
        self.hot_bytes
    }

    /// Summed weights of the keys held: their number, their sizes, or (stratified) the
    /// promoted keys' count plus the sampled keys' count times [`STRATUM_SAMPLED`].
    pub fn live_weight(&self) -> u64 {
        self.live_weight
    }

    /// The weight a key of `size` has in this stack (its size, at least 1, in byte mode;
    /// otherwise 1): the part of its own distance that is the key itself.
    pub fn weight_of(&self, size: u32) -> u64 {
        self.weight(Held { size, hot: false })
    }

    /// The weight of a key of `size` accessed as promoted (`hot`) or not: as
    /// [`StreamingStack::weight_of`], by stratum in a stratified stack.
    pub fn stratum_weight(&self, size: u32, hot: bool) -> u64 {
        self.weight(Held { size, hot })
    }

    fn weight(&self, held: Held) -> u64 {
        match self.weighing {
            Weighing::Objects => 1,
            Weighing::Bytes => u64::from(held.size.max(1)),
            Weighing::Strata(_) if held.hot => STRATUM_HOT,
            Weighing::Strata(_) => STRATUM_SAMPLED,
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

    /// Bytes of state held now (tables at their allocated sizes), for the memory report.
    pub fn state_bytes(&self) -> usize {
        let index = self.index.len().max(8).next_power_of_two() * 2 * 8;
        let slots = std::mem::size_of::<u64>() + std::mem::size_of::<Option<Held>>();
        index + self.tree.capacity() * 8 + self.slot_keys.capacity() * slots
    }

    /// Accesses `key` with `size`. Returns its stack distance — the weight of the
    /// distinct keys accessed since its previous access, itself at its new size included
    /// — or `None` on its first access (or first since [`StreamingStack::remove`], or
    /// since a bounded stack dropped it).
    pub fn access(&mut self, key: u64, size: u32) -> Option<u64> {
        self.access_as(key, size, false)
    }

    /// [`StreamingStack::access`] in a stratum: `hot` for a promoted key. Only a
    /// stratified stack weighs the two apart; the distance is then packed (see
    /// [`StreamingStack::strata`]).
    pub fn access_as(&mut self, key: u64, size: u32, hot: bool) -> Option<u64> {
        if self.next == self.slot_keys.len() {
            self.compact();
        }
        let slot = self.next;
        self.next += 1;
        let held = Held { size, hot };
        let weight = self.weight(held);
        self.slot_keys[slot] = key;
        self.slots[slot] = Some(held);
        self.gain(held);
        let distance = match self
            .index
            .relocate(key, FrameId(slot as u32), &self.slot_keys)
        {
            Some(FrameId(p)) => {
                let p = p as usize;
                let old = self.slots[p].take().expect("an indexed slot is live");
                self.lose(old);
                let old_weight = self.weight(old);
                let between = self.prefix(slot) - self.prefix(p + 1);
                self.add(p, old_weight.wrapping_neg());
                Some(between + weight)
            }
            None => {
                self.index
                    .insert(key, FrameId(slot as u32), &self.slot_keys);
                None
            }
        };
        self.add(slot, weight);
        if let Some(bound) = self.bound {
            self.trim(bound);
        }
        distance
    }

    /// Drops the oldest keys while the weight above the oldest (everything held but
    /// itself) is at least `bound`. The oldest key has the most weight above it, so
    /// afterwards every held key has less than `bound` above it.
    fn trim(&mut self, bound: u64) {
        loop {
            // Skip the slots whose key has moved on or left; each slot is passed once
            // between compactions.
            let held = loop {
                match self.slots[self.oldest] {
                    Some(held) => break held,
                    None => self.oldest += 1,
                }
            };
            let above = self.live_weight - self.weight(held);
            let within = match self.weighing {
                Weighing::Strata(strata) => strata.objects(above) <= bound as f64,
                _ => above < bound,
            };
            if within {
                return;
            }
            self.drop_slot(self.oldest);
            self.oldest += 1;
        }
    }

    /// Forgets `key` (a delete, or a key dropped from a sample). Returns its latest size
    /// if it was held.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let FrameId(slot) = self.index.get(key, &self.slot_keys)?;
        Some(self.drop_slot(slot as usize))
    }

    /// Forgets the key at live `slot`; returns its size.
    fn drop_slot(&mut self, slot: usize) -> u32 {
        let held = self.slots[slot].take().expect("a live slot");
        self.index.remove(self.slot_keys[slot], &self.slot_keys);
        self.lose(held);
        self.add(slot, self.weight(held).wrapping_neg());
        held.size
    }

    /// Counts a key taking a live slot in the running totals.
    fn gain(&mut self, held: Held) {
        self.live_bytes += u64::from(held.size);
        if held.hot {
            self.hot_bytes += u64::from(held.size);
        }
        self.live_weight += self.weight(held);
    }

    /// Takes a key leaving a live slot out of the running totals.
    fn lose(&mut self, held: Held) {
        self.live_bytes -= u64::from(held.size);
        if held.hot {
            self.hot_bytes -= u64::from(held.size);
        }
        self.live_weight -= self.weight(held);
    }

    /// Adds `delta` (two's complement for a subtraction) at `slot`.
    fn add(&mut self, slot: usize, delta: u64) {
        let mut i = slot + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Sum of the weights in slots `0..slot`.
    fn prefix(&self, slot: usize) -> u64 {
        let mut i = slot;
        let mut s = 0u64;
        while i > 0 {
            s = s.wrapping_add(self.tree[i]);
            i &= i - 1;
        }
        s
    }

    /// Renumbers the live keys into slots `0..len` (their order kept) inside a window of
    /// twice their number (four times for a bounded stack, whose few keys may churn
    /// through many slots), and rebuilds the tree and the index.
    fn compact(&mut self) {
        let factor = if self.bound.is_some() { 4 } else { 2 };
        let slots = (factor * self.len()).max(MIN_SLOTS);
        let mut keys = Vec::with_capacity(slots);
        let mut held = Vec::with_capacity(slots);
        // No live key sits below `oldest` (it only moves past dead slots).
        for slot in self.oldest..self.next {
            if let Some(h) = self.slots[slot] {
                keys.push(self.slot_keys[slot]);
                held.push(Some(h));
            }
        }
        debug_assert_eq!(keys.len(), self.len());
        let mut index = HashIndex::with_capacity(keys.len());
        let mut tree = vec![0u64; slots + 1];
        for (slot, (&key, h)) in keys.iter().zip(&held).enumerate() {
            index.insert(key, FrameId(slot as u32), &keys);
            tree[slot + 1] = self.weight(h.expect("kept live"));
        }
        // Linear Fenwick build: push each node's sum into its parent.
        for i in 1..=slots {
            let parent = i + (i & i.wrapping_neg());
            if parent <= slots {
                tree[parent] = tree[parent].wrapping_add(tree[i]);
            }
        }
        self.next = keys.len();
        self.oldest = 0;
        keys.resize(slots, 0);
        held.resize(slots, None);
        self.slot_keys = keys;
        self.slots = held;
        self.index = index;
        self.tree = tree;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The textbook stack: a list, most recent first.
    fn naive(accesses: &[(u64, u32, bool)]) -> Vec<Option<u64>> {
        let mut stack: Vec<(u64, u32)> = Vec::new();
        let mut out = Vec::new();
        for &(key, weight, remove) in accesses {
            let pos = stack.iter().position(|&(k, _)| k == key);
            if remove {
                if let Some(p) = pos {
                    stack.remove(p);
                }
                out.push(None);
                continue;
            }
            let d = pos.map(|p| {
                stack[..p].iter().map(|&(_, w)| u64::from(w)).sum::<u64>() + u64::from(weight)
            });
            if let Some(p) = pos {
                stack.remove(p);
            }
            stack.insert(0, (key, weight));
            out.push(d);
        }
        out
    }

    #[test]
    fn hand_worked_byte_distances() {
        // a(10) b(20) a(10): b and a since a's previous access -> 30.
        // b(5): a since -> 10 + 5 (the new size counts) = 15.
        let mut s = StreamingStack::new(true);
        assert_eq!(s.access(1, 10), None);
        assert_eq!(s.access(2, 20), None);
        assert_eq!(s.access(1, 10), Some(30));
        assert_eq!(s.access(2, 5), Some(15));
        assert_eq!(s.live_bytes(), 15);
        assert_eq!(s.remove(1), Some(10));
        assert_eq!(s.access(1, 1), None);
        assert_eq!(s.len(), 2);
        assert_eq!(s.live_bytes(), 6);
        // Unit weights: the same accesses count keys.
        let mut u = StreamingStack::new(false);
        for (k, size) in [(1, 10), (2, 20), (3, 30)] {
            assert_eq!(u.access(k, size), None);
        }
        assert_eq!(u.access(1, 10), Some(3));
    }

    #[test]
    fn a_bounded_stack_drops_keys_with_bound_or_more_above_them() {
        // Bound 2: a key is held while fewer than 2 keys were touched since its access.
        let mut s = StreamingStack::bounded(false, 2);
        for k in [1, 2, 3] {
            assert_eq!(s.access(k, 1), None);
        }
        // 1 has 2 and 3 above it: dropped; 2 has 3 alone: held, distance 2.
        assert_eq!(s.len(), 2);
        assert_eq!(s.access(1, 1), None);
        assert_eq!(s.access(1, 1), Some(1));
        assert_eq!(s.access(3, 1), Some(2));
        // Byte weights, bound 25: 10 and 20 above a key's own weight are 30, too many.
        let mut b = StreamingStack::bounded(true, 25);
        for (k, size) in [(1, 5), (2, 10), (3, 20)] {
            assert_eq!(b.access(k, size), None);
        }
        assert_eq!(b.access(2, 10), Some(30));
        assert_eq!(b.access(1, 5), None);
    }

    /// A bounded stack's answer is the unbounded one's whenever the weight above the key
    /// (its distance less its own weight) is below the bound, and `None` otherwise (each
    /// key keeps one size); seeded random streams over few keys go through many
    /// compactions.
    #[test]
    fn bounded_equals_unbounded_within_the_bound() {
        use rand::Rng;
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            for round in 0..40 {
                let byte_weights = round % 2 == 1;
                let keys = rng.gen_range(2..300u64);
                let bound = rng.gen_range(1..keys * if byte_weights { 20 } else { 1 } + 2);
                let mut bounded = StreamingStack::bounded(byte_weights, bound);
                let mut full = StreamingStack::new(byte_weights);
                for step in 0..3_000 {
                    let key = rng.gen_range(0..keys);
                    // A size per key: sizes that change are outside the equality.
                    let size = (crate::mrc::filter::key_hash(key + round) % 40) as u32;
                    let want = full
                        .access(key, size)
                        .filter(|d| d - full.weight_of(size) < bound);
                    let got = bounded.access(key, size);
                    assert_eq!(
                        got, want,
                        "{seed}: round {round}, step {step}, bound {bound}, key {key}"
                    );
                }
                let held = bounded.len() as u64;
                assert!(
                    byte_weights || held <= bound,
                    "{seed}: {held} keys held, bound {bound}"
                );
            }
        });
    }

    proptest! {
        /// Long enough streams over few keys go through many compactions.
        #[test]
        fn equals_the_textbook_stack(
            ops in proptest::collection::vec((0u64..50, 1u32..100, proptest::bool::weighted(0.05)), 0..3000)
        ) {
            let mut s = StreamingStack::new(true);
            let got: Vec<Option<u64>> = ops
                .iter()
                .map(|&(k, w, remove)| {
                    if remove {
                        s.remove(k);
                        None
                    } else {
                        s.access(k, w)
                    }
                })
                .collect();
            prop_assert_eq!(got, naive(&ops));
        }
    }
}
