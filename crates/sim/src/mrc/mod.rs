//! Miss-ratio curves: misses as a function of cache size.
//!
//! * [`exact`] — the LRU curve in one pass over a trace in memory (stack distances).
//! * [`sweep`] — any policy, by replaying the whole trace once per size (in parallel).
//! * [`approximate`] — one streaming pass over a trace of any length, spatially sampled:
//!   SHARDS for LRU ([`shards`], fixed rate or fixed size, object or byte distances) and
//!   miniature simulation for every other policy ([`minisim`]), both fed by the same
//!   sample ([`filter`]), with working-set estimates on the side. Nothing keeps the trace:
//!   state grows with the sampled keys, or is bounded outright at fixed size.
//!
//! The stack machinery behind the approximate curves ([`stack`], [`histogram`]) is the
//! exact algorithm run on the sample; at rate 1 it gives the exact curve (and miniature
//! simulation the full replay), which the tests hold it to.

pub mod approx;
pub mod exact;
pub mod filter;
pub mod histogram;
pub mod minisim;
pub mod shards;
pub mod stack;

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
pub use histogram::CurvePoint;
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
