//! `bufcache.des_run`: a discrete-event simulation scenario (the TOML files of
//! `bufcache des`, docs/simulator.md), run with the GIL released. Each run's report comes
//! back as a dict, built from the same serialized form as `bufcache des --json`, so the
//! Python keys are the documented JSON keys.

use std::path::PathBuf;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use sim::des::scenario::ScenarioError;
use sim::des::Scenario;

use crate::errors::value_error;

fn scenario_error(e: ScenarioError) -> PyErr {
    match e {
        ScenarioError::Io { .. } => PyOSError::new_err(e.to_string()),
        other => value_error(other),
    }
}

/// Run the scenario file at `path` (every point of its sweep, in parallel) and return one
/// dict per run: `value` (the swept value as TOML text, or None), `system` (the full
/// configuration) and `report` (what it measured).
#[pyfunction]
pub fn des_run(py: Python<'_>, path: PathBuf) -> PyResult<Vec<Py<PyAny>>> {
    let scenario = Scenario::load(&path).map_err(scenario_error)?;
    // Resolve the sweep first: a bad sweep fails before anything runs.
    scenario.systems(&path).map_err(scenario_error)?;
    let points = py.detach(|| scenario.run(&path)).map_err(scenario_error)?;
    let loads = py.import("json")?.getattr("loads")?;
    points
        .iter()
        .map(|p| {
            let text = serde_json::to_string(p).map_err(value_error)?;
            Ok(loads.call1((text,))?.unbind())
        })
        .collect()
}
