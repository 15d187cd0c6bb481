//! Traces: loading a file or generating a synthetic workload into the compact in-memory
//! form every replay runs on, iterating its requests, and its statistics.
//!
//! A [`Trace`] remembers where its requests came from ([`Source`]), so that iterating
//! requests and the approximate curves (which read a trace as a stream) see the original
//! requests, with their times and operations, rather than the compact form's dense ids.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sim::{CompactTrace, TraceBuilder};
use trace::{CsvMapping, Format, Op, ReadOptions, Request, TraceError, TraceReader};

use crate::errors::{trace_error, value_error};

/// Requests read from the source per call, so that reading allocates once.
const BATCH: usize = 4096;

/// Size of every synthetic request in bytes (the CLI's synthetic workloads use the same).
const SYNTHETIC_OBJECT_BYTES: u32 = 4096;

/// Where a trace's requests come from; reopened for every pass that streams them.
#[derive(Clone, Debug)]
pub enum Source {
    /// A trace file read with these options.
    File {
        /// The path as given.
        path: PathBuf,
        /// The format, `None` to detect it from the file name.
        format: Option<Format>,
        /// Page size and CSV mapping.
        options: ReadOptions,
    },
    /// A seeded synthetic workload.
    Synthetic {
        /// The workload.
        workload: trace::synth::Workload,
        /// How many requests.
        requests: u64,
        /// Its seed.
        seed: u64,
    },
}

impl Source {
    /// A fresh reader at the first request.
    pub fn open(&self) -> Result<Box<dyn TraceReader>, TraceError> {
        match self {
            Source::File {
                path,
                format,
                options,
            } => trace::open(path, *format, options),
            Source::Synthetic {
                workload,
                requests,
                seed,
            } => Ok(Box::new(GeneratorReader(trace::synth::try_generate(
                workload,
                *requests,
                *seed,
                SYNTHETIC_OBJECT_BYTES,
            )?))),
        }
    }

    /// Reads every request into the compact form, and whether keys were hashed strings.
    fn load(&self) -> Result<(CompactTrace, bool), TraceError> {
        let mut reader = self.open()?;
        let mut builder = TraceBuilder::new();
        let mut batch = vec![Request::default(); BATCH];
        loop {
            let n = reader.read_batch(&mut batch)?;
            if n == 0 {
                break;
            }
            for r in &batch[..n] {
                builder.push(r);
            }
        }
        Ok((builder.finish(), reader.keys_hashed()))
    }
}

/// A synthetic generator seen as a trace reader.
struct GeneratorReader(trace::synth::Generator);

impl TraceReader for GeneratorReader {
    fn read_into(&mut self, req: &mut Request) -> Result<bool, TraceError> {
        match self.0.next() {
            Some(r) => {
                *req = r;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// A trace held in memory, ready to replay (`bufcache.Trace`).
#[pyclass(module = "bufcache._bufcache", frozen)]
pub struct Trace {
    /// The requests in compact form (shared with running replays).
    pub compact: Arc<CompactTrace>,
    /// Where they came from.
    pub source: Source,
    /// A name for reports (the path, or the workload).
    pub label: String,
    keys_hashed: bool,
}

impl Trace {
    fn from_source(py: Python<'_>, source: Source, label: String) -> PyResult<Self> {
        // Reading a large trace takes seconds: let other Python threads run meanwhile.
        let (compact, keys_hashed) = py.detach(|| source.load()).map_err(trace_error)?;
        Ok(Trace {
            compact: Arc::new(compact),
            source,
            label,
            keys_hashed,
        })
    }
}

/// A CSV mapping from a preset name (`cloudphysics`, `msr`, `keyed`) or a spec
/// (`key=2,size=3,delimiter=tab`, or libCacheSim's `obj-id-col=2,...`).
fn csv_mapping(text: &str) -> PyResult<CsvMapping> {
    match CsvMapping::preset(text) {
        Some(m) => Ok(m),
        None => CsvMapping::parse_spec(text).map_err(trace_error),
    }
}

#[pymethods]
impl Trace {
    /// Read a trace file: `format` is `text`, `csv`, `oracle`, `oraclezst` or `msr`
    /// (default: from the file name; `.zst`, `.gz`, `.xz` are decompressed); `csv` a preset
    /// or column mapping; block traces are split into pages of `page_size` bytes.
    #[staticmethod]
    #[pyo3(signature = (path, *, format=None, csv=None, page_size=4096))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        format: Option<&str>,
        csv: Option<&str>,
        page_size: u32,
    ) -> PyResult<Self> {
        if page_size == 0 {
            return Err(value_error("page_size must be at least 1 byte"));
        }
        let format = format
            .map(|f| f.parse::<Format>())
            .transpose()
            .map_err(trace_error)?;
        let options = ReadOptions {
            page_size,
            csv: csv.map(csv_mapping).transpose()?,
            ..ReadOptions::default()
        };
        let label = path.display().to_string();
        let source = Source::File {
            path,
            format,
            options,
        };
        Self::from_source(py, source, label)
    }

    /// A seeded synthetic workload of 4 KiB objects: `workload` as the CLI writes it,
    /// e.g. `zipf(keys=1000,alpha=0.9)`, `zipfscan(keys=..,alpha=..,every=..,scan=..)`,
    /// `uniform(keys=..)`, `scan(keys=..)`, `loop(keys=..)` or `mix(0.5*zipf(..),..)`.
    #[staticmethod]
    #[pyo3(signature = (workload, requests, *, seed=42))]
    fn synthetic(py: Python<'_>, workload: &str, requests: u64, seed: u64) -> PyResult<Self> {
        let workload: trace::synth::Workload = workload.parse().map_err(trace_error)?;
        workload.validate().map_err(trace_error)?;
        let label = format!("synthetic: {workload} ({requests} requests, seed {seed})");
        let source = Source::Synthetic {
            workload,
            requests,
            seed,
        };
        Self::from_source(py, source, label)
    }

    /// Requests (deletes included), as `trace.stats()["requests"] + ["deletes"]`.
    fn __len__(&self) -> usize {
        self.compact.len()
    }

    fn __repr__(&self) -> String {
        let s = self.compact.summary();
        format!(
            "Trace({:?}, {} requests, {} objects)",
            self.label, s.requests, s.distinct_keys
        )
    }

    /// The name reports use (the path, or the workload).
    #[getter]
    fn label(&self) -> &str {
        &self.label
    }

    /// Counts by operation and the working set: requests, reads, writes, deletes,
    /// distinct_keys, footprint_bytes, bytes_requested, keys_hashed.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.compact.summary();
        let d = PyDict::new(py);
        d.set_item("requests", s.requests)?;
        d.set_item("reads", s.reads)?;
        d.set_item("writes", s.writes)?;
        d.set_item("deletes", s.deletes)?;
        d.set_item("distinct_keys", s.distinct_keys)?;
        d.set_item("footprint_bytes", s.footprint_bytes)?;
        d.set_item("bytes_requested", s.bytes_requested)?;
        d.set_item("keys_hashed", self.keys_hashed)?;
        Ok(d)
    }

    /// Iterate the original requests (reads the source again).
    fn __iter__(&self) -> PyResult<Requests> {
        Ok(Requests {
            reader: std::sync::Mutex::new(self.source.open().map_err(trace_error)?),
            batch: Vec::new(),
            next: 0,
        })
    }
}

/// One request of a trace (`bufcache.Request`).
#[pyclass(name = "Request", module = "bufcache._bufcache", frozen, get_all)]
pub struct PyRequest {
    /// Timestamp in the trace's unit (0 if none).
    time: u64,
    /// Object identity.
    pub key: u64,
    /// Size in bytes.
    pub size: u32,
    /// `read`, `write` or `delete`.
    op: &'static str,
    /// Issuing stream, 0 when unknown.
    stream: u32,
}

#[pymethods]
impl PyRequest {
    fn __repr__(&self) -> String {
        format!(
            "Request(time={}, key={}, size={}, op={:?}, stream={})",
            self.time, self.key, self.size, self.op, self.stream
        )
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Delete => "delete",
    }
}

/// An iterator over a trace's requests, read a batch at a time.
#[pyclass(module = "bufcache._bufcache")]
pub struct Requests {
    /// Behind a lock only because Python objects must be shareable between threads; one
    /// iterator is used by one thread at a time, so it is never contended.
    reader: std::sync::Mutex<Box<dyn TraceReader>>,
    batch: Vec<Request>,
    next: usize,
}

#[pymethods]
impl Requests {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self) -> PyResult<Option<PyRequest>> {
        if self.next == self.batch.len() {
            self.batch.resize(BATCH, Request::default());
            let reader = self.reader.get_mut().unwrap_or_else(|p| p.into_inner());
            let n = reader.read_batch(&mut self.batch).map_err(trace_error)?;
            self.batch.truncate(n);
            self.next = 0;
            if n == 0 {
                return Ok(None);
            }
        }
        let r = self.batch[self.next];
        self.next += 1;
        Ok(Some(PyRequest {
            time: r.time,
            key: r.key,
            size: r.size,
            op: op_name(r.op),
            stream: r.stream,
        }))
    }
}
