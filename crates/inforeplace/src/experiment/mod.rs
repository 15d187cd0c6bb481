//! The thesis's InfoReplace experiments (`bufcache experiment inforeplace`,
//! `docs/experiments/inforeplace.md`): accuracy and overhead (Figure 3.1) and PinRange on
//! index lookups (Figure 3.2); with the Linux page cache as the source, through an
//! algorithmic mirror, the first (`linux`) and the second (`index_linux`).

pub mod accuracy;
pub mod figures;
pub mod index;
pub mod index_gain;
pub mod index_linux;
pub mod linux;
pub mod workload;

use thiserror::Error;

/// Why an experiment could not run.
#[derive(Debug, Error)]
pub enum ExperimentError {
    /// The library refused or failed.
    #[error(transparent)]
    InfoReplace(#[from] crate::InfoReplaceError),
    /// The page cache (through its mirror) failed.
    #[error(transparent)]
    Source(#[from] crate::SourceError),
    /// The memory cgroup of the Linux experiment could not be made or entered.
    #[error("memory cgroup: {0}")]
    Cgroup(String),
    /// The pool refused or failed.
    #[error("buffer pool: {0}")]
    Pool(#[from] pool::PoolError),
    /// A policy could not be built.
    #[error("policy: {0}")]
    Policy(#[from] policy::ConfigError),
    /// The Dust workload could not be laid out.
    #[error("dust workload: {0}")]
    Dust(#[from] dust::DustError),
    /// A way of experiment 4 that does not exist.
    #[error("unknown way {way:?} (known: {known})")]
    UnknownWay {
        /// As given.
        way: String,
        /// The ways there are.
        known: String,
    },
    /// A file of the index experiment.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
}
