//! Dust: find out how a cache you cannot read the source of chooses its victims.
//!
//! This crate implements chapter 2 of Burnett's thesis (*Information and Control in Buffer
//! Management*, 2006). Dust reads blocks of a file through a cache in carefully chosen
//! patterns, forces evictions, and probes which blocks survived:
//!
//! 1. [`size`] — the cache's size, by reading ever larger prefixes twice until the second
//!    pass stops hitting (thesis fig. 2.1), refined by bisection; then a check that the
//!    test region fits, shrinking the estimate if it does not ([`report::FitCheck`]);
//! 2. [`steps`], short-term step — a test region of 90% of the size in 10 stripes whose initial
//!    access order, recency and frequency all disagree (fig. 2.2), an eviction scan that
//!    removes about half of it (fig. 2.3), and 20 probes per iteration from a random start;
//!    run twice: once after setting every use bit and once after setting half of them
//!    (section 2.3.3), which tells Clock from FIFO;
//! 3. [`steps`], history step — hot, cold, evict1 and evict2 regions (fig. 2.7) that reveal
//!    whether pages evicted earlier are remembered (2Q, LRU-K);
//! 4. [`classify`](mod@classify) — a verdict (`fifo`, `lru`, `lfu`, `random`, `sfifo`, `clock`, `twoq`,
//!    `lruk`, or `unknown`), the attributes the policy evidently uses, and a confidence.
//!
//! [`figures`](mod@figures) describes the size estimate and every fingerprint as figure
//! specs that the `report` crate draws.
//!
//! Targets implement the small [`Target`] trait: [`SimTarget`] drives any policy of the
//! `policy` crate (with an oracle, and optionally a seeded virtual-time latency model),
//! [`PoolTarget`] the real buffer pool of `bufcache-pool`, and `LinuxTarget` probes the
//! Linux page cache through a file. [`target_from_spec`] builds any of them from a
//! command-line string.
//!
//! ```
//! use dust::{fingerprint, DustConfig, SimTarget};
//!
//! let mut target = SimTarget::parse("sim:lru:pages=1000", 7).unwrap();
//! let config = DustConfig { iterations: 30, seed: 7, ..DustConfig::default() };
//! let report = fingerprint(&mut target, &config).unwrap();
//! assert_eq!(report.size.pages, 1000);
//! assert_eq!(report.verdict.verdict, "lru");
//! ```

pub mod classify;
pub mod figures;
pub mod judge;
#[cfg(target_os = "linux")]
pub mod linux;
pub mod pool_target;
pub mod report;
pub mod sim;
pub mod size;
pub mod steps;
pub mod target;

pub use classify::{classify, Attribute, Features, Verdict};
pub use judge::{calibrate, Calibration, Judge};
#[cfg(target_os = "linux")]
pub use linux::LinuxTarget;
pub use pool_target::PoolTarget;
pub use report::{
    fingerprint, fingerprint_with_progress, DustConfig, FitCheck, JudgeChoice, Report,
};
pub use sim::{LatencyModel, SimTarget};
pub use size::{estimate_size, SizeEstimate, SizeOptions};
pub use steps::{Layout, Probe, Step};
pub use target::{Read, Target};

use thiserror::Error;

/// Build a target from its command-line form: `sim:POLICY[:param=value...]:pages=N[:timing=on]`,
/// `pool:POLICY[:param=value...]:frames=N[:blocks=M][:file=PATH]` (the real buffer pool,
/// see [`PoolTarget`]) or `linux:PATH`. `seed` seeds simulated targets.
pub fn target_from_spec(text: &str, seed: u64) -> Result<Box<dyn Target>, DustError> {
    let kind = text.split(':').next().unwrap_or_default();
    match kind {
        "sim" => Ok(Box::new(SimTarget::parse(text, seed)?)),
        "pool" => Ok(Box::new(PoolTarget::parse(text)?)),
        #[cfg(target_os = "linux")]
        "linux" => Ok(Box::new(LinuxTarget::parse(text)?)),
        _ => Err(DustError::BadTarget {
            target: text.to_string(),
            why: "expected sim:POLICY[:param=value...]:pages=N, \
                  pool:POLICY[:param=value...]:frames=N or linux:PATH"
                .into(),
        }),
    }
}

/// Why Dust could not probe or conclude.
#[derive(Debug, Error)]
pub enum DustError {
    /// A target string could not be understood.
    #[error("bad target `{target}`: {why}")]
    BadTarget {
        /// The string given.
        target: String,
        /// What is wrong and what was expected.
        why: String,
    },
    /// The policy of a simulated target could not be built.
    #[error("bad policy in target `{target}`: {source}")]
    Policy {
        /// The string given.
        target: String,
        /// The policy crate's error.
        #[source]
        source: policy::ConfigError,
    },
    /// An I/O operation on a real target failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file involved.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A read asked for a block past the end of the target.
    #[error("block {block} is past the end of the target ({blocks} blocks)")]
    OutOfRange {
        /// The block asked for.
        block: u64,
        /// The target's length in blocks.
        blocks: u64,
    },
    /// The target is too small for the regions Dust needs at this cache size.
    #[error("the target has {blocks} blocks but Dust needs {needed} for a cache of {pages} pages; use a larger file")]
    TooSmall {
        /// The target's length in blocks.
        blocks: u64,
        /// Blocks needed.
        needed: u64,
        /// The cache size being fingerprinted.
        pages: u64,
    },
    /// The size estimate never saw the second pass miss.
    #[error("the cache holds every prefix up to {tried} blocks: it is larger than the target file ({blocks} blocks), or reads are never slow")]
    SizeNotFound {
        /// The largest prefix tried.
        tried: u64,
        /// The target's length in blocks.
        blocks: u64,
    },
    /// Neither an oracle nor timing is available, or timing cannot separate hits from
    /// misses.
    #[error("cannot judge hits: {0}")]
    Judge(String),
    /// A configuration value is out of range.
    #[error("bad configuration: {0}")]
    Config(String),
}
