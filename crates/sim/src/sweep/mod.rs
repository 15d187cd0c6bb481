//! Sweeps: many traces, each replayed through a grid of policies and sizes, into one
//! results file that a crash never corrupts and a rerun completes.
//!
//! * [`spec`] — the sweep as written ([`SweepSpec`], TOML or JSON) and as checked
//!   ([`SweepPlan`]); every mistake is found before any trace is read.
//! * [`cell`] — what names a result: the trace's content digest, the policy in canonical
//!   form, the size, the seed, the mode, page size and warm-up, and the bufcache version.
//! * [`results`] — the CSV file: whole batches appended with fsync, a partial last line cut
//!   off on open, a canonical rewrite at the end.
//! * [`run`](mod@run) — one trace's grid ([`run_trace`], what a cluster task calls), its
//!   memory estimate, and the local driver ([`run_local`]).
//! * [`session`] — the same results file kept for a driver elsewhere (Python's Ray driver)
//!   that runs each trace as a task: units to run, rows appended as tasks return.
//!
//! A trace's grid is `replay`'s own ([`crate::replay::Grid`] and its planning): a sweep
//! row holds the numbers `bufcache replay` prints for the same trace, policy and size.

pub mod cell;
pub mod results;
pub mod run;
pub mod session;
pub mod spec;

use std::path::PathBuf;

use thiserror::Error;

pub use cell::{canonical_policy, file_digest, CellKey, VERSION};
pub use results::{from_csv, to_csv, ResultsFile, Row, HEADER};
pub use run::{
    load_trace, memory_estimate_bytes, memory_total_bytes, run_loaded, run_local, run_trace,
    LocalOptions, SweepSummary, TraceEvent,
};
pub use session::{trace_memory_estimate_bytes, SweepSession, TraceUnit};
pub use spec::{SweepPlan, SweepSpec};

/// Why a sweep could not run.
#[derive(Debug, Error)]
pub enum SweepError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The spec file does not parse.
    #[error("bad sweep spec {}: {reason}", path.display())]
    Spec {
        /// The spec file.
        path: PathBuf,
        /// The parser's message (names the key and line).
        reason: String,
    },
    /// A list the sweep needs is empty.
    #[error("the sweep has no {what}: give at least one")]
    Empty {
        /// `traces`, `policies` or `sizes`.
        what: &'static str,
    },
    /// A policy that does not parse or build.
    #[error("bad policy `{policy}`: {error}")]
    Policy {
        /// As written.
        policy: String,
        /// Why.
        error: Box<policy::ConfigError>,
    },
    /// A size that does not parse.
    #[error(transparent)]
    Size(crate::SizeError),
    /// A warm-up that is neither a count nor a fraction in `[0, 1)`.
    #[error("bad warm-up `{text}`: expected a count of operations (100000) or a fraction of each trace in [0, 1) (0.1)")]
    Warmup {
        /// As written.
        text: String,
    },
    /// A warm-up as long as the trace.
    #[error("warm-up of {warmup} operations leaves nothing to count: the trace has {ops}")]
    WarmupTooLong {
        /// Warm-up operations.
        warmup: u64,
        /// The trace's operations.
        ops: u64,
    },
    /// A page size of zero.
    #[error("page_size must be at least 1 byte")]
    PageSize,
    /// An unknown format name.
    #[error(transparent)]
    Trace(trace::TraceError),
    /// A trace path without glob characters that is not a file.
    #[error("trace {} does not exist (or is not a file)", path.display())]
    MissingTrace {
        /// The path, joined to the spec's directory.
        path: PathBuf,
    },
    /// A glob that is malformed or matches no file.
    #[error("trace glob `{pattern}`: {reason}")]
    Glob {
        /// The pattern, joined to the spec's directory.
        pattern: String,
        /// Why.
        reason: String,
    },
    /// A trace file that cannot be read.
    #[error("trace {}: {error}", path.display())]
    TraceFile {
        /// The file.
        path: PathBuf,
        /// Why (names the record).
        error: trace::TraceError,
    },
    /// A trace without requests: no miss ratio to report.
    #[error("trace {} holds no requests (nothing to replay)", path.display())]
    EmptyTrace {
        /// The file.
        path: PathBuf,
    },
    /// A run could not be built on this trace (a size that truncates to zero, ...).
    #[error("trace {}: {error}", path.display())]
    Replay {
        /// The trace.
        path: PathBuf,
        /// Why.
        error: crate::ReplayError,
    },
    /// The results file holds something that is not a sweep's row.
    #[error("results file {} line {line}: {reason}", path.display())]
    Results {
        /// The file.
        path: PathBuf,
        /// The line (1 is the header).
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// Another sweep holds the results file.
    #[error("results file {} is locked by another sweep: wait for it or write to another file", path.display())]
    Locked {
        /// The file.
        path: PathBuf,
    },
}
