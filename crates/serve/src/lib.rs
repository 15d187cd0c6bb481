//! A cache-aware HTTP file server and the load generator that measures it.
//!
//! Burnett's NeST (thesis §2.5) kept a fixed number of requests in service and queued the
//! rest; its cache-aware variant served first the queued requests whose file it believed
//! to be in the OS cache, judging that by *algorithmic mirroring*: a simulated copy of the
//! kernel's cache (the policy and size Dust found) fed with the server's own requests.
//! Hits served first are short jobs served first (lower mean response time) and are
//! served before their data is evicted (fewer disk reads, more throughput).
//!
//! The map of this crate:
//!
//! * [`config`] — what the server is told: root, address, limits, timeouts, scheduler.
//! * [`safe_path`] — from a request target to a file under the root, or a refusal;
//!   [`open_files`] — those files kept open between requests, checked and bounded.
//! * [`range`] — the `Range` header (one byte range; everything else is ignored, as the
//!   RFC allows).
//! * [`oracle`] — the one thing that differs between schedulers: whether a queued
//!   request would hit if served now (`fifo` does not know; `mirror` simulates; `nowait`,
//!   `cachestat` and `pool` ask the real cache).
//! * [`mirror`] — the simulated cache behind `mirror`, built from the policy registry;
//!   [`adaptive`] — a bank of mirrors that corrects the size, or a timer's phase, from
//!   observed read times ([`bank_score`]: how a bank judges reads, live and offline);
//!   [`cgroup_poll`] — the page cache's size read from the server's memory cgroup, for a
//!   mirror that tracks it (and the side effect of reading it on this kernel's reclaim).
//! * [`scheduler`] — the bounded queue and the fixed number of service slots; one code
//!   path whatever the oracle.
//! * [`trace_log`] — `--trace`: one line per request of what the scheduler knew and what
//!   the kernel held; [`replay`] scores mirror models against such a log offline.
//! * [`backend`] — reading bytes: through the page cache, or through `bufcache-pool`.
//! * [`server`] — HTTP/1.1 over hyper: GET/HEAD, Range, Last-Modified, keep-alive,
//!   timeouts, and the `x-bufcache-predicted` / `x-bufcache-actual` headers.
//! * [`load`] — the load generator: file sets, closed and open loops, HDR histograms,
//!   device reads, reports.
//! * [`experiment`] — `cache-aware-server`: Figures 2.20–2.21 on this machine, with the
//!   page cache bounded by a memory cgroup (`bufcache-linux`'s `MemoryCgroup`).

pub mod adaptive;
pub mod backend;
mod background;
pub mod bank_score;
pub mod cgroup_poll;
pub mod config;
mod deadline_io;
mod error;
pub mod experiment;
pub mod flush_watch;
pub mod in_flight;
pub mod load;
pub mod mirror;
pub mod open_files;
pub mod oracle;
pub mod range;
pub mod replay;
pub mod replay_bank;
pub mod safe_path;
pub mod scheduler;
pub mod server;
pub mod trace_log;

pub use config::{MirrorBanking, SchedulerChoice, ServeConfig};
pub use error::ServeError;
pub use server::{serve, RunningServer};

/// Response header: the scheduler's prediction for this request (`hit`, `miss`, or
/// `unknown` under `fifo`).
pub const PREDICTED_HEADER: &str = "x-bufcache-predicted";
/// Response header: whether the data really was cached when service began (`hit` or
/// `miss`), where the server can know it (`cachestat`, or the pool's residency map);
/// `joined` for a miss whose pages a request in service was reading
/// ([`oracle::Actual`]).
pub const ACTUAL_HEADER: &str = "x-bufcache-actual";
