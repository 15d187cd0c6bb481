//! Miss-ratio curves: misses as a function of cache size.
//!
//! * [`exact`] — the LRU curve in one pass over a trace in memory (stack distances).
//! * [`sweep`] — any policy, by replaying the whole trace once per size (in parallel).
//! * [`approximate`] — one streaming pass over a trace of any length, spatially sampled:
//!   SHARDS for LRU ([`shards`], fixed rate or fixed size, object or byte distances) and
//!   miniature simulation for every other policy ([`minisim`]), both fed by the same
//!   sample ([`filter`]), with working-set estimates on the side; SHARDS may keep the
//!   hottest keys exactly and sample the rest ([`hot`]). Nothing keeps the trace:
//!   state grows with the sampled keys, or is bounded outright at fixed size.
//!
//! The stack machinery behind the approximate curves ([`stack`], [`histogram`]) is the
//! exact algorithm run on the sample; at rate 1 it gives the exact curve (and miniature
//! simulation the full replay), which the tests hold it to.

pub mod approx;
pub mod exact;
pub mod filter;
pub mod histogram;
pub mod hot;
pub mod keyslots;
pub mod minisim;
pub mod nested;
pub mod segments;
pub mod shards;
pub mod slots;
pub mod stack;
pub mod weighted;

use policy::PolicySpec;
use thiserror::Error;

use crate::compact::CompactTrace;
use crate::replay::{replay, ReplayError, ReplayOptions};
use crate::size::{CacheSize, SizeError};

pub use approx::{
    approximate, min_resolved_capacity, ApproxConfig, ApproxCurve, ApproxResult, Method,
    WorkingSetEstimate,
};
pub use exact::StackDistances;
pub use filter::{key_hash, salted_key_hash, sample_salt, SpatialFilter};
pub use histogram::{Buckets, CurvePoint};
pub use hot::HotConfig;
pub use nested::{rate_for, RatePlan, DEFAULT_MIN_SAMPLED};
pub use shards::{scaled_distance, Sampling, Shards};

/// Why a curve could not be computed.
#[derive(Debug, Error)]
pub enum MrcError {
    /// The one-pass algorithm cannot handle deletes (see [`exact`]).
    #[error(
        "the trace has {0} delete operations; the one-pass LRU curve assumes none (use a sweep)"
    )]
    Deletes(u64),
    /// A replay of the sweep failed, or a policy could not be built.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A size could not be resolved.
    #[error(transparent)]
    Size(#[from] SizeError),
    /// Reading the trace failed.
    #[error(transparent)]
    Trace(#[from] trace::TraceError),
    /// A sampling setting is out of range.
    #[error("{setting} = {value}: {reason}")]
    Setting {
        /// The setting (`rate`, `samples`).
        setting: &'static str,
        /// Its value as given.
        value: String,
        /// The valid range, or why the combination does not work.
        reason: &'static str,
    },
    /// An offline policy cannot run on a stream.
    #[error(
        "policy `{0}` is offline (it needs every request's next access), which a streaming \
         pass cannot give; use the exact sweep (--method exact)"
    )]
    Offline(String),
    /// The trace had no requests.
    #[error("the trace has no requests")]
    Empty,
}

/// One point of an exact curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MrcPoint {
    /// Cache size in units.
    pub capacity: u64,
    /// Requests.
    pub requests: u64,
    /// Misses at this size.
    pub misses: u64,
}

impl MrcPoint {
    /// Misses over requests.
    pub fn miss_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.misses as f64 / self.requests as f64
        }
    }
}

/// `points` capacities spread evenly from `total / points` to `total` (deduplicated, each
/// at least 1): the default grid of a curve over a working set of `total` units.
pub fn even_grid(total: u64, points: usize) -> Vec<u64> {
    let points = points.max(1) as u64;
    let mut grid: Vec<u64> = (1..=points)
        .map(|i| ((total as u128 * i as u128 / points as u128) as u64).max(1))
        .collect();
    grid.dedup();
    grid
}

/// The curve of any policy by replaying the trace at every capacity (in parallel).
pub fn sweep(
    trace: &CompactTrace,
    spec: &PolicySpec,
    capacities: &[u64],
    options: ReplayOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<MrcPoint>, MrcError> {
    let sizes: Vec<CacheSize> = capacities.iter().map(|&c| CacheSize::units(c)).collect();
    let runs = replay(trace, std::slice::from_ref(spec), &sizes, options, progress)?;
    Ok(runs
        .into_iter()
        .map(|r| MrcPoint {
            capacity: r.capacity,
            requests: r.counts.requests,
            misses: r.counts.misses(),
        })
        .collect())
}

/// How [`exact_curve`] computed a curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExactMethod {
    /// One pass of stack distances: plain LRU over a trace without deletes, counting
    /// objects or bytes.
    OnePass,
    /// A replay of the whole trace at every capacity: every other policy.
    Sweep,
}

impl ExactMethod {
    /// The method [`exact_curve`] uses for `spec` over `trace`: one pass for plain `lru`
    /// without deletes, a sweep otherwise.
    pub fn for_spec(trace: &CompactTrace, spec: &PolicySpec) -> Self {
        if spec.name == "lru" && spec.params.is_empty() && trace.deletes().is_empty() {
            ExactMethod::OnePass
        } else {
            ExactMethod::Sweep
        }
    }

    /// The name results carry: `exact` for the one-pass curve, `sweep` for replays.
    pub fn label(self) -> &'static str {
        match self {
            ExactMethod::OnePass => "exact",
            ExactMethod::Sweep => "sweep",
        }
    }
}

/// An exact curve and how it was computed.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactCurve {
    /// One pass or a sweep.
    pub method: ExactMethod,
    /// One point per capacity, in the order given.
    pub points: Vec<MrcPoint>,
    /// The byte miss ratio at each point, where the method gives it (the one-pass byte
    /// curve).
    pub byte_miss_ratios: Option<Vec<f64>>,
}

/// The exact curve of `spec` over `trace` at `capacities` (units in unit mode, bytes
/// otherwise): the one-pass stack algorithm wherever it gives LRU's answer (plain `lru`,
/// no deletes), a replay at every capacity otherwise. The CLI's `mrc` and the Python
/// package both call this, so they choose alike.
///
/// In byte mode the one pass counts a request as a hit when the bytes of the distinct
/// objects touched since its previous access, itself included, fit: LRU's behaviour
/// wherever no single object is larger than the cache. Its misses are sums of whole
/// requests, so they are integers.
pub fn exact_curve(
    trace: &CompactTrace,
    spec: &PolicySpec,
    capacities: &[u64],
    options: ReplayOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ExactCurve, MrcError> {
    if ExactMethod::for_spec(trace, spec) == ExactMethod::Sweep {
        return Ok(ExactCurve {
            method: ExactMethod::Sweep,
            points: sweep(trace, spec, capacities, options, progress)?,
            byte_miss_ratios: None,
        });
    }
    if options.ignore_size {
        return Ok(ExactCurve {
            method: ExactMethod::OnePass,
            points: StackDistances::compute(trace)?.curve(capacities),
            byte_miss_ratios: None,
        });
    }
    let mut shards = Shards::new(
        Sampling::Rate(1.0),
        Buckets::Edges(capacities.to_vec()),
        true,
    );
    for item in trace.items() {
        shards.access(key_hash(item.key), item.size);
    }
    let requests = trace.summary().requests;
    let curve = shards.curve(capacities, true);
    Ok(ExactCurve {
        method: ExactMethod::OnePass,
        byte_miss_ratios: Some(curve.iter().map(|p| p.byte_miss_ratio).collect()),
        points: curve
            .into_iter()
            .map(|p| MrcPoint {
                capacity: p.capacity,
                requests,
                misses: p.misses.round() as u64,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::Request;

    fn sized(reqs: &[(u64, u32)]) -> CompactTrace {
        let reqs: Vec<Request> = reqs
            .iter()
            .map(|&(key, size)| Request {
                key,
                size,
                ..Request::default()
            })
            .collect();
        CompactTrace::from_requests(&reqs)
    }

    fn bytes() -> ReplayOptions {
        ReplayOptions {
            ignore_size: false,
            seed: 1,
        }
    }

    #[test]
    fn byte_lru_in_one_pass_by_hand() {
        // a(100) b(200) a c(300) b. At 300 bytes: a and b miss, a hits (a+b = 300 fit),
        // c misses, b misses (b+a+c = 600 since its last access). At 600 only b's second
        // access changes: a hit. Missed bytes: 800 and 600 of 900.
        let t = sized(&[(1, 100), (2, 200), (1, 100), (3, 300), (2, 200)]);
        let lru = PolicySpec::parse("lru").unwrap();
        let c = exact_curve(&t, &lru, &[300, 600], bytes(), &|_| {}).unwrap();
        assert_eq!(c.method, ExactMethod::OnePass);
        let misses: Vec<u64> = c.points.iter().map(|p| p.misses).collect();
        assert_eq!(misses, [4, 3]);
        let ratios = c.byte_miss_ratios.unwrap();
        assert!((ratios[0] - 800.0 / 900.0).abs() < 1e-12);
        assert!((ratios[1] - 600.0 / 900.0).abs() < 1e-12);
        // The replay at each size agrees.
        assert_eq!(
            sweep(&t, &lru, &[300, 600], bytes(), &|_| {}).unwrap(),
            c.points
        );
    }

    #[test]
    fn other_policies_and_deletes_are_swept() {
        let t = sized(&[(1, 1), (2, 1), (1, 1), (3, 1)]);
        let fifo = PolicySpec::parse("fifo").unwrap();
        let c = exact_curve(&t, &fifo, &[1, 2], bytes(), &|_| {}).unwrap();
        assert_eq!(c.method, ExactMethod::Sweep);
        assert_eq!(c.byte_miss_ratios, None);
        assert_eq!(
            c.points,
            sweep(&t, &fifo, &[1, 2], bytes(), &|_| {}).unwrap()
        );
        let mut reqs = vec![Request::default(); 2];
        reqs[1].op = trace::Op::Delete;
        let with_delete = CompactTrace::from_requests(&reqs);
        let lru = PolicySpec::parse("lru").unwrap();
        assert_eq!(
            ExactMethod::for_spec(&with_delete, &lru),
            ExactMethod::Sweep
        );
        assert_eq!(ExactMethod::for_spec(&t, &lru), ExactMethod::OnePass);
    }
}
