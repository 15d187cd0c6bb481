//! S3-FIFO: a small probationary FIFO, a main FIFO with a 2-bit frequency clock, and a
//! ghost FIFO of keys recently dropped from the small queue.
//!
//! Yang, Zhang, Qiu, Yue, Rashmi, "FIFO queues are all you need for cache eviction",
//! SOSP 2023.
//!
//! # Algorithm
//!
//! A missed object goes to the head of the small queue S, unless its key is in the ghost
//! queue G, in which case it goes straight to the main queue M. A hit only increments the
//! object's frequency counter, saturating at 3 (two bits). To make room:
//!
//! * from S (when S holds at least its share of the cache): look at S's tail; if its
//!   frequency is above `threshold`, move it to M's head (frequency reset to 0);
//!   otherwise evict it and remember its key in G. Repeat until one object is evicted.
//! * from M: look at M's tail; if its frequency is positive, decrement it and reinsert it
//!   at M's head (a clock with a 2-bit counter); otherwise evict it (no ghost).
//!
//! Most objects are accessed once within a short window ("one-hit wonders"); S filters
//! them out after a brief probation, so M keeps objects with proven reuse.
//!
//! # Parameters
//!
//! * `small` (0.1): S's share of the capacity, in units. The paper's default: 10% is
//!   enough to catch one-hit wonders on the traces it studies.
//! * `ghost` (0.9): G's size as a fraction of M's capacity, counted in the policy's units
//!   (entries in unit mode), as the paper suggests (G holds as many entries as M).
//! * `threshold` (1): an object leaves S for M when its frequency is *greater than*
//!   `threshold`. Algorithm 1 of the paper tests `t.freq > 1`; libCacheSim's
//!   `move-to-main-threshold=2` tests `freq >= 2`, the same rule. (The paper's prose,
//!   "accessed at least once", would be `threshold=0`.)
//!
//! # Deviations and choices
//!
//! * One eviction per call: the paper's `evictS` may call `evictM` when moving an object
//!   overfills M, evicting two objects in one step. Here a move into M never evicts;
//!   instead, as in libCacheSim, the next eviction comes from M whenever M exceeds its
//!   share (or S is empty). With the driver evicting until the newcomer fits the net
//!   effect is the same set of evictions, possibly in a different order.
//! * The paper chooses S when `|S| >= small share`; we use the same test but fall back to
//!   the other queue when the chosen one has no evictable frame.
//! * `variant=libcachesim` reproduces libCacheSim's `S3FIFO.c` (commit aa0fc409) miss for
//!   miss (pinned by `crates/sim/tests/golden_libcachesim.rs`). It differs from the paper
//!   in two ways: G is sized at `ghost` times the *whole* cache (not M), and the newcomer's
//!   ghost entry is removed when the miss is looked up, before the evictions that make
//!   room for it, so those evictions can neither push it out of G nor count it against
//!   G's size. (Later libCacheSim releases also send newcomers to M until the first
//!   eviction; that commit does not, so neither does this variant.)
//! * Pinned frames: in S a pinned frame that qualifies for M is still moved to M (the
//!   move is not an eviction); a pinned unqualified frame stays in place and the scan
//!   continues towards the head. In M a pinned frame with frequency 0 stays in place; one
//!   with positive frequency is reinserted as usual. Scans are bounded: S by its length,
//!   M by five passes (a frequency of at most 3 needs at most four to drain).
//!
//! # Cost
//!
//! O(1) per hit and insertion (plus one ghost key-map lookup on insertion: with dense keys
//! a presence-bit test); eviction is amortized O(1): each reinsertion consumes a frequency
//! increment paid for by a hit. Memory per frame: 8 bytes of links, 1 byte
//! frequency/queue flags, 4 bytes size, 8 bytes key (needed to fill the ghost) = 21
//! bytes, plus the ghost's 16-32 bytes per entry and its key map.
//!
//! Measured (`bufcache bench replay`, Zipf 1.0 over 1M keys, 20M requests, 10% cache,
//! best of three interleaved runs on a shared 2-core machine, FIFO at 87-93 M req/s):
//! 14.9 M req/s before the ghost list became an append-only vector and dense key maps got
//! presence bits, 22.0 M after (32 M in the quietest run). What remains is mostly cache
//! misses per eviction: the victim's links, size and key, and the ghost's key-map slot.

use crate::ghost::GhostList;
use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

const IN_MAIN: u8 = 0x80;
const FREQ: u8 = 0x03;

/// Which S3-FIFO: the paper's, or libCacheSim's `S3FIFO.c` (commit aa0fc409).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum S3FifoVariant {
    /// Algorithm 1 of the paper: G sized relative to M, looked up when the newcomer is
    /// inserted (after the evictions that make room for it).
    Paper,
    /// libCacheSim's: G sized relative to the whole cache, and a newcomer's ghost entry
    /// taken out *before* the evictions that make room for it, so it neither occupies a
    /// ghost slot nor can be pushed out of G by them.
    LibCacheSim,
}

/// The queues of S3-FIFO and of QD-LP ([`crate::Qdlp`], `QUICK_DEMOTION`), which differ
/// only in when S gives up its tail and in how the main queue makes room (see `qdlp.rs`).
/// Queue heads are the newest objects.
#[derive(Clone, Debug)]
pub struct SmallMainGhost<const QUICK_DEMOTION: bool> {
    links: Links,
    small: List,
    main: List,
    /// bit 7: in main; bits 0-1: frequency
    flags: Vec<u8>,
    sizes: Vec<u32>,
    keys: Vec<u64>,
    ghost: GhostList,
    small_used: u64,
    main_used: u64,
    small_cap: u64,
    main_cap: u64,
    ghost_cap: u64,
    threshold: u8,
    variant: S3FifoVariant,
    /// S's share and G's size parameter, to size them again after a resize.
    small_share: f64,
    ghost_share: f64,
    /// libCacheSim variant: the key whose ghost entry `evict` already consumed; it goes to
    /// M when it is inserted.
    ghost_hit: Option<u64>,
}

/// S3-FIFO.
pub type S3Fifo = SmallMainGhost<false>;

impl<const QUICK_DEMOTION: bool> SmallMainGhost<QUICK_DEMOTION> {
    /// S3-FIFO for `capacity` units with S's share `small`, G's size `ghost` (fraction of
    /// M's capacity) and promotion `threshold`.
    pub fn new(capacity: u64, small: f64, ghost: f64, threshold: u8) -> Self {
        Self::with_variant(capacity, small, ghost, threshold, S3FifoVariant::Paper)
    }

    /// As [`S3Fifo::new`], for either variant. In [`S3FifoVariant::LibCacheSim`] `ghost`
    /// is a fraction of the whole capacity, as libCacheSim's `ghost-size-ratio` is.
    pub fn with_variant(
        capacity: u64,
        small: f64,
        ghost: f64,
        threshold: u8,
        variant: S3FifoVariant,
    ) -> Self {
        let frames = crate::prealloc_frames(capacity);
        let small_cap = (capacity as f64 * small) as u64;
        let main_cap = capacity - small_cap;
        let ghost_base = match variant {
            S3FifoVariant::Paper => main_cap,
            S3FifoVariant::LibCacheSim => capacity,
        };
        let ghost_cap = (ghost_base as f64 * ghost) as u64;
        SmallMainGhost {
            links: Links::with_capacity(frames),
            small: List::new(),
            main: List::new(),
            flags: vec![0; frames],
            sizes: vec![0; frames],
            keys: vec![0; frames],
            ghost: GhostList::new(crate::entry_bound(ghost_cap)),
            small_used: 0,
            main_used: 0,
            small_cap,
            main_cap,
            ghost_cap,
            threshold,
            variant,
            small_share: small,
            ghost_share: ghost,
            ghost_hit: None,
        }
    }

    /// Declare dense keys below `keys` (see [`BuildContext::key_space`]): ghost lookups
    /// then index an array instead of hashing.
    pub(crate) fn set_key_space(&mut self, keys: Option<u64>) {
        self.ghost.set_key_space(keys);
    }

    /// Keys in S then M, each from head (newest) to tail, with frequencies (for tests).
    pub fn queues(&self) -> [Vec<(FrameId, u8)>; 2] {
        let dump = |l: &List| {
            self.links
                .iter_from_head(l)
                .map(|f| (f, self.flags[f.index()] & FREQ))
                .collect()
        };
        [dump(&self.small), dump(&self.main)]
    }

    fn remember(&mut self, f: FrameId) {
        let i = f.index();
        self.ghost
            .push_within(self.keys[i], self.sizes[i], self.ghost_cap);
    }

    /// Evict from S: promote frequent objects to M until an evictable cold one is found.
    fn evict_small(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut cur = self.small.tail();
        let mut steps = self.small.len();
        while let Some(f) = cur {
            if steps == 0 {
                break;
            }
            steps -= 1;
            cur = self.links.prev(f);
            let i = f.index();
            if self.flags[i] & FREQ > self.threshold {
                self.links.unlink(&mut self.small, f);
                self.links.push_front(&mut self.main, f);
                self.flags[i] = IN_MAIN;
                let s = u64::from(self.sizes[i]);
                self.small_used -= s;
                self.main_used += s;
            } else if evictable(f) {
                self.links.unlink(&mut self.small, f);
                self.small_used -= u64::from(self.sizes[i]);
                self.remember(f);
                return Some(f);
            }
        }
        None
    }

    /// Evict from M: a clock with a 2-bit counter.
    fn evict_main(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut cur = self.main.tail();
        let mut steps = 5 * self.main.len() + 1;
        while steps > 0 {
            steps -= 1;
            let f = match cur {
                Some(f) => f,
                None => self.main.tail()?,
            };
            cur = self.links.prev(f);
            let i = f.index();
            let freq = self.flags[i] & FREQ;
            if freq > 0 {
                self.flags[i] = IN_MAIN | (freq - 1);
                self.links.move_to_front(&mut self.main, f);
            } else if evictable(f) {
                self.links.unlink(&mut self.main, f);
                self.main_used -= u64::from(self.sizes[i]);
                return Some(f);
            }
        }
        None
    }
}

impl<const QUICK_DEMOTION: bool> SmallMainGhost<QUICK_DEMOTION> {
    /// QD-LP's eviction: S gives up its tail whenever it holds anything, whatever its
    /// share. A tail that was hit moves to M; M, when it has no room for it, first makes
    /// room by its own clock (before the newcomer joins it, as libCacheSim's main cache
    /// evicts before it inserts), and that is the victim. A tail never hit is evicted into
    /// the ghost. M is scanned when S is empty or has nothing evictable, and first when a
    /// ghost hit or a large promotion left it over its share.
    fn evict_quickly(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if self.main_used > self.main_cap {
            if let Some(f) = self.evict_main(evictable) {
                return Some(f);
            }
        }
        let mut cur = self.small.tail();
        let mut steps = self.small.len();
        while let Some(f) = cur {
            if steps == 0 {
                break;
            }
            steps -= 1;
            cur = self.links.prev(f);
            let i = f.index();
            if self.flags[i] & FREQ > self.threshold {
                let s = u64::from(self.sizes[i]);
                let victim = if self.main_used + s > self.main_cap {
                    self.evict_main(evictable)
                } else {
                    None
                };
                self.links.unlink(&mut self.small, f);
                self.links.push_front(&mut self.main, f);
                self.flags[i] = IN_MAIN;
                self.small_used -= s;
                self.main_used += s;
                if victim.is_some() {
                    return victim;
                }
            } else if evictable(f) {
                self.links.unlink(&mut self.small, f);
                self.small_used -= u64::from(self.sizes[i]);
                self.remember(f);
                return Some(f);
            }
        }
        self.evict_main(evictable)
    }
}

impl<const QUICK_DEMOTION: bool> Policy for SmallMainGhost<QUICK_DEMOTION> {
    fn name(&self) -> &'static str {
        if QUICK_DEMOTION {
            "qdlp"
        } else {
            "s3fifo"
        }
    }

    /// A hit raises the object's frequency, which saturates at 3.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Counter { cap: 3 }
    }

    fn len(&self) -> usize {
        self.small.len() + self.main.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let fl = &mut self.flags[frame.index()];
        if *fl & FREQ < 3 {
            *fl += 1;
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.flags, frame, 0);
        ensure_slot(&mut self.sizes, frame, 0);
        ensure_slot(&mut self.keys, frame, 0);
        let i = frame.index();
        self.sizes[i] = access.size;
        self.keys[i] = access.key;
        let pending = self.ghost_hit.take() == Some(access.key);
        if pending || (!self.ghost.is_empty() && self.ghost.remove(access.key)) {
            self.flags[i] = IN_MAIN;
            self.links.push_front(&mut self.main, frame);
            self.main_used += u64::from(access.size);
        } else {
            self.flags[i] = 0;
            self.links.push_front(&mut self.small, frame);
            self.small_used += u64::from(access.size);
        }
    }

    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if self.variant == S3FifoVariant::LibCacheSim
            && self.ghost_hit != Some(incoming.key)
            && !self.ghost.is_empty()
            && self.ghost.remove(incoming.key)
        {
            self.ghost_hit = Some(incoming.key);
        }
        if QUICK_DEMOTION {
            return self.evict_quickly(evictable);
        }
        let small_first = !self.small.is_empty()
            && self.small_used >= self.small_cap
            && self.main_used <= self.main_cap;
        // S's scan may move every object it meets to M and evict none (all were hit):
        // M then gets another turn, as libCacheSim's loop keeps going until one is out.
        if small_first {
            self.evict_small(evictable)
                .or_else(|| self.evict_main(evictable))
        } else {
            self.evict_main(evictable)
                .or_else(|| self.evict_small(evictable))
                .or_else(|| self.evict_main(evictable))
        }
    }

    fn remove(&mut self, frame: FrameId) {
        let i = frame.index();
        let s = u64::from(self.sizes[i]);
        if self.flags[i] & IN_MAIN != 0 {
            self.links.unlink(&mut self.main, frame);
            self.main_used -= s;
        } else {
            self.links.unlink(&mut self.small, frame);
            self.small_used -= s;
        }
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }

    /// S, M and G are sized again from the new capacity as at construction; G keeps its
    /// newest keys. The queues' contents stay: after a shrink S or M may hold more than
    /// its new share until evictions drain it, which is how S3-FIFO treats any overfull
    /// queue.
    fn set_capacity(&mut self, capacity: u64) {
        self.small_cap = (capacity as f64 * self.small_share) as u64;
        self.main_cap = capacity - self.small_cap;
        let ghost_base = match self.variant {
            S3FifoVariant::Paper => self.main_cap,
            S3FifoVariant::LibCacheSim => capacity,
        };
        self.ghost_cap = (ghost_base as f64 * self.ghost_share) as u64;
        self.ghost.bound_by_size(self.ghost_cap);
    }
}

impl NamedPolicy for S3Fifo {
    const NAME: &'static str = "s3fifo";
    const SUMMARY: &'static str =
        "small probation FIFO + main 2-bit clock FIFO + ghost FIFO (Yang et al., SOSP 2023)";
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "small",
            default: "0.1",
            help: "share of the capacity for the small (probation) queue, 0..=1",
        },
        ParamInfo {
            name: "ghost",
            default: "0.9",
            help: "ghost queue size as a fraction of the main queue's capacity, 0..=4",
        },
        ParamInfo {
            name: "threshold",
            default: "1",
            help: "move from small to main when frequency > threshold (0..=2)",
        },
        ParamInfo {
            name: "variant",
            default: "paper",
            help: "paper (the SOSP'23 algorithm) or libcachesim (its S3FIFO.c: ghost is a \
                   fraction of the whole cache, a newcomer's ghost entry is consumed before \
                   making room)",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let small = params.fraction("small", 0.0, 1.0)?;
        let ghost = params.fraction("ghost", 0.0, 4.0)?;
        let threshold = params.integer("threshold", 0, 2)? as u8;
        let variant = match params.choice("variant", &["paper", "libcachesim"], "paper or libcachesim")? {
            "paper" => S3FifoVariant::Paper,
            _ => S3FifoVariant::LibCacheSim,
        };
        let mut s3 = S3Fifo::with_variant(ctx.capacity, small, ghost, threshold, variant);
        s3.set_key_space(ctx.key_space);
        Ok(s3)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::S3Fifo;

    fn s3(cap: u64) -> S3Fifo {
        S3Fifo::new(cap, 0.1, 0.9, 1)
    }

    #[test]
    fn a_lone_object_hit_in_s_can_still_be_evicted() {
        // capacity 20: S's share is 2, so one object in S leaves S under its share and M
        // (empty) is asked first, finds nothing, then S moves its only object (hit twice)
        // to M and evicts none: M must get another turn, or a resident object is
        // unevictable (found by the invariants test).
        use crate::{Access, FrameId, Policy};
        let mut p = s3(20);
        p.on_insert(FrameId(0), &Access::unit(33, 0));
        p.on_hit(FrameId(0), &Access::unit(33, 1));
        p.on_hit(FrameId(0), &Access::unit(33, 2));
        assert_eq!(p.evict(&Access::unit(34, 3), &|_| true), Some(FrameId(0)));
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn hand_worked_sequence() {
        // capacity 10: S gets 1 unit, M 9, G remembers floor(9 * 0.9) = 8 keys.
        // 1..=10 all miss and fill S (S may exceed its share while nothing needs evicting).
        // 1 1 (hits: freq(1) = 2), 2 (hit: freq 1).
        // 11: S (10 units) >= 1 and M (0) <= 9 -> evict from S: tail 1 has freq 2 > 1 ->
        //     moved to M; 2 has freq 1, not > 1 -> evicted, key 2 into G.
        // 12: S tail 3 -> evicted (G: 3 2).
        // 2: in G -> inserted into M (after evicting 4 from S).
        // 2 hits now.
        let trace = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 1, 2, 11, 12, 2, 2];
        let mut expected = vec![false; 10];
        expected.extend([true, true, true, false, false, false, true]);
        assert_eq!(hits(s3(10), 10, &trace), expected);
        let ev = evictions(s3(10), 10, &trace);
        assert_eq!(ev[13], [2]);
        assert_eq!(ev[14], [3]);
        assert_eq!(ev[15], [4]);
        // S now (head..tail): 12 11 10 9 8 7 6 5, M: 2 1.
        // Next victims: S has 8 units >= 1: 5, 6, 7, 8, 9, 10, 11, 12 (all freq 0), then M:
        // tail 1 (freq 0 after promotion) then 2 (freq 1 -> reinserted, then 0) -> 1, 2.
        assert_eq!(
            resident_after(s3(10), 10, &trace),
            [5, 6, 7, 8, 9, 10, 11, 12, 1, 2]
        );
    }

    #[test]
    fn main_is_a_two_bit_clock() {
        // capacity 2 with small=0: S's share is 0, so every eviction looks at S first while
        // it holds anything, and the ghost (2.0 * 2 = 4 entries) sends returning keys to M.
        // 1 2 -> S: 2 1. 3: evict 1 (freq 0) -> G {1}. 1: evict 2 -> G {2 1}; 1 is in G, so
        // it goes into M. 2: evicts 3 from S (G {3 2}); 2 is in G -> M (head..tail): 2 1.
        // 1 hit (freq 1), 1 hit (freq 2). 4: S empty -> M: tail 1 has freq 2 -> freq 1, to
        // head; 2 freq 0 -> evicted. 4 into S.
        let p = S3Fifo::new(2, 0.0, 2.0, 1);
        let trace = [1, 2, 3, 1, 2, 1, 1, 4];
        let ev = evictions(p.clone(), 2, &trace);
        let expected: [&[u64]; 8] = [&[], &[], &[1], &[2], &[3], &[], &[], &[2]];
        assert_eq!(ev, expected);
        assert_eq!(
            hits(p, 2, &trace),
            [false, false, false, false, false, true, true, false]
        );
    }
}
