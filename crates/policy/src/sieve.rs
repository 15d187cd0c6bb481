//! SIEVE: a FIFO queue with one "visited" bit per object and a hand that sifts out
//! unvisited objects.
//!
//! Zhang, Yang, Yue, Vigfusson, Rashmi, "SIEVE is Simpler than LRU: an Efficient Turn-Key
//! Eviction Algorithm for Web Caches", NSDI 2024.
//!
//! # Algorithm
//!
//! New objects enter at the head of one FIFO queue with their visited bit clear; a hit only
//! sets the bit (no list move, which is why SIEVE scales like FIFO). A *hand* starts at the
//! tail (oldest) and moves towards the head: an object with its bit set has the bit cleared
//! and is passed over (it *stays where it is*, unlike Clock's reinsertion at the head); the
//! first object with a clear bit is evicted and the hand stays at the object just newer
//! than the victim. When the hand runs off the head it wraps to the tail. Objects that
//! survive a pass therefore keep their position, and newcomers between the hand and the
//! head are examined only on the next pass: the "lazy promotion, quick demotion" that makes
//! SIEVE beat LRU on web traces.
//!
//! # Parameters
//!
//! None.
//!
//! # Deviations and choices
//!
//! * Frames the caller forbids evicting (pinned) are passed over by the hand like any other
//!   frame: their visited bit is cleared if set (the hand naturally does that), and they
//!   keep their position. The scan is bounded by two full passes (`2 * len + 1` steps): the
//!   first pass clears every bit, so the second finds any evictable frame; if none exists
//!   the call returns `None` (having cleared the bits it passed, as a real hand would).
//! * If the frame under the hand is removed explicitly, the hand moves to the next newer
//!   frame, as libCacheSim does when its hand object is removed.
//! * libCacheSim's SIEVE is the same algorithm; miss ratios should agree exactly in unit
//!   mode.
//!
//! # Cost
//!
//! O(1) per hit and insertion; eviction is amortized O(1) (every step of the hand either
//! evicts or clears a bit that a hit set). `victims` clones the policy (O(frames)).
//! Memory: 8 bytes of links + 1 byte of visited flag = 9 bytes per frame.

use crate::list::{Links, List, NIL};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// SIEVE. Head of the queue is the newest object; the hand moves from tail to head.
#[derive(Clone, Debug)]
pub struct Sieve {
    links: Links,
    queue: List,
    visited: Vec<bool>,
    /// The frame the hand points at, or `NIL` for "start at the tail".
    hand: u32,
}

impl Sieve {
    /// A SIEVE policy expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        Sieve {
            links: Links::with_capacity(frames),
            queue: List::new(),
            visited: vec![false; frames],
            hand: NIL,
        }
    }

    /// The frame newer than `f`, or the tail when `f` is the head (the hand wraps).
    #[inline]
    fn newer_or_wrap(&self, f: FrameId) -> Option<FrameId> {
        self.links.prev(f).or_else(|| self.queue.tail())
    }
}

impl Policy for Sieve {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// A hit sets the object's visited bit.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Counter { cap: 1 }
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        self.visited[frame.index()] = true;
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        ensure_slot(&mut self.visited, frame, false);
        self.visited[frame.index()] = false;
        self.links.push_front(&mut self.queue, frame);
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut cur = if self.hand == NIL {
            self.queue.tail()?
        } else {
            FrameId(self.hand)
        };
        let bound = 2 * self.queue.len() + 1;
        for _ in 0..bound {
            let v = &mut self.visited[cur.index()];
            if *v {
                *v = false;
            } else if evictable(cur) {
                // the hand stays at the frame just newer than the victim (NIL = wrap)
                self.hand = self.links.prev(cur).map_or(NIL, |f| f.0);
                self.links.unlink(&mut self.queue, cur);
                return Some(cur);
            }
            cur = self.newer_or_wrap(cur)?;
        }
        self.hand = cur.0;
        None
    }

    fn remove(&mut self, frame: FrameId) {
        if self.hand == frame.0 {
            self.hand = self.links.prev(frame).map_or(NIL, |f| f.0);
        }
        self.links.unlink(&mut self.queue, frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for Sieve {
    const NAME: &'static str = "sieve";
    const SUMMARY: &'static str =
        "FIFO with visited bits and a hand that keeps survivors in place (Zhang et al., NSDI 2024)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Sieve::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::Sieve;

    #[test]
    fn hand_worked_sequence() {
        // capacity 3. Queue written head..tail, * = visited, ^ = hand.
        // 1 2 3        -> [3 2 1]           (3 misses)
        // 1 (hit)      -> [3 2 1*]
        // 4: hand starts at tail 1*: clear, move to 2: unvisited -> evict 2; hand -> 3
        //              -> [4 3 1], hand at 3
        // 3 (hit)      -> [4 3* 1]
        // 5: hand at 3*: clear, move to 4 (newer): unvisited -> evict 4; hand -> head: wrap
        //              -> [5 3 1], hand = tail
        // 1 (hit)      -> [5 3 1*]
        // 6: hand at tail 1*: clear, move to 3: evict 3; hand -> 5
        //              -> [6 5 1]
        let trace = [1, 2, 3, 1, 4, 3, 5, 1, 6];
        assert_eq!(
            hits(Sieve::new(3), 3, &trace),
            [false, false, false, true, false, true, false, true, false]
        );
        let ev = evictions(Sieve::new(3), 3, &trace);
        let expected: [&[u64]; 9] = [&[], &[], &[], &[], &[2], &[], &[4], &[], &[3]];
        assert_eq!(ev, expected);
        // next victims from the hand at 5: 5, then 6 (newer, unvisited), then wrap to 1
        assert_eq!(resident_after(Sieve::new(3), 3, &trace), [5, 6, 1]);
    }

    #[test]
    fn survivors_keep_their_place() {
        // Unlike Clock, a visited object that the hand passes is not moved to the head:
        // capacity 2: 1 2 1(hit) 3: hand clears 1, evicts 2; 1 stays the oldest.
        // 4: hand wraps... hand was set to the frame newer than 2, i.e. none -> tail = 1:
        // 1 is unvisited now, so it goes.
        let trace = [1, 2, 1, 3, 4];
        let ev = evictions(Sieve::new(2), 2, &trace);
        let expected: [&[u64]; 5] = [&[], &[], &[], &[2], &[1]];
        assert_eq!(ev, expected);
    }
}
