//! Two-handed clock, as in the BSD and SunOS pageout daemons.
//!
//! Two hands sweep the circle of frames together, a fixed *spread* apart. The front hand
//! clears the reference bit of each frame it passes; the back hand, trailing it, evicts the
//! first frame whose bit is still clear, i.e. one not referenced in the time the hands took
//! to travel the spread. With a large memory, a one-handed clock's "time since the bit was
//! cleared" is a whole revolution, which can be very long; the second hand makes it a
//! tunable fraction of one. Leffler, McKusick, Karels & Quarterman (1989, *The Design and
//! Implementation of the 4.3BSD UNIX Operating System*, §5.12) describe the two hands of
//! 4.3BSD's pageout daemon; SunOS and Solaris keep it with the `handspreadpages` tunable.
//! Burnett (2006, §2.3.3, "Two-handed Clock [70]") fingerprints it.
//!
//! Parameter `spread` (default 0.5): the distance between the hands as a fraction of the
//! resident frames, `floor(spread * frames)`, at most `frames - 1`. `spread = 0` puts the
//! hands on the same frame: every bit is cleared just before it is tested, which is FIFO.
//! `spread = 1` puts the front hand just behind the back hand: a frame's bit is cleared a
//! whole revolution before it is tested, which is one-handed Clock (with each frame's bit
//! cleared one step later). 0.5 is the brief's choice, halfway between; the kernels derive
//! the spread from memory size and scan rate, which we do not model.
//!
//! Representation: the circle is two intrusive lists. Reading it from the back hand: list
//! `A` holds the frames the front hand has passed and the back hand has not yet reached
//! (the spread), list `B` the rest, starting with the frame under the front hand. New
//! frames enter **with their bit clear** just behind the back hand (the head of `B`), so
//! both hands reach them last. Each step (1) re-establishes the spread: the front hand
//! moves forward (frames go from `B`'s tail to `A`'s head and have their bit cleared) or,
//! if the cache shrank, backward (without touching bits); (2) with a zero spread the front
//! hand clears the bit under both hands; (3) the back hand tests its frame: clear and
//! evictable -> evicted; otherwise it passes (the frame goes to the head of `B`). A list
//! membership bit per frame says which list holds it; the roles of the two lists never
//! swap, so removals of any frame are O(1).
//!
//! Protected frames: both hands pass over them as over any frame; the back hand never
//! evicts them. Each step the front hand clears one new frame, so within two revolutions
//! every frame has been tested with a clear bit: the sweep is bounded by `2 * frames + 2`
//! steps, then `evict` returns `None`.
//!
//! The victim list is computed on a copy ([`crate::victims_by_simulation`]).
//!
//! Cost: O(1) per hit; eviction amortized O(1) (each step advances both hands by one
//! frame). Memory: 9 bytes per frame (8 bytes of links, 1 byte for the reference and
//! membership bits).

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

const REF: u8 = 1;
const IN_B: u8 = 2;

/// Two-handed clock with the hands `spread` of the frames apart.
#[derive(Clone, Debug)]
pub struct Clock2Hand {
    links: Links,
    /// Passed by the front hand, not yet reached by the back hand (tail = back hand).
    a: List,
    /// From the front hand (tail) to just behind the back hand (head).
    b: List,
    flags: Vec<u8>,
    spread: f64,
}

impl Clock2Hand {
    /// A two-handed clock expecting about `frames` residents; `spread` in `[0, 1]`.
    pub fn new(frames: usize, spread: f64) -> Self {
        Clock2Hand {
            links: Links::with_capacity(frames),
            a: List::new(),
            b: List::new(),
            flags: vec![0; frames],
            spread: spread.clamp(0.0, 1.0),
        }
    }

    /// Whether a resident frame's reference bit is set (for tests and Dust).
    pub fn is_referenced(&self, frame: FrameId) -> bool {
        self.flags[frame.index()] & REF != 0
    }

    /// Move the front hand so that `A` holds the spread.
    #[inline]
    fn set_spread(&mut self) {
        let len = self.a.len() + self.b.len();
        let target = ((self.spread * len as f64) as usize).min(len.saturating_sub(1));
        while self.a.len() < target {
            let Some(f) = self.b.tail() else { break };
            self.links.unlink(&mut self.b, f);
            self.links.push_front(&mut self.a, f);
            self.flags[f.index()] = 0; // passed by the front hand: bit cleared, now in A
        }
        while self.a.len() > target {
            let Some(f) = self.a.head() else { break };
            self.links.unlink(&mut self.a, f);
            self.links.push_back(&mut self.b, f);
            self.flags[f.index()] |= IN_B;
        }
    }
}

impl Policy for Clock2Hand {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// A hit sets the frame's reference bit.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Counter { cap: 1 }
    }

    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        self.flags[frame.index()] |= REF;
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        ensure_slot(&mut self.flags, frame, 0);
        self.flags[frame.index()] = IN_B;
        self.links.push_front(&mut self.b, frame);
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let steps = 2 * self.len() + 2;
        for _ in 0..steps {
            self.set_spread();
            let (f, in_a) = match self.a.tail() {
                Some(f) => (f, true),
                None => {
                    // zero spread: the front hand is on the same frame and clears it first
                    let f = self.b.tail()?;
                    self.flags[f.index()] &= !REF;
                    (f, false)
                }
            };
            let list = if in_a { &mut self.a } else { &mut self.b };
            self.links.unlink(list, f);
            if self.flags[f.index()] & REF == 0 && evictable(f) {
                return Some(f);
            }
            // The back hand passes f: it becomes the frame both hands reach last.
            self.links.push_front(&mut self.b, f);
            self.flags[f.index()] |= IN_B;
        }
        None
    }

    fn remove(&mut self, frame: FrameId) {
        let list = if self.flags[frame.index()] & IN_B != 0 {
            &mut self.b
        } else {
            &mut self.a
        };
        self.links.unlink(list, frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for Clock2Hand {
    const NAME: &'static str = "clock2hand";
    const SUMMARY: &'static str =
        "two-handed clock of the BSD/SunOS pageout daemon (Leffler et al. 1989)";
    const PARAMS: &'static [ParamInfo] = &[ParamInfo {
        name: "spread",
        default: "0.5",
        help: "distance between the hands as a fraction of the frames, 0..=1 (0 = FIFO)",
    }];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let spread = params.fraction("spread", 0.0, 1.0)?;
        Ok(Clock2Hand::new(
            crate::prealloc_frames(ctx.capacity),
            spread,
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Clock2Hand, Fifo};

    #[test]
    fn hand_worked_sequence() {
        // capacity 4, spread 0.5 -> the hands are 2 frames apart.
        // Circle from the back hand; | marks the front hand; * = bit set.
        //  1 2 3 4 miss                          1 2 3 4   (no sweep yet)
        //  1 hit, 3 hit                          1* 2 3* 4
        //  5: spread: front passes 1, 2 (clears) 1 2 | 3* 4
        //     back tests 1: clear -> evict 1     2 | 3* 4 5
        //  3 hit (already set)
        //  6: spread 2 of 4: front passes 3 (clears)  2 3 | 4 5
        //     back tests 2: clear -> evict 2     3 | 4 5 6
        //  3 hit                                 3* | 4 5 6
        //  7: spread: front passes 4 (clears)    3* 4 | 5 6
        //     back tests 3: set -> passes        4 | 5 6 3*
        //     spread: front passes 5             4 5 | 6 3*
        //     back tests 4: clear -> evict 4     5 | 6 3* 7
        let trace = [1, 2, 3, 4, 1, 3, 5, 3, 6, 3, 7];
        assert_eq!(
            hits(Clock2Hand::new(4, 0.5), 4, &trace),
            [false, false, false, false, true, true, false, true, false, true, false]
        );
        let ev: Vec<u64> = evictions(Clock2Hand::new(4, 0.5), 4, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ev, [1, 2, 4]);
        // Next victims: the front hand passes 6 (clears it); back tests 5: evicted. With 3
        // frames the spread is 1: back tests 6: evicted. With 2 the front hand passes 3
        // (clears it): back tests 3: evicted. Then 7.
        assert_eq!(
            resident_after(Clock2Hand::new(4, 0.5), 4, &trace),
            [5, 6, 3, 7]
        );
    }

    #[test]
    fn zero_spread_is_fifo() {
        let trace = [1, 2, 3, 1, 4, 2, 5, 1, 2, 3, 4, 5, 3, 3, 6];
        assert_eq!(
            hits(Clock2Hand::new(3, 0.0), 3, &trace),
            hits(Fifo::new(3), 3, &trace)
        );
    }
}
