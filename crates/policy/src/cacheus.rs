//! Cacheus: two churn- and scan-resistant experts, SR-LRU and CR-LFU, chosen at random by
//! regret-learned weights with an adaptive learning rate.
//!
//! Rodriguez, Yusuf, Lyons, Paz, Rangaswami, Liu, Zhao & Narasimhan, "Learning Cache
//! Replacement with CACHEUS", FAST 2021.
//!
//! # Algorithm
//!
//! LeCaR's scheme (`lecar.rs`) with better experts and no hand-set learning rate:
//!
//! * **SR-LRU** (scan-resistant LRU) splits the cache into `SR`, where newcomers enter,
//!   and `R`, for blocks hit at least once (or returning from its history `H`). A hit in
//!   `SR` moves the block to `R`; `R`'s overflow is demoted to `SR`'s most recent end, and
//!   `SR`'s overflow leaves the cache into `H`. A scan therefore only churns `SR`. Its
//!   victim is `SR`'s least recent block (`R`'s when `SR` is empty).
//! * **CR-LFU** (churn-resistant LFU) evicts, among the least frequently used blocks, the
//!   *most* recently used one, so that a churning set of equally cold blocks keeps most of
//!   its members instead of cycling through all of them. A block returning from `H` gets
//!   its old count plus one.
//! * To evict, a random number below `w_lru` picks SR-LRU's victim, otherwise CR-LFU's;
//!   when they differ, the victim's key enters the chosen expert's history (half the
//!   capacity each). A miss on a key in an expert's history multiplies that expert's weight
//!   by `exp(-lr)` and renormalizes.
//! * The learning rate `lr` starts at random in `[0.001, 1)`; every `capacity` requests it
//!   moves by `lr * delta_lr` in the direction in which the last change of `lr` moved the
//!   hit rate (gradient ascent on the hit rate), not below 0.001 (else reset to 0.0001),
//!   and restarts at random after 10 intervals without improvement.
//!
//! # What this implements, and libCacheSim
//!
//! This follows libCacheSim's `Cacheus.c`, `SR_LRU.c` and `CR_LFU.c` (commit aa0fc409)
//! as they run. Their SR-LRU code also adapts the split between `SR` and `R` (the paper's
//! `C_new`/`C_demoted` rule), but the flags that rule reads live on objects that are
//! created afresh on every move between lists, so it never fires: `SR` and `R` stay at
//! half the capacity each (`capacity / 2`, truncated). That is what runs here too; the
//! paper's adaptive split is not implemented (issue 19 keeps it open).
//!
//! libCacheSim's SR-LRU drops `SR`'s overflow from the cache during an insertion, so its
//! cache is often not full, and a newcomer then needs no eviction. A [`Policy`] cannot
//! drop a block on its own (the driver owns the key map), so such a block leaves the
//! policy's books at once and is handed to the driver at its next `evict` (before any
//! eviction of its own, which changes nothing the policy remembers). If the driver sees
//! it requested again before then, it reports a hit where libCacheSim misses; the policy
//! then runs libCacheSim's miss path for it, so its state stays libCacheSim's, and counts
//! the event ([`Cacheus::deferred_hits`]): bufcache's misses plus that count equal
//! libCacheSim's (`crates/sim/tests/golden_libcachesim_adaptive.rs`).
//!
//! # Parameters
//!
//! * `seed` (0): the generator's seed; 0 derives it from the run's root seed.
//! * `variant` (`paper`): `libcachesim` draws as libCacheSim does (its MMIX generator:
//!   the initial learning rate from the first draw of one fresh stream, 0.408, as
//!   `cachesim` draws it for the first cache of its size list in its main thread; one draw
//!   per eviction, even when the experts agree, from another fresh stream, as in the
//!   thread that simulates that cache), and computes the interval's hit rate as libCacheSim does, in
//!   integer division (`hits / capacity`, so 0 unless every request hit), which makes its
//!   learning rate only ever shrink. `paper` uses the seeded generator and the real hit
//!   rate.
//!
//! # Cost
//!
//! O(log n) per request (CR-LFU's order is an indexed heap), a history lookup per miss;
//! `victims` runs `evict` on a copy. Memory per frame: 8 (links) + 1 (list) + 8 (key) +
//! 4 (size) + 4 (count) + 20 (heap) = 45 bytes, plus `H` (up to the capacity) and the two
//! expert histories (half the capacity each) as ghost lists, and `H`'s counts in a map.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bufcache_core::FixedHashMap;

use crate::draws::Draws;
use crate::ghost::GhostList;
use crate::heap::IndexedHeap;
use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Mixed into the root seed so that this policy's stream differs from other components'.
const STREAM: u64 = 0x6361_6368_6575_7331;

/// Where a frame is in SR-LRU.
const NOWHERE: u8 = 0;
const IN_SR: u8 = 1;
const IN_R: u8 = 2;
/// Dropped by libCacheSim, still held by the driver.
const IN_DOOMED: u8 = 3;

/// CR-LFU's order: least count first, then the latest to reach that count first.
type LfuKey = (u32, Reverse<u64>);

/// Cacheus.
#[derive(Clone, Debug)]
pub struct Cacheus {
    // SR-LRU: head = most recent
    links: Links,
    sr: List,
    r: List,
    list_of: Vec<u8>,
    sr_units: u64,
    r_units: u64,
    /// `SR`'s and `R`'s share: half the capacity.
    half: u64,
    /// SR-LRU's history `H` (sizes) and the CR-LFU counts its keys left with.
    history: GhostList,
    history_counts: FixedHashMap<u32>,
    // CR-LFU
    lfu: IndexedHeap<LfuKey>,
    counts: Vec<u32>,
    /// Orders arrivals in CR-LFU's count classes.
    arrivals: u64,
    scratch: BinaryHeap<Reverse<(LfuKey, u32)>>,
    // the learner
    keys: Vec<u64>,
    sizes: Vec<u32>,
    regret_lru: GhostList,
    regret_lfu: GhostList,
    w_lru: f64,
    w_lfu: f64,
    lr: f64,
    lr_previous: f64,
    hit_rate_previous: f64,
    unlearn_count: u32,
    hits_in_interval: u64,
    integer_hit_rate: bool,
    draws: Draws,
    capacity: u64,
    /// Requests seen.
    now: u64,
    /// The key whose history checks `evict` already ran for the current miss.
    consumed: Option<u64>,
    /// Blocks libCacheSim has dropped that the driver still holds (on `links`, oldest at
    /// the tail).
    doomed: List,
    deferred_hits: u64,
}

impl Cacheus {
    /// Cacheus for `capacity` units; `libcachesim` selects libCacheSim's generator and hit
    /// rate (see the module documentation), otherwise draws come from `seed`.
    pub fn new(capacity: u64, libcachesim: bool, seed: u64) -> Self {
        let frames = crate::prealloc_frames(capacity);
        let half = capacity / 2;
        let mut draws = if libcachesim {
            Draws::libcachesim()
        } else {
            Draws::seeded(seed)
        };
        // libCacheSim draws the first learning rate when it builds the cache, in the main
        // thread, and the evictions in the simulating thread: two fresh streams (for the
        // first size of a `cachesim` size list; later sizes get later main-thread draws)
        let lr = if libcachesim {
            0.001 + (Draws::libcachesim().next() % 1000) as f64 / 1000.0
        } else {
            0.001 + (draws.next() % 1000) as f64 / 1000.0
        };
        Cacheus {
            links: Links::with_capacity(frames),
            sr: List::new(),
            r: List::new(),
            list_of: vec![NOWHERE; frames],
            sr_units: 0,
            r_units: 0,
            half,
            history: GhostList::new(crate::entry_bound(capacity)),
            history_counts: FixedHashMap::default(),
            lfu: IndexedHeap::with_capacity(frames),
            counts: vec![0; frames],
            arrivals: 0,
            scratch: BinaryHeap::new(),
            keys: vec![0; frames],
            sizes: vec![0; frames],
            regret_lru: GhostList::new(crate::entry_bound(half)),
            regret_lfu: GhostList::new(crate::entry_bound(half)),
            w_lru: 0.5,
            w_lfu: 0.5,
            lr,
            lr_previous: 0.0,
            hit_rate_previous: 0.0,
            unlearn_count: 0,
            hits_in_interval: 0,
            integer_hit_rate: libcachesim,
            draws,
            capacity,
            now: 0,
            consumed: None,
            doomed: List::new(),
            deferred_hits: 0,
        }
    }

    /// Requests the driver counted as hits on blocks libCacheSim had already dropped (see
    /// the module documentation): bufcache's misses plus this equal libCacheSim's.
    pub fn deferred_hits(&self) -> u64 {
        self.deferred_hits
    }

    /// The weight of the SR-LRU expert.
    pub fn lru_weight(&self) -> f64 {
        self.w_lru
    }

    /// The current learning rate.
    pub fn learning_rate(&self) -> f64 {
        self.lr
    }

    /// `SR` and `R` from most to least recent (for tests).
    pub fn lists(&self) -> (Vec<u64>, Vec<u64>) {
        let keys = |l: &List| self.links.iter_from_head(l).map(|f| self.keys[f.index()]);
        (keys(&self.sr).collect(), keys(&self.r).collect())
    }

    fn push(&mut self, to: u8, frame: FrameId) {
        let size = u64::from(self.sizes[frame.index()]);
        self.list_of[frame.index()] = to;
        if to == IN_SR {
            self.links.push_front(&mut self.sr, frame);
            self.sr_units += size;
        } else {
            self.links.push_front(&mut self.r, frame);
            self.r_units += size;
        }
    }

    fn unlink(&mut self, frame: FrameId) {
        let size = u64::from(self.sizes[frame.index()]);
        match self.list_of[frame.index()] {
            IN_SR => {
                self.links.unlink(&mut self.sr, frame);
                self.sr_units -= size;
            }
            IN_R => {
                self.links.unlink(&mut self.r, frame);
                self.r_units -= size;
            }
            _ => {}
        }
        self.list_of[frame.index()] = NOWHERE;
    }

    /// `frame` left libCacheSim's cache but not the driver's.
    fn doom(&mut self, frame: FrameId) {
        self.list_of[frame.index()] = IN_DOOMED;
        self.links.push_front(&mut self.doomed, frame);
    }

    /// `frame` leaves the doomed list (handed to the driver, requested again, removed).
    fn undoom(&mut self, frame: FrameId) {
        self.links.unlink(&mut self.doomed, frame);
        self.list_of[frame.index()] = NOWHERE;
    }

    /// Move resident `frame` to CR-LFU's end of its (new) count class.
    fn lfu_arrive(&mut self, frame: FrameId) {
        self.arrivals += 1;
        let key = (self.counts[frame.index()], Reverse(self.arrivals));
        self.lfu.update(frame, key);
    }

    /// `R` over its share: its least recent blocks move to `SR`'s most recent end.
    fn demote_r_overflow(&mut self, incoming: u64) {
        while self.r_units + incoming > self.half {
            let Some(tail) = self.r.tail() else { break };
            self.unlink(tail);
            self.push(IN_SR, tail);
        }
    }

    /// `frame` leaves the cache: into `H` with its count, out of both experts' orders.
    fn leave(&mut self, frame: FrameId) {
        let (key, size) = (self.keys[frame.index()], self.sizes[frame.index()]);
        self.unlink(frame);
        self.lfu.remove(frame);
        if let Some(dropped) = self.history.push_front(key, size) {
            self.history_counts.remove(&dropped);
        }
        self.trim_history(usize::MAX);
        if self.history.contains(key) {
            self.history_counts.insert(key, self.counts[frame.index()]);
        }
    }

    /// `H` keeps less than the capacity (and at most `entries` keys): its oldest keys go
    /// first, with the counts they left with.
    fn trim_history(&mut self, entries: usize) {
        while self.history.size_sum() >= self.capacity || self.history.len() > entries {
            let Some((old, _)) = self.history.pop_back() else {
                break;
            };
            self.history_counts.remove(&old);
        }
    }

    /// libCacheSim's `check_and_update_history` for a missed `key`.
    fn learn_from_miss(&mut self, key: u64) {
        if self.regret_lru.remove(key) {
            self.w_lru *= (-self.lr).exp();
        } else if self.regret_lfu.remove(key) {
            self.w_lfu *= (-self.lr).exp();
        }
        self.w_lru /= self.w_lru + self.w_lfu;
        self.w_lfu = 1.0 - self.w_lru;
    }


    /// One eviction as libCacheSim's `Cacheus_evict` makes it.
    fn evict_one(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let by_lru = self
            .links
            .iter_from_tail(&self.sr)
            .chain(self.links.iter_from_tail(&self.r))
            .find(|&f| evictable(f))?;
        let by_lfu = self.lfu.least_where(evictable, &mut self.scratch)?;
        let pick_lru = self.draws.percent() < self.w_lru;
        let victim = if pick_lru { by_lru } else { by_lfu };
        let (key, size) = (self.keys[victim.index()], self.sizes[victim.index()]);
        self.leave(victim);
        if by_lru != by_lfu {
            let history = if pick_lru {
                &mut self.regret_lru
            } else {
                &mut self.regret_lfu
            };
            history.push_within(key, size, self.half);
        }
        Some(victim)
    }

    /// Admit `frame` as libCacheSim's `Cacheus_insert` does; SR's overflow leaves the
    /// cache (doomed: the driver still holds it).
    fn admit(&mut self, frame: FrameId, access: &Access) {
        let i = frame.index();
        self.keys[i] = access.key;
        self.sizes[i] = access.size;
        let size = u64::from(access.size);
        let returning = self.history.contains(access.key);
        if size > self.half {
            // SR-LRU cannot take it: libCacheSim does not cache it
            self.doom(frame);
            return;
        }
        // CR-LFU first: it reads the count the key left with before SR-LRU forgets it
        self.counts[i] = match self.history_counts.get(&access.key) {
            Some(&count) if returning => count.saturating_add(1),
            _ => 1,
        };
        self.list_of[i] = NOWHERE;
        self.arrivals += 1;
        self.lfu.push(frame, (self.counts[i], Reverse(self.arrivals)));
        if returning {
            self.history.remove(access.key);
            self.history_counts.remove(&access.key);
            self.demote_r_overflow(size);
            self.push(IN_R, frame);
        } else {
            self.push(IN_SR, frame);
        }
        while self.sr_units > self.half {
            let Some(tail) = self.sr.tail() else { break };
            self.leave(tail);
            self.doom(tail);
        }
    }

    /// After every request: the clock, and every `capacity` requests the learning rate.
    fn tick(&mut self) {
        self.now += 1;
        if self.capacity > 0 && self.now.is_multiple_of(self.capacity) {
            self.update_learning_rate();
        }
    }

    /// libCacheSim's `update_lr`.
    fn update_learning_rate(&mut self) {
        let hit_rate = if self.integer_hit_rate {
            (self.hits_in_interval / self.capacity) as f64
        } else {
            self.hits_in_interval as f64 / self.capacity as f64
        };
        let delta_hit_rate = hit_rate - self.hit_rate_previous;
        let delta_lr = self.lr - self.lr_previous;
        self.lr_previous = self.lr;
        self.hit_rate_previous = hit_rate;
        if delta_lr != 0.0 {
            let sign = if delta_hit_rate / delta_lr > 0.0 {
                1.0
            } else {
                -1.0
            };
            let step = sign * (self.lr * delta_lr).abs();
            self.lr = if self.lr + step > 0.001 {
                self.lr + step
            } else {
                0.0001
            };
            self.unlearn_count = 0;
        } else if hit_rate == 0.0 || delta_hit_rate <= 0.0 {
            self.unlearn_count += 1;
        } else if self.unlearn_count >= 10 {
            self.unlearn_count = 0;
            self.lr = 0.001 + (self.draws.next() % 1000) as f64 / 1000.0;
        }
        self.hits_in_interval = 0;
    }

    /// libCacheSim's miss path for `access` into `frame`: learn, make room, admit.
    fn miss(&mut self, frame: FrameId, access: &Access, evictable: &dyn Fn(FrameId) -> bool) {
        if self.consumed.take() != Some(access.key) {
            self.learn_from_miss(access.key);
        }
        while self.sr_units + self.r_units + u64::from(access.size) > self.capacity {
            match self.evict_one(evictable) {
                Some(victim) => self.doom(victim),
                None => break,
            }
        }
        self.admit(frame, access);
        self.tick();
    }
}

impl Policy for Cacheus {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.lfu.len() + self.doomed.len()
    }

    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        if self.list_of[frame.index()] == IN_DOOMED {
            // libCacheSim dropped it: this is a miss there
            self.undoom(frame);
            self.deferred_hits += 1;
            self.miss(frame, access, &|f| f != frame);
            return;
        }
        self.hits_in_interval += 1;
        let i = frame.index();
        self.counts[i] = self.counts[i].saturating_add(1);
        self.lfu_arrive(frame);
        match self.list_of[i] {
            IN_R => self.links.move_to_front(&mut self.r, frame),
            _ => {
                self.unlink(frame);
                self.push(IN_R, frame);
                self.demote_r_overflow(0);
            }
        }
        self.tick();
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.list_of, frame, NOWHERE);
        ensure_slot(&mut self.counts, frame, 0);
        ensure_slot(&mut self.keys, frame, 0);
        ensure_slot(&mut self.sizes, frame, 0);
        // the driver made room already; nothing is left to evict here
        self.miss(frame, access, &|_| false);
    }

    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        // libCacheSim learns when it looks the missed key up, before making room
        if self.consumed != Some(incoming.key) {
            self.learn_from_miss(incoming.key);
            self.consumed = Some(incoming.key);
        }
        let dropped = self.links.iter_from_tail(&self.doomed).find(|&f| evictable(f));
        if let Some(frame) = dropped {
            self.undoom(frame);
            return Some(frame);
        }
        self.evict_one(evictable)
    }

    fn remove(&mut self, frame: FrameId) {
        if self.list_of[frame.index()] == IN_DOOMED {
            self.undoom(frame);
            return;
        }
        // invalidation leaves no history
        self.unlink(frame);
        self.lfu.remove(frame);
    }

    /// The new capacity and its half (SR-LRU's share: an over-full SR spills at the next
    /// insertion, as it would after any insertion), `H` and the experts' histories bounded
    /// by them (oldest keys forgotten first). The learning rate and the weights are kept:
    /// they are what was learned; the rate is next updated at the next multiple of the
    /// new capacity in requests.
    fn set_capacity(&mut self, capacity: u64) {
        self.capacity = capacity;
        self.half = capacity / 2;
        let entries = crate::entry_bound(capacity);
        self.trim_history(entries);
        self.history.set_capacity(entries);
        self.regret_lru.bound_by_size(self.half);
        self.regret_lfu.bound_by_size(self.half);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for Cacheus {
    const NAME: &'static str = "cacheus";
    const SUMMARY: &'static str =
        "SR-LRU and CR-LFU experts with regret-learned weights and adaptive learning rate (Rodriguez et al., FAST 2021)";
    const SEEDED: bool = true;
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "seed",
            default: "0",
            help: "generator seed; 0 derives it from the run's root seed",
        },
        ParamInfo {
            name: "variant",
            default: "paper",
            help: "paper (seeded generator, real hit rate) or libcachesim (its LCG from state 0, integer hit rate)",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let seed = match params.integer("seed", 0, u64::MAX)? {
            0 => ctx.seed ^ STREAM,
            s => s,
        };
        let libcachesim = params.choice("variant", &["paper", "libcachesim"], "paper or libcachesim")?
            == "libcachesim";
        let mut cacheus = Cacheus::new(ctx.capacity, libcachesim, seed);
        cacheus.history.set_key_space(ctx.key_space);
        cacheus.regret_lru.set_key_space(ctx.key_space);
        cacheus.regret_lfu.set_key_space(ctx.key_space);
        Ok(cacheus)
    }
}

#[cfg(test)]
mod tests {
    use super::Cacheus;
    use crate::testkit::{evictions, hits};
    use crate::{Access, Cache};

    fn run(capacity: u64, trace: &[u64]) -> Cache<Cacheus> {
        let mut cache = Cache::new(Cacheus::new(capacity, true, 0), capacity);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        cache
    }

    #[test]
    fn sr_lru_keeps_hit_blocks_in_r_and_drops_sr_overflow_at_once() {
        // c = 4: SR and R hold 2 each (most recent first below).
        // 1 2: SR [2 1]. 1 (hit): to R [1]; SR [2]. 3: SR [3 2].
        // 4: SR [4 3 2] is over its share: 2 leaves the cache into H (libCacheSim's cache
        //    now holds 3; the driver still holds 2 until its next eviction).
        // 5: the driver is full and gets 2; no eviction of the policy's own is needed;
        //    SR [5 4 3]: 3 leaves. 6: the driver gets 3; SR [6 5 4]: 4 leaves.
        // 2: returns from H into R [2 1]; the driver gets 4; SR [6 5].
        let trace = [1, 2, 1, 3, 4, 5, 6, 2];
        assert_eq!(
            hits(Cacheus::new(4, true, 0), 4, &trace),
            [false, false, true, false, false, false, false, false]
        );
        let expected: [&[u64]; 8] = [&[], &[], &[], &[], &[], &[2], &[3], &[4]];
        assert_eq!(evictions(Cacheus::new(4, true, 0), 4, &trace), expected);
        let cache = run(4, &trace);
        assert_eq!(cache.policy().lists(), (vec![6, 5], vec![2, 1]));
        assert_eq!(cache.policy().deferred_hits(), 0);
    }

    #[test]
    fn a_block_dropped_by_sr_but_held_by_the_driver_is_a_deferred_hit() {
        // c = 4: 1 2 3: SR [3 2 1] overflows and 1 leaves, but the driver (not full) keeps
        // it. 1 again: the driver hits; libCacheSim misses, finds 1 in H and puts it in R.
        let cache = run(4, &[1, 2, 3, 1]);
        assert_eq!(cache.policy().deferred_hits(), 1);
        assert_eq!(cache.policy().lists(), (vec![3, 2], vec![1]));
    }

    #[test]
    fn cr_lfu_names_the_latest_of_the_least_frequent() {
        // c = 8: 1 2 3, then hits on 1 and 2 (count 2), then 4: the least count is 1 (3
        // and 4), and CR-LFU names the later arrival, 4 (LFU would name 3).
        let cache = run(8, &[1, 2, 3, 1, 2, 4]);
        let p = cache.policy();
        let least = p.lfu.peek().expect("non-empty");
        assert_eq!(p.keys[least.index()], 4);
    }

    #[test]
    fn a_scan_does_not_flush_blocks_hit_before() {
        // The paper's scan resistance: 4 keys requested twice sit in R; a scan of 200 new
        // keys through a cache of 10 only churns SR (and CR-LFU names scan keys, the least
        // frequent), so the 4 all hit afterwards. LRU loses them.
        let mut trace: Vec<u64> = [1, 2, 3, 4, 1, 2, 3, 4].to_vec();
        trace.extend(100..300);
        trace.extend([1, 2, 3, 4]);
        let tail = |h: Vec<bool>| h[h.len() - 4..].to_vec();
        for seed in 1..=5 {
            assert_eq!(tail(hits(Cacheus::new(10, false, seed), 10, &trace)), [true; 4]);
        }
        assert_eq!(tail(hits(crate::Lru::new(10), 10, &trace)), [false; 4]);
    }

    #[test]
    fn libcachesim_learning_rate_only_shrinks() {
        // The first rate is 0.001 + 407 / 1000 (the MMIX generator's first draw mod 1000).
        // After `capacity` requests libCacheSim's integer hit rate is 0 (not every request
        // hit), the rate last moved up from 0, so it steps down: lr - lr * lr.
        let cache = run(4, &[1, 2, 3, 4]);
        let lr = 0.408f64;
        assert!((cache.policy().learning_rate() - (lr - lr * lr)).abs() < 1e-12);
        let before = run(4, &[1, 2, 3]).policy().learning_rate();
        assert_eq!(before, lr);
    }
}
