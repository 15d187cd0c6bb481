//! SIZE: evict the largest resident object.
//!
//! Williams, Abrams, Standridge, Abdulla, Fox, "Removal policies in network caches for
//! World-Wide Web documents", SIGCOMM 1996, where SIZE kept the most documents (and so
//! the highest hit ratio) of the removal policies compared for Web proxies: one large
//! object makes room for many small ones. libCacheSim ships it as `Size` (`Size.c`).
//!
//! # Algorithm
//!
//! Every resident object sits in a max-heap keyed by its size (recorded when it entered);
//! eviction takes the root. Hits change nothing. In unit mode (every size 1) all keys are
//! equal and the heap's own order decides (see below); the policy is meant for byte mode.
//!
//! # Parameters
//!
//! None.
//!
//! # Deviations and choices
//!
//! * Ties are not broken by any extra key: equal sizes stay where the binary heap's sift
//!   operations leave them. libCacheSim's `pqueue` (a 1-based binary heap that moves an
//!   entry only past strictly smaller parents or children, and prefers the right child only
//!   when it is strictly larger) and [`crate::heap::IndexedHeap`] (0-based, the same strict
//!   comparisons) are the same heap, so the two tools evict the same objects among equals:
//!   the miss counts are libCacheSim's in unit and in byte mode
//!   (`crates/sim/tests/golden_libcachesim_more.rs`). In unit mode this order is close to
//!   last-in first-out: a newcomer lands at the end of the array and the last entry is what
//!   replaces an evicted root.
//! * libCacheSim re-keys an object with the size of each request that hits it; bufcache's
//!   drivers record an object's size once, when it enters, so hits change nothing here.
//! * A protected root costs a best-first walk past it ([`IndexedHeap::least_where`]); the
//!   victim list is the eviction run on a copy (ties make the heap's walk order differ
//!   from its pop order).
//!
//! # Cost
//!
//! O(log n) per insertion and eviction, nothing per hit. Memory per frame: an 8-byte heap
//! entry and 4 bytes of heap position.
//!
//! [`IndexedHeap::least_where`]: crate::heap::IndexedHeap::least_where

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::heap::IndexedHeap;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{Access, FrameId, Policy};

/// Heap key: the size, reversed so that the min-heap's root is the largest object.
type Key = Reverse<u32>;

/// Largest object first.
#[derive(Clone, Debug)]
pub struct Size {
    heap: IndexedHeap<Key>,
    scratch: BinaryHeap<Reverse<(Key, u32)>>,
}

impl Size {
    /// A policy expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        Size {
            heap: IndexedHeap::with_capacity(frames),
            scratch: BinaryHeap::new(),
        }
    }
}

impl Policy for Size {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// Only sizes, fixed at insertion, decide.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Ignore
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    fn on_hit(&mut self, _: FrameId, _: &Access) {}

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.heap.push(frame, Reverse(access.size.max(1)));
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let root = self.heap.peek()?;
        let victim = if evictable(root) {
            root
        } else {
            self.heap.least_where(evictable, &mut self.scratch)?
        };
        self.heap.remove(victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.heap.remove(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for Size {
    const NAME: &'static str = "size";
    const SUMMARY: &'static str =
        "evict the largest object (Williams et al., SIGCOMM 1996; libCacheSim Size)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Size::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use super::Size;
    use crate::{Access, Cache, FrameId, Policy};

    fn sized(key: u64, size: u32, t: u64) -> Access {
        Access {
            size,
            ..Access::unit(key, t)
        }
    }

    #[test]
    fn the_largest_goes_first() {
        // capacity 10: (1,4) (2,2) (3,3) fill 9; (4,3) needs 12 -> evict 1 (size 4): 8;
        // (5,2) fits: 10; (6,1) -> evict the largest, 3 or 4 (both 3): the heap keeps 3 at
        // the root (4 went below it, not strictly larger), so 3 goes.
        let mut cache = Cache::new(Size::new(4), 10);
        let mut evicted = Vec::new();
        for (t, &(k, s)) in [(1, 4), (2, 2), (3, 3), (4, 3), (5, 2), (6, 1)].iter().enumerate() {
            cache.access(&sized(k, s, t as u64));
            evicted.push(cache.evicted().to_vec());
        }
        let expected: [&[u64]; 6] = [&[], &[], &[], &[1], &[], &[3]];
        assert_eq!(evicted, expected);
        assert_eq!(cache.victims(4), [4, 2, 5, 6]);
    }

    #[test]
    fn equal_sizes_follow_the_heap_like_libcachesim() {
        // Unit sizes: nothing ever sifts. Array [1,2,3]; evict pops the root 1 and moves
        // the last, 3, to the root: [3,2]; 4 appends: [3,2,4]; 5 evicts 3 (4 to the root:
        // [4,2]) and appends; 6 evicts 4.
        let ev = crate::testkit::evictions(Size::new(3), 3, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(ev.concat(), vec![1, 3, 4]);
        let mut p = Size::new(3);
        for f in 0..3 {
            p.on_insert(FrameId(f), &Access::unit(f as u64, 0));
        }
        assert_eq!(p.evict(&Access::phantom(), &|f| f != FrameId(0)), Some(FrameId(1)));
    }
}
