//! A replacement policy written in Python (`bufcache.Plugin`), for prototyping: the hooks
//! of libCacheSim's `PluginCache` (init, hit, miss, evict, remove), driven by the same
//! [`policy::Cache`] as every built-in policy. Each request calls back into Python, so it
//! is slow, but it is exact: the cache does the bookkeeping (sizes, capacity, residency)
//! and the hooks only choose victims.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use policy::{Access, FrameId, Policy};
use pyo3::prelude::*;

/// The hooks a Python policy provides (`bufcache.Plugin`).
#[pyclass(name = "Plugin", module = "bufcache._bufcache", frozen)]
pub struct Plugin {
    init: Py<PyAny>,
    hit: Py<PyAny>,
    miss: Py<PyAny>,
    evict: Py<PyAny>,
    remove: Option<Py<PyAny>>,
    name: String,
}

#[pymethods]
impl Plugin {
    /// `init(capacity) -> state`; `hit(state, key, size)`; `miss(state, key, size)` (the key
    /// is being inserted); `evict(state, key, size) -> victim key` (to make room for `key`;
    /// the victim must be resident); `remove(state, key)` (optional: the key was
    /// invalidated).
    #[new]
    #[pyo3(signature = (init, hit, miss, evict, remove=None, *, name="plugin".to_string()))]
    fn new(
        init: Py<PyAny>,
        hit: Py<PyAny>,
        miss: Py<PyAny>,
        evict: Py<PyAny>,
        remove: Option<Py<PyAny>>,
        name: String,
    ) -> Self {
        Plugin {
            init,
            hit,
            miss,
            evict,
            remove,
            name,
        }
    }

    fn __repr__(&self) -> String {
        format!("Plugin({:?})", self.name)
    }
}

impl Plugin {
    /// The policy for a cache of `capacity` units: calls `init`.
    /// The policy for a cache of `capacity` units (calls `init`), and where it leaves the
    /// exceptions its hooks raise.
    pub fn build(slf: &Bound<'_, Plugin>, capacity: u64) -> PyResult<(PluginPolicy, HookErrors)> {
        let py = slf.py();
        let state = slf.get().init.call1(py, (capacity,))?;
        let errors = HookErrors::default();
        let policy = PluginPolicy {
            hooks: slf.clone().unbind(),
            state,
            frames: HashMap::new(),
            keys: Vec::new(),
            resident: 0,
            errors: errors.clone(),
        };
        Ok((policy, errors))
    }

    /// The name it reports under.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The first exception a hook raised, shared between the policy (which cannot return
/// errors through the [`Policy`] trait) and the cache call that re-raises it.
#[derive(Clone, Default)]
pub struct HookErrors(Arc<Mutex<Option<PyErr>>>);

impl HookErrors {
    fn record(&self, e: PyErr) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    }

    /// `Err` with the exception raised since the last check, if any, else `Ok(value)`.
    pub fn check<T>(&self, value: T) -> PyResult<T> {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }
}

/// A [`Policy`] whose decisions come from Python hooks. The cache hands it frames; the
/// hooks speak in keys, so it maps between the two.
pub struct PluginPolicy {
    hooks: Py<Plugin>,
    state: Py<PyAny>,
    frames: HashMap<u64, FrameId>,
    keys: Vec<u64>,
    resident: usize,
    errors: HookErrors,
}

impl PluginPolicy {
    fn call(&mut self, pick: fn(&Plugin) -> &Py<PyAny>, access: &Access) -> Option<Py<PyAny>> {
        Python::attach(|py| {
            let hooks = self.hooks.get();
            let res = pick(hooks).call1(py, (self.state.clone_ref(py), access.key, access.size));
            match res {
                Ok(v) => Some(v),
                Err(e) => {
                    self.errors.record(e);
                    None
                }
            }
        })
    }

    fn forget(&mut self, frame: FrameId) {
        let key = self.keys[frame.index()];
        self.frames.remove(&key);
        self.resident -= 1;
    }
}

impl Policy for PluginPolicy {
    fn name(&self) -> &'static str {
        "plugin"
    }

    fn len(&self) -> usize {
        self.resident
    }

    fn on_hit(&mut self, _frame: FrameId, access: &Access) {
        self.call(|h| &h.hit, access);
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let i = frame.index();
        if self.keys.len() <= i {
            self.keys.resize(i + 1, 0);
        }
        self.keys[i] = access.key;
        self.frames.insert(access.key, frame);
        self.resident += 1;
        self.call(|h| &h.miss, access);
    }

    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self.call(|h| &h.evict, incoming)?;
        let key = Python::attach(|py| victim.extract::<u64>(py));
        let key = match key {
            Ok(k) => k,
            Err(e) => {
                self.errors.record(e);
                return None;
            }
        };
        match self.frames.get(&key).copied() {
            Some(frame) if evictable(frame) => {
                self.forget(frame);
                Some(frame)
            }
            _ => {
                self.errors
                    .record(pyo3::exceptions::PyValueError::new_err(format!(
                        "evict hook returned key {key}, which is not in the cache"
                    )));
                None
            }
        }
    }

    fn remove(&mut self, frame: FrameId) {
        let key = self.keys[frame.index()];
        self.forget(frame);
        Python::attach(|py| {
            if let Some(hook) = &self.hooks.get().remove {
                if let Err(e) = hook.call1(py, (self.state.clone_ref(py), key)) {
                    self.errors.record(e);
                }
            }
        });
    }

    fn victims(&self, _n: usize, _evictable: &dyn Fn(FrameId) -> bool, _out: &mut Vec<FrameId>) {
        // The hooks cannot look ahead without changing their state; Cache.victims refuses
        // plugins before it gets here.
    }
}
