//! Python bindings of bufcache (`import bufcache`): traces, caches driven request by
//! request, replays, miss-ratio curves, simulator scenarios, Dust and sweeps, all running the
//! Rust engine. Built by maturin
//! (`python/pyproject.toml`), which alone turns on pyo3's `extension-module` feature, so
//! that this crate still builds and links as part of the Cargo workspace.

mod cache;
mod des;
mod errors;
mod fingerprint;
mod mrc;
mod plugin;
mod replay;
mod size;
mod sweep;
mod trace;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Every registered policy: name, summary, parameters (name -> (default, help)), and
/// whether it draws random numbers or hashes keys.
#[pyfunction]
fn policies(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    policy::POLICIES
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("summary", p.summary)?;
            let params = PyDict::new(py);
            for param in p.params {
                params.set_item(param.name, (param.default, param.help))?;
            }
            d.set_item("params", params)?;
            d.set_item("seeded", p.seeded)?;
            d.set_item("hashes_keys", p.hashes_keys)?;
            Ok(d)
        })
        .collect()
}

/// The compiled module `bufcache._bufcache`; `bufcache/__init__.py` re-exports it.
#[pymodule]
fn _bufcache(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<trace::Trace>()?;
    m.add_class::<trace::PyRequest>()?;
    m.add_class::<trace::Requests>()?;
    m.add_class::<size::PySize>()?;
    m.add_class::<cache::Cache>()?;
    m.add_class::<plugin::Plugin>()?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(replay::replay, m)?)?;
    m.add_function(wrap_pyfunction!(mrc::mrc, m)?)?;
    m.add_function(wrap_pyfunction!(des::des_run, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint::dust, m)?)?;
    m.add_class::<sweep::SweepDriver>()?;
    m.add_function(wrap_pyfunction!(sweep::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_task, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_memory_estimate, m)?)?;
    Ok(())
}
