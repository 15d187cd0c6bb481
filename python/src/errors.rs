//! Rust errors as Python exceptions: files that cannot be read are `OSError`, everything
//! the caller wrote wrong (a policy, a size, a format, a parameter) is `ValueError`. The
//! message is always the Rust error's own, so Python users read what CLI users read.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::PyErr;

/// A trace error: I/O failures become `OSError` (with the path in the message), the rest
/// (bad records, unknown formats, bad mappings) `ValueError`.
pub fn trace_error(e: trace::TraceError) -> PyErr {
    match e {
        trace::TraceError::Io { .. } | trace::TraceError::Zstd { .. } => {
            PyOSError::new_err(e.to_string())
        }
        other => PyValueError::new_err(other.to_string()),
    }
}

/// Any error the caller caused by what they passed in.
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A curve error: reading failures keep their trace classification.
pub fn mrc_error(e: sim::mrc::MrcError) -> PyErr {
    match e {
        sim::mrc::MrcError::Trace(t) => trace_error(t),
        other => value_error(other),
    }
}
