//! Toss-immediately, parallel version (Kotz & Ellis 1992, "Caching and writeback policies
//! in parallel file systems", §3.3.1; the uniprocess policy is their reference [21]).
//!
//! How we read the paper: sequential access means a process's most recently used block is
//! the one it is likely to use again (it may still be reading or writing the rest of the
//! block), while the blocks it used before are done with. The policy "retains the MRU
//! block in memory, allowing older blocks to be replaced ('tossed')". The parallel analog
//! "retains at least the MRU block for each process", "using a counter for each cache
//! buffer to count processes whose MRU block is in that buffer. When the counter is zero,
//! the block is replaceable." A process is our [`Access::stream`]. So:
//!
//! * every resident frame counts the streams whose most recent access was to it;
//! * an access by stream `s` to frame `f` makes `f` the MRU block of `s`: `f`'s counter
//!   goes up, and the counter of `s`'s previous MRU block goes down;
//! * a frame whose counter falls to zero becomes *replaceable* (tossed).
//!
//! The paper does not say which replaceable block goes first. We take the one that became
//! replaceable earliest (a FIFO of tossed frames); for a single stream this is LRU among
//! all but the MRU block. Nor does it say what happens if no block is replaceable (it
//! assumes at least one buffer per process); to keep the cache's contract we then evict
//! the retained frame that most long ago became some stream's MRU block, and the streams
//! that held it simply have no MRU block until their next access.
//!
//! Stream bookkeeping: a `hashbrown` map from stream to (frame, generation) — streams are
//! arbitrary 32-bit ids, so an array is not an option; the map holds one entry per stream
//! ever seen (it is the paper's per-process state). A frame's generation changes each time
//! it is reused, so an entry whose frame was evicted is recognised as stale without a
//! reverse map.
//!
//! Protected frames: the walk (tossed frames oldest first, then retained frames oldest
//! first) skips them and leaves them in place; eviction never reorders the rest, so the
//! victim list is the same walk (exact).
//!
//! Parameters: none. libCacheSim has no toss-immediately.
//!
//! Cost: O(1) per access plus one hash lookup of the stream; O(1) eviction (plus skipped
//! protected frames). Memory: 17 bytes per frame (8 links, 4 counter, 4 generation,
//! 1 state) plus 12 bytes per stream.

use hashbrown::HashMap;

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

const OUT: u8 = 0;
const TOSSED: u8 = 1;
const KEPT: u8 = 2;

/// Toss-immediately: keep each stream's most recently used block.
#[derive(Clone, Debug)]
pub struct Toss {
    links: Links,
    tossed: List,
    kept: List,
    holders: Vec<u32>,
    generation: Vec<u32>,
    state: Vec<u8>,
    mru: HashMap<u32, (u32, u32)>,
}

impl Toss {
    /// Toss-immediately for about `frames` residents.
    pub fn new(frames: usize) -> Self {
        Toss {
            links: Links::with_capacity(frames),
            tossed: List::new(),
            kept: List::new(),
            holders: vec![0; frames],
            generation: vec![0; frames],
            state: vec![OUT; frames],
            mru: HashMap::new(),
        }
    }

    /// Whether a resident frame is retained as some stream's MRU block.
    pub fn is_retained(&self, frame: FrameId) -> bool {
        self.state[frame.index()] == KEPT
    }

    #[inline]
    fn touch(&mut self, frame: FrameId, stream: u32) {
        let f = frame.index();
        let entry = (frame.0, self.generation[f]);
        let previous = self.mru.insert(stream, entry);
        if let Some((old, gen)) = previous {
            let o = old as usize;
            let valid = self.generation[o] == gen && self.state[o] == KEPT;
            if valid && old == frame.0 {
                self.links.move_to_front(&mut self.kept, frame);
                return;
            }
            if valid {
                self.holders[o] -= 1;
                if self.holders[o] == 0 {
                    self.links.unlink(&mut self.kept, FrameId(old));
                    self.links.push_front(&mut self.tossed, FrameId(old));
                    self.state[o] = TOSSED;
                }
            }
        }
        match self.state[f] {
            KEPT => self.links.move_to_front(&mut self.kept, frame),
            s => {
                if s == TOSSED {
                    self.links.unlink(&mut self.tossed, frame);
                }
                self.holders[f] = 0;
                self.links.push_front(&mut self.kept, frame);
                self.state[f] = KEPT;
            }
        }
        self.holders[f] += 1;
    }

    fn walk(&self) -> impl Iterator<Item = FrameId> + '_ {
        self.links
            .iter_from_tail(&self.tossed)
            .chain(self.links.iter_from_tail(&self.kept))
    }

    fn unlink(&mut self, frame: FrameId) {
        let list = if self.state[frame.index()] == KEPT {
            &mut self.kept
        } else {
            &mut self.tossed
        };
        self.links.unlink(list, frame);
        self.state[frame.index()] = OUT;
    }
}

impl Policy for Toss {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.tossed.len() + self.kept.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.touch(frame, access.stream);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.holders, frame, 0);
        ensure_slot(&mut self.generation, frame, 0);
        ensure_slot(&mut self.state, frame, OUT);
        let g = &mut self.generation[frame.index()];
        *g = g.wrapping_add(1);
        self.state[frame.index()] = OUT;
        self.touch(frame, access.stream);
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self.walk().find(|&f| evictable(f))?;
        self.unlink(victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.unlink(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        out.extend(self.walk().filter(|&f| evictable(f)).take(n));
    }
}

impl NamedPolicy for Toss {
    const NAME: &'static str = "toss";
    const SUMMARY: &'static str =
        "toss-immediately: keep each stream's MRU block, toss the rest (Kotz & Ellis 1992)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Toss::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Access, Cache, Toss};

    fn access(cache: &mut Cache<Toss>, key: u64, stream: u32, t: u64) -> (bool, Vec<u64>) {
        let mut a = Access::unit(key, t);
        a.stream = stream;
        let hit = cache.access(&a).is_hit();
        (hit, cache.evicted().to_vec())
    }

    #[test]
    fn two_streams_keep_their_mru_blocks() {
        // capacity 3, streams A=1 and B=2. Retained list oldest first; tossed oldest first.
        //  A:10  retained [10]
        //  B:20  retained [10 20]
        //  A:11  10 tossed: tossed [10]; retained [20 11]
        //  A:12  cache full: evict 10 (tossed); 11 tossed: tossed [11]; retained [20 12]
        //  B:20  hit; retained [12 20]
        //  A:13  evict 11; 12 tossed; retained [20 13]
        //  B:12  hit on a tossed block: B's MRU moves from 20 to 12: 20 tossed,
        //        12 retained: tossed [20]; retained [13 12]
        //  A:14  evict 20; 13 tossed: tossed [13]; retained [12 14]
        let mut c = Cache::new(Toss::new(3), 3);
        let steps: [(u64, u32, bool, &[u64]); 8] = [
            (10, 1, false, &[]),
            (20, 2, false, &[]),
            (11, 1, false, &[]),
            (12, 1, false, &[10]),
            (20, 2, true, &[]),
            (13, 1, false, &[11]),
            (12, 2, true, &[]),
            (14, 1, false, &[20]),
        ];
        for (t, (key, stream, hit, evicted)) in steps.into_iter().enumerate() {
            assert_eq!(
                access(&mut c, key, stream, t as u64),
                (hit, evicted.to_vec()),
                "step {t}"
            );
        }
        assert_eq!(c.victims(3), [13, 12, 14]);
        assert!(c.policy().is_retained(c.frame_of(12).unwrap()));
        assert!(!c.policy().is_retained(c.frame_of(13).unwrap()));
    }

    #[test]
    fn a_shared_block_stays_while_any_stream_holds_it() {
        // Both streams read 5; A moves on, 5 is still B's MRU block and stays retained.
        let mut c = Cache::new(Toss::new(2), 2);
        access(&mut c, 5, 1, 0);
        access(&mut c, 5, 2, 1);
        access(&mut c, 6, 1, 2);
        assert!(c.policy().is_retained(c.frame_of(5).unwrap()));
        // Full with nothing tossed: the fallback evicts the retained frame that became
        // an MRU block longest ago: 5 (last made MRU at t1) before 6 (t2).
        assert_eq!(c.victims(2), [5, 6]);
        // B moves on to 7: 5 is dropped (B no longer holds anything valid after eviction).
        assert_eq!(access(&mut c, 7, 2, 3), (false, vec![5]));
        // 6 (A's) and 7 (B's) are both retained; B's old block was evicted, not tossed.
        assert_eq!(c.victims(2), [6, 7]);
    }
}
