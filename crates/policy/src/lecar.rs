//! LeCaR: learning cache replacement with two experts, LRU and LFU, weighted by regret.
//!
//! Vietri, Rodriguez, Martinez, Lyons, Liu, Rangaswami, Zhao & Narasimhan, "Driving Cache
//! Replacement with ML-based LeCaR", HotStorage 2018.
//!
//! # Algorithm
//!
//! The cache keeps one LRU order and one LFU order over the same residents. To evict, each
//! expert names its victim (LRU's least recent, LFU's least frequent, least recent among
//! equals); if they agree, that block goes. Otherwise LRU's is taken with probability
//! `w_lru` and LFU's with `w_lfu = 1 - w_lru`, and the victim's key enters the chosen
//! expert's history (`H_lru` or `H_lfu`, each at most half the capacity, oldest dropped
//! first) with the time it left. A miss on a key found in a history is the *regret* of the
//! expert that evicted it: its weight is multiplied by `exp(-learning_rate * d^t)`, where
//! `t` is the number of requests since the eviction and `d` the discount, and the weights
//! are renormalized. Recent mistakes therefore count more than old ones. A returning key
//! starts over as a newcomer (count 1).
//!
//! # Parameters
//!
//! * `learning_rate` (0.45) and `discount` (`auto` = `0.005^(1/capacity)`): the paper's
//!   values (and libCacheSim's), so that a mistake a cache's worth of requests old weighs
//!   0.005 of a fresh one.
//! * `seed` (0): the generator's seed; 0 derives it from the run's root seed.
//! * `variant` (`paper`): `libcachesim` draws the random numbers as libCacheSim's
//!   `LeCaR.c` (commit aa0fc409) does: Knuth's MMIX linear congruential generator,
//!   started at state 0 as `cachesim` starts it in each thread, one draw per eviction on
//!   which the experts disagree, `r = (x mod 100) / 100` compared with `w_lru`. Replayed
//!   alone (one cache size per process, one thread) it gives libCacheSim's miss counts
//!   exactly (`crates/sim/tests/golden_libcachesim_adaptive.rs`). `seed` is then unused.
//!
//! # Deviations and choices
//!
//! The paper leaves some details open; these follow libCacheSim's `LeCaR.c`, which its
//! authors' group maintains alongside Cacheus:
//!
//! * When both experts name the same block it enters neither history.
//! * Weights are kept apart from 0 by adding 1e-10 before renormalizing, as libCacheSim
//!   does, so that one expert can always win back.
//! * Histories are bounded by the sum of their entries' sizes (units), at half the
//!   capacity each.
//!
//! Pinned blocks: each expert names its least evictable block. `victims` runs `evict` on
//! a copy (the draws make a walk impossible).
//!
//! # Cost
//!
//! O(1) per hit (both orders), O(1) amortized per eviction plus one random draw and up to
//! two history updates; a miss looks its key up in both histories. Memory per frame: LRU
//! (8 bytes of links) + LFU (12 bytes) + key (8) + size (4) = 32 bytes, plus the two
//! histories (a ghost list of 16 bytes per entry each) and a map of eviction times.

use bufcache_core::FixedHashMap;
use crate::draws::Draws;
use crate::ghost::GhostList;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Lfu, Lru, Policy};

/// Mixed into the root seed so that this policy's stream differs from other components'.
const STREAM: u64 = 0x6c65_6361_725f_7731;

/// Which expert evicted a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expert {
    Lru,
    Lfu,
}

/// The two experts' weights, updated by regret.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Weights {
    /// Weight of the first expert (LRU; SR-LRU in Cacheus).
    pub(crate) first: f64,
    /// Weight of the second expert (LFU; CR-LFU in Cacheus).
    pub(crate) second: f64,
}

impl Weights {
    /// Equal weights.
    pub(crate) fn even() -> Self {
        Weights {
            first: 0.5,
            second: 0.5,
        }
    }

    /// The expert that evicted a key returning after `t` requests was wrong: scale its
    /// weight by `exp(-rate * discount^t)` and renormalize (libCacheSim's arithmetic, 1e-10
    /// keeping both away from 0).
    pub(crate) fn regret(&mut self, first_was_wrong: bool, rate: f64, discount: f64, t: u64) {
        let r = discount.powf(t as f64);
        let (wrong, other) = if first_was_wrong {
            (&mut self.first, &mut self.second)
        } else {
            (&mut self.second, &mut self.first)
        };
        *wrong = *wrong * (-rate * r).exp() + 1e-10;
        let sum = *wrong + *other + 2e-10;
        *wrong /= sum;
        *other = (*other + 1e-10) / sum;
    }
}

/// LeCaR.
#[derive(Clone, Debug)]
pub struct LeCaR {
    lru: Lru,
    lfu: Lfu,
    keys: Vec<u64>,
    sizes: Vec<u32>,
    history_lru: GhostList,
    history_lfu: GhostList,
    /// Request count at which each key in a history was evicted.
    evicted_at: FixedHashMap<u64>,
    /// Each history's bound (sum of sizes): half the capacity.
    history_units: u64,
    weights: Weights,
    learning_rate: f64,
    discount: f64,
    /// The discount follows the capacity (`auto`, the paper's `0.005^(1/capacity)`).
    discount_auto: bool,
    draws: Draws,
    /// Requests seen.
    now: u64,
    /// The key whose history entry `evict` already consumed for the current miss.
    consumed: Option<u64>,
    scratch: Vec<FrameId>,
}

impl LeCaR {
    /// LeCaR for `capacity` units with the paper's learning rate and discount.
    pub fn new(capacity: u64, draws_from_libcachesim: bool, seed: u64) -> Self {
        let mut lecar = Self::with_rates(
            capacity,
            0.45,
            auto_discount(capacity),
            draws_from_libcachesim,
            seed,
        );
        lecar.discount_auto = true;
        lecar
    }

    /// LeCaR with a given learning rate and discount.
    pub fn with_rates(
        capacity: u64,
        learning_rate: f64,
        discount: f64,
        draws_from_libcachesim: bool,
        seed: u64,
    ) -> Self {
        let frames = crate::prealloc_frames(capacity);
        let history = crate::entry_bound(capacity / 2);
        LeCaR {
            lru: Lru::new(frames),
            lfu: Lfu::new(frames),
            keys: vec![0; frames],
            sizes: vec![0; frames],
            history_lru: GhostList::new(history),
            history_lfu: GhostList::new(history),
            evicted_at: FixedHashMap::default(),
            history_units: capacity / 2,
            weights: Weights::even(),
            learning_rate,
            discount,
            discount_auto: false,
            draws: if draws_from_libcachesim {
                Draws::libcachesim()
            } else {
                Draws::seeded(seed)
            },
            now: 0,
            consumed: None,
            scratch: Vec::with_capacity(1),
        }
    }

    /// The current weight of the LRU expert (LFU's is about `1 -` it).
    pub fn lru_weight(&self) -> f64 {
        self.weights.first
    }

    /// A miss on `key`: if an expert evicted it, that expert regrets it.
    ///
    /// A key is in at most one history and has an eviction time exactly while it is in
    /// one ([`LeCaR::remember`] keeps that true), whatever order a driver calls in.
    fn learn_from_miss(&mut self, key: u64) {
        let expert = if self.history_lru.remove(key) {
            Expert::Lru
        } else if self.history_lfu.remove(key) {
            Expert::Lfu
        } else {
            return;
        };
        debug_assert!(!self.history_lru.contains(key) && !self.history_lfu.contains(key));
        let at = self.evicted_at.remove(&key).expect("history keys have times");
        let t = self.now - at;
        self.weights.regret(
            expert == Expert::Lru,
            self.learning_rate,
            self.discount,
            t,
        );
    }

    /// The first block `policy` would evict among those `evictable` allows.
    fn candidate(
        scratch: &mut Vec<FrameId>,
        policy: &dyn Policy,
        evictable: &dyn Fn(FrameId) -> bool,
    ) -> Option<FrameId> {
        scratch.clear();
        policy.victims(1, evictable, scratch);
        scratch.first().copied()
    }

    /// Remember `key` (of `size` units) in `expert`'s history, dropping its oldest entries
    /// beyond half the capacity.
    ///
    /// A pool may evict a key it is about to load (another thread loaded it after this
    /// miss made room), so `key` may be the one whose learning `evict` already did: that
    /// learning is void now, and the key may sit in the other history from an eviction
    /// the skipped learning never saw. Both are undone here, so each key lives in at most
    /// one history, with one eviction time.
    fn remember(&mut self, expert: Expert, key: u64, size: u32) {
        if self.consumed == Some(key) {
            self.consumed = None;
        }
        let (history, other) = match expert {
            Expert::Lru => (&mut self.history_lru, &mut self.history_lfu),
            Expert::Lfu => (&mut self.history_lfu, &mut self.history_lru),
        };
        other.remove(key);
        if let Some(dropped) = history.push_front(key, size) {
            self.evicted_at.remove(&dropped);
        }
        trim(history, &mut self.evicted_at, self.history_units, usize::MAX);
        if history.contains(key) {
            self.evicted_at.insert(key, self.now);
        }
    }
}

/// `0.005^(1/capacity)`: the paper's discount, which makes a regret from a capacity's
/// worth of requests ago weigh 0.5% of a fresh one.
fn auto_discount(capacity: u64) -> f64 {
    0.005f64.powf(1.0 / capacity.max(1) as f64)
}

/// Drop `history`'s oldest keys (and their eviction times) until its sizes sum to at
/// most `units` and it holds at most `entries` keys.
fn trim(history: &mut GhostList, evicted_at: &mut FixedHashMap<u64>, units: u64, entries: usize) {
    while history.size_sum() > units || history.len() > entries {
        let Some((old, _)) = history.pop_back() else {
            break;
        };
        evicted_at.remove(&old);
    }
}

impl Policy for LeCaR {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.lru.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.lru.on_hit(frame, access);
        self.lfu.on_hit(frame, access);
        self.now += 1;
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        if self.consumed.take() != Some(access.key) {
            self.learn_from_miss(access.key);
        }
        ensure_slot(&mut self.keys, frame, 0);
        ensure_slot(&mut self.sizes, frame, 0);
        self.keys[frame.index()] = access.key;
        self.sizes[frame.index()] = access.size;
        self.lru.on_insert(frame, access);
        self.lfu.on_insert(frame, access);
        self.now += 1;
    }

    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        // libCacheSim learns when it looks the missed key up, before making room
        if self.consumed != Some(incoming.key) {
            self.learn_from_miss(incoming.key);
            self.consumed = Some(incoming.key);
        }
        let by_lru = Self::candidate(&mut self.scratch, &self.lru, evictable)?;
        let by_lfu = Self::candidate(&mut self.scratch, &self.lfu, evictable)?;
        let (victim, expert) = if by_lru == by_lfu {
            (by_lru, None)
        } else if self.draws.percent() < self.weights.first {
            (by_lru, Some(Expert::Lru))
        } else {
            (by_lfu, Some(Expert::Lfu))
        };
        self.lru.remove(victim);
        self.lfu.remove(victim);
        if let Some(expert) = expert {
            let i = victim.index();
            self.remember(expert, self.keys[i], self.sizes[i]);
        }
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.lru.remove(frame);
        self.lfu.remove(frame);
    }

    /// Half the new capacity for each history (oldest keys forgotten first when
    /// shrinking), and the `auto` discount recomputed; the experts' weights are kept:
    /// they are what was learned, not a size.
    fn set_capacity(&mut self, capacity: u64) {
        self.history_units = capacity / 2;
        let entries = crate::entry_bound(capacity / 2);
        for history in [&mut self.history_lru, &mut self.history_lfu] {
            trim(history, &mut self.evicted_at, self.history_units, entries);
            history.set_capacity(entries);
        }
        if self.discount_auto {
            self.discount = auto_discount(capacity);
        }
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for LeCaR {
    const NAME: &'static str = "lecar";
    const SUMMARY: &'static str =
        "LRU and LFU experts chosen at random by regret-learned weights (Vietri et al., HotStorage 2018)";
    const SEEDED: bool = true;
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "learning_rate",
            default: "0.45",
            help: "how strongly one regret moves the weights, 0..=10",
        },
        ParamInfo {
            name: "discount",
            default: "auto",
            help: "per-request decay of a regret's weight, 0..=1; auto = 0.005^(1/capacity)",
        },
        ParamInfo {
            name: "seed",
            default: "0",
            help: "generator seed; 0 derives it from the run's root seed",
        },
        ParamInfo {
            name: "variant",
            default: "paper",
            help: "paper (seeded generator) or libcachesim (its LCG from state 0, as one cachesim thread)",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let learning_rate = params.fraction("learning_rate", 0.0, 10.0)?;
        let given = params.fraction_or_auto("discount", 0.0, 1.0)?;
        let discount = given.unwrap_or_else(|| auto_discount(ctx.capacity));
        let seed = match params.integer("seed", 0, u64::MAX)? {
            0 => ctx.seed ^ STREAM,
            s => s,
        };
        let libcachesim = params.choice("variant", &["paper", "libcachesim"], "paper or libcachesim")?
            == "libcachesim";
        let mut lecar = LeCaR::with_rates(ctx.capacity, learning_rate, discount, libcachesim, seed);
        lecar.discount_auto = given.is_none();
        lecar.history_lru.set_key_space(ctx.key_space);
        lecar.history_lfu.set_key_space(ctx.key_space);
        Ok(lecar)
    }
}

#[cfg(test)]
mod tests {
    use super::{LeCaR, Weights};
    use crate::draws::Draws;
    use crate::testkit::{evictions, hits};
    use crate::{Access, Cache, Lfu, Lru};

    #[test]
    fn agreeing_experts_need_no_draw_and_leave_no_history() {
        // c = 2: 1 2 3. LRU's victim is 1 (least recent), LFU's is 1 too (both counted
        // once, 1 older): 1 goes, into neither history. 1 again: 2 goes the same way, and
        // the weights never move.
        let trace = [1, 2, 3, 1];
        let expected: [&[u64]; 4] = [&[], &[], &[1], &[2]];
        assert_eq!(evictions(LeCaR::new(2, false, 5), 2, &trace), expected);
        let mut cache = Cache::new(LeCaR::new(2, false, 5), 2);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        assert_eq!(cache.policy().lru_weight(), 0.5);
    }

    #[test]
    fn a_regret_moves_weight_to_the_other_expert() {
        // Weights 0.5/0.5, rate 0.45, a mistake 0 requests old (d^0 = 1): the wrong
        // expert's weight becomes 0.5 e^-0.45 = 0.31882 (+1e-10), then both are divided by
        // their sum 0.81882: 0.38937 and 0.61063.
        let mut w = Weights::even();
        w.regret(true, 0.45, 0.9, 0);
        assert!((w.first - 0.389_37).abs() < 1e-5, "{w:?}");
        assert!((w.first + w.second - 1.0).abs() < 1e-9);
        // a mistake 10 requests old with discount 0.5 barely counts: 0.5 e^(-0.45/1024)
        let mut w = Weights::even();
        w.regret(false, 0.45, 0.5, 10);
        assert!((w.first - 0.500_11).abs() < 1e-5, "{w:?}");
    }

    #[test]
    fn a_key_evicted_while_its_own_miss_makes_room_still_counts_as_a_regret() {
        // A pool asks for room for A, but another thread has loaded A meanwhile, and A is
        // the victim. c = 2: A, hit A, B. LRU names A (least recent), LFU names B (counted
        // once): they disagree, and the libCacheSim generator's first draw (0.07 < 0.5)
        // picks LRU, so A goes into LRU's history. When A is loaded again, LRU must
        // regret it, even though `evict` had already looked A up for this miss (before it
        // was evicted).
        use crate::{FrameId, Policy};
        let (a, b) = (Access::unit(1, 0), Access::unit(2, 2));
        let mut p = LeCaR::new(2, true, 0);
        p.on_insert(FrameId(0), &a);
        p.on_hit(FrameId(0), &Access::unit(1, 1));
        p.on_insert(FrameId(1), &b);
        assert_eq!(p.evict(&Access::unit(1, 3), &|_| true), Some(FrameId(0)));
        p.on_insert(FrameId(0), &Access::unit(1, 4));
        // regret 0 requests after the eviction: 0.5 e^-0.45 renormalized = 0.389
        assert!((p.lru_weight() - 0.389_37).abs() < 1e-5, "{}", p.lru_weight());
        // and A is in no history any more: evicting and missing it again regrets once
        assert_eq!(p.history_lru.size_sum() + p.history_lfu.size_sum(), 0);
    }

    #[test]
    fn the_libcachesim_generator_is_mmix() {
        // Knuth's MMIX LCG from 0: the first state is the increment, 1442695040888963407,
        // whose last two digits give 0.07; the next is 6364136223846793005 x that + the
        // increment (mod 2^64) = 1876011003808476466: 0.66.
        let mut d = Draws::libcachesim();
        assert_eq!(d.percent(), 0.07);
        assert_eq!(d.percent(), 0.66);
    }

    #[test]
    fn learns_lru_on_a_recency_trace_and_lfu_on_a_frequency_trace() {
        // Recency: 50 phases, each looping 20 times over 8 new keys, with a cache of 10.
        // At a phase change LFU keeps the last phase's keys (counted 20 times) and evicts
        // the new ones, which return within 8 requests (regrets); LRU evicts the old
        // ones, which never return.
        let recency: Vec<u64> = (0..50u64)
            .flat_map(|phase| (0..160u64).map(move |i| phase * 8 + i % 8))
            .collect();
        let mut cache = Cache::new(LeCaR::new(10, false, 3), 10);
        for (t, &k) in recency.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        // (0.986 with this seed)
        assert!(cache.policy().lru_weight() > 0.9, "{}", cache.policy().lru_weight());
        let count = |h: &[bool]| h.iter().filter(|&&x| x).count();
        let lecar_hits = count(&hits(LeCaR::new(10, false, 3), 10, &recency));
        let lfu_hits = count(&hits(Lfu::new(10), 10, &recency));
        let lru_hits = count(&hits(Lru::new(10), 10, &recency));
        assert!(lecar_hits > lfu_hits && lecar_hits <= lru_hits);
        // Frequency: 5 hot keys, first 10 times each, then every other request with a
        // scan of new keys in between. LRU evicts hot keys the scan pushed out; LFU keeps
        // them.
        let mut frequency: Vec<u64> = (0..50).map(|i| i % 5).collect();
        frequency.extend((0..20_000u64).map(|i| if i % 2 == 0 { i % 10 / 2 } else { 100 + i }));
        let mut cache = Cache::new(LeCaR::new(6, false, 3), 6);
        for (t, &k) in frequency.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        // (regrets here are at most 10 requests old in a cache of 6: d^10 = 1.4e-4 each,
        // so the weight moves slowly: 0.33 after 20,000 requests with this seed)
        assert!(cache.policy().lru_weight() < 0.4, "{}", cache.policy().lru_weight());
        let lecar_hits = count(&hits(LeCaR::new(6, false, 3), 6, &frequency));
        let lfu_hits = count(&hits(Lfu::new(6), 6, &frequency));
        let lru_hits = count(&hits(Lru::new(6), 6, &frequency));
        assert!(lecar_hits > lru_hits && lecar_hits <= lfu_hits);
    }
}
