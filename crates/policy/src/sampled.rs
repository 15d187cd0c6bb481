//! Sampled eviction as Redis does it: draw a few resident objects at random and evict the
//! one that was used least recently (`rank=lru`) or least often (`rank=lfu`).
//!
//! Redis keeps no LRU list and no frequency order: each object carries a 24-bit field, and
//! on eviction Redis samples `maxmemory-samples` keys (5 by default) and evicts the worst of
//! them (Redis documentation, "Key eviction" and "Using Redis as an LRU cache";
//! `evict.c`). With 5 samples the choice is already close to true LRU on skewed workloads,
//! at no memory or hit-path cost beyond a stamp per object. libCacheSim's `RandomLRU` is the
//! same idea with 64 samples.
//!
//! # Ranks
//!
//! * `lru`: each object's stamp is the time (request index) of its last request; the
//!   sampled object with the oldest stamp goes.
//! * `lfu`: Redis's LFU (Redis 4.0, `allkeys-lfu`): an 8-bit *logarithmic* counter that
//!   starts at 5 (`LFU_INIT_VAL`, so that a newcomer is not the first victim), and on a
//!   hit rises by one with probability `1 / ((counter - 5) * log_factor + 1)` (never below
//!   probability 1 while at or under 5), saturating at 255; and *decays*: one is taken off
//!   for every `decay` requests since the object was last touched, counted on a coarse
//!   clock (Redis counts minutes since the last decrement in 16 bits; here ticks of `decay`
//!   requests). The sampled object with the lowest decayed counter goes. With
//!   `log_factor=10` a counter reaches about 10 after 100 hits, 18 after 1,000 and 142
//!   after 100,000 (the table in `redis.conf`), so a popular object cannot become
//!   unevictable, and the decay lets a formerly popular one fall back.
//!
//! # Parameters
//!
//! * `rank` (`lru`): `lru` or `lfu`, as above.
//! * `samples` (5, Redis's `maxmemory-samples`): objects drawn per eviction, uniformly with
//!   replacement (the shared sampler of [`crate::resident::ResidentSet`]). libCacheSim's
//!   `RandomLRU` draws 64 (its `n-samples` parameter is parsed but not used at commit
//!   aa0fc409); `sampled:samples=64` is its counterpart.
//! * `seed` (0): the generator of the draws and of LFU's increments; 0 derives it from the
//!   run's root seed.
//! * `log_factor` (10, Redis's `lfu-log-factor`): how slowly the LFU counter climbs.
//! * `decay` (`auto`): requests per decay tick of the LFU counter (Redis: one per minute
//!   with `lfu-decay-time 1`). A policy has no clock, so time is counted in requests;
//!   `auto` is the capacity in units (capped at 2^24): an object must be requested about
//!   once per turnover of the cache to hold its count. `0` turns decay off.
//!
//! # Deviations from Redis
//!
//! * Redis (since 3.0) keeps a pool of the 16 best candidates across evictions and evicts
//!   the best of the pool, which makes its choice a little closer to exact LRU/LFU; the
//!   pool holds keys whose stamps go stale as they are hit, and we keep no such pool: each
//!   eviction samples afresh (as libCacheSim's `RandomLRU` does, and Redis 2.x did).
//! * Redis's LRU stamp has one-second resolution (24 bits of seconds); ours is the request
//!   index, so ties are rare. Of equal stamps or counters the first drawn goes.
//! * Frames the caller may not evict are skipped when drawn; if every draw was refused, the
//!   first evictable frame after a random position goes.
//!
//! # Cost
//!
//! O(1) per hit and insertion; O(`samples`) per eviction. Memory per frame: 8 bytes of
//! stamp, 1 of counter, 8 of position in the dense array of residents.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::resident::ResidentSet;
use crate::{ensure_slot, Access, FrameId, Policy};

/// Mixed into the root seed so that the sampler's stream differs from other components'.
const STREAM: u64 = 0x7361_6d70_6c65_6401;

/// Redis's `LFU_INIT_VAL`: a newcomer's counter.
pub const LFU_INIT: u8 = 5;

/// What a sampled object is ranked by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    /// Time of the last request: the oldest goes.
    Lru,
    /// Redis's logarithmic, decaying counter: the lowest goes.
    Lfu,
}

/// Sampled LRU or LFU eviction (Redis's approximated policies).
#[derive(Clone, Debug)]
pub struct Sampled {
    residents: ResidentSet,
    /// LRU: time of the last request. LFU: the decay tick of the last request.
    stamp: Vec<u64>,
    /// LFU's counter (unused by LRU).
    counter: Vec<u8>,
    rank: Rank,
    samples: usize,
    log_factor: u32,
    /// Requests per decay tick; 0: no decay.
    decay: u64,
    rng: Xoshiro256PlusPlus,
}

impl Sampled {
    /// Sampled eviction by `rank` expecting about `frames` residents, drawing `samples`
    /// per eviction from `seed`, with Redis's LFU defaults (`log_factor` 10) and no decay.
    pub fn new(frames: usize, rank: Rank, samples: usize, seed: u64) -> Self {
        assert!(samples > 0, "sampled eviction needs at least one sample");
        Sampled {
            residents: ResidentSet::new(frames),
            stamp: vec![0; frames],
            counter: vec![0; frames],
            rank,
            samples,
            log_factor: 10,
            decay: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// LFU's counter growth (`lfu-log-factor`) and decay period in requests (0: none).
    pub fn with_lfu(mut self, log_factor: u32, decay: u64) -> Self {
        self.log_factor = log_factor;
        self.decay = decay;
        self
    }

    /// The decay tick of time `t`.
    fn tick(&self, t: u64) -> u64 {
        t.checked_div(self.decay).unwrap_or(0)
    }

    /// A resident frame's LFU counter after decay at time `now` (Redis's
    /// `LFUDecrAndReturn`).
    pub fn lfu_counter(&self, frame: FrameId, now: u64) -> u8 {
        let f = frame.index();
        let elapsed = self.tick(now).saturating_sub(self.stamp[f]);
        let c = u64::from(self.counter[f]);
        c.saturating_sub(elapsed) as u8
    }

    /// Redis's `LFULogIncr`: one more with probability `1 / ((c - 5) * factor + 1)`.
    fn log_incr(&mut self, c: u8) -> u8 {
        if c == u8::MAX {
            return c;
        }
        let base = f64::from(c.saturating_sub(LFU_INIT));
        let p = 1.0 / (base * f64::from(self.log_factor) + 1.0);
        if self.rng.gen::<f64>() < p {
            c + 1
        } else {
            c
        }
    }
}

impl Policy for Sampled {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.residents.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame.index();
        match self.rank {
            Rank::Lru => self.stamp[f] = access.time,
            Rank::Lfu => {
                let c = self.lfu_counter(frame, access.time);
                self.counter[f] = self.log_incr(c);
                self.stamp[f] = self.tick(access.time);
            }
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.stamp, frame, 0);
        ensure_slot(&mut self.counter, frame, 0);
        self.residents.insert(frame);
        let f = frame.index();
        match self.rank {
            Rank::Lru => self.stamp[f] = access.time,
            Rank::Lfu => {
                self.counter[f] = LFU_INIT;
                self.stamp[f] = self.tick(access.time);
            }
        }
    }

    #[inline]
    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let (stamp, counter) = (&self.stamp, &self.counter);
        match self.rank {
            Rank::Lru => self.residents.take_best_of_sample(
                &mut self.rng,
                self.samples,
                evictable,
                |f, _| stamp[f.index()],
                |a, b| a < b,
            ),
            Rank::Lfu => {
                let now = self.tick(incoming.time);
                let decayed = |f: FrameId| {
                    u64::from(counter[f.index()]).saturating_sub(now.saturating_sub(stamp[f.index()]))
                };
                self.residents.take_best_of_sample(
                    &mut self.rng,
                    self.samples,
                    evictable,
                    |f, _| decayed(f),
                    |a, b| a < b,
                )
            }
        }
    }

    fn remove(&mut self, frame: FrameId) {
        self.residents.remove(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for Sampled {
    const NAME: &'static str = "sampled";
    const SUMMARY: &'static str =
        "Redis-style sampled eviction: the oldest (lru) or least frequent (lfu) of a few random residents";
    const SEEDED: bool = true;
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "rank",
            default: "lru",
            help: "lru: oldest last request; lfu: Redis's logarithmic decaying counter",
        },
        ParamInfo {
            name: "samples",
            default: "5",
            help: "objects drawn per eviction (Redis maxmemory-samples; libCacheSim RandomLRU: 64)",
        },
        ParamInfo {
            name: "seed",
            default: "0",
            help: "generator seed; 0 derives it from the run's root seed",
        },
        ParamInfo {
            name: "log_factor",
            default: "10",
            help: "lfu: how slowly the counter climbs (Redis lfu-log-factor), 0..=1000000",
        },
        ParamInfo {
            name: "decay",
            default: "auto",
            help: "lfu: requests per decrement of an idle counter; auto = the capacity, 0 = none",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let rank = match params.choice("rank", &["lru", "lfu"], "lru or lfu")? {
            "lfu" => Rank::Lfu,
            _ => Rank::Lru,
        };
        let samples = params.integer("samples", 1, 1 << 20)? as usize;
        let seed = match params.integer("seed", 0, u64::MAX)? {
            0 => ctx.seed ^ STREAM,
            s => s,
        };
        let log_factor = params.integer("log_factor", 0, 1_000_000)? as u32;
        let decay = params
            .integer_or_auto("decay", 0, u64::MAX)?
            .unwrap_or(crate::entry_bound(ctx.capacity) as u64);
        Ok(
            Sampled::new(crate::prealloc_frames(ctx.capacity), rank, samples, seed)
                .with_lfu(log_factor, decay),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{evictions, hits};

    /// So many samples for so few residents that every resident is drawn (the chance that
    /// one of four is missed by 4,000 draws is below 10^-490): the exact worst goes.
    fn exhaustive(frames: usize, rank: Rank) -> Sampled {
        Sampled::new(frames, rank, 4000, 1)
    }

    #[test]
    fn exhaustive_lru_sampling_is_lru() {
        // capacity 3: 1 2 3 1 4 -> 2 is least recent; 5 -> 3; 2 -> 1 (1 at t=3, 4 at 4, 5 at 5)
        let ev = evictions(exhaustive(3, Rank::Lru), 3, &[1, 2, 3, 1, 4, 5, 2]);
        assert_eq!(ev.concat(), vec![2, 3, 1]);
    }

    #[test]
    fn exhaustive_lfu_sampling_evicts_the_least_frequent() {
        // log_factor 0: every hit adds one (probability 1), no decay: plain LFU counts.
        // 1 1 1 2 2 3 4: at 4, counters 1:7 2:6 3:5 -> 3 goes. 4 (5) 5: 4 goes (5 < 6 < 7).
        let p = exhaustive(3, Rank::Lfu).with_lfu(0, 0);
        let ev = evictions(p, 3, &[1, 1, 1, 2, 2, 3, 4, 5]);
        assert_eq!(ev.concat(), vec![3, 4]);
    }

    #[test]
    fn lfu_counters_decay_with_idle_time() {
        // decay every 10 requests; key 1 enters at t=0 (counter 5, tick 0) and is hit at
        // t=1..=4 with log_factor 0: 9, tick 0. At t=35 (tick 3) it reads 9 - 3 = 6; at
        // t=100, 0.
        let mut p = exhaustive(2, Rank::Lfu).with_lfu(0, 10);
        p.on_insert(FrameId(0), &Access::unit(1, 0));
        for t in 1..5 {
            p.on_hit(FrameId(0), &Access::unit(1, t));
        }
        assert_eq!(p.lfu_counter(FrameId(0), 4), 9);
        assert_eq!(p.lfu_counter(FrameId(0), 35), 6);
        assert_eq!(p.lfu_counter(FrameId(0), 100), 0);
        // a hit at t=35 stores the decayed value plus one, on tick 3
        p.on_hit(FrameId(0), &Access::unit(1, 35));
        assert_eq!(p.lfu_counter(FrameId(0), 39), 7);
        // key 2 enters at t=40 with 5: at t=60, 1 has 7 - 2 = 5 and 2 has 5 - 2 = 3
        p.on_insert(FrameId(1), &Access::unit(2, 40));
        assert_eq!(p.evict(&Access::unit(3, 60), &|_| true), Some(FrameId(1)));
    }

    #[test]
    fn lfu_counter_climbs_logarithmically_as_redis_documents() {
        // With factor 0 every hit counts: 1 insertion + 99 hits -> 5 + 99 = 104 (the
        // redis.conf table's "100 hits" row). With factor 10, climbing from c to c + 1
        // takes (c - 5) * 10 + 1 hits on average, so n hits reach about 6 + sqrt(n / 5):
        // 10.5, 20 and 147 after 100, 1,000 and 100,000 (redis.conf lists 10, 18 and 142).
        // Each step is geometric, so the spread grows with n: three standard deviations
        // are about 3.5, 6 and 21 counts; the bounds below are those, and contain Redis's
        // own numbers.
        let climb = |factor: u32, accesses: u64, seed: u64| {
            let mut p = Sampled::new(1, Rank::Lfu, 1, seed).with_lfu(factor, 0);
            p.on_insert(FrameId(0), &Access::unit(1, 0));
            for t in 1..accesses {
                p.on_hit(FrameId(0), &Access::unit(1, t));
            }
            p.lfu_counter(FrameId(0), accesses)
        };
        assert_eq!(climb(0, 100, 1), 104);
        testutil::fixed(7, |seed| {
            let s = seed.value();
            assert!((7..=14).contains(&climb(10, 100, s)));
            assert!((14..=26).contains(&climb(10, 1_000, s)));
            assert!((126..=168).contains(&climb(10, 100_000, s)));
        });
    }

    #[test]
    fn sampling_is_seeded_and_few_samples_approximate_lru() {
        let trace: Vec<u64> = (0..6000u64).map(|i| (i * 7919) % 997 % 300).collect();
        let run = |seed| hits(Sampled::new(100, Rank::Lru, 5, seed), 100, &trace);
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn protected_frames_are_skipped() {
        let mut p = Sampled::new(100, Rank::Lru, 3, 9);
        for f in 0..100u32 {
            p.on_insert(FrameId(f), &Access::unit(f as u64, f as u64));
        }
        for round in 0..20u32 {
            let v = p.evict(&Access::unit(999, 200), &|f| f.0 == 40 + round);
            assert_eq!(v, Some(FrameId(40 + round)));
        }
        assert_eq!(p.evict(&Access::unit(999, 200), &|_| false), None);
        assert_eq!(p.len(), 80);
    }
}
