//! The request model, trace readers and writers, and seeded synthetic workloads.
//!
//! * [`Request`] is the one record every reader produces and every consumer (replay, the
//!   simulator, Dust) takes. Readers fill a caller-owned `Request` ([`TraceReader`]), so
//!   reading allocates nothing per request and uses bounded memory whatever the trace size.
//! * Formats ([`Format`]): plain text ([`text`]), CSV with a column mapping and block-to-page
//!   splitting ([`csvtrace`], presets for CloudPhysics and MSR Cambridge), and libCacheSim's
//!   `oracleGeneral` binary, plain or zstd ([`oracle`]). [`open`] picks a reader from the
//!   file name; [`write_trace`] writes atomically (temporary file + rename).
//! * [`synth`]: seeded synthetic workloads (uniform, Zipf, scans, loops, mixtures).
//!
//! ```
//! use trace::{synth::{generate, Workload}, fill_next_access};
//! let w: Workload = "zipf(keys=1000,alpha=0.9)".parse().unwrap();
//! let mut reqs: Vec<_> = generate(&w, 10_000, 42).collect();
//! fill_next_access(&mut reqs);
//! assert_eq!(reqs.len(), 10_000);
//! ```
//!
//! See `docs/traces.md` for the formats, mappings and workloads in detail.

pub mod compress;
pub mod csvtrace;
mod error;
mod format;
mod io;
pub mod keyhash;
mod next_access;
pub mod oracle;
pub mod output;
mod reader;
pub mod synth;
pub mod text;

pub use csvtrace::{Column, CsvMapping, KeyType, UnknownOp};
pub use error::TraceError;
pub use format::{Format, KNOWN_FORMATS};
pub use io::{open, read_all, write_trace, ReadOptions, TraceWriter};
pub use next_access::fill_next_access;
pub use oracle::{OracleGeneralReader, OracleGeneralWriter};
pub use output::{remove_unfinished_outputs, write_output, Output};
pub use reader::{Requests, TraceReader};

/// What a request does to its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Op {
    /// Read the object.
    #[default]
    Read,
    /// Write (create or overwrite) the object.
    Write,
    /// Delete the object.
    Delete,
}

/// `next_access` value meaning never again, or unknown.
pub const NEVER: u64 = u64::MAX;

/// One request. Readers fill a request the caller owns, so reading allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Request {
    /// Timestamp in the trace's own unit (seconds for most formats), 0 if none.
    pub time: u64,
    /// Object identity (a page number for block traces).
    pub key: u64,
    /// Size in bytes.
    pub size: u32,
    /// Operation.
    pub op: Op,
    /// Index of the same key's next request in the trace, or [`NEVER`].
    pub next_access: u64,
    /// Issuing stream (process, volume, file), 0 when unknown.
    pub stream: u32,
}
