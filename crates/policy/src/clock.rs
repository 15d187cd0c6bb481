//! Clock (second chance): a one-handed approximation of LRU.
//!
//! Frames sit on a circle with one reference bit each; a hit sets the bit. To find a
//! victim the hand sweeps forward: a frame with its bit set has it cleared and is passed
//! over (its "second chance"); the first frame found with a clear bit is evicted. Corbató
//! (1968, "A paging experiment with the Multics system") introduced it; Burnett (2006,
//! §2.3.3) fingerprints it and shows why its look depends on the initial use bits.
//!
//! Representation: the circle is an intrusive list read from its tail (the frame under the
//! hand) to its head (the frame the hand reaches last). Advancing the hand past a frame
//! moves that frame from the tail to the head, which keeps the circular order and the
//! hand's position exactly as a pointer on a ring would, while frames may come and go in
//! any order (variable sizes, removals). No fixed array positions are needed.
//!
//! New frames enter **with their reference bit clear**, just behind the hand (at the head:
//! the last frame the hand will reach). This is the textbook choice (and libCacheSim's,
//! whose `Clock` inserts with frequency 0): a page earns its second chance by being
//! referenced after it was loaded. Some kernels set the bit on load instead; then a clock
//! of one-time pages degenerates to FIFO after a full extra sweep.
//!
//! Protected frames: the hand passes over them as over any frame — it clears their bit and
//! moves on — but never evicts them. The sweep is bounded by two rounds: after one round
//! every bit is clear, so the second round finds an evictable frame if there is one;
//! otherwise `evict` returns `None` (the bits it cleared stay clear, as on real hardware).
//!
//! The implementation is [`crate::gclock`]'s with a counter ceiling of 1. The victim list
//! is computed on a copy ([`crate::victims_by_simulation`]), because
//! second chances change what comes next.
//!
//! Parameters: none.
//!
//! Cost: O(1) per hit (set a byte); eviction is amortized O(1) (each bit set by a hit is
//! cleared at most once), worst case two rounds. Memory: 9 bytes per frame (8 bytes of
//! links, 1 byte of reference bit).

use crate::gclock::GClock;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{Access, FrameId, Policy};

/// One-handed clock: [`GClock`] with a one-bit counter (the reference bit), which is
/// exactly the algorithm above; the property test `gclock_max1_is_clock` checks the two
/// against the same reference model.
#[derive(Clone, Debug)]
pub struct Clock(GClock);

impl Clock {
    /// A clock expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        Clock(GClock::new(frames, 1))
    }

    /// Whether a resident frame's reference bit is set (for tests and Dust).
    pub fn is_referenced(&self, frame: FrameId) -> bool {
        self.0.counter(frame) > 0
    }
}

impl Policy for Clock {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// A hit sets the frame's reference bit.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Counter { cap: 1 }
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.0.on_hit(frame, access);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.0.on_insert(frame, access);
    }

    #[inline]
    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.0.evict(incoming, evictable)
    }

    fn remove(&mut self, frame: FrameId) {
        self.0.remove(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        self.0.victims(n, evictable, out);
    }
}

impl NamedPolicy for Clock {
    const NAME: &'static str = "clock";
    const SUMMARY: &'static str = "one-handed clock / second chance (Corbato 1968)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Clock::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Clock, FrameId, Policy};

    #[test]
    fn hand_worked_sequence() {
        // capacity 3. Ring written from the hand onwards, * = bit set.
        //  1 2 3 miss                      1 2 3
        //  1 hit                           1* 2 3
        //  4: hand clears 1, passes; 2 clear -> evict 2          3 1 4
        //  3 hit                           3* 1 4
        //  5: clears 3; 1 clear -> evict 1                       4 3 5
        //  4 hit, 3 hit                    4* 3* 5
        //  6: clears 4, clears 3, evicts 5                       4 3 6
        //  1: 4 clear -> evict 4                                 3 6 1
        let trace = [1, 2, 3, 1, 4, 3, 5, 4, 3, 6, 1];
        assert_eq!(
            hits(Clock::new(3), 3, &trace),
            [false, false, false, true, false, true, false, true, true, false, false]
        );
        let ev: Vec<u64> = evictions(Clock::new(3), 3, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ev, [2, 1, 5, 4]);
        assert_eq!(resident_after(Clock::new(3), 3, &trace), [3, 6, 1]);
    }

    #[test]
    fn pinned_frames_are_passed_and_bounded() {
        let mut c = Clock::new(2);
        c.on_insert(FrameId(0), &Access::unit(0, 0));
        c.on_insert(FrameId(1), &Access::unit(1, 1));
        c.on_hit(FrameId(1), &Access::unit(1, 2));
        // nothing evictable: two rounds, then None; the hand cleared frame 1's bit
        assert_eq!(c.evict(&Access::phantom(), &|_| false), None);
        assert!(!c.is_referenced(FrameId(1)));
        // frame 0 pinned: the hand passes it and takes 1
        assert_eq!(
            c.evict(&Access::phantom(), &|f| f != FrameId(0)),
            Some(FrameId(1))
        );
        assert_eq!(c.len(), 1);
    }
}
