//! Clock2Q+: a small FIFO with a *correlation window*, a main Clock and a ghost FIFO.
//!
//! Zhai, Marthen, Balivada, Bojji, Knauft, Rohilla, Zuo, Liu, Austruy, Wang, Yang,
//! "Clock2Q+: A Simple and Efficient Replacement Algorithm for Metadata Cache in VMware
//! vSAN", VLDB 2026 (industrial track), arXiv 2511.21958.
//!
//! # Why
//!
//! A metadata cache sees *correlated* references: reading one B-tree leaf touches the same
//! metadata block several times in a burst, even when the data requests behind it never
//! repeat. LRU, 2Q, Clock and S3-FIFO take such a burst for reuse and keep the block as
//! hot. Clock2Q+ is S3-FIFO's three queues with one change: hits that come soon after a
//! block entered the small queue (inside the correlation window) do not count.
//!
//! # Algorithm
//!
//! A missed block enters the small FIFO S, stamped with the number of blocks admitted to S
//! so far, unless its key is in the ghost G (then it enters the main Clock M). A hit on a
//! block of S counts only when at least `window` blocks have entered S since it did; a hit
//! on a block of M always counts. To make room:
//!
//! * from M, when M holds more than its share or S is empty: M's tail, if it was hit since
//!   the hand last passed, goes back to M's head with its count cleared (a Clock with one
//!   reference bit); otherwise it is evicted (no ghost).
//! * from S otherwise: S's tail moves to M's head when it had at least `threshold` counted
//!   hits, and the scan goes on; the first tail without them is evicted and its key
//!   remembered in G. If S empties without evicting, M gives up a block.
//!
//! Until the first eviction, a block that finds S full enters M directly, so that a cold
//! cache fills M as well.
//!
//! # Source of the rules
//!
//! The paper's abstract fixes the structure (three queues, a correlation window in S in
//! which references do not set the reference bit). The exact rules and defaults above are
//! those of libCacheSim's `Clock2QPlus.c`, contributed with the paper (its last author
//! maintains libCacheSim); the `libcachesim` 0.3.5 Python package ships the same code, and
//! `crates/sim/tests/golden_libcachesim_clock2qplus.rs` pins bufcache's miss counts to its
//! own. The window counts admissions to S, not requests or time: a burst of hits within
//! the next `window` admissions is the correlation the paper filters.
//!
//! # Parameters
//!
//! * `small` (0.1): S's share of the capacity, truncated to whole units; M gets the rest.
//! * `ghost` (0.9): G's size as a fraction of the whole capacity, in the policy's units.
//! * `threshold` (1): counted hits in S that move a block to M when it leaves S, 1..=3.
//! * `window` (0.5): the correlation window as a fraction of S's share: a hit on a block
//!   of S counts when at least `window * |S|` blocks (rounded up) entered S after it. The
//!   default is libCacheSim's; `window=0` makes Clock2Q+ an S3-FIFO with a one-bit main
//!   Clock.
//!
//! # Deviations and choices
//!
//! * One eviction per call, as every bufcache policy: a move from S to M never evicts by
//!   itself; M over its share is drained by the next calls (libCacheSim does the same).
//! * libCacheSim does not admit a block at least as large as S's share; bufcache's drivers
//!   admit anything that fits, so such a block enters M (byte mode, or caches under 20
//!   objects in unit mode).
//! * Pinned frames: a pinned tail of S with enough counted hits still moves to M (not an
//!   eviction); one without stays and the scan goes on towards the head. In M a pinned
//!   frame without a hit stays in place. Scans are bounded by the queue's length (S) and
//!   twice it (M).
//! * Hit path: hits only raise a counter saturating at 3 (`HitPath::Counter`). Whether a
//!   hit in S counts depends on the admissions so far, which change only on a miss, so a
//!   driver that feeds counted hits before the next miss gets exactly what reporting each
//!   one gives. The buffer pool feeds them before it *evicts*: while it is still filling,
//!   a hit counted then is judged against the window when the first eviction feeds it.
//!
//! # Cost
//!
//! O(1) per hit (a subtraction and a compare in S) and per insertion (plus one ghost
//! lookup), amortized O(1) per eviction: a block moves to M at most once per stay and M's
//! hand clears one bit per pass. Memory per frame: 8 bytes of links and 24 bytes of
//! metadata (key, admission stamp, size, count, queue), plus the ghost's 16-32 bytes per
//! entry and its key map.

use crate::ghost::GhostList;
use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Counted hits saturate here; `threshold` is at most this.
const COUNT_MAX: u8 = 3;

/// What Clock2Q+ keeps per frame, in one record so that a hit or an eviction touches one
/// cache line.
#[derive(Clone, Copy, Debug, Default)]
struct Block {
    key: u64,
    /// Admissions to S when this block entered it (meaningless in M).
    admitted: u64,
    size: u32,
    /// Counted hits: in S those outside the window; in M since the hand last passed.
    count: u8,
    in_main: bool,
}

/// Clock2Q+ (see the [module documentation](self)).
#[derive(Clone, Debug)]
pub struct Clock2QPlus {
    links: Links,
    /// Heads are the newest blocks.
    small: List,
    main: List,
    blocks: Vec<Block>,
    ghost: GhostList,
    small_used: u64,
    main_used: u64,
    small_cap: u64,
    main_cap: u64,
    ghost_cap: u64,
    threshold: u8,
    /// Admissions to S so far: the clock of the correlation window.
    admissions: u64,
    /// A hit in S counts when at least this many admissions followed the block's own.
    window: u64,
    /// Whether anything was evicted yet: before, a full S sends newcomers to M.
    evicted_any: bool,
    /// The key whose ghost entry `evict` consumed; it enters M when inserted.
    ghost_hit: Option<u64>,
    small_share: f64,
    ghost_share: f64,
    window_share: f64,
}

impl Clock2QPlus {
    /// Clock2Q+ for `capacity` units: S's share `small`, G's size `ghost` (a fraction of
    /// the whole capacity), `threshold` counted hits to move from S to M, and the
    /// correlation window as a fraction `window` of S's share.
    pub fn new(capacity: u64, small: f64, ghost: f64, threshold: u8, window: f64) -> Self {
        assert!(
            (1..=COUNT_MAX).contains(&threshold),
            "threshold must be 1..=3"
        );
        let frames = crate::prealloc_frames(capacity);
        let mut policy = Clock2QPlus {
            links: Links::with_capacity(frames),
            small: List::new(),
            main: List::new(),
            blocks: vec![Block::default(); frames],
            ghost: GhostList::new(0),
            small_used: 0,
            main_used: 0,
            small_cap: 0,
            main_cap: 0,
            ghost_cap: 0,
            threshold,
            admissions: 0,
            window: 0,
            evicted_any: false,
            ghost_hit: None,
            small_share: small,
            ghost_share: ghost,
            window_share: window,
        };
        policy.size_queues(capacity);
        policy.ghost = GhostList::new(crate::entry_bound(policy.ghost_cap));
        policy
    }

    /// Shares of S, M, G and the window from `capacity`, truncated as libCacheSim does.
    fn size_queues(&mut self, capacity: u64) {
        self.small_cap = (capacity as f64 * self.small_share) as u64;
        self.main_cap = capacity - self.small_cap;
        self.ghost_cap = (capacity as f64 * self.ghost_share) as u64;
        self.window = (self.small_cap as f64 * self.window_share).ceil() as u64;
    }

    /// Declare dense keys below `keys` (see [`BuildContext::key_space`]).
    pub(crate) fn set_key_space(&mut self, keys: Option<u64>) {
        self.ghost.set_key_space(keys);
    }

    /// S then M, each from head (newest) to tail, with counted hits (for tests).
    pub fn queues(&self) -> [Vec<(FrameId, u8)>; 2] {
        let dump = |l: &List| {
            self.links
                .iter_from_head(l)
                .map(|f| (f, self.blocks[f.index()].count))
                .collect()
        };
        [dump(&self.small), dump(&self.main)]
    }

    /// Put `f` at M's head with no counted hit.
    fn enter_main(&mut self, f: FrameId) {
        let b = &mut self.blocks[f.index()];
        b.in_main = true;
        b.count = 0;
        self.main_used += u64::from(b.size);
        self.links.push_front(&mut self.main, f);
    }

    /// Remember an evicted block of S in G, dropping G's oldest keys beyond its size.
    fn remember(&mut self, f: FrameId) {
        let b = self.blocks[f.index()];
        self.ghost.push_within(b.key, b.size, self.ghost_cap);
    }

    /// S's tails with enough counted hits move to M; the first evictable one without is
    /// the victim.
    fn evict_small(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut next = self.small.tail();
        for _ in 0..self.small.len() {
            let f = next?;
            next = self.links.prev(f);
            let b = self.blocks[f.index()];
            if b.count >= self.threshold {
                self.links.unlink(&mut self.small, f);
                self.small_used -= u64::from(b.size);
                self.enter_main(f);
            } else if evictable(f) {
                self.links.unlink(&mut self.small, f);
                self.small_used -= u64::from(b.size);
                self.remember(f);
                return Some(f);
            }
        }
        None
    }

    /// M's Clock: a tail hit since the last pass goes back to the head with its bit
    /// cleared; the first evictable tail without a hit is the victim.
    fn evict_main(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        for _ in 0..=2 * self.main.len() {
            let f = self.main.tail()?;
            let b = &mut self.blocks[f.index()];
            if b.count > 0 || !evictable(f) {
                b.count = 0;
                self.links.move_to_front(&mut self.main, f);
            } else {
                self.links.unlink(&mut self.main, f);
                self.main_used -= u64::from(b.size);
                return Some(f);
            }
        }
        None
    }
}

impl Policy for Clock2QPlus {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.small.len() + self.main.len()
    }

    /// A hit raises a counter saturating at 3; the window is judged by admissions, which
    /// only a miss changes.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Counter { cap: COUNT_MAX }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let b = &mut self.blocks[frame.index()];
        let counts = b.in_main || self.admissions - b.admitted >= self.window;
        if counts && b.count < COUNT_MAX {
            b.count += 1;
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.blocks, frame, Block::default());
        self.blocks[frame.index()] = Block {
            key: access.key,
            admitted: 0,
            size: access.size,
            count: 0,
            in_main: false,
        };
        let from_ghost = self.ghost_hit.take() == Some(access.key)
            || (!self.ghost.is_empty() && self.ghost.remove(access.key));
        let size = u64::from(access.size);
        let filling_past_small = !self.evicted_any && self.small_used >= self.small_cap;
        if from_ghost || filling_past_small || size >= self.small_cap {
            self.enter_main(frame);
        } else {
            self.admissions += 1;
            self.blocks[frame.index()].admitted = self.admissions;
            self.small_used += size;
            self.links.push_front(&mut self.small, frame);
        }
    }

    #[inline]
    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        // libCacheSim looks the newcomer up in G before making room for it, so the
        // evictions below can neither push it out of G nor count it against G's size.
        if self.ghost_hit != Some(incoming.key)
            && !self.ghost.is_empty()
            && self.ghost.remove(incoming.key)
        {
            self.ghost_hit = Some(incoming.key);
        }
        self.evicted_any = true;
        if self.main_used > self.main_cap || self.small.is_empty() {
            self.evict_main(evictable)
                .or_else(|| self.evict_small(evictable))
                .or_else(|| self.evict_main(evictable))
        } else {
            self.evict_small(evictable)
                .or_else(|| self.evict_main(evictable))
        }
    }

    fn remove(&mut self, frame: FrameId) {
        let b = self.blocks[frame.index()];
        if b.in_main {
            self.links.unlink(&mut self.main, frame);
            self.main_used -= u64::from(b.size);
        } else {
            self.links.unlink(&mut self.small, frame);
            self.small_used -= u64::from(b.size);
        }
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }

    /// S, M, G and the window are sized again from the new capacity; G keeps its newest
    /// keys, and an overfull S or M drains through later evictions.
    fn set_capacity(&mut self, capacity: u64) {
        self.size_queues(capacity);
        self.ghost.bound_by_size(self.ghost_cap);
    }
}

impl NamedPolicy for Clock2QPlus {
    const NAME: &'static str = "clock2qplus";
    const SUMMARY: &'static str =
        "S3-FIFO's queues with a correlation window in the small FIFO and a one-bit main Clock (Zhai et al., VLDB 2026)";
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "small",
            default: "0.1",
            help: "share of the capacity for the small FIFO, 0..=1",
        },
        ParamInfo {
            name: "ghost",
            default: "0.9",
            help: "ghost FIFO size as a fraction of the whole capacity, 0..=4",
        },
        ParamInfo {
            name: "threshold",
            default: "1",
            help: "counted hits in the small FIFO that move a block to the main Clock, 1..=3",
        },
        ParamInfo {
            name: "window",
            default: "0.5",
            help: "correlation window as a fraction of the small FIFO's share, 0..=1: hits \
                   within that many admissions of a block's own do not count",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let small = params.fraction("small", 0.0, 1.0)?;
        let ghost = params.fraction("ghost", 0.0, 4.0)?;
        let threshold = params.integer("threshold", 1, u64::from(COUNT_MAX))? as u8;
        let window = params.fraction("window", 0.0, 1.0)?;
        let mut policy = Clock2QPlus::new(ctx.capacity, small, ghost, threshold, window);
        policy.set_key_space(ctx.key_space);
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::Clock2QPlus;
    use crate::testkit::{evictions, hits};
    use crate::{Access, Cache, FrameId, Policy};

    fn defaults(capacity: u64) -> Clock2QPlus {
        Clock2QPlus::new(capacity, 0.1, 0.9, 1, 0.5)
    }

    #[test]
    fn shares_truncate_and_the_window_rounds_up() {
        // 25 units: S = floor(2.5) = 2, M = 23, G = floor(22.5) = 22, window ceil(1.0) = 1.
        let p = defaults(25);
        assert_eq!((p.small_cap, p.main_cap, p.ghost_cap, p.window), (2, 23, 22, 1));
        // 50 units: S = 5, window ceil(2.5) = 3.
        assert_eq!(defaults(50).window, 3);
    }

    /// Keys of S from head (newest) to tail after replaying `trace`.
    fn small_after(policy: Clock2QPlus, capacity: u64, trace: &[u64]) -> Vec<u64> {
        let mut cache = Cache::new(policy, capacity);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        let [small, _] = cache.policy().queues();
        small.iter().map(|&(f, _)| cache.key_of(f)).collect()
    }

    /// 1 2 3 4, a hit on 4 at once and one on 1 three admissions later, then 5..=44.
    fn burst_trace() -> Vec<u64> {
        [1, 2, 3, 4, 4, 1].into_iter().chain(5..=44).collect()
    }

    #[test]
    fn a_hit_inside_the_window_does_not_count() {
        // capacity 40: S = 4 units, window = 2 admissions, M = 36, G = 36.
        // 1 2 3 4 fill S (admissions 1..=4). 4 is hit at once (0 admissions since its
        // own): not counted. 1 is hit 3 admissions after its own: counted.
        // 5..=40 find S full before any eviction and enter M directly: M holds 36.
        // 41: M is not over its share and S is not empty -> S: tail 1 has a counted hit
        //     -> M (37 units); tail 2 has none -> evicted into G. 41 enters S.
        // 42: M over its share -> M's tail 5 (never hit) is evicted. S: 42 41 4 3.
        // 43: S's tail 3 -> evicted. 44: S's tail 4, whose hit did not count -> evicted.
        let trace = burst_trace();
        let ev = evictions(defaults(40), 40, &trace);
        assert!(ev[..40].iter().all(Vec::is_empty));
        assert_eq!(ev[40..].concat(), [2, 5, 3, 4]);
        let h = hits(defaults(40), 40, &trace);
        assert_eq!(h.iter().filter(|&&x| x).count(), 2);
        assert_eq!(small_after(defaults(40), 40, &trace), [44, 43, 42, 41]);
    }

    #[test]
    fn window_zero_counts_every_hit_in_small() {
        // The same trace with window 0: 4's immediate hit counts, so at 44 it moves to M
        // and the next tail of S, 41, is evicted instead.
        let trace = burst_trace();
        let eager = Clock2QPlus::new(40, 0.1, 0.9, 1, 0.0);
        let ev = evictions(eager.clone(), 40, &trace);
        assert_eq!(ev[40..].concat(), [2, 5, 3, 41]);
        assert_eq!(small_after(eager, 40, &trace), [44, 43, 42]);
    }

    #[test]
    fn ghost_returns_enter_main_and_main_is_a_one_bit_clock() {
        // capacity 20: S = 2, window 1, M = 18, G = 18.
        let mut p = defaults(20);
        let a = |k| Access::unit(k, 0);
        for k in 0..20u32 {
            p.on_insert(FrameId(k), &a(u64::from(k)));
        }
        // 0 1 in S, 2..=19 in M (S was full before any eviction).
        assert_eq!(p.small.len(), 2);
        // Evict: M at its share, S not empty -> S's tail 0 (no hit) -> G.
        assert_eq!(p.evict(&a(100), &|_| true), Some(FrameId(0)));
        assert!(p.ghost.contains(0));
        // 0 comes back: its ghost entry sends it to M.
        assert_eq!(p.evict(&a(0), &|_| true), Some(FrameId(1)));
        p.on_insert(FrameId(0), &a(0));
        assert!(p.blocks[0].in_main);
        // M: hit 2 twice (the count saturates at 3; one pass of the hand clears it).
        p.on_hit(FrameId(2), &a(2));
        p.on_hit(FrameId(2), &a(2));
        assert_eq!(p.blocks[2].count, 2);
        // S is empty and M over its share: M's tail 2 was hit -> head with its count
        // cleared; 3 is the victim.
        assert_eq!(p.evict(&a(101), &|_| true), Some(FrameId(3)));
        assert_eq!(p.blocks[2].count, 0);
    }
}
