//! LRU-prob: LRU whose hits move an object to the head only with probability `prob`.
//!
//! Probabilistic promotion is how large production caches cut the cost of LRU's hits: a
//! promotion takes a lock and touches two neighbours' links, and most of it buys little,
//! since a popular object hit twice as often is promoted often enough anyway. It is the
//! "LRU with probabilistic promotion" of libCacheSim (`LRUProb.c`) and of the FIFO/LRU
//! studies by Yang et al. ("FIFO can be better than LRU: the power of lazy promotion and
//! quick demotion", HotOS 2023), where it stands between FIFO (`prob=0`) and LRU
//! (`prob=1`).
//!
//! # Algorithm
//!
//! One list, newest at the head. A miss inserts at the head; a hit draws a uniform random
//! number and moves the object to the head when it falls below `prob`; eviction takes the
//! tail.
//!
//! # Parameters
//!
//! * `prob` (0.5, libCacheSim's default): promotion probability, 0..=1. 0 is FIFO, 1 is
//!   LRU (no random number is drawn at either end).
//! * `seed` (0): the generator's seed; 0 derives it from the run's root seed.
//!
//! # Deviations
//!
//! libCacheSim promotes when `next_rand() % floor(1 / prob) == 0`, so it can only express
//! probabilities `1/n`; here `prob` is used as given (a 64-bit threshold). With its own
//! generator, libCacheSim's miss counts agree with ours statistically, not request by
//! request (`crates/sim/tests/golden_libcachesim.rs` compares them within a tolerance).
//!
//! # Cost
//!
//! O(1) per hit (one random draw), insertion and eviction. Memory: 8 bytes of links per
//! frame.

use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{Access, FrameId, Policy};

/// Mixed into the root seed so that this policy's stream differs from other components'.
const STREAM: u64 = 0x6c72_7570_726f_6221;

/// LRU with probabilistic promotion.
#[derive(Clone, Debug)]
pub struct LruProb {
    links: Links,
    order: List,
    /// Promote when a uniform `u64` is below this; `u64::MAX` with `always` means 1.
    threshold: u64,
    /// `prob == 1`: promote without drawing.
    always: bool,
    rng: Xoshiro256PlusPlus,
}

impl LruProb {
    /// LRU-prob expecting about `frames` residents, promoting with probability `prob`
    /// (0..=1) drawn from `seed`.
    pub fn new(frames: usize, prob: f64, seed: u64) -> Self {
        assert!((0.0..=1.0).contains(&prob), "prob is a probability");
        LruProb {
            links: Links::with_capacity(frames),
            order: List::new(),
            // 2^64 * prob, saturating; exact for prob = 0
            threshold: (prob * 18_446_744_073_709_551_616.0) as u64,
            always: prob >= 1.0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }
}

impl Policy for LruProb {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let promote = self.always || (self.threshold > 0 && self.rng.next_u64() < self.threshold);
        if promote {
            self.links.move_to_front(&mut self.order, frame);
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        self.links.push_front(&mut self.order, frame);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self
            .links
            .iter_from_tail(&self.order)
            .find(|&f| evictable(f))?;
        self.links.unlink(&mut self.order, victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.links.unlink(&mut self.order, frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // Exact: eviction draws nothing and never reorders.
        let order = self.links.iter_from_tail(&self.order);
        out.extend(order.filter(|&f| evictable(f)).take(n));
    }
}

impl NamedPolicy for LruProb {
    const NAME: &'static str = "lruprob";
    const SUMMARY: &'static str =
        "LRU that promotes a hit object only with probability prob (libCacheSim's LRU-prob)";
    const SEEDED: bool = true;
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "prob",
            default: "0.5",
            help: "promotion probability per hit, 0..=1 (0 is FIFO, 1 is LRU)",
        },
        ParamInfo {
            name: "seed",
            default: "0",
            help: "generator seed; 0 derives it from the run's root seed",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let prob = params.fraction("prob", 0.0, 1.0)?;
        let seed = match params.integer("seed", 0, u64::MAX)? {
            0 => ctx.seed ^ STREAM,
            s => s,
        };
        Ok(LruProb::new(crate::prealloc_frames(ctx.capacity), prob, seed))
    }
}

#[cfg(test)]
mod tests {
    use super::LruProb;
    use crate::testkit::{hits, resident_after};
    use crate::{Fifo, Lru};

    #[test]
    fn the_ends_are_fifo_and_lru() {
        // capacity 3: 1 2 3 1 4 2 1. LRU: 1's hit saves it, 4 evicts 2, 2 evicts 3, 1 hits.
        // FIFO: 4 evicts 1 (queue 2 3 4), 2 hits, 1 evicts 2 (queue 3 4 1).
        let trace = [1, 2, 3, 1, 4, 2, 1];
        assert_eq!(
            hits(LruProb::new(3, 1.0, 7), 3, &trace),
            hits(Lru::new(3), 3, &trace)
        );
        assert_eq!(
            hits(LruProb::new(3, 0.0, 7), 3, &trace),
            hits(Fifo::new(3), 3, &trace)
        );
        assert_eq!(resident_after(LruProb::new(3, 0.0, 7), 3, &trace), [3, 4, 1]);
    }

    #[test]
    fn promotes_about_prob_of_hits() {
        // Two residents, the older one hit: it is promoted (and the other becomes the
        // tail) with probability prob. Count how often, over 20,000 seeded trials.
        let mut promoted = 0;
        for seed in 1..=20_000u64 {
            let mut cache = crate::Cache::new(LruProb::new(2, 0.25, seed), 2);
            cache.access(&crate::Access::unit(1, 0));
            cache.access(&crate::Access::unit(2, 1));
            cache.access(&crate::Access::unit(1, 2));
            if cache.victims(1) == [2] {
                promoted += 1;
            }
        }
        // binomial(20000, 0.25): mean 5000, standard deviation 61; 5 sigma either way
        assert!((4_700..=5_300).contains(&promoted), "{promoted}");
    }

    #[test]
    fn same_seed_same_choices() {
        let trace: Vec<u64> = (0..2000u64).map(|i| (i * 31 + i / 7) % 50).collect();
        assert_eq!(
            hits(LruProb::new(20, 0.5, 9), 20, &trace),
            hits(LruProb::new(20, 0.5, 9), 20, &trace)
        );
    }
}
