//! `bufcache.replay`: every policy at every size over one trace, in parallel on Rust
//! threads with the GIL released, through the same engine as `bufcache replay`
//! ([`sim::replay_scheduled`]). The result is a table of columns (NumPy arrays and lists),
//! which `pandas.DataFrame(table)` or `pyarrow.table(table)` take as is.

use numpy::IntoPyArray;
use policy::{AdmissionSpec, PolicySpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sim::replay::Grid;
use sim::{CacheSize, ReplayOptions, RunResult, Schedule};

use crate::errors::value_error;
use crate::size::cache_size;
use crate::trace::Trace;

/// One or many: a single string or size is accepted where a list is expected.
fn one_or_many<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if obj.is_instance_of::<pyo3::types::PyString>() || obj.extract::<f64>().is_ok() {
        return Ok(vec![obj.clone()]);
    }
    if obj.cast::<crate::size::PySize>().is_ok() {
        return Ok(vec![obj.clone()]);
    }
    obj.try_iter()?.collect()
}

/// Parses policy specs (`"s3fifo:small=0.1"`).
pub fn policy_specs(obj: &Bound<'_, PyAny>) -> PyResult<Vec<PolicySpec>> {
    one_or_many(obj)?
        .iter()
        .map(|p| PolicySpec::parse(&p.extract::<String>()?).map_err(value_error))
        .collect()
}

/// Parses sizes in any accepted form.
pub fn sizes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<CacheSize>> {
    one_or_many(obj)?.iter().map(cache_size).collect()
}

/// Runs `work` on `threads` Rust threads (`None`: rayon's global pool, one per core).
pub fn on_threads<T: Send>(threads: Option<usize>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    match threads {
        None => Ok(work()),
        Some(0) => Err(value_error("threads must be at least 1")),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(value_error)?;
            Ok(pool.install(work))
        }
    }
}

/// Replay `trace` through every policy at every size. Returns a dict of columns, one row
/// per (policy, size) in that order: `policy`, `size` (lists of str), `capacity`,
/// `requests`, `hits`, `misses`, `bytes_requested`, `bytes_missed` (uint64 arrays),
/// `miss_ratio`, `byte_miss_ratio`, `wall_s` (float64 arrays). Deletes invalidate and are
/// not requests; `warmup` operations are served before counting starts.
#[pyfunction]
#[pyo3(signature = (trace, policies, sizes, *, ignore_size=false, seed=42, admission="always", warmup=0, threads=None))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
pub fn replay<'py>(
    py: Python<'py>,
    trace: &Bound<'py, Trace>,
    policies: &Bound<'py, PyAny>,
    sizes: &Bound<'py, PyAny>,
    ignore_size: bool,
    seed: u64,
    admission: &str,
    warmup: u64,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let policies = policy_specs(policies)?;
    let sizes = self::sizes(sizes)?;
    let admission = AdmissionSpec::parse(admission).map_err(value_error)?;
    admission.check().map_err(value_error)?;
    let compact = trace.get().compact.clone();
    if compact.summary().requests == 0 {
        return Err(value_error(format!(
            "trace {} holds no requests (nothing to replay)",
            trace.get().label
        )));
    }
    let grid = Grid {
        policies: &policies,
        sizes: &sizes,
        admission: &admission,
        prefetch: None,
        options: ReplayOptions { ignore_size, seed },
        schedule: Schedule {
            warmup,
            interval: sim::Intervals::None,
        },
    };
    let results = py
        .detach(|| on_threads(threads, || sim::replay_scheduled(&compact, &grid, &|_| {})))?
        .map_err(value_error)?;
    table(py, &results)
}

/// A named column of numbers drawn from each run.
type Column<T> = (&'static str, fn(&RunResult) -> T);

/// The results as columns.
fn table<'py>(py: Python<'py>, results: &[RunResult]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let text = |f: fn(&RunResult) -> String| results.iter().map(f).collect::<Vec<_>>();
    d.set_item("policy", text(|r| r.policy.clone()))?;
    d.set_item("size", text(|r| r.size.clone()))?;
    let ints: [Column<u64>; 6] = [
        ("capacity", |r| r.capacity),
        ("requests", |r| r.counts.requests),
        ("hits", |r| r.counts.hits),
        ("misses", |r| r.misses()),
        ("bytes_requested", |r| r.counts.bytes_requested),
        ("bytes_missed", |r| r.counts.bytes_missed),
    ];
    for (name, f) in ints {
        let col: Vec<u64> = results.iter().map(f).collect();
        d.set_item(name, col.into_pyarray(py))?;
    }
    let floats: [Column<f64>; 3] = [
        ("miss_ratio", |r| r.miss_ratio()),
        ("byte_miss_ratio", |r| r.byte_miss_ratio()),
        ("wall_s", |r| r.wall_s),
    ];
    for (name, f) in floats {
        let col: Vec<f64> = results.iter().map(f).collect();
        d.set_item(name, col.into_pyarray(py))?;
    }
    Ok(d)
}
