//! `bufcache.Cache`: one cache driven request by request from Python, by a built-in policy
//! or a [`Plugin`]. Every call runs [`policy::Cache`], the same code replay runs, so a loop
//! of `get` calls gives the miss ratio `replay` gives.

use policy::{Access, AnyPolicy, BuildContext, Outcome, Policy, PolicySpec, NEVER};
use pyo3::exceptions::PyNotImplementedError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sim::replay::serve;
use sim::{Counts, WorkingSet};

use crate::errors::value_error;
use crate::plugin::{HookErrors, Plugin, PluginPolicy};
use crate::size::cache_size;
use crate::trace::{PyRequest, Trace};

/// What a [`Cache`] needs of the policy it drives, built-in or Python.
trait Engine: Send + Sync {
    fn access(&mut self, access: &Access) -> PyResult<Outcome>;
    fn contains(&self, key: u64) -> bool;
    fn victims(&self, n: usize) -> PyResult<Vec<u64>>;
    fn remove(&mut self, key: u64) -> PyResult<bool>;
    fn len(&self) -> usize;
    fn used(&self) -> u64;
    fn serve(&mut self, trace: &sim::CompactTrace, ignore_size: bool) -> PyResult<Counts>;
}

fn serve_all<P: Policy>(
    cache: &mut policy::Cache<P>,
    trace: &sim::CompactTrace,
    ignore_size: bool,
) -> Counts {
    let mut counts = Counts::default();
    serve(
        cache,
        trace,
        0..trace.len(),
        ignore_size,
        None,
        &mut counts,
        &|_| {},
    );
    counts
}

impl Engine for policy::Cache<AnyPolicy> {
    fn access(&mut self, access: &Access) -> PyResult<Outcome> {
        Ok(policy::Cache::access(self, access))
    }
    fn contains(&self, key: u64) -> bool {
        policy::Cache::contains(self, key)
    }
    fn victims(&self, n: usize) -> PyResult<Vec<u64>> {
        Ok(policy::Cache::victims(self, n))
    }
    fn remove(&mut self, key: u64) -> PyResult<bool> {
        Ok(policy::Cache::remove(self, key))
    }
    fn len(&self) -> usize {
        policy::Cache::len(self)
    }
    fn used(&self) -> u64 {
        policy::Cache::used(self)
    }
    fn serve(&mut self, trace: &sim::CompactTrace, ignore_size: bool) -> PyResult<Counts> {
        Ok(serve_all(self, trace, ignore_size))
    }
}

/// A cache of a Python policy, and where its hooks' exceptions land.
struct PluginEngine {
    cache: policy::Cache<PluginPolicy>,
    errors: HookErrors,
}

impl Engine for PluginEngine {
    fn access(&mut self, access: &Access) -> PyResult<Outcome> {
        let outcome = self.cache.access(access);
        self.errors.check(outcome)
    }
    fn contains(&self, key: u64) -> bool {
        self.cache.contains(key)
    }
    fn victims(&self, _n: usize) -> PyResult<Vec<u64>> {
        Err(PyNotImplementedError::new_err(
            "a Python policy cannot list its next victims without evicting them",
        ))
    }
    fn remove(&mut self, key: u64) -> PyResult<bool> {
        let removed = self.cache.remove(key);
        self.errors.check(removed)
    }
    fn len(&self) -> usize {
        self.cache.len()
    }
    fn used(&self) -> u64 {
        self.cache.used()
    }
    fn serve(&mut self, trace: &sim::CompactTrace, ignore_size: bool) -> PyResult<Counts> {
        let counts = serve_all(&mut self.cache, trace, ignore_size);
        self.errors.check(counts)
    }
}

/// A cache served one request at a time (`bufcache.Cache`).
#[pyclass(module = "bufcache._bufcache")]
pub struct Cache {
    engine: Box<dyn Engine>,
    name: String,
    capacity: u64,
    ignore_size: bool,
    /// Logical time of the next request (policies that age entries read it).
    clock: u64,
}

/// What a fraction of the working set is a fraction of: a trace's, or none.
fn working_set(trace: Option<&Bound<'_, Trace>>) -> WorkingSet {
    match trace {
        Some(t) => t.get().compact.working_set(),
        None => WorkingSet {
            objects: 0,
            bytes: 0,
        },
    }
}

#[pymethods]
impl Cache {
    /// `policy` is a name with parameters (`"s3fifo:small=0.1"`) or a `Plugin`; `size` a
    /// `Size`, int, float fraction or string (`"16MiB"`); a fraction needs `trace`, whose
    /// working set it is a fraction of. With `ignore_size` every object counts one unit.
    #[new]
    #[pyo3(signature = (policy, size, *, trace=None, ignore_size=false, seed=42))]
    fn new(
        policy: &Bound<'_, PyAny>,
        size: &Bound<'_, PyAny>,
        trace: Option<&Bound<'_, Trace>>,
        ignore_size: bool,
        seed: u64,
    ) -> PyResult<Self> {
        let size = cache_size(size)?;
        if trace.is_none() && matches!(size.kind, sim::size::SizeKind::Fraction(_)) {
            return Err(value_error(format!(
                "size {} is a fraction of a working set: pass trace=",
                size.text
            )));
        }
        let capacity = size
            .resolve(ignore_size, working_set(trace))
            .map_err(value_error)?;
        let (engine, name): (Box<dyn Engine>, String) = if let Ok(plugin) = policy.cast::<Plugin>()
        {
            let (p, errors) = Plugin::build(plugin, capacity)?;
            let name = plugin.get().name().to_string();
            let cache = policy::Cache::new(p, capacity);
            (Box::new(PluginEngine { cache, errors }), name)
        } else {
            let text: String = policy.extract()?;
            let spec = PolicySpec::parse(&text).map_err(value_error)?;
            let built = spec
                .build(&BuildContext::new(capacity, seed))
                .map_err(value_error)?;
            if built.needs_future() {
                return Err(value_error(format!(
                    "policy `{text}` is offline (it needs every request's next access): \
                         use bufcache.replay"
                )));
            }
            (Box::new(policy::Cache::new(built, capacity)), spec.label())
        };
        Ok(Cache {
            engine,
            name,
            capacity,
            ignore_size,
            clock: 0,
        })
    }

    /// Request an object: `get(key, size=1)`, or `get(request)` with a `Request` from a
    /// trace (its key and size). True on a hit; on a miss the key is inserted (evicting as
    /// needed) unless it is larger than the cache.
    #[pyo3(signature = (key, size=None))]
    fn get(&mut self, key: &Bound<'_, PyAny>, size: Option<u32>) -> PyResult<bool> {
        let (key, size) = match key.cast::<PyRequest>() {
            Ok(r) => {
                let r = r.get();
                (r.key, size.unwrap_or(r.size))
            }
            Err(_) => (key.extract::<u64>()?, size.unwrap_or(1)),
        };
        let access = Access {
            key,
            size: if self.ignore_size { 1 } else { size },
            time: self.clock,
            next_access: NEVER,
            stream: 0,
        };
        self.clock += 1;
        Ok(self.engine.access(&access)?.is_hit())
    }

    /// Whether `key` is resident (changes nothing).
    fn contains(&self, key: u64) -> bool {
        self.engine.contains(key)
    }

    fn __contains__(&self, key: u64) -> bool {
        self.engine.contains(key)
    }

    /// The keys the next `n` evictions would remove, in order (changes nothing).
    fn victims(&self, n: usize) -> PyResult<Vec<u64>> {
        self.engine.victims(n)
    }

    /// Invalidate `key`; returns whether it was resident.
    fn remove(&mut self, key: u64) -> PyResult<bool> {
        self.engine.remove(key)
    }

    /// Serve every request of `trace` (deletes invalidate) and return the counters:
    /// requests, hits, misses, miss_ratio, bytes_requested, bytes_missed, byte_miss_ratio.
    /// Keys are the trace's objects numbered in order of first appearance. Other Python
    /// threads run meanwhile.
    fn process<'py>(
        &mut self,
        py: Python<'py>,
        trace: &Bound<'py, Trace>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let compact = trace.get().compact.clone();
        let ignore_size = self.ignore_size;
        let engine = &mut self.engine;
        // The GIL is released; a Python policy's hooks take it back for each call.
        let counts = py.detach(|| engine.serve(&compact, ignore_size))?;
        counts_dict(py, &counts)
    }

    /// Resident objects.
    fn __len__(&self) -> usize {
        self.engine.len()
    }

    /// Capacity in units (objects, or bytes).
    #[getter]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Units in use.
    #[getter]
    fn used(&self) -> u64 {
        self.engine.used()
    }

    /// The policy as written.
    #[getter]
    fn policy(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!(
            "Cache({:?}, capacity={}, used={})",
            self.name,
            self.capacity,
            self.engine.used()
        )
    }
}

/// Counters as a dict.
pub fn counts_dict<'py>(py: Python<'py>, c: &Counts) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("requests", c.requests)?;
    d.set_item("hits", c.hits)?;
    d.set_item("misses", c.misses())?;
    d.set_item("miss_ratio", c.miss_ratio())?;
    d.set_item("bytes_requested", c.bytes_requested)?;
    d.set_item("bytes_missed", c.bytes_missed)?;
    d.set_item("byte_miss_ratio", c.byte_miss_ratio())?;
    Ok(d)
}
