//! One streaming pass: SHARDS and miniature simulation from one sample.
//!
//! The trace is read in batches; each request's key is hashed once
//! ([`super::filter::salted_key_hash`], under the sample seed's salt). The SHARDS estimator sees every request (it counts the
//! ones it drops, for the first-bucket adjustment); requests to keys under the miniature
//! simulations' threshold are renumbered and collected, and every [`SAMPLED_BATCH`] of them
//! goes to all miniature caches in parallel, while the next batch is being read. Memory: the reader's buffer, the SHARDS state
//! (bounded at fixed size), the miniature caches (the rate times the full ones) and one
//! batch of sampled requests. The trace is never held.
//!
//! Capacities given as objects or bytes are known before the pass: the SHARDS histogram
//! then has one bucket per capacity and is exact at them. Fractions of the working set
//! (and `--sizes N`) are resolved against the working set the sample itself estimates;
//! SHARDS keeps log-linear buckets for them, and miniature simulation, which must size its
//! caches before the first request, reads the trace once more beforehand to estimate it
//! ([`ApproxResult::passes`] says 2).
//!
//! ```
//! use sim::mrc::{approximate, ApproxConfig, Method};
//! use sim::CacheSize;
//! use trace::{text::TextReader, TraceReader};
//!
//! // A loop over 100 keys, ten times: LRU misses everything below 100 objects.
//! let text: String = (0..1000).map(|i| format!("{}\n", i % 100)).collect();
//! let open = || -> Result<Box<dyn TraceReader>, trace::TraceError> {
//!     Ok(Box::new(TextReader::new(std::io::Cursor::new(text.clone().into_bytes()), "loop.txt".as_ref(), 4096)))
//! };
//! let config = ApproxConfig {
//!     sizes: vec![CacheSize::units(50), CacheSize::units(100)],
//!     ..ApproxConfig::new(Method::ShardsRate(1.0))
//! };
//! let result = approximate(&open, &config, &|_| {}).unwrap();
//! let lru = &result.curves[0];
//! assert_eq!((lru.policy.as_str(), lru.method), ("lru", "shards"));
//! assert_eq!(lru.points[0].miss_ratio, 1.0);
//! assert_eq!(lru.points[1].miss_ratio, 0.1);
//! assert_eq!(result.working_set.objects, 100.0);
//! ```

use policy::PolicySpec;
use serde::Serialize;
use trace::{Op, Request, TraceError, TraceReader};

use super::filter::{salted_key_hash, sample_salt, SpatialFilter};
use super::histogram::{Buckets, CurvePoint};
use super::hot::{HotConfig, HotKeys};
use super::minisim::{KeyIds, MiniResult, MiniSim, SampledOp};
use super::nested::{NestedShards, PlannedSize, RatePlan, DEFAULT_MIN_SAMPLED};
use super::shards::{stack_bound, Sampling, Shards};
use super::{even_grid, MrcError};
use crate::size::{CacheSize, SizeKind, WorkingSet};

/// Requests read per batch.
pub const READ_BATCH: usize = 1 << 16;

/// Sampled requests handed to the miniature caches at a time: enough that the parallel
/// hand-off costs nothing next to serving them.
pub const SAMPLED_BATCH: usize = 1 << 15;

/// Which approximation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// SHARDS at a fixed rate (the LRU curve only).
    ShardsRate(f64),
    /// SHARDS holding at most this many keys (the LRU curve only).
    ShardsSize(usize),
    /// Miniature simulation of every policy at this rate, with the fixed-rate SHARDS LRU
    /// curve from the same sample.
    MiniSim(f64),
}

impl Method {
    /// The method's name in reports (`shards`, `shards-fixed`, `minisim`).
    pub fn name(&self) -> &'static str {
        match self {
            Method::ShardsRate(_) => "shards",
            Method::ShardsSize(_) => "shards-fixed",
            Method::MiniSim(_) => "minisim",
        }
    }
}

/// What to compute.
#[derive(Clone, Debug)]
pub struct ApproxConfig {
    /// The method and its rate or sample budget.
    pub method: Method,
    /// Capacities: objects or bytes, fractions of the working set, or empty for
    /// `points` evenly spread up to the (estimated) working set.
    pub sizes: Vec<CacheSize>,
    /// Points of the default grid when `sizes` is empty.
    pub points: usize,
    /// Byte mode: objects weigh their size and capacities are bytes; otherwise every
    /// object is one unit.
    pub byte_mode: bool,
    /// Policies for miniature simulation (ignored by the SHARDS methods).
    pub policies: Vec<PolicySpec>,
    /// Apply SHARDS' first-bucket adjustment, and its counterpart to miniature caches
    /// (default true; see [`approximate`]).
    pub adjust: bool,
    /// Seed of randomized policies.
    pub seed: u64,
    /// Seed of the key sample ([`super::filter::sample_salt`]): 0, the default, is the
    /// project's fixed hash; another seed draws another sample at the same rate.
    pub sample_seed: u64,
    /// The fewest sampled objects a cache should hold ([`super::nested`]): sizes where the
    /// base rate gives fewer are served at a higher, nested rate (a rung of a ladder that
    /// halves from the smallest size's need, [`super::nested::level_rate`]: miniature
    /// caches fed that rate's stream; for fixed-rate SHARDS, one bounded estimator at the
    /// widest rung for every raised size, [`super::nested::NestedShards::merged`]). 0
    /// keeps every size at the base rate. Fixed-size
    /// SHARDS (object mode) gives its levels at most half its budget and uses a level
    /// where its rate ends above the main sample's; in byte mode it ignores this.
    pub min_sampled: u64,
    /// Stratified SHARDS ([`super::hot`]): up to `hot.limit` of the hottest keys, found
    /// during the pass, are sampled at the square root of each estimator's rate (rate 1 at
    /// fixed size) by the estimator and its nested levels, the rest at the rate. Off
    /// (limit 0) by default; object-mode SHARDS only.
    pub hot: HotConfig,
}

impl ApproxConfig {
    /// Defaults: 20 points over the working set, object mode, adjusted, LRU, seed 42.
    pub fn new(method: Method) -> Self {
        ApproxConfig {
            method,
            sizes: Vec::new(),
            points: 20,
            byte_mode: false,
            policies: vec![PolicySpec::parse("lru").expect("lru is registered")],
            adjust: true,
            seed: 42,
            sample_seed: 0,
            min_sampled: DEFAULT_MIN_SAMPLED,
            hot: HotConfig::off(),
        }
    }

    /// Checks the rate or budget and the sizes.
    pub fn validate(&self) -> Result<(), MrcError> {
        match self.method {
            Method::ShardsRate(r) | Method::MiniSim(r) if !(r > 0.0 && r <= 1.0) => {
                return Err(MrcError::Setting {
                    setting: "rate",
                    value: r.to_string(),
                    reason: "a rate is a fraction of the keys, in (0, 1]",
                })
            }
            Method::ShardsSize(0) => {
                return Err(MrcError::Setting {
                    setting: "samples",
                    value: "0".into(),
                    reason: "at least one key must be sampled",
                })
            }
            _ => {}
        }
        if self.hot.enabled() {
            self.validate_hot()?;
        }
        if self.sizes.is_empty() && self.points == 0 {
            return Err(MrcError::Setting {
                setting: "points",
                value: "0".into(),
                reason: "give at least one point, or a list of sizes",
            });
        }
        for size in &self.sizes {
            if let SizeKind::Bytes(_) = size.kind {
                // Resolving against an empty working set checks unit/byte agreement only.
                size.resolve(
                    !self.byte_mode,
                    WorkingSet {
                        objects: 0,
                        bytes: 0,
                    },
                )?;
            }
        }
        Ok(())
    }

    /// Stratification works on SHARDS' object curves, and a fixed-size sample must keep
    /// room for sampled keys beside the promoted ones (in the main sample and in each
    /// nested level).
    fn validate_hot(&self) -> Result<(), MrcError> {
        let setting = |reason| {
            Err(MrcError::Setting {
                setting: "hot",
                value: self.hot.limit.to_string(),
                reason,
            })
        };
        if self.byte_mode {
            return setting("hot keys are tracked for object curves only (--ignore-size)");
        }
        match self.method {
            Method::MiniSim(_) => setting("hot keys stratify SHARDS, not miniature simulation"),
            Method::ShardsSize(samples) if self.hot.limit.saturating_mul(8) > samples => {
                setting("at most an eighth of --samples may be promoted keys")
            }
            _ if self.hot.every == 0 || self.hot.threshold == 0 => {
                setting("the detector's gap and threshold must be at least 1")
            }
            _ => Ok(()),
        }
    }

    /// Capacities when every size is absolute, `None` when some need the working set.
    fn absolute_capacities(&self) -> Result<Option<Vec<u64>>, MrcError> {
        if self.sizes.is_empty()
            || self
                .sizes
                .iter()
                .any(|s| matches!(s.kind, SizeKind::Fraction(_)))
        {
            return Ok(None);
        }
        let mut caps = Vec::with_capacity(self.sizes.len());
        for s in &self.sizes {
            caps.push(s.resolve(
                !self.byte_mode,
                WorkingSet {
                    objects: 0,
                    bytes: 0,
                },
            )?);
        }
        Ok(Some(sorted(caps)))
    }

    /// Capacities against a working set.
    fn capacities_for(&self, ws: WorkingSet) -> Result<Vec<u64>, MrcError> {
        if self.sizes.is_empty() {
            let total = if self.byte_mode { ws.bytes } else { ws.objects };
            return Ok(even_grid(total, self.points));
        }
        let mut caps = Vec::with_capacity(self.sizes.len());
        for s in &self.sizes {
            caps.push(s.resolve(!self.byte_mode, ws)?);
        }
        Ok(sorted(caps))
    }
}

fn sorted(mut caps: Vec<u64>) -> Vec<u64> {
    caps.sort_unstable();
    caps.dedup();
    caps
}

/// One approximate curve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApproxCurve {
    /// The policy as written (`lru` for SHARDS).
    pub policy: String,
    /// `shards`, `shards-fixed` or `minisim`; `shards+hot` and `shards-fixed+hot` when
    /// stratified ([`ApproxConfig::hot`]).
    pub method: &'static str,
    /// The base sampling rate of the curve (the final one at fixed size); each point
    /// carries the rate that served it, higher at small sizes ([`super::nested`]).
    pub rate: f64,
    /// The smallest capacity the sample resolves ([`min_resolved_capacity`]); points below
    /// it have `resolved` false.
    pub min_resolved_capacity: u64,
    /// Keys this curve tracked at rate 1 besides its sample (stratified SHARDS,
    /// [`super::hot`]); 0 for a plain sample.
    pub hot: usize,
    /// Points in increasing capacity.
    pub points: Vec<CurvePoint>,
}

/// The working set estimated from the sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct WorkingSetEstimate {
    /// Distinct objects.
    pub objects: f64,
    /// Their bytes (each at its latest size).
    pub bytes: f64,
}

/// Everything one approximate pass produced.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApproxResult {
    /// Curves: SHARDS first, then one per miniature policy.
    pub curves: Vec<ApproxCurve>,
    /// Requests read (deletes excluded).
    pub requests: u64,
    /// Of which sampled (by SHARDS).
    pub sampled_requests: u64,
    /// Keys held by SHARDS at the end.
    pub sampled_keys: u64,
    /// Stratified SHARDS: keys promoted to the hot stratum (0 when not stratified).
    pub hot_keys: u64,
    /// Stratified SHARDS: requests to promoted keys from their promotion on, of those
    /// under the promoted stratum's threshold (the requests the levels take for them).
    pub hot_requests: u64,
    /// Stratified SHARDS: the request at which the last of `hot.limit` keys was promoted
    /// (the detector's work ends there), `None` when fewer were.
    pub hot_filled_at: Option<u64>,
    /// Working-set estimate.
    pub working_set: WorkingSetEstimate,
    /// Most SHARDS state held at any time (stack, histogram, heap), in bytes.
    pub shards_state_bytes: u64,
    /// Times the trace was read (2 when miniature caches needed the working set first).
    pub passes: u32,
    /// Requests served by all miniature caches together (each cache counts the requests
    /// of its own rate's stream), or for fixed-rate SHARDS by its nested levels (each
    /// counts its rate's sample): the work the sizes and their rates cost.
    pub miniature_requests: u64,
}

/// Runs the configured approximation over the trace `open` opens (once, or twice for
/// miniature simulation at fractional sizes). `progress` is called with the requests
/// read since its last call.
pub fn approximate(
    open: &dyn Fn() -> Result<Box<dyn TraceReader>, TraceError>,
    config: &ApproxConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ApproxResult, MrcError> {
    config.validate()?;
    let known = config.absolute_capacities()?;
    let sampling = match config.method {
        Method::ShardsRate(r) | Method::MiniSim(r) => Sampling::Rate(r),
        Method::ShardsSize(s) => Sampling::Samples(s),
    };
    let salt = sample_salt(config.sample_seed);
    let mut passes = 1;
    let plan = rate_plan(config, known.as_deref(), &mut || {
        passes = 2;
        estimate_working_set(&mut *open()?, sampling, config.byte_mode, salt, progress)
    })?;
    let (mut mini, nested) = match (config.method, plan) {
        (_, None) => (None, None),
        (Method::MiniSim(_), Some(plan)) => (
            Some((
                MiniSim::new(&config.policies, &plan, config.byte_mode, config.seed)?,
                plan,
            )),
            None,
        ),
        (Method::ShardsRate(_), Some(plan)) => {
            (None, Some(NestedShards::merged(&plan, config.byte_mode)))
        }
        (_, Some(plan)) => (None, Some(NestedShards::new(&plan, config.byte_mode))),
    };
    let nested = match nested {
        Some(n) if config.hot.enabled() => Some(n.stratified(config.hot.limit)),
        nested => nested,
    };
    let buckets = match &known {
        Some(caps) => Buckets::Edges(caps.clone()),
        None => Buckets::LogLinear,
    };
    // A fixed-size sample shares its budget with its nested levels.
    let sampling = match (sampling, &nested) {
        (Sampling::Samples(s), Some(n)) => Sampling::Samples(s - n.keys_bound()),
        (sampling, _) => sampling,
    };
    // Stratification goes where the hot keys fill the caches: the nested levels' small
    // sizes when there are levels (the base sizes' error comes from keys far below the
    // hottest, and a plain base estimator spares the hot requests a second stack), the
    // base estimator otherwise.
    let base_stratified = config.hot.enabled() && nested.is_none();
    let shards = if base_stratified {
        Shards::stratified(sampling, buckets)
    } else {
        Shards::new(sampling, buckets, config.byte_mode)
    };
    // The detector promotes only keys some stratified estimator may keep as promoted.
    let hot = config.hot.enabled().then(|| {
        let candidates = match &nested {
            Some(n) => n.hot_filter().unwrap_or_else(|| shards.hot_filter()),
            None => shards.hot_filter(),
        };
        HotKeys::new(config.hot, config.sample_seed, candidates)
    });
    let levels: Vec<SpatialFilter> = mini
        .as_ref()
        .map_or(Vec::new(), |(_, plan)| plan.levels().to_vec());
    let mut sampler = Sampler {
        reader: open()?,
        batch: vec![Request::default(); READ_BATCH],
        shards,
        salt,
        levels: levels.clone(),
        ids: levels.iter().map(|_| KeyIds::default()).collect(),
        nested,
        hot,
        base_stratified,
        requests: 0,
    };
    // Reading and sampling the next batch overlaps with the miniature caches serving the
    // previous one. One batch per rate level.
    let batches = || -> Vec<Vec<SampledOp>> {
        levels
            .iter()
            .map(|_| Vec::with_capacity(SAMPLED_BATCH))
            .collect()
    };
    let mut filling = batches();
    let mut ready = batches();
    loop {
        let (read, ()) = rayon::join(
            || sampler.fill(&mut filling, progress),
            || {
                if let Some((sim, _)) = &mut mini {
                    sim.feed(&ready);
                }
            },
        );
        let at_end = read?;
        std::mem::swap(&mut filling, &mut ready);
        filling.iter_mut().for_each(Vec::clear);
        if at_end {
            break;
        }
    }
    let Sampler {
        mut shards,
        nested,
        hot,
        ..
    } = sampler;
    if shards.requests() == 0 {
        return Err(MrcError::Empty);
    }
    let ws = shards.working_set();
    let mut miniature_requests = 0;
    let working_set = WorkingSetEstimate {
        objects: ws.requests,
        bytes: ws.bytes,
    };
    let caps = match &known {
        Some(caps) => caps.clone(),
        None => config.capacities_for(WorkingSet {
            objects: working_set.objects.round() as u64,
            bytes: working_set.bytes.round() as u64,
        })?,
    };
    let mut curves = vec![ApproxCurve {
        policy: "lru".into(),
        method: match (config.method, config.hot.enabled()) {
            (Method::ShardsSize(_), false) => "shards-fixed",
            (Method::ShardsSize(_), true) => "shards-fixed+hot",
            (_, false) => "shards",
            (_, true) => "shards+hot",
        },
        rate: shards.filter().rate(),
        min_resolved_capacity: 0,
        hot: 0,
        points: shards.curve(&caps, config.adjust),
    }];
    let mut state_bytes = shards.peak_state_bytes() + hot.as_ref().map_or(0, HotKeys::state_bytes);
    let promoted = hot.as_ref().map_or(0, |h| h.promoted());
    curves[0].hot = promoted;
    if let Some(nested) = nested {
        // SHARDS: a raised size takes its level's estimate (the same estimator at a higher
        // rate; see nested) when that rate is above the one the main sample ended at
        // (always, at a fixed rate).
        miniature_requests = nested.requests_served();
        state_bytes += nested.state_bytes();
        for raised in nested.curves(shards.requests(), shards.bytes(), config.adjust) {
            if let Some(p) = curves[0]
                .points
                .iter_mut()
                .find(|p| p.capacity == raised.capacity && p.rate < raised.rate)
            {
                *p = raised;
            }
        }
    }
    if let Some((mut sim, _)) = mini {
        sim.feed(&ready);
        miniature_requests = sim.requests_served();
        let results = sim.results();
        if let Method::MiniSim(rate) = config.method {
            for spec in &config.policies {
                let label = spec.label();
                let points = results
                    .iter()
                    .filter(|r| r.policy == label)
                    .map(|r| mini_point(r, &shards, config.adjust))
                    .collect();
                curves.push(ApproxCurve {
                    policy: label,
                    method: "minisim",
                    rate: SpatialFilter::with_rate(rate).rate(),
                    min_resolved_capacity: 0,
                    hot: 0,
                    points,
                });
            }
        }
    }
    for curve in &mut curves {
        curve.min_resolved_capacity =
            min_resolved_capacity(curve.rate, config.byte_mode, working_set);
        for p in &mut curve.points {
            p.resolved = p.capacity >= min_resolved_capacity(p.rate, config.byte_mode, working_set);
        }
    }
    Ok(ApproxResult {
        curves,
        requests: shards.requests(),
        sampled_requests: shards.sampled_requests(),
        sampled_keys: shards.sampled_keys() as u64,
        hot_keys: promoted as u64,
        hot_requests: hot.as_ref().map_or(0, HotKeys::hot_requests),
        hot_filled_at: hot.as_ref().and_then(HotKeys::filled_at),
        working_set,
        shards_state_bytes: state_bytes as u64,
        passes,
        miniature_requests,
    })
}

/// The smallest capacity a sample at `rate` resolves: one that holds at least one sampled
/// object, `1 / rate` objects (in byte mode, `1 / rate` objects of the working set's mean
/// size).
///
/// Why this is a hard limit: a sampled key's distance counts the other *sampled* keys
/// since its previous access, so every distance from 1 to about `1 / rate` shows up as the
/// same sampled distance 1 (nothing sampled in between). Below `1 / rate` objects the
/// sample cannot tell a reuse that hits from one that misses; a miniature cache there is
/// under one object. Above it the estimate is unbiased but noisy: its error falls as the
/// number of sampled objects in the cache, `rate x capacity`, grows (docs/mrc.md).
pub fn min_resolved_capacity(rate: f64, byte_mode: bool, working_set: WorkingSetEstimate) -> u64 {
    let unit = if byte_mode && working_set.objects > 0.0 {
        working_set.bytes / working_set.objects
    } else {
        1.0
    };
    // The rate is a threshold over 2^64 hashes, a hair off the decimal asked for: do not
    // let 1 / 0.01 = 100.000000001 round up to 101.
    (unit / rate * (1.0 - 1e-9)).ceil() as u64
}

/// A miniature run's point. Unadjusted (the paper's estimate), the miss ratio is the
/// miniature cache's own. Adjusted, its misses scaled by `1 / R` are divided by the
/// trace's requests instead of by the sampled ones scaled: requests the sample drew beyond
/// its expected share count as hits, as SHARDS' first-bucket adjustment has them (for LRU
/// the two estimates are then the same formula). At rate 1 both are the replay's ratios.
fn mini_point(r: &MiniResult, shards: &Shards, adjust: bool) -> CurvePoint {
    let rate = r.rate;
    let misses = r.counts.misses() as f64 / rate;
    let bytes_missed = r.counts.bytes_missed as f64 / rate;
    let (miss_ratio, byte_miss_ratio) = if adjust {
        (
            ratio(misses, shards.requests() as f64),
            ratio(bytes_missed, shards.bytes() as f64),
        )
    } else {
        (r.counts.miss_ratio(), r.counts.byte_miss_ratio())
    };
    CurvePoint {
        capacity: r.capacity,
        misses,
        miss_ratio,
        byte_miss_ratio,
        rate,
        resolved: true,
        hot: false,
    }
}

/// `a / b` clamped to `[0, 1]`, 0 when `b` is 0.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        (a / b).min(1.0)
    } else {
        0.0
    }
}

/// The reading side of the pass: SHARDS sees every request, and the miniature caches'
/// sample is collected for the caller.
struct Sampler {
    reader: Box<dyn TraceReader>,
    batch: Vec<Request>,
    shards: Shards,
    /// The sample seed's salt, mixed into every key before hashing.
    salt: u64,
    /// The miniature caches' rate levels, widest first ([`RatePlan::levels`]).
    levels: Vec<SpatialFilter>,
    /// Each level's numbering of its keys.
    ids: Vec<KeyIds>,
    /// Fixed-rate SHARDS' raised sizes, fed the same hashes.
    nested: Option<NestedShards>,
    /// Stratified SHARDS: which keys are promoted (asked once per request, for the
    /// estimator and its levels alike).
    hot: Option<HotKeys>,
    /// Whether the base estimator is stratified (otherwise only the nested levels are).
    base_stratified: bool,
    /// The trace's requests read so far (deletes not counted): the next one's position.
    requests: u64,
}

impl Sampler {
    /// Reads until the widest level's batch `out[0]` holds [`SAMPLED_BATCH`] sampled
    /// operations or the trace ends (with no level, to the end); true at the end.
    fn fill(
        &mut self,
        out: &mut [Vec<SampledOp>],
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<bool, MrcError> {
        while out.first().is_none_or(|b| b.len() < SAMPLED_BATCH) {
            let n = self.reader.read_batch(&mut self.batch)?;
            if n == 0 {
                return Ok(true);
            }
            for r in &self.batch[..n] {
                let hash = salted_key_hash(r.key, self.salt);
                let delete = r.op == Op::Delete;
                let hot = !delete && self.hot.as_mut().is_some_and(|h| h.observe(hash));
                match (delete, hot, &mut self.nested) {
                    (true, _, nested) => {
                        self.shards.delete(hash);
                        if let Some(n) = nested {
                            n.delete(hash);
                        }
                    }
                    (false, true, nested) => {
                        if self.base_stratified {
                            self.shards.access_hot(hash, r.size);
                        } else {
                            self.shards.access(hash, r.size);
                        }
                        if let Some(n) = nested {
                            n.access_hot(hash, r.size);
                        }
                    }
                    (false, false, Some(n)) => {
                        self.shards.access(hash, r.size);
                        n.access(hash, r.size);
                    }
                    (false, false, None) => self.shards.access(hash, r.size),
                }
                // Levels are nested: the first one the hash exceeds ends the walk.
                for ((level, ids), batch) in self.levels.iter().zip(&mut self.ids).zip(&mut *out) {
                    if hash > level.threshold() {
                        break;
                    }
                    batch.push(SampledOp {
                        key: ids.id(hash),
                        size: r.size,
                        stream: r.stream,
                        delete,
                        position: self.requests,
                    });
                }
                self.requests += u64::from(!delete);
            }
            progress(n as u64);
        }
        Ok(false)
    }
}

/// The rates of a pass's nested sizes, or `None` when there are none: every size for
/// miniature simulation (each policy gets a cache at each); for fixed-rate SHARDS, the
/// sizes [`RatePlan::raised`] above the base rate (none without `min_sampled`), which
/// [`NestedShards`] serves.
/// The sizes must be known before the first request: when they are fractions of the
/// working set, or in byte mode where the rate of a size depends on the mean object size,
/// `estimate` reads the trace once first.
fn rate_plan(
    config: &ApproxConfig,
    known: Option<&[u64]>,
    estimate: &mut dyn FnMut() -> Result<WorkingSet, MrcError>,
) -> Result<Option<RatePlan>, MrcError> {
    let rate = match config.method {
        Method::ShardsSize(_) if config.min_sampled == 0 || config.byte_mode => return Ok(None),
        // Fixed size: its final rate is known only at the end, so the levels are powers of
        // two from far below any rate a budget reaches.
        Method::ShardsSize(_) => FIXED_SIZE_FLOOR,
        Method::ShardsRate(r) if config.min_sampled == 0 || r >= 1.0 => return Ok(None),
        Method::ShardsRate(r) | Method::MiniSim(r) => r,
    };
    let raising = config.min_sampled > 0 && rate < 1.0;
    let (caps, unit) = match known {
        Some(caps) if !(raising && config.byte_mode) => (caps.to_vec(), 1.0),
        _ => {
            let ws = estimate()?;
            let mean_size = ws.bytes as f64 / ws.objects.max(1) as f64;
            let unit = if config.byte_mode {
                mean_size.max(1.0)
            } else {
                1.0
            };
            let caps = match known {
                Some(caps) => caps.to_vec(),
                None => config.capacities_for(ws)?,
            };
            (caps, unit)
        }
    };
    // A miniature of a policy that asks for more sampled objects gets sizes of its own.
    let factors = match config.method {
        Method::MiniSim(_) => super::minisim::sample_factors(&config.policies, config.seed)?,
        _ => vec![1],
    };
    let plan = RatePlan::with_factors(&caps, rate, config.min_sampled, unit, &factors);
    let raised = match config.method {
        Method::MiniSim(_) => return Ok(Some(plan)),
        Method::ShardsSize(samples) => levels_within(&plan, samples / 2, config.hot.limit),
        Method::ShardsRate(_) if config.hot.enabled() => level_reach(&plan, rate),
        Method::ShardsRate(_) => plan.raised(rate),
    };
    Ok((!raised.is_empty()).then(|| plan.only(&raised)))
}

/// The most sampled keys a stratified level's stack is planned for, besides its promoted
/// ones: a stack of a few times this stays in the processor's caches.
pub const LEVEL_KEYS: u64 = 32_768;

/// Stratified fixed-rate SHARDS: the sizes its one nested level serves. A level's cost is
/// the requests it samples (with stratification, every promoted key's among them),
/// whatever sizes it answers, and a size it answers holds `R_top / R` times the base
/// sample's objects: so besides the raised sizes it takes every size whose share of its
/// stack, `R_top c` keys, stays within [`LEVEL_KEYS`] (on the 50M Zipf trace, the sizes up
/// to 242,525 objects rather than up to 39,382). Not done for the plain level, whose
/// segmented stack pays for each size it answers on every new key: on the 50M loop it
/// cost 20% more CPU (docs/mrc.md). The stratified level's stack
/// ([`super::weighted::WeightedStack`]) does not pay per size (it counts the weight above
/// a reuse and compares it with each size), and the reach took the standard error of the sizes it adds from 0.0021-0.0028 to 0.0003-0.0009 on
/// the 50M Zipf trace. No size is raised: no level.
fn level_reach(plan: &RatePlan, base: f64) -> Vec<PlannedSize> {
    let raised = plan.raised(base);
    let Some(top) = raised.iter().map(|s| s.rate).reduce(f64::max) else {
        return raised;
    };
    plan.sizes()
        .iter()
        .filter(|s| s.rate > base || top * s.capacity as f64 <= LEVEL_KEYS as f64)
        .copied()
        .collect()
}

/// Far below any rate a sample budget ends at: fixed-size SHARDS's levels are this times
/// powers of two, i.e. powers of two.
const FIXED_SIZE_FLOOR: f64 = 1.0 / (1u64 << 40) as f64;

/// The sizes of `plan`'s levels, widest (smallest sizes) first, as long as the keys their
/// bounded stacks may hold together stay within `budget`: fixed-size SHARDS gives its
/// levels at most half its sample budget, so that state stays bounded by `--samples`.
/// Stratified, each level also holds up to `hot` promoted keys.
fn levels_within(plan: &RatePlan, mut budget: usize, hot: usize) -> Vec<PlannedSize> {
    let mut kept = Vec::new();
    for (level, filter) in plan.levels().iter().enumerate() {
        let sizes = plan.sizes().iter().filter(|s| s.level == level);
        let largest = sizes.clone().map(|s| s.capacity).max().unwrap_or(0);
        let keys = stack_bound(filter.rate(), largest, false) as usize + hot;
        if keys > budget {
            break;
        }
        budget -= keys;
        kept.extend(sizes.copied());
    }
    kept
}

/// The pre-pass of miniature simulation at fractional sizes: the working set as the
/// sample estimates it.
fn estimate_working_set(
    reader: &mut dyn TraceReader,
    sampling: Sampling,
    byte_mode: bool,
    salt: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<WorkingSet, MrcError> {
    let mut shards = Shards::new(sampling, Buckets::Edges(Vec::new()), byte_mode);
    let mut batch = vec![Request::default(); READ_BATCH];
    loop {
        let n = reader.read_batch(&mut batch)?;
        if n == 0 {
            break;
        }
        for r in &batch[..n] {
            let hash = salted_key_hash(r.key, salt);
            if r.op == Op::Delete {
                shards.delete(hash);
            } else {
                shards.access(hash, r.size);
            }
        }
        progress(n as u64);
    }
    let ws = shards.working_set();
    Ok(WorkingSet {
        objects: ws.requests.round() as u64,
        bytes: ws.bytes.round() as u64,
    })
}
