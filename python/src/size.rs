//! Cache sizes as Python accepts them: a `Size`, an int (objects, or bytes when sizes
//! count), a float in (0, 1] (a fraction of the working set), or a string with units
//! (`"16MiB"`, `"0.1"`, `"1000"`). Every form goes through [`CacheSize::parse`], so a size
//! means in Python exactly what it means on the command line.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use sim::size::SizeKind;
use sim::CacheSize;

use crate::errors::value_error;

/// A cache size (`bufcache.Size`): `Size("16MiB")`, `Size.bytes(n)`, `Size.units(n)`,
/// `Size.fraction(f)`.
#[pyclass(name = "Size", module = "bufcache._bufcache", frozen)]
#[derive(Clone)]
pub struct PySize {
    pub inner: CacheSize,
}

fn parse(text: &str) -> PyResult<CacheSize> {
    CacheSize::parse(text).map_err(value_error)
}

#[pymethods]
impl PySize {
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        Ok(PySize {
            inner: parse(text)?,
        })
    }

    /// `n` bytes (sizes count bytes).
    #[staticmethod]
    fn bytes(n: u64) -> PyResult<Self> {
        Ok(PySize {
            inner: parse(&format!("{n}b"))?,
        })
    }

    /// `n` capacity units: objects, or bytes when sizes count.
    #[staticmethod]
    fn units(n: u64) -> PyResult<Self> {
        if n == 0 {
            return Err(value_error("a cache of 0 units holds nothing"));
        }
        Ok(PySize {
            inner: CacheSize::units(n),
        })
    }

    /// A fraction in (0, 1] of the trace's working set.
    #[staticmethod]
    fn fraction(f: f64) -> PyResult<Self> {
        Ok(PySize {
            inner: parse(&fraction_text(f))?,
        })
    }

    /// `units`, `bytes` or `fraction`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner.kind {
            SizeKind::Units(_) => "units",
            SizeKind::Bytes(_) => "bytes",
            SizeKind::Fraction(_) => "fraction",
        }
    }

    /// The number of units or bytes, or the fraction.
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(match self.inner.kind {
            SizeKind::Units(n) | SizeKind::Bytes(n) => n.into_pyobject(py)?.into_any().unbind(),
            SizeKind::Fraction(f) => f.into_pyobject(py)?.into_any().unbind(),
        })
    }

    fn __str__(&self) -> &str {
        &self.inner.text
    }

    fn __repr__(&self) -> String {
        format!("Size({:?})", self.inner.text)
    }
}

/// A float as a fraction's text: Rust's `Debug` form always keeps a decimal point or an
/// exponent (`1.0`, `0.1`, `1e-7`), which is what makes [`CacheSize::parse`] read a
/// fraction; `Display` would write `1`, one unit.
fn fraction_text(f: f64) -> String {
    format!("{f:?}")
}

/// Any accepted form of a size.
pub fn cache_size(obj: &Bound<'_, PyAny>) -> PyResult<CacheSize> {
    if let Ok(s) = obj.cast::<PySize>() {
        return Ok(s.get().inner.clone());
    }
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err("a cache size cannot be a bool"));
    }
    if let Ok(n) = obj.extract::<u64>() {
        return parse(&n.to_string());
    }
    if let Ok(f) = obj.extract::<f64>() {
        return parse(&fraction_text(f));
    }
    if let Ok(s) = obj.extract::<String>() {
        return parse(&s);
    }
    Err(PyTypeError::new_err(format!(
        "a cache size is a Size, int, float or str, not {}",
        obj.get_type().name()?
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_stay_fractions() {
        for (f, text) in [(1.0, "1.0"), (0.1, "0.1"), (0.5, "0.5"), (1e-7, "1e-7")] {
            assert_eq!(fraction_text(f), text);
            let size = parse(&fraction_text(f)).expect("a fraction parses");
            assert_eq!(size.kind, SizeKind::Fraction(f));
        }
    }
}
