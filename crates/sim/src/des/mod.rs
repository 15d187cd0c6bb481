//! The discrete-event file-cache simulator.
//!
//! Processes run scripts of file operations (open, read, write, delete, compute, sync)
//! against a buffer cache over independent disks, in virtual time (nanoseconds). The same
//! inputs give the same outputs, byte for byte: the event queue breaks ties by scheduling
//! order, nothing iterates a hash map, and every random choice comes from a seed.
//!
//! The parts, each in its own module:
//!
//! * [`time`] — virtual time: instants that cannot wrap, durations in nanoseconds;
//! * [`event`] — the event enum and the (time, sequence) queue;
//! * [`disk`] — disks with FIFO / SSTF / LOOK / C-LOOK queues and constant or linear
//!   service times;
//! * [`config`] — the system: cache size, replacement policy (any of the policy crate),
//!   write policy, cleaner, flusher, read-ahead, CPU costs, disks and layout;
//! * [`ops`] — what processes do;
//! * [`ordering`] — write ordering: barrier epochs, asynchronous-graph nodes and the
//!   checker that verifies every run;
//! * [`engine`] — the event loop, the buffer cache and the processes;
//! * [`kotz`], [`xmf`], [`tpcb`], [`from_trace`], [`syscalls`] — workload generators and
//!   trace readers;
//! * [`scenario`] — TOML scenario files with sweeps;
//! * [`memory`] — a second simulator on the same clock and queue: the file cache and
//!   virtual memory sharing one physical memory under an arbiter (Nelson 1990).
//!
//! # Example
//!
//! ```
//! use sim::des::{config::SystemConfig, kotz::{KotzWorkload, Pattern}, simulate};
//!
//! let mut system = SystemConfig::default();
//! system.cache.block_bytes = 1024;
//! system.cache.buffers = 80;
//! system.cache.policy = "toss".into();
//! system.cache.write_policy = sim::des::config::WritePolicy::WriteFull;
//! system.disks.count = 20;
//! system.disks.service = sim::des::disk::ServiceTime::Constant { ms: 30.0 };
//! let workload = KotzWorkload { pattern: Pattern::Gw, ..Default::default() }.build();
//! let report = simulate(&system, &workload, 1).unwrap();
//! // 4000 one-block records, each block written once as soon as it is full.
//! assert_eq!(report.disk_writes, 4000);
//! assert_eq!(report.rewrite_mistakes, 0);
//! assert!(report.time_s >= 6.0); // 4000 × 30 ms over 20 disks
//! ```

pub mod config;
pub mod disk;
pub mod engine;
pub mod event;
pub mod from_trace;
pub mod kotz;
pub mod memory;
pub mod ops;
pub mod ordering;
pub mod scenario;
pub mod syscalls;
pub mod time;
pub mod tpcb;
pub mod xmf;

pub use engine::{simulate, Engine, Report, RunError};
pub use scenario::{Scenario, ScenarioError};
