//! `bufcache.dust`: Dust, the fingerprinting tool of Burnett's thesis (chapter 2), run
//! against a target as `bufcache dust --target` names it (`sim:POLICY:pages=N`, the real
//! buffer pool `pool:POLICY:frames=N`, or `linux:PATH`), with the GIL released. The whole
//! report comes back as a dict built from its serialized form: the keys of the
//! `report.json` that `bufcache dust --out DIR` writes, plus `probes`.

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

use ::dust::{DustConfig, DustError, JudgeChoice};

use crate::errors::value_error;

/// Files the target could not read or write are `OSError`; the rest is what the caller
/// passed (a target, a policy, a size) and is `ValueError`.
fn dust_error(e: DustError) -> PyErr {
    match e {
        DustError::Io { .. } => PyOSError::new_err(e.to_string()),
        other => value_error(other),
    }
}

/// Fingerprint `target`: `iterations` rounds of the thesis's three steps, probe starts
/// drawn from `seed`, the cache size measured unless `size_hint` (pages) gives it, hits
/// judged by `judge` (`auto`: timing where the target times reads, else its oracle;
/// `oracle`; `timing`). Returns the report: `verdict` (`verdict`, `attributes`,
/// `confidence`, `reasons`), `size`, `layout`, `features`, `probes`, ...
#[pyfunction]
#[pyo3(signature = (target, *, iterations=300, seed=42, size_hint=None, judge="auto"))]
pub fn dust(
    py: Python<'_>,
    target: String,
    iterations: u32,
    seed: u64,
    size_hint: Option<u64>,
    judge: &str,
) -> PyResult<Py<PyAny>> {
    let judge = match judge {
        "auto" => JudgeChoice::Auto,
        "oracle" => JudgeChoice::Oracle,
        "timing" => JudgeChoice::Timing,
        other => {
            return Err(value_error(format!(
                "unknown judge `{other}` (known: auto, oracle, timing)"
            )))
        }
    };
    let config = DustConfig {
        iterations,
        seed,
        size_hint,
        judge,
        ..DustConfig::default()
    };
    // The target is built inside: it need not be sendable, the report is.
    let report = py
        .detach(move || {
            let mut t = ::dust::target_from_spec(&target, seed)?;
            ::dust::fingerprint(t.as_mut(), &config)
        })
        .map_err(dust_error)?;
    let text = serde_json::to_string(&report).map_err(value_error)?;
    Ok(py
        .import("json")?
        .getattr("loads")?
        .call1((text,))?
        .unbind())
}
