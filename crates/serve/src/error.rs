//! The crate's errors.

use std::path::PathBuf;

/// What can go wrong in the server, the load generator or the experiment.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A configuration value is out of range or inconsistent.
    #[error("bad configuration: {what}: {why}")]
    Config {
        /// The setting.
        what: &'static str,
        /// Why it was refused.
        why: String,
    },
    /// An I/O operation failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A socket operation failed.
    #[error("{what}: {source}")]
    Net {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The buffer pool refused.
    #[error("buffer pool: {0}")]
    Pool(#[from] pool::PoolError),
    /// The kernel refused a cgroup or a probe (or the machine lacks one).
    #[error(transparent)]
    Linux(#[from] linux::LinuxError),
    /// A policy could not be built.
    #[error("mirror policy: {0}")]
    Policy(#[from] policy::ConfigError),
    /// A file (manifest, Dust report) could not be parsed.
    #[error("parsing {}: {why}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        why: String,
    },
}

impl ServeError {
    /// A configuration error.
    pub fn config(what: &'static str, why: impl Into<String>) -> Self {
        ServeError::Config {
            what,
            why: why.into(),
        }
    }

    /// An I/O error on a path, as a closure for `map_err`.
    pub fn io(what: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| ServeError::Io { what, path, source }
    }
}
