//! Hyperbolic caching: evict the sampled object with the lowest access rate since it
//! entered the cache.
//!
//! Blankstein, Sen, Freedman, "Hyperbolic Caching: Flexible Caching for Web Applications",
//! USENIX ATC 2017.
//!
//! # Algorithm
//!
//! Every resident object carries a count of its requests since it entered (1 on entry) and
//! the time it entered. Its priority is `count / age`, its request *rate* while cached: an
//! object that was popular long ago decays like `1/age` (a hyperbola, hence the name) and a
//! newcomer is judged on its own short history instead of having to climb past counts that
//! old objects gathered over hours, which is what keeps plain LFU from adapting. No
//! structure is kept in priority order (priorities change with time, so no heap could stay
//! sorted): to evict, draw `samples` resident objects at random and evict the one with the
//! lowest priority, as the paper does (and Redis does for its approximate LRU and LFU).
//!
//! # Parameters
//!
//! * `samples` (64, the paper's and libCacheSim's choice): objects drawn per eviction,
//!   uniformly and with replacement (as libCacheSim draws them), also when few objects are
//!   resident: the choice stays random, so the seed matters at every size.
//! * `seed` (0): the sampler's seed; 0 derives it from the run's root seed.
//! * `insertion_age` (false): measure age in *insertions* (how many objects entered the
//!   cache since) instead of in requests. Age then no longer depends on when hits happen, so
//!   a hit only raises a counter and a concurrent driver may count hits without a lock and
//!   report them in a batch before it evicts ([`crate::HitPath::Counter`]); the counter then
//!   saturates at 255 (a rate comparison among objects that were all hit more than 255 times
//!   since they entered loses its resolution). With the default, age is in requests as in
//!   the paper and libCacheSim, and hits must be reported in order.
//! * `sizes` (false): divide the priority by the object's size, the paper's size-aware
//!   variant for byte-sized caches (a large object must earn proportionally more hits).
//!
//! # Deviations and choices
//!
//! * Priorities are compared exactly in integer arithmetic (`count_a * age_b` against
//!   `count_b * age_a`, widened to 128 bits), not in floating point; ties keep the first
//!   object drawn.
//! * Frames the caller forbids evicting are skipped when drawn; if no drawn frame may be
//!   evicted, the first evictable frame after a random position is taken (as [`Random`]
//!   does), so an evictable frame is always found when one exists.
//! * libCacheSim's Hyperbolic is the same algorithm with its own random generator, so miss
//!   ratios agree statistically, not request by request.
//!
//! # Cost
//!
//! O(1) per hit and insertion; O(`samples`) per eviction. Memory: 24 bytes per frame
//! (entry time, count, size, position in the dense array of residents).
//!
//! [`Random`]: crate::RandomPolicy

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::resident::ResidentSet;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{Access, FrameId, Policy};

/// Mixed into the root seed so that the sampler's stream differs from other components'.
const STREAM: u64 = 0x6879_7065_7262_6f6c;

/// The counter's ceiling with `insertion_age`: what [`Policy::hit_path`] promises.
const COUNT_CAP: u8 = u8::MAX;

/// What Hyperbolic keeps per resident: every field a candidate's priority reads, in one
/// record stored at the resident's position in the sampled array, so that a draw reads
/// one record at the drawn position (no lookup by frame, no array per field).
#[derive(Clone, Copy, Debug)]
struct Scored {
    /// When the frame's object entered, on the clock `insertion_age` selects.
    entered: u64,
    /// Requests since the frame's object entered, counting the one that brought it in.
    count: u32,
    /// The object's size (1 unless `sizes`).
    size: u32,
}

/// Hyperbolic caching.
#[derive(Clone, Debug)]
pub struct Hyperbolic {
    /// Resident frames, in no order, for uniform sampling, each with its entry time,
    /// count and size.
    residents: ResidentSet<Scored>,
    /// Insertions so far: the clock of `insertion_age`.
    insertions: u64,
    samples: usize,
    insertion_age: bool,
    sizes: bool,
    rng: Xoshiro256PlusPlus,
}

impl Hyperbolic {
    /// Hyperbolic caching expecting about `frames` residents, drawing `samples` candidates
    /// per eviction from `seed`, with age in requests and sizes ignored (the paper's
    /// default form).
    pub fn new(frames: usize, samples: usize, seed: u64) -> Self {
        assert!(samples > 0, "hyperbolic needs at least one sample");
        Hyperbolic {
            residents: ResidentSet::new(frames),
            insertions: 0,
            samples,
            insertion_age: false,
            sizes: false,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// Measure age in insertions (see the module documentation).
    pub fn with_insertion_age(mut self, on: bool) -> Self {
        self.insertion_age = on;
        self
    }

    /// Divide priorities by object size.
    pub fn with_sizes(mut self, on: bool) -> Self {
        self.sizes = on;
        self
    }

    /// The current time on this policy's age clock, for a request at `access`.
    fn now(&self, access: &Access) -> u64 {
        if self.insertion_age {
            // the incoming object would be the next insertion
            self.insertions + 1
        } else {
            access.time
        }
    }

}

impl Policy for Hyperbolic {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// With age in insertions a hit only raises a counter saturating at 255; with age in
    /// requests the time of every event matters, so hits go in order.
    fn hit_path(&self) -> crate::HitPath {
        if self.insertion_age {
            crate::HitPath::Counter { cap: COUNT_CAP }
        } else {
            crate::HitPath::Ordered
        }
    }

    fn len(&self) -> usize {
        self.residents.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let cap = if self.insertion_age {
            u32::from(COUNT_CAP)
        } else {
            u32::MAX
        };
        let c = &mut self.residents.payload_mut(frame).count;
        *c = c.saturating_add(1).min(cap);
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.insertions += 1;
        let scored = Scored {
            entered: if self.insertion_age {
                self.insertions
            } else {
                access.time
            },
            count: 1,
            size: access.size,
        };
        self.residents.insert_with(frame, scored);
    }

    /// `a` goes before `b` when its priority is strictly lower:
    /// `count_a / (age_a * size_a) < count_b / (age_b * size_b)`, cross-multiplied. A
    /// count is below 2^32 and an age times a size below 2^96, so neither product
    /// overflows 128 bits; without sizes the denominators are plain ages, below 2^64, and
    /// each product is one 64 x 64-bit multiplication (the loop is compiled once for each
    /// case, so the choice is not made per draw).
    fn evict(&mut self, access: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let now = self.now(access);
        let age = move |s: &Scored| now.saturating_sub(s.entered).max(1);
        if self.sizes {
            self.residents.take_best_of_sample(
                &mut self.rng,
                self.samples,
                evictable,
                |_, s| (s.count, u128::from(age(s)) * u128::from(s.size.max(1))),
                |&(ca, da), &(cb, db)| u128::from(ca) * db < u128::from(cb) * da,
            )
        } else {
            self.residents.take_best_of_sample(
                &mut self.rng,
                self.samples,
                evictable,
                |_, s| (s.count, age(s)),
                |&(ca, da), &(cb, db)| {
                    u128::from(ca) * u128::from(db) < u128::from(cb) * u128::from(da)
                },
            )
        }
    }

    fn remove(&mut self, frame: FrameId) {
        self.residents.remove(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for Hyperbolic {
    const NAME: &'static str = "hyperbolic";
    const SUMMARY: &'static str =
        "evict the sampled object with the lowest hits per time cached (Blankstein et al., ATC 2017)";
    const SEEDED: bool = true;
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "samples",
            default: "64",
            help: "objects drawn per eviction",
        },
        ParamInfo {
            name: "seed",
            default: "0",
            help: "sampler seed; 0 derives it from the run's root seed",
        },
        ParamInfo {
            name: "insertion_age",
            default: "false",
            help: "age in insertions, not requests: hits become lock-free counters in the pool",
        },
        ParamInfo {
            name: "sizes",
            default: "false",
            help: "divide the priority by the object's size (size-aware variant)",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let samples = params.integer("samples", 1, 1 << 20)? as usize;
        let seed = match params.integer("seed", 0, u64::MAX)? {
            0 => ctx.seed ^ STREAM,
            s => s,
        };
        Ok(
            Hyperbolic::new(crate::prealloc_frames(ctx.capacity), samples, seed)
                .with_insertion_age(params.boolean("insertion_age")?)
                .with_sizes(params.boolean("sizes")?),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits};
    use crate::{Access, FrameId, Hyperbolic, Policy};

    /// So many samples for so few residents that every resident is drawn (the chance
    /// that one of three is missed by 2,000 draws is below 10^-350): the exact minimum is
    /// evicted, and the seed fixes the draws anyway.
    fn exact(frames: usize) -> Hyperbolic {
        Hyperbolic::new(frames, 2000, 1)
    }

    #[test]
    fn evicts_the_lowest_rate_not_the_oldest_or_least_frequent() {
        // capacity 3; times 0..: 1 1 1 2 3 3 4
        // at t=6 (key 4): 1 entered 0 with 3 requests: 3/6 = 0.50
        //                 2 entered 3 with 1 request:  1/3 = 0.33  <- lowest rate
        //                 3 entered 4 with 2 requests: 2/2 = 1.00
        // LRU would evict 1 (least recent), LFU would evict 2 as well but for its count;
        // the next case tells them apart.
        let ev = evictions(exact(3), 3, &[1, 1, 1, 2, 3, 3, 4]);
        assert_eq!(ev.concat(), vec![2]);
        // 1 1 2 2 2 2 3 4 at t=7 (key 4): 1: 2/7 = 0.29, 2: 4/5 = 0.8, 3: 1/1 = 1
        // LFU evicts 3 (count 1); hyperbolic evicts 1, whose popularity has decayed.
        let ev = evictions(exact(3), 3, &[1, 1, 2, 2, 2, 2, 3, 4]);
        assert_eq!(ev.concat(), vec![1]);
    }

    #[test]
    fn of_equal_counts_the_older_goes() {
        // at t=2: 1: 1/2, 2: 1/1 -> 1
        assert_eq!(evictions(exact(2), 2, &[1, 2, 3]).concat(), vec![1]);
    }

    #[test]
    fn insertion_age_ignores_when_hits_happened() {
        // the same requests with extra hits between insertions: in insertion age the
        // ages are the same, so only the counts decide
        let p = || exact(2).with_insertion_age(true);
        // 1 enters (ins 1), 2 enters (ins 2), 2 hit x3, 3 arrives (now = 3):
        // 1: 1/(3-1) = 0.5, 2: 4/(3-2) = 4 -> evict 1
        assert_eq!(evictions(p(), 2, &[1, 2, 2, 2, 2, 3]).concat(), vec![1]);
        // 1 hit x3 before 2 enters: 1: 4/2 = 2, 2: 1/1 = 1 -> evict 2
        assert_eq!(evictions(p(), 2, &[1, 1, 1, 1, 2, 3]).concat(), vec![2]);
    }

    #[test]
    fn counter_saturates_only_with_insertion_age() {
        let mut p = exact(1).with_insertion_age(true);
        p.on_insert(FrameId(0), &Access::unit(7, 0));
        for t in 1..1000 {
            p.on_hit(FrameId(0), &Access::unit(7, t));
        }
        assert_eq!(p.residents.payload_mut(FrameId(0)).count, 255);
        let mut p = exact(1);
        p.on_insert(FrameId(0), &Access::unit(7, 0));
        for t in 1..1000 {
            p.on_hit(FrameId(0), &Access::unit(7, t));
        }
        assert_eq!(p.residents.payload_mut(FrameId(0)).count, 1000);
    }

    #[test]
    fn sizes_make_a_large_object_earn_more_hits() {
        let mut p = exact(2).with_sizes(true);
        let big = Access {
            size: 10,
            ..Access::unit(1, 0)
        };
        p.on_insert(FrameId(0), &big);
        p.on_insert(FrameId(1), &Access::unit(2, 1));
        for t in 2..6 {
            p.on_hit(FrameId(0), &Access { time: t, ..big });
        }
        // at t=6: big: 5 / (6 * 10) = 0.083; small: 1 / 5 = 0.2 -> the big one goes
        assert_eq!(p.evict(&Access::unit(3, 6), &|_| true), Some(FrameId(0)));
        // without sizes the big one's 5 hits keep it: 5/6 > 1/5
        let mut q = exact(2);
        q.on_insert(FrameId(0), &big);
        q.on_insert(FrameId(1), &Access::unit(2, 1));
        for t in 2..6 {
            q.on_hit(FrameId(0), &Access { time: t, ..big });
        }
        assert_eq!(q.evict(&Access::unit(3, 6), &|_| true), Some(FrameId(1)));
    }

    #[test]
    fn protected_frames_are_never_evicted_and_sampling_still_finds_one() {
        // 200 residents, 4 samples: protect all but one frame
        let mut p = Hyperbolic::new(200, 4, 9);
        for f in 0..200u32 {
            p.on_insert(FrameId(f), &Access::unit(f as u64, f as u64));
        }
        for round in 0..50 {
            let victim = p.evict(&Access::unit(1000, 300 + round), &|f| f.0 == 123 + round as u32);
            assert_eq!(victim, Some(FrameId(123 + round as u32)));
        }
        assert_eq!(p.evict(&Access::unit(1000, 999), &|_| false), None);
        assert_eq!(p.len(), 150);
    }

    #[test]
    fn sampling_is_seeded() {
        let trace: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 997 % 300).collect();
        let run = |seed| hits(Hyperbolic::new(100, 8, seed), 100, &trace);
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
