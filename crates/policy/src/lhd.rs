//! LHD: evict the sampled object with the least *hit density*, learned per class of objects.
//!
//! Beckmann, Chen, Cidon, "LHD: Improving Cache Hit Rate by Maximizing Hit Density",
//! NSDI 2018, as libCacheSim ships it (`cache/eviction/LHD/`, the authors' simulator code
//! behind libCacheSim's interface; commit `aa0fc409`).
//!
//! # Algorithm
//!
//! An object's *hit density* is the hits it can expect per unit of space and time it will
//! still occupy: for an object of age `a` (requests since its last access, coarsened by a
//! right shift) in class `c`, `sum of hits at ages > a / sum over events at ages > a of the
//! time to them`, divided by its size. Classes group objects by `lastHitAge +
//! lastLastHitAge` on a log scale (16 classes; libCacheSim's 16 application classes all
//! hold application 1). Every hit and eviction is counted at its age in its class; every
//! 2^20 accesses the counts decay by 0.9 and the densities are recomputed (and, at the 6th
//! and 26th time, the age coarsening is fitted to the number of resident objects).
//! Until the first recomputation a density is `(c + 1) / (a + 1)` for the class's global
//! index `c`, the code's "GDSF-like" start (read from one table per process, as the C++
//! fills its tables at construction: not a division per candidate).
//!
//! To evict: draw 8 residents at random (32 after 50 recomputations), add the up to 8
//! recently admitted objects whose density at admission was below the running average of
//! victims' densities, and evict the least dense (the first drawn among equals). The
//! victim's density enters that running average (`0.9 * avg + 0.1 * density`). On each
//! access, with probability 1/32 and while 1% of the capacity is left for them (and before
//! 50 recomputations), an object becomes an *explorer* whose density is raised by 1.
//!
//! # Parameters
//!
//! * `associativity` (32): residents drawn per eviction once the model has settled
//!   (libCacheSim's and the paper's 32).
//! * `admissions` (8): recently admitted low-density objects that are always candidates.
//! * `seed` (0): the generator's seed; 0 derives it from the run's root seed.
//!
//! # Deviations and choices
//!
//! * Random draws come from a seeded xoshiro256++. libCacheSim draws from its MMIX LCG,
//!   but its `lhd` is not repeatable: six runs of one `cachesim` command give miss ratios
//!   0.8750 to 0.8827 at 50 objects on the slice. So there is no run to equal; the
//!   golden test compares means over seeds and runs (`crates/sim/tests/golden_libcachesim_lhd.rs`).
//!   Floating point follows the C++ (`f32` where it computes in `float`, `f64` where it
//!   promotes), so that nothing but the draws differs.
//! * Pins: when no drawn candidate is evictable, the least dense evictable resident is
//!   found by a scan (libCacheSim has no pins). The draws are made either way.
//! * The per-class counts cover 64 ages until an older one is counted, then all 20,000
//!   (16 classes), so short runs and their copies stay small. After that growth and the
//!   first refit (which allocates the densities) nothing is allocated.
//!
//! # Cost
//!
//! O(1) per hit and insertion (one draw); O(associativity + admissions) per eviction, and
//! every 2^20 accesses a pass over 16 x 20,000 ages; a unit-mode density skips the
//! division by the size (1). `victims` clones the policy. Memory per frame: 8 (key) + 8
//! (timestamp) + 4 + 4 (hit ages) + 4 (size) + 4 (position) + 1 (explorer) = 33 bytes,
//! padded to 40 in one record per frame, plus at most 3 x 1.28 MB of class statistics
//! (the starting densities, until the first refit, are one table shared by every LHD of
//! the process). One record rather than an array per field: an eviction reads 8 to 40
//! random frames, and each then costs one cache miss, not five.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::draws::Draws;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Ages are counted up to this (coarsened) value; older objects overflow.
const MAX_AGE: usize = 20_000;
/// Ages counted before the counts grow to all of them: 64 ages are the first 65,536
/// requests of an object's life at the starting coarsening (and the whole of a short test
/// run, whose copies then stay small).
const FIRST_AGES: usize = 64;
/// Classes by hit age; libCacheSim's application dimension only ever holds application 1.
const HIT_AGE_CLASSES: usize = 16;
/// The global index of class 0 of application 1 (`app * HIT_AGE_CLASSES`).
const FIRST_CLASS: usize = HIT_AGE_CLASSES;
/// Accesses between two recomputations of the densities.
const ACCESSES_PER_RECONFIGURATION: u64 = 1 << 20;
const EWMA_DECAY: f32 = 0.9;
const EXPLORER_BUDGET_FRACTION: f32 = 0.01;
const EXPLORE_INVERSE_PROBABILITY: u64 = 32;
const AGE_COARSENING_ERROR_TOLERANCE: f32 = 0.01;
/// Recomputations after which no explorer is made and all `associativity` draws are used.
const SETTLED_RECONFIGURATIONS: u32 = 50;
/// Draws per eviction before the model has settled.
const EARLY_CANDIDATES: u32 = 8;

/// Draws [`Lhd::evict`] scores before it compares them: the default associativity, so that
/// one batch serves a settled model.
const SCORED_TOGETHER: usize = 32;
/// No frame here.
const NONE: u32 = u32::MAX;
/// Mixed into the root seed so that this policy's stream differs from other components'.
const STREAM: u64 = 0x4c48_445f_6472_6177;

/// The starting densities of every class and age, `(c + 1) / (a + 1)` for the class's
/// global index `c` (flat, `class * MAX_AGE + age`): computed once per process and shared
/// by every LHD until its first recomputation, so that an eviction reads a density instead
/// of dividing for each candidate, and a copy of the policy copies no table.
fn initial_densities() -> &'static [f32] {
    static TABLE: OnceLock<Vec<f32>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..HIT_AGE_CLASSES)
            .flat_map(|c| (0..MAX_AGE).map(move |a| ClassModel::initial_density(c, a)))
            .collect()
    })
}

/// Per-class event counts and the densities learned from them.
#[derive(Clone, Debug)]
struct ClassModel {
    /// Hits per class and age (grown to the largest age counted).
    hits: Vec<Vec<f32>>,
    /// Evictions per class and age (likewise).
    evictions: Vec<Vec<f32>>,
    /// Densities per class and age, `class * MAX_AGE + age`: the shared starting table
    /// until the first recomputation, then this model's own.
    densities: Cow<'static, [f32]>,
}

impl ClassModel {
    fn new() -> Self {
        ClassModel {
            hits: vec![vec![0.0; FIRST_AGES]; HIT_AGE_CLASSES],
            evictions: vec![vec![0.0; FIRST_AGES]; HIT_AGE_CLASSES],
            densities: Cow::Borrowed(initial_densities()),
        }
    }

    /// The starting density of class `class` at `age`: `1. * (c + 1) / (a + 1)` in double,
    /// stored as float.
    fn initial_density(class: usize, age: usize) -> f32 {
        ((FIRST_CLASS + class + 1) as f64 / (age + 1) as f64) as f32
    }

    #[inline]
    fn density(&self, class: usize, age: usize) -> f32 {
        self.densities[class * MAX_AGE + age]
    }

    /// Count one event at `age` in `class`. The first age beyond [`FIRST_AGES`] grows
    /// every class's counts of that kind to all ages at once, so that this allocates at
    /// most once per kind in a run.
    fn count(counts: &mut [Vec<f32>], class: usize, age: usize) {
        if counts[class].len() <= age {
            for v in counts.iter_mut() {
                v.resize(MAX_AGE, 0.0);
            }
        }
        counts[class][age] += 1.0;
    }

    /// Decay every count (`updateClass`), after growing them to every age.
    fn decay(&mut self) {
        for v in self.hits.iter_mut().chain(self.evictions.iter_mut()) {
            v.resize(MAX_AGE, 0.0);
            for x in v.iter_mut() {
                *x *= EWMA_DECAY;
            }
        }
    }

    /// Move the counts to a new age coarsening, `delta` more bits of shift
    /// (`adaptAgeCoarsening`'s stretch and compress).
    fn rescale(&mut self, delta: i32) {
        for v in self.hits.iter_mut().chain(self.evictions.iter_mut()) {
            if delta < 0 {
                let d = (-delta) as u32;
                // one addition at a time into the last age, as the C++ does
                let mut last = v[MAX_AGE - 1];
                for &x in &v[MAX_AGE >> d..MAX_AGE - 1] {
                    last += x;
                }
                v[MAX_AGE - 1] = last;
                for a in (0..=MAX_AGE - 2).rev() {
                    v[a] = v[a >> d] / (1u32 << d) as f32;
                }
            } else if delta > 0 {
                let d = delta as u32;
                for a in 0..MAX_AGE >> d {
                    let mut sum = v[a << d];
                    for i in 1..(1usize << d) {
                        sum += v[(a << d) + i];
                    }
                    v[a] = sum;
                }
                for x in &mut v[MAX_AGE >> d..MAX_AGE - 1] {
                    *x = 0.0;
                }
            }
        }
    }

    /// Recompute every density from the counts (`modelHitDensity`).
    fn model(&mut self) {
        let densities = self.densities.to_mut().chunks_exact_mut(MAX_AGE);
        let classes = self.hits.iter().zip(&self.evictions).zip(densities);
        for ((hits, evictions), densities) in classes {
            let mut total_events = hits[MAX_AGE - 1] + evictions[MAX_AGE - 1];
            let mut total_hits = hits[MAX_AGE - 1];
            let mut lifetime = total_events;
            for a in (0..=MAX_AGE - 2).rev() {
                total_hits += hits[a];
                total_events += hits[a] + evictions[a];
                lifetime += total_events;
                densities[a] = if f64::from(total_events) > 1e-5 {
                    total_hits / lifetime
                } else {
                    0.0
                };
            }
        }
    }
}

/// `hitAgeClass` of a positive `age`: how many doublings bring it to `MAX_AGE`, at most
/// 15. The C++ doubles in a loop; the count is the difference of the two bit lengths, plus
/// one when the shifted age still falls short. Computed without the loop because every
/// candidate of every eviction needs it.
#[inline]
fn class_of_hit_age(age: u64) -> usize {
    const MAX: u64 = MAX_AGE as u64;
    if age >= MAX {
        return 0;
    }
    let mut log = age.leading_zeros() - MAX.leading_zeros();
    if age << log < MAX {
        log += 1;
    }
    (log as usize).min(HIT_AGE_CLASSES - 1)
}

/// What LHD keeps per frame.
#[derive(Clone, Copy, Debug)]
struct FrameState {
    key: u64,
    /// `timestamp` at the last access.
    stamp: u64,
    last_hit_age: u32,
    last_last_hit_age: u32,
    size: f32,
    /// Position in `order`, or `NONE` when not resident.
    position: u32,
    explorer: bool,
}

impl Default for FrameState {
    fn default() -> Self {
        FrameState {
            key: 0,
            stamp: 0,
            last_hit_age: 0,
            last_last_hit_age: 0,
            size: 0.0,
            position: NONE,
            explorer: false,
        }
    }
}

/// LHD over dense frames.
#[derive(Clone, Debug)]
pub struct Lhd {
    /// Per frame, in one record: a candidate's density reads most of it, so drawing one
    /// costs one cache miss instead of one per array.
    frames: Vec<FrameState>,
    /// Resident frames in libCacheSim's `tags` order (appended, swap-removed), which the
    /// random draws index.
    order: Vec<FrameId>,
    /// Recently admitted low-density objects: (key, frame), `NONE` frames empty.
    recent: Vec<(u64, u32)>,
    recent_head: usize,
    model: ClassModel,
    draws: Draws,
    associativity: u32,
    timestamp: u64,
    next_reconfiguration: u64,
    reconfigurations: u32,
    age_shift: u32,
    ewma_objects: f32,
    ewma_objects_mass: f32,
    ewma_victim_density: f32,
    explorer_budget: i64,
}

impl Lhd {
    /// LHD for `capacity` units with libCacheSim's settings, drawing from `seed`.
    pub fn new(capacity: u64, seed: u64) -> Self {
        Self::with_params(capacity, 32, 8, seed)
    }

    /// LHD with `associativity` draws and `admissions` recent candidates.
    pub fn with_params(
        capacity: u64,
        associativity: u32,
        admissions: usize,
        seed: u64,
    ) -> Self {
        let frames = crate::prealloc_frames(capacity);
        Lhd {
            frames: vec![FrameState::default(); frames],
            order: Vec::with_capacity(frames),
            recent: vec![(0, NONE); admissions],
            recent_head: 0,
            model: ClassModel::new(),
            draws: Draws::seeded(seed),
            associativity,
            timestamp: 0,
            next_reconfiguration: ACCESSES_PER_RECONFIGURATION,
            reconfigurations: 0,
            age_shift: 10,
            ewma_objects: 0.0,
            ewma_objects_mass: 0.0,
            ewma_victim_density: 0.0,
            explorer_budget: (capacity as f32 * EXPLORER_BUDGET_FRACTION) as i64,
        }
    }

    /// Coarsened age of `f` (`MAX_AGE - 1` when it overflows).
    #[inline]
    fn age(&self, f: FrameId) -> usize {
        let age = (self.timestamp - self.frames[f.index()].stamp) >> self.age_shift;
        (age as usize).min(MAX_AGE - 1)
    }

    /// The class of `f`: the log-scale bucket of its last two hit ages (`hitAgeClass`).
    #[inline]
    fn class(&self, f: FrameId) -> usize {
        let age = u64::from(self.frames[f.index()].last_hit_age)
            + u64::from(self.frames[f.index()].last_last_hit_age);
        if age == 0 {
            return HIT_AGE_CLASSES - 1;
        }
        class_of_hit_age(age)
    }

    /// `getHitDensity`: lowest for an overflowed age, explorers raised by one.
    #[inline]
    fn density(&self, f: FrameId) -> f32 {
        let age = self.age(f);
        if age == MAX_AGE - 1 {
            return f32::MIN;
        }
        let size = self.frames[f.index()].size;
        let d = self.model.density(self.class(f), age);
        // dividing by 1 changes nothing; a unit-mode run skips the division
        let d = if size == 1.0 { d } else { d / size };
        if self.frames[f.index()].explorer {
            (f64::from(d) + 1.0) as f32
        } else {
            d
        }
    }

    /// `update`: a hit (`insert == false`) or an insertion of `f`.
    fn update(&mut self, f: FrameId, access: &Access, insert: bool) {
        let i = f.index();
        if insert {
            self.frames[i].last_last_hit_age = MAX_AGE as u32;
            self.frames[i].last_hit_age = 0;
            self.frames[i].key = access.key;
            self.frames[i].position = self.order.len() as u32;
            self.order.push(f);
            self.frames[i].explorer = false;
        } else {
            let age = self.age(f);
            let class = self.class(f);
            ClassModel::count(&mut self.model.hits, class, age);
            if self.frames[i].explorer {
                self.explorer_budget += self.frames[i].size as i64;
            }
            self.frames[i].last_last_hit_age = self.frames[i].last_hit_age;
            self.frames[i].last_hit_age = age as u32;
        }
        self.frames[i].stamp = self.timestamp;
        self.frames[i].size = access.size.max(1) as f32;
        let explore = self
            .draws
            .next()
            .is_multiple_of(EXPLORE_INVERSE_PROBABILITY);
        self.frames[i].explorer = explore
            && self.explorer_budget > 0
            && self.reconfigurations < SETTLED_RECONFIGURATIONS;
        if self.frames[i].explorer {
            self.explorer_budget -= self.frames[i].size as i64;
        }
        if insert && !explore && self.density(f) < self.ewma_victim_density && !self.recent.is_empty() {
            let n = self.recent.len();
            self.recent[self.recent_head % n] = (access.key, f.0);
            self.recent_head += 1;
        }
        self.timestamp += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.reconfigure();
            self.next_reconfiguration = ACCESSES_PER_RECONFIGURATION;
            self.reconfigurations += 1;
        }
    }

    fn reconfigure(&mut self) {
        self.model.decay();
        self.adapt_age_coarsening();
        self.model.model();
    }

    /// `adaptAgeCoarsening`: fit the shift to the resident objects, at the 6th and 26th
    /// recomputation.
    fn adapt_age_coarsening(&mut self) {
        self.ewma_objects *= EWMA_DECAY;
        self.ewma_objects_mass *= EWMA_DECAY;
        self.ewma_objects += self.order.len() as f32;
        self.ewma_objects_mass += 1.0;
        let objects = self.ewma_objects / self.ewma_objects_mass;
        let optimal = (f64::from(objects)
            / f64::from(AGE_COARSENING_ERROR_TOLERANCE * MAX_AGE as f32))
            as f32;
        if self.reconfigurations == 5 || self.reconfigurations == 25 {
            let mut log2 = 1u32;
            while ((1u64 << log2) as f32) < optimal {
                log2 += 1;
            }
            let delta = log2 as i32 - self.age_shift as i32;
            self.age_shift = log2;
            self.ewma_objects *= 8.0;
            self.ewma_objects_mass *= 8.0;
            self.model.rescale(delta);
        }
    }

    /// The resident frame of a recently admitted key, if still there.
    #[inline]
    fn recent_frame(&self, (key, frame): (u64, u32)) -> Option<FrameId> {
        (frame != NONE
            && self.frames.get(frame as usize).is_some_and(|m| m.position != NONE)
            && self.frames[frame as usize].key == key)
            .then_some(FrameId(frame))
    }

    /// Forget `f` (`replaced` without the statistics): swap-remove it from `order`.
    fn unlink(&mut self, f: FrameId) {
        let pos = self.frames[f.index()].position as usize;
        self.frames[f.index()].position = NONE;
        self.order.swap_remove(pos);
        if let Some(&moved) = self.order.get(pos) {
            self.frames[moved.index()].position = pos as u32;
        }
    }
}

impl Policy for Lhd {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.update(frame, access, false);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.frames, frame, FrameState::default());
        // a key admitted again elsewhere is the same candidate to libCacheSim (found by
        // id); empty slots (no frame) match no key
        for entry in &mut self.recent {
            if entry.1 != NONE && entry.0 == access.key {
                entry.1 = frame.0;
            }
        }
        self.update(frame, access, true);
    }

    /// `rank`, then `replaced`.
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if self.order.is_empty() {
            return None;
        }
        let candidates = if self.reconfigurations > SETTLED_RECONFIGURATIONS {
            self.associativity
        } else {
            EARLY_CANDIDATES
        };
        let mut victim: Option<FrameId> = None;
        let mut victim_rank = f32::MAX;
        // Score a batch of draws, then choose among them: a draw's density takes three
        // dependent loads (its frame, its record, the class table), and choosing in the
        // same loop let every mispredicted "is this the best so far" branch throw away the
        // loads of the draws behind it. Same draws, same order, same victim.
        let mut drawn = [(FrameId(0), 0f32); SCORED_TOGETHER];
        let mut left = candidates as usize;
        while left > 0 {
            let batch = &mut drawn[..left.min(SCORED_TOGETHER)];
            left -= batch.len();
            for slot in batch.iter_mut() {
                let f = self.order[(self.draws.next() % self.order.len() as u64) as usize];
                *slot = (f, self.density(f));
            }
            for &(f, rank) in batch.iter() {
                if rank < victim_rank && evictable(f) {
                    victim = Some(f);
                    victim_rank = rank;
                }
            }
        }
        for r in 0..self.recent.len() {
            if let Some(f) = self.recent_frame(self.recent[r]) {
                let rank = self.density(f);
                if rank < victim_rank && evictable(f) {
                    victim = Some(f);
                    victim_rank = rank;
                }
            }
        }
        if victim.is_none() {
            for &f in &self.order {
                let rank = self.density(f);
                if evictable(f) && (victim.is_none() || rank < victim_rank) {
                    victim = Some(f);
                    victim_rank = rank;
                }
            }
        }
        let victim = victim?;
        self.ewma_victim_density =
            EWMA_DECAY * self.ewma_victim_density + (1.0 - EWMA_DECAY) * victim_rank;
        let (age, class) = (self.age(victim), self.class(victim));
        ClassModel::count(&mut self.model.evictions, class, age);
        if self.frames[victim.index()].explorer {
            self.explorer_budget += self.frames[victim.index()].size as i64;
        }
        self.unlink(victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        if self.frames[frame.index()].explorer {
            self.explorer_budget += self.frames[frame.index()].size as i64;
        }
        self.unlink(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for Lhd {
    const NAME: &'static str = "lhd";
    const SUMMARY: &'static str =
        "least hit density among sampled objects, learned per class (Beckmann et al., NSDI 2018)";
    const SEEDED: bool = true;
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "associativity",
            default: "32",
            help: "residents drawn per eviction once settled (8 before), 1..=1024",
        },
        ParamInfo {
            name: "admissions",
            default: "8",
            help: "recently admitted low-density objects always considered, 0..=1024",
        },
        ParamInfo {
            name: "seed",
            default: "0",
            help: "generator seed; 0 derives it from the run's root seed",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let associativity = params.integer("associativity", 1, 1024)? as u32;
        let admissions = params.integer("admissions", 0, 1024)? as usize;
        let seed = match params.integer("seed", 0, u64::MAX)? {
            0 => ctx.seed ^ STREAM,
            s => s,
        };
        Ok(Lhd::with_params(ctx.capacity, associativity, admissions, seed))
    }
}

#[cfg(test)]
mod tests {
    use super::{class_of_hit_age, ClassModel, Lhd, HIT_AGE_CLASSES, MAX_AGE};
    use crate::{Access, FrameId, Policy};

    #[test]
    fn the_closed_form_class_is_the_doubling_loop() {
        let by_loop = |mut age: u64| {
            let mut log = 0;
            while age < MAX_AGE as u64 && log < HIT_AGE_CLASSES - 1 {
                age <<= 1;
                log += 1;
            }
            log
        };
        for age in (1..=3 * MAX_AGE as u64).chain([u64::from(u32::MAX), 2 * u64::from(u32::MAX)]) {
            assert_eq!(class_of_hit_age(age), by_loop(age), "age {age}");
        }
    }

    #[test]
    fn hit_age_classes_are_log_buckets_of_the_last_two_hit_ages() {
        // hitAgeClass doubles the age until it reaches MAX_AGE (20,000), at most 15 times:
        // 0 -> 15 (never hit), 1 -> 15 (capped), 10,000 -> 1, 5,000 -> 2, 20,000 -> 0.
        let mut lhd = Lhd::new(4, 1);
        lhd.on_insert(FrameId(0), &Access::unit(7, 0));
        let class_of = |lhd: &mut Lhd, last: u32, last_last: u32| {
            lhd.frames[0].last_hit_age = last;
            lhd.frames[0].last_last_hit_age = last_last;
            lhd.class(FrameId(0))
        };
        assert_eq!(class_of(&mut lhd, 0, 0), 15);
        assert_eq!(class_of(&mut lhd, 1, 0), 15);
        assert_eq!(class_of(&mut lhd, 4_000, 6_000), 1);
        assert_eq!(class_of(&mut lhd, 5_000, 0), 2);
        // a newcomer: last hit age 0, the one before MAX_AGE
        assert_eq!(class_of(&mut lhd, 0, MAX_AGE as u32), 0);
    }

    #[test]
    fn densities_before_and_after_the_model_is_fitted() {
        let mut m = ClassModel::new();
        // the starting formula: (global class index + 1) / (age + 1); class 0 is index 16
        assert_eq!(m.density(0, 0), 17.0);
        assert_eq!(m.density(3, 1), 10.0);
        // one hit at age 0 and one eviction at age 1 in class 0, decayed by 0.9 each:
        // from the oldest age down, at age 1 events 0.9 (the eviction), hits 0,
        // lifetime 0.9 -> density 0; at age 0 hits 0.9, events 1.8, lifetime 0.9 + 1.8
        // -> 0.9 / 2.7 = 1/3. A class without events has density 0.
        ClassModel::count(&mut m.hits, 0, 0);
        ClassModel::count(&mut m.evictions, 0, 1);
        m.decay();
        m.model();
        assert_eq!(m.density(0, 1), 0.0);
        assert!((m.density(0, 0) - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(m.density(5, 0), 0.0);
    }

    #[test]
    fn a_density_is_the_class_density_per_unit_of_size() {
        // a newcomer at age 0 in class 0 has the starting density 17; an object of size 4
        // gets a quarter of it per unit, one of size 1 all of it (no explorer: a cache of
        // 4 units has no explorer budget)
        let mut lhd = Lhd::new(4, 1);
        lhd.on_insert(FrameId(0), &Access { size: 4, ..Access::unit(7, 0) });
        lhd.on_insert(FrameId(1), &Access::unit(8, 1));
        assert_eq!(lhd.density(FrameId(0)), 4.25);
        assert_eq!(lhd.density(FrameId(1)), 17.0);
    }

    #[test]
    fn eviction_takes_the_least_dense_of_the_candidates() {
        // Before the first fit a newcomer (class 0, age 0) has density 17, an object hit
        // at age 0 (class 15 by last ages 0 + 0) 32: the never-hit one goes as soon as
        // one of the 8 draws lands on it (all 8 miss it with probability 1/256; seed 3
        // draws it).
        let mut lhd = Lhd::with_params(2, 32, 8, 3);
        lhd.on_insert(FrameId(0), &Access::unit(1, 0));
        lhd.on_insert(FrameId(1), &Access::unit(2, 1));
        lhd.on_hit(FrameId(0), &Access::unit(1, 2));
        assert_eq!(lhd.evict(&Access::unit(3, 3), &|_| true), Some(FrameId(1)));
        assert_eq!(lhd.len(), 1);
        // with the only resident pinned there is nothing to give
        assert_eq!(lhd.evict(&Access::unit(3, 3), &|_| false), None);
    }
}
