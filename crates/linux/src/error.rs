//! The crate's one error type.

use std::path::PathBuf;

/// What went wrong talking to the kernel.
#[derive(Debug, thiserror::Error)]
pub enum LinuxError {
    /// The machine lacks what was asked for (no memory cgroup hierarchy, no blkio
    /// controller).
    #[error("{what}: {why}")]
    Unsupported {
        /// What was attempted.
        what: &'static str,
        /// Why it cannot be done here.
        why: &'static str,
    },
    /// A file of the kernel's interface could not be read or written.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}

impl LinuxError {
    /// An I/O error on a path, as a closure for `map_err`.
    pub(crate) fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| LinuxError::Io { what, path, source }
    }
}
