//! Miniature simulation: any policy on the sampled stream, in a cache scaled by the rate
//! (Waldspurger et al., "Cache Modeling and Optimization using Miniature Simulations",
//! ATC'17).
//!
//! A sample of a fraction `R` of the keys, served by a cache of `R` times the capacity,
//! sees the same competition for room as the whole trace in the whole cache: every policy's
//! miss ratio carries over, with no stack property needed. Each (policy, capacity) pair
//! is its own [`Cache`] fed the same sampled stream; a batch of sampled requests goes to
//! all of them in parallel.
//!
//! The sampled keys are numbered densely in order of first appearance, as the replay
//! engine numbers a whole trace, and each request's logical time is its position in the
//! sampled stream: at rate 1 a miniature run is exactly the full replay (a test holds it
//! to that), including policies whose choices depend on key values. Each cache is also
//! built as a miniature ([`policy::BuildContext::with_miniature`]: the capacity it stands
//! for and its rate) and told each request's place in the whole trace
//! ([`policy::Policy::set_trace_clock`]), so that a policy that adapts every so many
//! requests (W-TinyLFU's sketch and hill climber) can do so at the same places in the
//! trace as the full cache; at rate 1 that place is the position in the stream, and the
//! run is still the full replay.
//!
//! **The scaled capacity** ([`scaled_capacity`]). A cache of `c` objects holds the
//! requested object itself and `c - 1` others; only the others thin out with the sample,
//! so the miniature cache holds `1 + R (c - 1)` objects, not `R c` (the paper's). For LRU
//! the two differ exactly as SHARDS' `1 + (d - 1) / R` and `d / R` do (see
//! [`super::shards`]): `R c` makes every miniature cache about one object too small, a
//! bias that matters when it holds a few dozen. Byte capacities are scaled by `R` alone:
//! the requested object's size is not known when the cache is built.
//!
//! A scaled capacity is rounded to the nearest unit and is at least 1; at a rate where
//! `R × capacity` is a handful of objects the estimate is coarse. Each cache therefore
//! takes its own rate from a [`RatePlan`] ([`super::nested`]): the base rate, raised for
//! small sizes so that the cache holds enough sampled objects. Caches of one rate share
//! its stream (one numbering of keys, one clock); a stream at a higher rate is a superset
//! of every lower one.
//! A policy may ask for more sampled objects than the pass's minimum
//! ([`policy::Policy::miniature_samples`]: W-TinyLFU's hill climber asks for twice): its
//! sizes are then planned on a ladder of their own ([`RatePlan::with_factors`]), the
//! other policies' unchanged.
//! Offline policies (Belady) need the future of the sampled stream and are refused.

use bufcache_core::FixedHashMap;
use policy::{Access, AnyPolicy, BuildContext, Cache, PolicySpec, NEVER};
use rayon::prelude::*;

use super::nested::RatePlan;
use super::MrcError;
use crate::replay::{Counts, ReplayError};

/// One request of the sampled stream, its key renumbered.
#[derive(Clone, Copy, Debug)]
pub struct SampledOp {
    /// Dense id of the key among the sampled keys.
    pub key: u64,
    /// Size in bytes.
    pub size: u32,
    /// Issuing stream.
    pub stream: u32,
    /// A delete (not a request; the object is dropped).
    pub delete: bool,
    /// The whole trace's requests before this one (deletes not counted): its place in
    /// the trace, which the miniature caches are told ([`policy::Policy::set_trace_clock`]).
    pub position: u64,
}

/// Numbers sampled keys densely in order of first appearance.
#[derive(Debug, Default)]
pub struct KeyIds {
    ids: FixedHashMap<u64>,
}

impl KeyIds {
    /// The dense id of `key` (a new one on its first appearance).
    #[inline]
    pub fn id(&mut self, key: u64) -> u64 {
        let next = self.ids.len() as u64;
        *self.ids.entry(key).or_insert(next)
    }

    /// Keys numbered.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True before the first key.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// One miniature cache and its counts.
struct MiniRun {
    cache: Cache<AnyPolicy>,
    counts: Counts,
    /// The rate level whose stream it is fed ([`RatePlan::levels`]).
    level: usize,
    /// Operations of its level's stream served so far: the logical time of the next.
    time: u64,
}

/// The result of one miniature run.
#[derive(Clone, Debug, PartialEq)]
pub struct MiniResult {
    /// The policy as written.
    pub policy: String,
    /// The full-size capacity it stands for (units or bytes).
    pub capacity: u64,
    /// The capacity of the miniature cache.
    pub scaled_capacity: u64,
    /// The sampling rate of its stream.
    pub rate: f64,
    /// Counts over the sampled stream.
    pub counts: Counts,
}

/// Every (policy, capacity) miniature cache of one pass.
pub struct MiniSim {
    runs: Vec<MiniRun>,
    /// (policy, full-size capacity, rate) of each run.
    labels: Vec<(String, u64, f64)>,
    byte_mode: bool,
}

impl std::fmt::Debug for MiniSim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniSim")
            .field("runs", &self.labels)
            .finish()
    }
}

/// The miniature capacity standing for `capacity` at `rate`: `1 + rate (capacity - 1)`
/// objects, or `rate x capacity` bytes in `byte_mode` (see the module docs), rounded, at
/// least 1. At rate 1 it is `capacity`.
pub fn scaled_capacity(capacity: u64, rate: f64, byte_mode: bool) -> u64 {
    let scaled = if byte_mode || capacity == 0 {
        capacity as f64 * rate
    } else {
        1.0 + (capacity - 1) as f64 * rate
    };
    (scaled.round() as u64).max(1)
}

impl MiniSim {
    /// Builds a miniature cache per policy and planned size (full-size units: objects, or
    /// bytes in `byte_mode`), each scaled by its own rate and fed its level's stream.
    pub fn new(
        policies: &[PolicySpec],
        plan: &RatePlan,
        byte_mode: bool,
        seed: u64,
    ) -> Result<Self, MrcError> {
        let mut runs = Vec::new();
        let mut labels = Vec::new();
        for spec in policies {
            // The plan's sizes for the policy's factor; a plan made without it
            // ([`RatePlan::new`]) serves it at the largest factor it has below (or its
            // smallest).
            let wanted = sample_factor(spec, seed)?;
            let factors = plan.sizes().iter().map(|s| s.factor);
            let factor = factors
                .clone()
                .filter(|&f| f <= wanted)
                .max()
                .or_else(|| factors.min())
                .unwrap_or(1);
            for size in plan.sizes().iter().filter(|s| s.factor == factor) {
                let (capacity, rate) = (size.capacity, size.rate);
                let scaled = scaled_capacity(capacity, rate, byte_mode);
                let ctx = BuildContext::new(scaled, seed).with_miniature(rate, capacity);
                let policy = build(spec, &ctx, capacity)?;
                if policy::Policy::needs_future(&policy) {
                    return Err(MrcError::Offline(spec.label()));
                }
                runs.push(MiniRun {
                    cache: Cache::new(policy, scaled),
                    counts: Counts::default(),
                    level: size.level,
                    time: 0,
                });
                labels.push((spec.label(), capacity, rate));
            }
        }
        Ok(MiniSim {
            runs,
            labels,
            byte_mode,
        })
    }

    /// Serves a batch of sampled operations through every miniature cache, in parallel:
    /// `batches[k]` is the next part of level `k`'s stream.
    pub fn feed(&mut self, batches: &[Vec<SampledOp>]) {
        let byte_mode = self.byte_mode;
        self.runs
            .par_iter_mut()
            .for_each(|run| serve(run, &batches[run.level], byte_mode));
    }

    /// Requests (deletes excluded) served by all the miniature caches together: the work
    /// of the pass.
    pub fn requests_served(&self) -> u64 {
        self.runs.iter().map(|r| r.counts.requests).sum()
    }

    /// The results, in order of (policy, capacity).
    pub fn results(&self) -> Vec<MiniResult> {
        self.runs
            .iter()
            .zip(&self.labels)
            .map(|(run, (policy, capacity, rate))| MiniResult {
                policy: policy.clone(),
                capacity: *capacity,
                scaled_capacity: run.cache.capacity(),
                rate: *rate,
                counts: run.counts,
            })
            .collect()
    }
}

/// `spec` built for `ctx`; an error names the full-size `capacity` it was for.
fn build(spec: &PolicySpec, ctx: &BuildContext, capacity: u64) -> Result<AnyPolicy, MrcError> {
    spec.build(ctx).map_err(|error| {
        ReplayError::Policy {
            policy: spec.label(),
            size: capacity.to_string(),
            error: Box::new(error),
        }
        .into()
    })
}

/// How many times the pass's `min_sampled` a miniature of `spec` asks for
/// ([`policy::Policy::miniature_samples`]), from the policy built at a small capacity.
pub fn sample_factor(spec: &PolicySpec, seed: u64) -> Result<u64, MrcError> {
    const PROBE: u64 = 64;
    let policy = build(spec, &BuildContext::new(PROBE, seed), PROBE)?;
    Ok(policy::Policy::miniature_samples(&policy).max(1))
}

/// The distinct [`sample_factor`]s of `policies`, in order of first appearance.
pub fn sample_factors(policies: &[PolicySpec], seed: u64) -> Result<Vec<u64>, MrcError> {
    let mut factors = Vec::new();
    for spec in policies {
        let f = sample_factor(spec, seed)?;
        if !factors.contains(&f) {
            factors.push(f);
        }
    }
    Ok(factors)
}

fn serve(run: &mut MiniRun, ops: &[SampledOp], byte_mode: bool) {
    let start = run.time;
    run.time += ops.len() as u64;
    for (i, op) in ops.iter().enumerate() {
        if op.delete {
            run.cache.remove(op.key);
            continue;
        }
        let access = Access {
            key: op.key,
            size: if byte_mode { op.size } else { 1 },
            time: start + i as u64,
            next_access: NEVER,
            stream: op.stream,
        };
        run.cache.set_trace_clock(op.position);
        let c = &mut run.counts;
        c.requests += 1;
        c.bytes_requested += u64::from(op.size);
        if run.cache.access(&access).is_hit() {
            c.hits += 1;
        } else {
            c.bytes_missed += u64::from(op.size);
        }
    }
}
