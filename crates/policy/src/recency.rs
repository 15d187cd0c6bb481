//! The one-list core shared by FIFO, LRU and MRU.
//!
//! The three classic policies keep a single list of frames, newest at the head, and differ
//! in exactly two choices: whether a hit moves the frame to the head (LRU, MRU) or changes
//! nothing (FIFO), and which end is evicted (the oldest for FIFO and LRU, the newest for
//! MRU). [`OneList`] is that list with the two choices as const parameters, so each policy
//! is compiled on its own with no run-time branch; `fifo.rs`, `lru.rs` and `mru.rs` give
//! the instantiations their names, documentation and tests.
//!
//! Protected (non-evictable) frames are skipped in place: eviction takes the first
//! evictable frame from the evicting end, and the others keep their order. That also makes
//! the victim list an exact walk of the list.
//!
//! Cost: O(1) per hit, insertion and eviction (plus skipped protected frames). Memory: 8
//! bytes per frame (the links).

use crate::list::{Links, List};
use crate::{Access, FrameId, Policy};

/// A single recency/insertion list. `MOVE_ON_HIT`: a hit moves the frame to the head.
/// `EVICT_NEWEST`: evict from the head instead of the tail.
#[derive(Clone, Debug)]
pub struct OneList<const MOVE_ON_HIT: bool, const EVICT_NEWEST: bool> {
    links: Links,
    order: List,
}

impl<const MOVE_ON_HIT: bool, const EVICT_NEWEST: bool> OneList<MOVE_ON_HIT, EVICT_NEWEST> {
    /// A policy expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        OneList {
            links: Links::with_capacity(frames),
            order: List::new(),
        }
    }
}

impl<const MOVE_ON_HIT: bool, const EVICT_NEWEST: bool> Policy
    for OneList<MOVE_ON_HIT, EVICT_NEWEST>
{
    fn name(&self) -> &'static str {
        match (MOVE_ON_HIT, EVICT_NEWEST) {
            (false, _) => "fifo",
            (true, false) => "lru",
            (true, true) => "mru",
        }
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    /// LRU and MRU move a hit page to the front; FIFO ignores hits.
    fn hit_path(&self) -> crate::HitPath {
        if MOVE_ON_HIT {
            crate::HitPath::Ordered
        } else {
            crate::HitPath::Ignore
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        if MOVE_ON_HIT {
            self.links.move_to_front(&mut self.order, frame);
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        self.links.push_front(&mut self.order, frame);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        // The common case first, without building an iterator: the end frame is evictable.
        let end = if EVICT_NEWEST {
            self.order.head()
        } else {
            self.order.tail()
        }?;
        let victim = if evictable(end) {
            end
        } else if EVICT_NEWEST {
            self.links
                .iter_from_head(&self.order)
                .find(|&f| evictable(f))?
        } else {
            self.links
                .iter_from_tail(&self.order)
                .find(|&f| evictable(f))?
        };
        self.links.unlink(&mut self.order, victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.links.unlink(&mut self.order, frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // Exact: evicting one frame leaves the order of the others unchanged.
        if EVICT_NEWEST {
            let order = self.links.iter_from_head(&self.order);
            out.extend(order.filter(|&f| evictable(f)).take(n));
        } else {
            let order = self.links.iter_from_tail(&self.order);
            out.extend(order.filter(|&f| evictable(f)).take(n));
        }
    }
}
