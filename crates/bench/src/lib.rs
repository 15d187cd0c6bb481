//! Every benchmark harness of bufcache in one place, so that the command line
//! (`bufcache bench replay|des|pool`) and the criterion benches measure with the same code.
//!
//! The map:
//!
//! * [`replay`](mod@replay) — requests per second of one policy on one thread over a trace
//!   already in memory, and how fast a trace file reads. The workload is a seeded Zipf
//!   trace unless a file is given.
//! * [`des`] — events per second of the discrete-event simulator on the papers' workloads,
//!   and the wall time of the whole kotz-ellis experiment.
//! * [`pool`] — the real buffer pool against the operating system's own ways of reading a
//!   file (`pread`, `mmap`, `O_DIRECT`): cached reads, pin hits, eviction, scans. Its
//!   system calls that the standard library lacks are in [`os`].
//! * [`ubc`] — Table 1 of the UBC paper on real files: `O_DIRECT`, the OS page cache, and
//!   the pool over `O_DIRECT` and over buffered I/O, with device bytes and double caching.
//! * [`ordering`] — Burnett's TPC-B-like transactions through the pool over real files
//!   with no ordering, `fsync`, barriers and graphs (`bufcache experiment
//!   burnett-ordering-real`).
//! * `benches/` — the criterion benches of replay, the pool's hit and miss paths, `fsync`
//!   and a Dust fingerprint (`cargo bench -p bufcache-bench`).
//!
//! Results are plain data (`serde::Serialize`): the caller prints them as a table or as
//! JSON. Timings are measured here and reported, never asserted; the tests of this crate
//! check what can be checked without a clock (case lists, workload shapes, arithmetic on
//! results, validation of options).

pub mod des;
mod error;
pub mod ordering;
pub mod os;
pub mod pool;
pub mod replay;
pub mod slow_sync;
pub mod ubc;

pub use error::{BenchError, ErrorKind};

/// `n` events over `seconds`, or 0 when no time passed (a run too short to time).
pub(crate) fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}
