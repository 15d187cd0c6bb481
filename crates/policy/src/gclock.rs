//! GCLOCK: generalized clock with a small reference counter per frame.
//!
//! Smith (1978, "Sequentiality and prefetching in database systems") generalized the
//! clock's single use bit to a counter; Nicola, Dan & Dias (1992, "Analysis of the
//! generalized clock buffer replacement scheme for database transaction processing")
//! analysed it. A hit increments the frame's counter up to `max`; the sweeping hand
//! decrements each non-zero counter it passes and evicts the first frame whose counter is
//! already zero. Frequently used frames therefore survive up to `max` sweeps without a
//! reference, while a frame used once survives none.
//!
//! Representation and insertion are those of [`crate::Clock`]: an intrusive ring read from
//! the hand (the list tail) onwards; new frames enter with a **zero** counter just behind
//! the hand. With `max = 1` GCLOCK is exactly Clock (a property test checks this).
//!
//! Parameter `max` (default 3): the counter's ceiling. 3 is a 2-bit counter: it separates
//! "used once since loaded", "used a few times" and "hot" while keeping each sweep cheap,
//! and it is what libCacheSim runs as `Clock` with `n-bit-counter=2` (its GCLOCK-style
//! variant, which also inserts at 0), so the two can be compared directly. Larger values
//! approach LFU-with-ageing and lengthen worst-case sweeps (at most `max + 1` rounds).
//! Nicola et al. also study initialising new pages with a non-zero count; we do not.
//!
//! Protected frames: the hand passes over them like any frame (decrementing their
//! counter) but never evicts them. The sweep is bounded by `max + 1` rounds; if it finds
//! nothing evictable it returns `None`.
//!
//! The victim list is computed on a copy ([`crate::victims_by_simulation`]).
//!
//! Cost: O(1) per hit; eviction amortized O(1) (each increment is undone by at most one
//! hand step). Memory: 9 bytes per frame (8 bytes of links, 1 byte of counter).

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Generalized clock with counters saturating at `max`.
#[derive(Clone, Debug)]
pub struct GClock {
    links: Links,
    ring: List,
    count: Vec<u8>,
    max: u8,
}

impl GClock {
    /// A GCLOCK expecting about `frames` residents, counters saturating at `max` (>= 1).
    pub fn new(frames: usize, max: u8) -> Self {
        GClock {
            links: Links::with_capacity(frames),
            ring: List::new(),
            count: vec![0; frames],
            max: max.max(1),
        }
    }

    /// A resident frame's counter (for tests and Dust).
    pub fn counter(&self, frame: FrameId) -> u8 {
        self.count[frame.index()]
    }
}

impl Policy for GClock {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// A hit raises the frame's counter, which saturates at `max`.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Counter { cap: self.max }
    }

    fn len(&self) -> usize {
        self.ring.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let c = &mut self.count[frame.index()];
        if *c < self.max {
            *c += 1;
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        ensure_slot(&mut self.count, frame, 0);
        self.count[frame.index()] = 0;
        self.links.push_front(&mut self.ring, frame);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let steps = (usize::from(self.max) + 1) * self.ring.len();
        for _ in 0..steps {
            let f = self.ring.tail()?;
            let c = &mut self.count[f.index()];
            if *c == 0 && evictable(f) {
                self.links.unlink(&mut self.ring, f);
                return Some(f);
            }
            *c = c.saturating_sub(1);
            self.links.unlink(&mut self.ring, f);
            self.links.push_front(&mut self.ring, f);
        }
        None
    }

    fn remove(&mut self, frame: FrameId) {
        self.links.unlink(&mut self.ring, frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for GClock {
    const NAME: &'static str = "gclock";
    const SUMMARY: &'static str =
        "generalized clock with per-frame counters (Smith 1978; Nicola, Dan, Dias 1992)";
    const PARAMS: &'static [ParamInfo] = &[ParamInfo {
        name: "max",
        default: "3",
        help: "counter ceiling, 1..=255 (1 is plain Clock; 3 is a 2-bit counter)",
    }];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let max = params.integer("max", 1, 255)? as u8;
        Ok(GClock::new(crate::prealloc_frames(ctx.capacity), max))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Clock, GClock};

    #[test]
    fn hand_worked_sequence() {
        // capacity 3, max 3. Ring from the hand, counters in brackets.
        //  1 2 3 miss; 1 hit x4 (saturates at 3), 2 hit          1[3] 2[1] 3[0]
        //  4: 1 -> 2, passed; 2 -> 0, passed; 3 is 0: evicted    1[2] 2[0] 4[0]
        //  5: 1 -> 1, passed; 2 evicted                          4[0] 1[1] 5[0]
        //  6: 4 evicted                                          1[1] 5[0] 6[0]
        //  2: 1 -> 0, passed; 5 evicted                          6[0] 1[0] 2[0]
        let trace = [1, 2, 3, 1, 1, 1, 1, 2, 4, 5, 6, 2];
        assert_eq!(
            hits(GClock::new(3, 3), 3, &trace),
            [false, false, false, true, true, true, true, true, false, false, false, false]
        );
        let ev: Vec<u64> = evictions(GClock::new(3, 3), 3, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ev, [3, 2, 4, 5]);
        assert_eq!(resident_after(GClock::new(3, 3), 3, &trace), [6, 1, 2]);
        // Plain Clock forgets 1's frequency: at 4 it clears 1 and 2 and evicts 3, at 5 it
        // evicts 1 (its bit was cleared) -- GCLOCK kept 1 and evicted 2.
        let clock: Vec<u64> = evictions(Clock::new(3), 3, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(&clock[..2], [3, 1]);
    }
}
