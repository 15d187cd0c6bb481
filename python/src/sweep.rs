//! Sweeps from Python: `sweep` runs the local driver of `bufcache sweep` (same spec, same
//! results file, same resume), and `SweepDriver`, `sweep_task` and
//! `sweep_memory_estimate` are the pieces a driver elsewhere (the Ray driver in
//! `bufcache/ray_sweep.py`) schedules with: every row is computed and every line of the
//! file written by `sim::sweep`, so there is one writer whichever driver runs.

use std::path::{Path, PathBuf};

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use sim::sweep as engine;
use sim::sweep::{LocalOptions, SweepError, SweepSession, SweepSpec, SweepSummary};

use crate::errors::value_error;
use crate::replay::on_threads;

/// A sweep error: files that cannot be read or written (and a results file another sweep
/// holds) are `OSError`, everything about the spec or a trace's content `ValueError`.
fn sweep_error(e: SweepError) -> PyErr {
    match e {
        SweepError::Io { .. } | SweepError::MissingTrace { .. } | SweepError::Locked { .. } => {
            PyOSError::new_err(e.to_string())
        }
        SweepError::TraceFile { ref error, .. }
            if matches!(
                error,
                trace::TraceError::Io { .. } | trace::TraceError::Zstd { .. }
            ) =>
        {
            PyOSError::new_err(e.to_string())
        }
        other => value_error(other),
    }
}

/// The spec a caller passed and the directory its relative trace paths start from: a
/// dict (keys as in the TOML file; sizes and warm-up may be numbers) from the current
/// directory, or the path of a TOML or JSON file from that file's directory.
fn spec_arg(spec: &Bound<'_, PyAny>) -> PyResult<(SweepSpec, PathBuf)> {
    let cwd = std::env::current_dir().map_err(|e| PyOSError::new_err(e.to_string()))?;
    if let Ok(dict) = spec.cast::<PyDict>() {
        let dict = dict.copy()?;
        if let Some(sizes) = dict.get_item("sizes")? {
            let texts: Vec<String> = sizes
                .try_iter()?
                .map(|s| as_text(&s?))
                .collect::<PyResult<_>>()?;
            dict.set_item("sizes", texts)?;
        }
        if let Some(warmup) = dict.get_item("warmup")? {
            if !warmup.is_none() {
                dict.set_item("warmup", as_text(&warmup)?)?;
            }
        }
        let json: String = spec
            .py()
            .import("json")?
            .call_method1("dumps", (dict,))?
            .extract()?;
        let spec = SweepSpec::from_text(&json, true)
            .map_err(|reason| value_error(format!("bad sweep spec: {reason}")))?;
        return Ok((spec, cwd));
    }
    let path: PathBuf = spec.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "spec must be a dict or the path of a TOML or JSON sweep spec",
        )
    })?;
    let spec = SweepSpec::from_file(&path).map_err(sweep_error)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    Ok((spec, cwd.join(dir)))
}

/// A size or warm-up as the spec's text: strings as they are, numbers as Python prints
/// them (`0.1`, `100`).
fn as_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = v.extract::<String>() {
        return Ok(s);
    }
    if v.extract::<f64>().is_ok() {
        return Ok(v.str()?.to_string());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "a size or warm-up must be a string or a number, not {}",
        v.get_type().name()?
    )))
}

/// What a sweep did, as a dict.
fn summary_dict<'py>(py: Python<'py>, s: &SweepSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("traces", s.traces)?;
    d.set_item("traces_skipped", s.traces_skipped)?;
    d.set_item("rows_written", s.rows_written)?;
    d.set_item("rows_total", s.rows_total)?;
    d.set_item("dropped_bytes", s.dropped_bytes)?;
    d.set_item("wall_s", s.wall_s)?;
    Ok(d)
}

/// Run a sweep on this machine into the CSV file `out`, exactly as `bufcache sweep` does:
/// cells already in `out` are skipped, each trace's rows are appended (fsynced) as it
/// finishes, and the file ends in the spec's order. Returns a summary dict (`traces`,
/// `traces_skipped`, `rows_written`, `rows_total`, `dropped_bytes`, `wall_s`).
#[pyfunction]
#[pyo3(signature = (spec, out, *, threads=None, traces_at_once=None, memory_budget_bytes=None))]
pub fn sweep<'py>(
    py: Python<'py>,
    spec: &Bound<'py, PyAny>,
    out: PathBuf,
    threads: Option<usize>,
    traces_at_once: Option<usize>,
    memory_budget_bytes: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let (spec, base) = spec_arg(spec)?;
    let plan = spec.resolve(&base).map_err(sweep_error)?;
    let summary = py
        .detach(|| {
            on_threads(threads, || {
                let options = LocalOptions::for_machine(traces_at_once, memory_budget_bytes);
                engine::run_local(&plan, &out, options, &|_| {})
            })
        })?
        .map_err(sweep_error)?;
    summary_dict(py, &summary)
}

/// The driver's side of a sweep whose traces run elsewhere: it holds the results file
/// (locked) from creation to `finish`, lists the traces still to run, and appends what
/// their tasks return.
#[pyclass(module = "bufcache._bufcache")]
pub struct SweepDriver {
    session: Option<SweepSession>,
    spec_json: String,
}

impl SweepDriver {
    fn session(&mut self) -> PyResult<&mut SweepSession> {
        self.session
            .as_mut()
            .ok_or_else(|| value_error("this sweep has finished"))
    }
}

#[pymethods]
impl SweepDriver {
    /// Open the sweep `spec` (dict or spec file, as `sweep` takes it) into the CSV file
    /// `out`, cutting off a torn last line and locking the file.
    #[new]
    fn new(spec: &Bound<'_, PyAny>, out: PathBuf) -> PyResult<Self> {
        let (spec, base) = spec_arg(spec)?;
        let plan = spec.resolve(&base).map_err(sweep_error)?;
        // What the tasks get: the spec as checked, with traces resolved by the driver.
        let spec_json = serde_json::to_string(&spec).map_err(value_error)?;
        let session = SweepSession::open(plan, &out).map_err(sweep_error)?;
        Ok(SweepDriver {
            session: Some(session),
            spec_json,
        })
    }

    /// The spec as JSON text, what `sweep_task` and `sweep_memory_estimate` take.
    #[getter]
    fn spec_json(&self) -> &str {
        &self.spec_json
    }

    /// Every trace in spec order, as dicts: `index`, `path` (str, for `sweep_task`),
    /// `digest`, `cells`, `missing` (cells not in the file yet; 0 means nothing to run).
    fn units<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let session = self.session()?;
        let units = py.detach(|| session.units()).map_err(sweep_error)?;
        let list = PyList::empty(py);
        for u in units {
            let d = PyDict::new(py);
            d.set_item("index", u.index)?;
            d.set_item("path", u.path.to_string_lossy())?;
            d.set_item("digest", u.digest)?;
            d.set_item("cells", u.cells)?;
            d.set_item("missing", u.missing)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Append the rows a task returned (the bytes of `sweep_task`) that are not in the
    /// file yet, fsynced before returning; returns how many were written.
    fn append(&mut self, py: Python<'_>, rows: &[u8]) -> PyResult<usize> {
        let session = self.session()?;
        py.detach(|| {
            let rows = engine::from_csv(rows).map_err(|e| value_error(format!("bad rows: {e}")))?;
            session.append(rows).map_err(sweep_error)
        })
    }

    /// Release the results file without rewriting it (a driver that stops early: the rows
    /// appended so far stay, and the next run skips them). Nothing after `finish`.
    fn close(&mut self) {
        self.session = None;
    }

    /// Rewrite the file in the spec's order, release it, and return the summary dict (as
    /// `sweep`'s). The driver cannot be used afterwards.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let session = self
            .session
            .take()
            .ok_or_else(|| value_error("this sweep has finished"))?;
        let summary = py.detach(|| session.finish()).map_err(sweep_error)?;
        summary_dict(py, &summary)
    }
}

/// The plan of a task: the spec's grid over the one trace at `path`.
fn task_plan(spec_json: &str, path: &Path) -> PyResult<engine::SweepPlan> {
    let spec = SweepSpec::from_text(spec_json, true)
        .map_err(|reason| value_error(format!("bad sweep spec: {reason}")))?;
    spec.resolve_one(path.to_path_buf()).map_err(sweep_error)
}

/// One task of a distributed sweep: run the whole grid of the spec (`SweepDriver.spec_json`)
/// over the trace at `path` (a unit's `path`) and return its rows as opaque bytes for
/// `SweepDriver.append`. The GIL is released; `threads` bounds the Rust threads.
#[pyfunction]
#[pyo3(signature = (spec_json, path, *, threads=None))]
pub fn sweep_task<'py>(
    py: Python<'py>,
    spec_json: &str,
    path: PathBuf,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyBytes>> {
    let plan = task_plan(spec_json, &path)?;
    let bytes = py.detach(|| {
        on_threads(threads, || {
            let rows = engine::run_trace(&plan, &path).map_err(sweep_error)?;
            engine::to_csv(&rows).map_err(value_error)
        })
    })??;
    Ok(PyBytes::new(py, &bytes))
}

/// An upper estimate in bytes of the memory `sweep_task` needs for the trace at `path`
/// (it reads the trace to count operations and objects; the GIL is released).
#[pyfunction]
pub fn sweep_memory_estimate(py: Python<'_>, spec_json: &str, path: PathBuf) -> PyResult<u64> {
    let plan = task_plan(spec_json, &path)?;
    py.detach(|| engine::trace_memory_estimate_bytes(&plan, &path))
        .map_err(sweep_error)
}
