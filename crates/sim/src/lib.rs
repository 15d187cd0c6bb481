//! Trace replay, miss-ratio curves and the discrete-event simulator.
//!
//! * [`compact`] — a trace loaded once into the compact in-memory form all runs share.
//! * [`size`] — cache sizes as users write them (`1000`, `64MiB`, `0.1`).
//! * [`replay`](mod@replay) — many (policy, size) runs over one trace, in parallel.
//! * [`trace_time`] — spans of trace time (a warm-up of an hour, intervals of a day) turned
//!   into the positions replay counts in.
//! * [`mrc`] — miss-ratio curves: exact LRU in one pass, any policy by sweep, and
//!   streaming approximations (SHARDS, miniature simulation) for traces of any length.
//! * [`des`] — the discrete-event file-cache simulator: processes, buffer cache, write
//!   policies, cleaners, disks and schedulers, in virtual time; and the memory simulator
//!   (file cache and virtual memory under an arbiter, Nelson 1990).
//! * [`sweep`] — many traces through one grid of policies and sizes into a results file
//!   that survives crashes and resumes (`bufcache sweep`).
//! * [`ubc`] — split buffer cache + page cache against a unified page cache (Silvers 2000).
//! * [`experiments`] — the papers' experiments on the simulator: their data points, and
//!   their figures and tables as `report` specs that the CLI renders.

pub mod compact;
pub mod des;
pub mod experiments;
mod inline_table;
mod keytable;
pub mod mrc;
pub mod replay;
pub mod size;
pub mod stream;
pub mod sweep;
pub mod trace_time;
pub mod ubc;

pub use compact::{CompactTrace, Summary, TraceBuilder};
pub use replay::{
    replay, replay_admitted, replay_scheduled, Counts, Intervals, ReplayError, ReplayOptions,
    RunResult, Schedule,
};
pub use size::{CacheSize, SizeError, WorkingSet};
