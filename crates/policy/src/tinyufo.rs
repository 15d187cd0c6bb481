//! TinyUFO: S3-FIFO's two queues with TinyLFU admission in place of the ghost queue.
//!
//! Cloudflare's `tinyufo` crate (part of pingora, `tinyufo/src/lib.rs` and
//! `estimation.rs`), built on Yang et al., "FIFO queues are all you need for cache
//! eviction", SOSP 2023 (S3-FIFO) and Einziger, Friedman, Manes, "TinyLFU: A Highly
//! Efficient Cache Admission Policy", ACM ToS 2017. There is no paper of its own; the
//! crate's source is the description followed here.
//!
//! # Algorithm
//!
//! Two FIFO queues, *small* and *main*, and a count-min sketch that counts *misses* only
//! (pingora calls it on `put`, never on `get`: the sketch then mostly sees the less popular
//! keys, and no window is needed against bursts). Every resident object has a use count
//! (0..=3): a hit raises it, capped at 3.
//!
//! * A newcomer is counted in the sketch and enters small's head with uses 0.
//! * To make room: when small holds at least its limit (`floor(0.1 * capacity) + 1`
//!   units), objects are taken from small's tail: one with *more than one* use moves to
//!   main's head (keeping its uses), the first other one is the victim. When small is
//!   below its limit, or held only objects to promote, main's tail is examined: an object
//!   with uses > 0 loses one and goes back to main's head, the first with 0 is the victim.
//! * *Contest* ([`Policy::contest`]): when exactly one victim makes room, the newcomer's
//!   estimate (taken as it is counted) is compared with the victim's; if the victim's is
//!   strictly greater, the victim stays, re-entering small's head with uses 0 (pingora
//!   puts it back as a fresh bucket), and the newcomer is served without being cached.
//!
//! The sketch: 8-bit saturating counters, `rows` rows of `ceil(e * items)` counters (at
//! least 16), an estimate is the minimum over the rows. After `8 * items` counts every
//! counter is halved (pingora: the count that finds the window counter at its limit resets
//! it and halves first, so a period is `8 * items + 1` counts).
//!
//! # Parameters
//!
//! * `small` (0.1): small's share of the capacity (pingora's `SMALL_QUEUE_PERCENTAGE`);
//!   small's limit is `floor(small * capacity) + 1` units, computed in `f32` as pingora does.
//! * `items` (`auto` = the capacity, at most 2^20): the number of objects the sketch is
//!   sized for (pingora's `estimated_size`). Give it in byte mode, where the capacity is
//!   bytes.
//! * `rows` (`auto` = `max(2, ceil(log2 items))`, pingora's choice for a failure
//!   probability of `1 / items`): sketch rows. Fewer rows are faster and overestimate more.
//! * `contest` (true): false never refuses a newcomer (pingora's `force_put`).
//!
//! # Deviations and choices
//!
//! * The sketch's hashes are fixed (pingora seeds `ahash` at random per process, so its
//!   own runs are not repeatable); results depend on key values (`HASHES_KEYS`).
//! * Pinned frames: in small a pinned frame that is not promoted is passed over in place;
//!   in main one with no uses left goes back to the head like a used one. pingora has no
//!   pins. Main's scan is bounded by `4 * len + 1` steps (three uses to lose, then one
//!   more pass), small's by its length.
//! * When main has nothing to give and small is below its limit (possible only with
//!   variable sizes, pins, or a cache that is not full, as a victim list asks), small
//!   gives its victim anyway, and if that pass only promoted, main is asked again;
//!   pingora would stop evicting (and overfill).
//! * Drivers that must cache what they serve (the pool, the simulator's buffer cache) do
//!   not hold contests: there TinyUFO is pingora's `force_put`. A victim the pool puts
//!   back (`evict` then `on_insert` of the same frame) re-enters small and is counted
//!   again, as a `put` of it would be.
//!
//! # Cost
//!
//! O(1) per hit (a capped counter: [`HitPath::Counter`] with cap 3). A miss counts and
//! estimates in `rows` rows (17 at 100,000 items). Eviction is amortized O(1): each step
//! either evicts, promotes, or spends a use a hit gave. `victims` clones the policy.
//! Memory per frame: 8 (links) + 8 (key, for the victim's estimate) + 4 (size) + 1
//! (uses) + 1 (queue) = 22 bytes, plus the sketch: `rows * e * items` bytes (4.6 MB at
//! 100,000 items).

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::wtinylfu::mix;
use crate::{ensure_slot, Access, FrameId, HitPath, Policy, Verdict};

/// A hit raises an object's uses up to this (pingora's `USES_CAP`: main's scan then finds a
/// victim within four passes at worst).
const USES_CAP: u8 = 3;
/// Sketch periods are this many counts per item (pingora's heuristic).
const WINDOW_PER_ITEM: u64 = 8;
/// `items = auto` never sizes the sketch for more than this many objects.
const AUTO_ITEMS_MAX: u64 = 1 << 20;

/// TinyUFO's count-min sketch: 8-bit saturating counters, halved every `8 * items + 1`
/// counts. Public so that reference models in tests can share it.
#[derive(Clone, Debug)]
pub struct MissSketch {
    /// The objects it was sized for.
    items: u64,
    counters: Vec<u8>,
    width: u64,
    seeds: Vec<u64>,
    window_count: u64,
    window_limit: u64,
}

impl MissSketch {
    /// A sketch for `items` objects with `rows` rows (`None`: pingora's `ceil(log2 items)`,
    /// at least 2) of `ceil(e * items)` counters (at least 16).
    pub fn new(items: u64, rows: Option<u32>) -> Self {
        let items = items.max(1);
        let width = ((std::f64::consts::E * items as f64).ceil() as u64).max(16);
        let rows = rows.unwrap_or_else(|| ((items as f64).log2().ceil() as u32).max(2));
        let seeds = (0..u64::from(rows))
            .map(|r| mix(0x7469_6e79_7566_6f00 ^ r) | 1)
            .collect();
        MissSketch {
            items,
            counters: vec![0; (width * u64::from(rows)) as usize],
            width,
            seeds,
            window_count: 0,
            window_limit: items.saturating_mul(WINDOW_PER_ITEM),
        }
    }

    /// The index of `key`'s counter in row `row`.
    #[inline]
    fn slot(&self, row: usize, key: u64) -> usize {
        // multiply-shift range reduction: as uniform as `%`, without a division
        let col = ((u128::from(mix(key ^ self.seeds[row])) * u128::from(self.width)) >> 64) as u64;
        (row as u64 * self.width + col) as usize
    }

    /// Count one miss of `key` and return its new estimate.
    #[inline]
    pub fn increment(&mut self, key: u64) -> u8 {
        let before = self.window_count;
        self.window_count += 1;
        if before == self.window_limit || before > 2 * self.window_limit {
            self.window_count = 0;
            for c in &mut self.counters {
                *c >>= 1;
            }
        }
        let mut estimate = u8::MAX;
        for row in 0..self.seeds.len() {
            let i = self.slot(row, key);
            let c = &mut self.counters[i];
            *c = c.saturating_add(1);
            estimate = estimate.min(*c);
        }
        estimate
    }

    /// The estimated recent miss count of `key`.
    #[inline]
    pub fn estimate(&self, key: u64) -> u8 {
        (0..self.seeds.len())
            .map(|row| self.counters[self.slot(row, key)])
            .min()
            .unwrap_or(0)
    }
}

/// TinyUFO. Both queues have their newest object at the head.
#[derive(Clone, Debug)]
pub struct TinyUfo {
    links: Links,
    small: List,
    main: List,
    keys: Vec<u64>,
    sizes: Vec<u32>,
    uses: Vec<u8>,
    in_main: Vec<bool>,
    small_units: u64,
    main_units: u64,
    small_share: f32,
    small_limit: u64,
    sketch: MissSketch,
    contest: bool,
    /// `Some(rows)` when the sketch is sized from the capacity (`items=auto`), with the
    /// `rows` given (`None`: auto too): `set_capacity` then resizes it.
    auto_sketch: Option<Option<u32>>,
    /// The key whose miss `contest` counted, so that its `on_insert` does not count it
    /// again.
    counted: Option<u64>,
}

impl TinyUfo {
    /// TinyUFO with pingora's defaults for `capacity` unit-sized objects.
    pub fn new(capacity: u64) -> Self {
        let mut policy = Self::with_params(capacity, 0.1, auto_items(capacity), None, true);
        policy.auto_sketch = Some(None);
        policy
    }

    /// TinyUFO with small's share, the sketch's items and rows, and whether it contests.
    pub fn with_params(
        capacity: u64,
        small_share: f32,
        items: u64,
        rows: Option<u32>,
        contest: bool,
    ) -> Self {
        let frames = crate::prealloc_frames(capacity);
        TinyUfo {
            links: Links::with_capacity(frames),
            small: List::new(),
            main: List::new(),
            keys: vec![0; frames],
            sizes: vec![0; frames],
            uses: vec![0; frames],
            in_main: vec![false; frames],
            small_units: 0,
            main_units: 0,
            small_share,
            small_limit: small_limit(capacity, small_share),
            sketch: MissSketch::new(items, rows),
            contest,
            auto_sketch: None,
            counted: None,
        }
    }

    /// Put `frame` at small's head with no uses: a newcomer, or a victim that won its
    /// contest.
    fn enter_small(&mut self, frame: FrameId) {
        self.uses[frame.index()] = 0;
        self.in_main[frame.index()] = false;
        self.small_units += u64::from(self.sizes[frame.index()]);
        self.links.push_front(&mut self.small, frame);
    }

    /// Take from small's tail: promote objects used more than once, return the first
    /// other evictable one.
    fn evict_from_small(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut cur = self.small.tail();
        for _ in 0..self.small.len() {
            let f = cur?;
            cur = self.links.prev(f);
            let size = u64::from(self.sizes[f.index()]);
            if self.uses[f.index()] > 1 {
                self.links.unlink(&mut self.small, f);
                self.small_units -= size;
                self.in_main[f.index()] = true;
                self.main_units += size;
                self.links.push_front(&mut self.main, f);
            } else if evictable(f) {
                self.links.unlink(&mut self.small, f);
                self.small_units -= size;
                return Some(f);
            }
        }
        None
    }

    /// Take from main's tail: an object with uses left loses one and goes back to the
    /// head; the first evictable one with none is the victim.
    fn evict_from_main(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let bound = 4 * self.main.len() + 1;
        for _ in 0..bound {
            let f = self.main.tail()?;
            let uses = &mut self.uses[f.index()];
            if *uses == 0 && evictable(f) {
                self.links.unlink(&mut self.main, f);
                self.main_units -= u64::from(self.sizes[f.index()]);
                return Some(f);
            }
            *uses = uses.saturating_sub(1);
            self.links.move_to_front(&mut self.main, f);
        }
        None
    }
}

/// `items=auto`: the capacity, at least 1, at most [`AUTO_ITEMS_MAX`].
fn auto_items(capacity: u64) -> u64 {
    capacity.clamp(1, AUTO_ITEMS_MAX)
}

/// Small's limit in units: `floor(share * capacity) + 1`, in `f32` as pingora computes it.
fn small_limit(capacity: u64, share: f32) -> u64 {
    (capacity as f32 * share).floor() as u64 + 1
}

impl Policy for TinyUfo {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.small.len() + self.main.len()
    }

    /// A hit raises a use count capped at 3; only evictions look at it.
    fn hit_path(&self) -> HitPath {
        HitPath::Counter { cap: USES_CAP }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let uses = &mut self.uses[frame.index()];
        *uses = (*uses + 1).min(USES_CAP);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        if self.counted.take() != Some(access.key) {
            self.sketch.increment(access.key);
        }
        ensure_slot(&mut self.keys, frame, 0);
        ensure_slot(&mut self.sizes, frame, 0);
        ensure_slot(&mut self.uses, frame, 0);
        ensure_slot(&mut self.in_main, frame, false);
        self.keys[frame.index()] = access.key;
        self.sizes[frame.index()] = access.size.max(1);
        self.enter_small(frame);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if self.small_units >= self.small_limit {
            if let Some(f) = self.evict_from_small(evictable) {
                return Some(f);
            }
        }
        // Main had nothing evictable: small gives its victim even below its limit, and
        // what that pass promoted is main's to give.
        self.evict_from_main(evictable)
            .or_else(|| self.evict_from_small(evictable))
            .or_else(|| self.evict_from_main(evictable))
    }

    fn remove(&mut self, frame: FrameId) {
        let size = u64::from(self.sizes[frame.index()]);
        if self.in_main[frame.index()] {
            self.links.unlink(&mut self.main, frame);
            self.main_units -= size;
        } else {
            self.links.unlink(&mut self.small, frame);
            self.small_units -= size;
        }
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }

    fn contests(&self) -> bool {
        self.contest
    }

    /// pingora's TinyLFU check: count the newcomer, then keep the victim if its estimate
    /// is strictly greater.
    fn contest(&mut self, incoming: &Access, victim: FrameId) -> Verdict {
        let newcomer = self.sketch.increment(incoming.key);
        if self.sketch.estimate(self.keys[victim.index()]) > newcomer {
            self.counted = None;
            self.enter_small(victim);
            Verdict::KeepVictim
        } else {
            self.counted = Some(incoming.key);
            Verdict::AdmitNewcomer
        }
    }

    /// Small's limit follows the capacity, and so does the sketch when its size is
    /// `auto` (given `items` keep it). A count-min sketch cannot be resized with its
    /// counts: a key's column is its hash scaled to the row's width and the number of
    /// rows grows with the items, so no counter of the old sketch maps to one of the
    /// new. The sketch is rebuilt empty, as construction builds it: the misses counted
    /// before the resize are forgotten, as at a reset, and until newcomers are counted
    /// again the contest lets almost every newcomer in (its estimate is at least one).
    fn set_capacity(&mut self, capacity: u64) {
        self.small_limit = small_limit(capacity, self.small_share);
        if let Some(rows) = self.auto_sketch {
            let items = auto_items(capacity);
            if items != self.sketch.items {
                self.sketch = MissSketch::new(items, rows);
            }
        }
    }
}

impl NamedPolicy for TinyUfo {
    const NAME: &'static str = "tinyufo";
    const SUMMARY: &'static str =
        "S3-FIFO's queues with TinyLFU admission against the victim (Cloudflare pingora's tinyufo)";
    const HASHES_KEYS: bool = true;
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "small",
            default: "0.1",
            help: "small queue's share of the capacity (limit floor(small*capacity)+1), 0..=1",
        },
        ParamInfo {
            name: "items",
            default: "auto",
            help: "objects the sketch is sized for (auto: the capacity, at most 2^20)",
        },
        ParamInfo {
            name: "rows",
            default: "auto",
            help: "sketch rows, 1..=64 (auto: max(2, ceil(log2 items)) as pingora)",
        },
        ParamInfo {
            name: "contest",
            default: "true",
            help: "refuse a newcomer whose estimate is below its victim's (false: force_put)",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let small = params.fraction("small", 0.0, 1.0)? as f32;
        let given_items = params.integer_or_auto("items", 1, 1 << 32)?;
        let items = given_items.unwrap_or_else(|| auto_items(ctx.capacity));
        let rows = params
            .integer_or_auto("rows", 1, 64)?
            .map(|r| r as u32);
        let contest = params.boolean("contest")?;
        let mut policy = TinyUfo::with_params(ctx.capacity, small, items, rows, contest);
        if given_items.is_none() {
            policy.auto_sketch = Some(rows);
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::{MissSketch, TinyUfo};
    use crate::testkit::{evictions, hits, resident_after};

    #[test]
    fn sketch_counts_and_halves_after_its_window() {
        // items 2: window 16, so the 17th count halves first
        let mut s = MissSketch::new(2, None);
        for i in 1..=16 {
            assert_eq!(s.increment(7), i);
        }
        assert_eq!(s.estimate(7), 16);
        assert_eq!(s.increment(7), 9, "16 halves to 8, then counts");
        assert_eq!(s.estimate(8), 0);
    }

    #[test]
    fn a_resize_rebuilds_an_auto_sketch_and_keeps_a_given_one() {
        use crate::Policy;
        let shape = |p: &TinyUfo| (p.small_limit, p.sketch.items, p.sketch.width, p.sketch.seeds.len());
        // 64 items: width ceil(64e) = 174, ceil(log2 64) = 6 rows; small's limit 7.
        let mut p = TinyUfo::new(32);
        assert_eq!(shape(&p), (4, 32, 87, 5));
        p.sketch.increment(5);
        p.set_capacity(64);
        assert_eq!(shape(&p), (7, 64, 174, 6));
        assert_eq!(p.sketch.estimate(5), 0, "rebuilt empty");
        // items given: only small's limit moves, the counts stay
        let mut p = TinyUfo::with_params(32, 0.1, 32, None, true);
        p.sketch.increment(5);
        p.set_capacity(64);
        assert_eq!((shape(&p), p.sketch.estimate(5)), ((7, 32, 87, 5), 1));
    }

    #[test]
    fn hand_worked_without_contest() {
        // capacity 10: small's limit floor(1.0)+1 = 2. Queues written head..tail.
        // contest off, so this is the queue logic alone.
        // 1..=10 fill small: [10 9 .. 1]. 1 is hit twice (uses 2), 2 once (uses 1).
        // 11: small (10 units) >= 2: tail 1 has uses 2 > 1 -> main [1]; tail 2 has uses 1
        //     -> evicted. small [11 10 .. 3]
        // 12: tail 3 (uses 0) -> evicted.
        // 1 (hit): uses 3.
        let trace = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 1, 2, 11, 12, 1];
        let policy = || TinyUfo::with_params(10, 0.1, 10, None, false);
        let ev = evictions(policy(), 10, &trace);
        let mut expected: Vec<Vec<u64>> = vec![vec![]; trace.len()];
        expected[13] = vec![2];
        expected[14] = vec![3];
        assert_eq!(ev, expected);
        assert_eq!(
            hits(policy(), 10, &trace),
            trace
                .iter()
                .enumerate()
                .map(|(i, _)| [10, 11, 12, 15].contains(&i))
                .collect::<Vec<_>>()
        );
        // Next victims: small [12 11 10 .. 4] from its tail (small stays over its limit
        // while it has 2 or more units): 4 5 6 7 8 9 10 11 12 -- then small is below 2
        // with one object... small holds 12 alone (1 < 2): main's 1 has uses 3, loses
        // them in three turns and goes; then 12.
        assert_eq!(
            resident_after(policy(), 10, &trace),
            [4, 5, 6, 7, 8, 9, 10, 11, 1, 12]
        );
    }

    #[test]
    fn hand_worked_contest_keeps_the_more_missed_victim() {
        // capacity 2 (small's limit floor(0.2)+1 = 1), items 100 (no halving here).
        // 1 2 fill small [2 1]; 1's sketch count is 1, 2's is 1.
        // 3: victim 1 (small's tail, uses 0); 3's count becomes 1, 1's is 1: not
        //    greater, 3 admitted. small [3 2]
        // 1: victim 2; 1's count 2 vs 2's 1: admitted. small [1 3]
        // 2: victim 3; 2's count 2 vs 3's 1: admitted. small [2 1]
        // 4: victim 1 (count 2) vs 4's count 1: 1 stays, back at small's head [1 2];
        //    4 is not cached.
        // 4 again: count 2; victim 2 (count 2): not greater, 4 admitted [4 1].
        let trace = [1, 2, 3, 1, 2, 4, 4, 1];
        let policy = || TinyUfo::with_params(2, 0.1, 100, None, true);
        assert_eq!(
            hits(policy(), 2, &trace),
            [false, false, false, false, false, false, false, true]
        );
        let ev = evictions(policy(), 2, &trace);
        let expected: [&[u64]; 8] = [&[], &[], &[1], &[2], &[3], &[], &[2], &[]];
        assert_eq!(ev, expected);
    }
}
