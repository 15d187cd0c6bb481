//! `bufcache.mrc`: miss-ratio curves, exact (one-pass LRU stack distances, in units or
//! bytes, or a replay at every size for other policies) or approximate (SHARDS at a fixed rate or
//! a fixed sample budget, miniature simulation), computed with the GIL released.

use numpy::IntoPyArray;
use policy::PolicySpec;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sim::mrc::{approximate, even_grid, exact_curve, ApproxConfig, Method};
use sim::{CacheSize, CompactTrace, ReplayOptions};

use crate::errors::{mrc_error, value_error};
use crate::replay::{on_threads, policy_specs, sizes as parse_sizes};
use crate::trace::Trace;

/// One point of any curve.
struct Point {
    policy: String,
    method: &'static str,
    capacity: u64,
    misses: f64,
    miss_ratio: f64,
}

/// The exact capacities: `sizes` resolved, or `points` spread over the working set.
fn exact_capacities(
    trace: &CompactTrace,
    sizes: &[CacheSize],
    points: usize,
    ignore_size: bool,
) -> PyResult<Vec<u64>> {
    if sizes.is_empty() {
        let ws = trace.working_set();
        let total = if ignore_size { ws.objects } else { ws.bytes };
        return Ok(even_grid(total, points));
    }
    let mut caps = sizes
        .iter()
        .map(|s| s.resolve(ignore_size, trace.working_set()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(value_error)?;
    caps.sort_unstable();
    caps.dedup();
    Ok(caps)
}

/// Exact curves, each computed as [`sim::mrc::exact_curve`] decides (one pass for plain
/// LRU, a replay at every capacity otherwise), as the CLI's `mrc` does.
fn exact(
    trace: &CompactTrace,
    policies: &[PolicySpec],
    caps: &[u64],
    options: ReplayOptions,
) -> Result<Vec<Point>, sim::mrc::MrcError> {
    let mut out = Vec::new();
    for spec in policies {
        let curve = exact_curve(trace, spec, caps, options, &|_| {})?;
        let method = curve.method.label();
        out.extend(curve.points.into_iter().map(|p| Point {
            policy: spec.label(),
            method,
            capacity: p.capacity,
            misses: p.misses as f64,
            miss_ratio: p.miss_ratio(),
        }));
    }
    Ok(out)
}

/// Miss-ratio curve(s) of `trace`. `method`: `exact` (default), `shards` (fixed `rate`),
/// `shards-fixed` (at most `samples` keys) or `minisim` (every policy in miniature at
/// `rate`). `sizes`: a list of sizes, or None for `points` sizes spread evenly over the
/// working set. `min_sampled`: sizes whose cache would hold fewer sampled objects are
/// served at a higher, nested rate (`shards`, `minisim`; 0 turns it off; docs/mrc.md). `hot`:
/// `shards` and `shards-fixed` with `ignore_size`: up to this many of the hottest keys are
/// tracked at rate 1 and the rest sampled (stratified sampling; 0, the default, is off). Returns columns `policy`, `method` (lists), `capacity` (uint64), `misses`
/// and `miss_ratio` (float64; approximate misses are estimates).
#[pyfunction]
#[pyo3(signature = (trace, *, method="exact", policy=None, sizes=None, points=20, ignore_size=false, rate=0.01, samples=32768, adjust=true, seed=42, threads=None, min_sampled=500, hot=0))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
pub fn mrc<'py>(
    py: Python<'py>,
    trace: &Bound<'py, Trace>,
    method: &str,
    policy: Option<&Bound<'py, PyAny>>,
    sizes: Option<&Bound<'py, PyAny>>,
    points: usize,
    ignore_size: bool,
    rate: f64,
    samples: usize,
    adjust: bool,
    seed: u64,
    threads: Option<usize>,
    min_sampled: u64,
    hot: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let policies = match policy {
        Some(p) => policy_specs(p)?,
        None => vec![PolicySpec::parse("lru").map_err(value_error)?],
    };
    let sizes = match sizes {
        Some(s) => parse_sizes(s)?,
        None => Vec::new(),
    };
    if points == 0 {
        return Err(value_error("points must be at least 1"));
    }
    let method = match method {
        "exact" => None,
        "shards" => Some(Method::ShardsRate(rate)),
        "shards-fixed" => Some(Method::ShardsSize(samples)),
        "minisim" => Some(Method::MiniSim(rate)),
        other => {
            return Err(value_error(format!(
                "unknown method `{other}` (known: exact, shards, shards-fixed, minisim)"
            )))
        }
    };
    let me = trace.get();
    let result = match method {
        None => {
            let compact = me.compact.clone();
            if compact.summary().requests == 0 {
                return Err(mrc_error(sim::mrc::MrcError::Empty));
            }
            let caps = exact_capacities(&compact, &sizes, points, ignore_size)?;
            let options = ReplayOptions { ignore_size, seed };
            py.detach(|| on_threads(threads, || exact(&compact, &policies, &caps, options)))?
        }
        Some(method) => {
            let config = ApproxConfig {
                sizes,
                points,
                byte_mode: !ignore_size,
                policies,
                adjust,
                seed,
                min_sampled,
                hot: sim::mrc::HotConfig::new(hot),
                ..ApproxConfig::new(method)
            };
            let source = me.source.clone();
            let open = move || source.open();
            py.detach(|| {
                on_threads(threads, || {
                    approximate(&open, &config, &|_| {}).map(|r| {
                        r.curves
                            .into_iter()
                            .flat_map(|c| {
                                let (policy, method) = (c.policy, c.method);
                                c.points.into_iter().map(move |p| Point {
                                    policy: policy.clone(),
                                    method,
                                    capacity: p.capacity,
                                    misses: p.misses,
                                    miss_ratio: p.miss_ratio,
                                })
                            })
                            .collect()
                    })
                })
            })?
        }
    }
    .map_err(mrc_error)?;
    columns(py, &result)
}

fn columns<'py>(py: Python<'py>, points: &[Point]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(
        "policy",
        points.iter().map(|p| p.policy.clone()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "method",
        points.iter().map(|p| p.method).collect::<Vec<_>>(),
    )?;
    let caps: Vec<u64> = points.iter().map(|p| p.capacity).collect();
    d.set_item("capacity", caps.into_pyarray(py))?;
    let misses: Vec<f64> = points.iter().map(|p| p.misses).collect();
    d.set_item("misses", misses.into_pyarray(py))?;
    let ratios: Vec<f64> = points.iter().map(|p| p.miss_ratio).collect();
    d.set_item("miss_ratio", ratios.into_pyarray(py))?;
    Ok(d)
}
