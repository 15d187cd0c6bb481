//! The pool benchmark's error: what failed (a file operation, the pool, a worker thread,
//! the options) with the operation and the file it was on.

use std::io;

use crate::pool::OptionsError;

/// An error of the pool benchmark. It is one pointer wide, like a `Box`, because the timed
/// loops return `Result<(), BenchError>` from every operation and a wide error would make
/// each of those returns cost more than the operations measured.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct BenchError(Box<ErrorKind>);

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// The options cannot be run.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// A file operation failed; `context` names the operation and the file.
    #[error("{context}")]
    Io {
        /// The operation and the file, as in `cannot open /tmp/x`.
        context: String,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The buffer pool refused an operation; `context` names it.
    #[error("{context}")]
    Pool {
        /// The operation, as in `pin failed`.
        context: String,
        /// What the pool said.
        #[source]
        source: pool::PoolError,
    },
    /// The pool returned fewer bytes than a read inside the file asked for.
    #[error("short pool read at {offset}: {read} of {wanted} bytes")]
    ShortRead {
        /// Byte offset of the read.
        offset: u64,
        /// Bytes returned.
        read: usize,
        /// Bytes asked for.
        wanted: usize,
    },
    /// A copy out of the `mmap` baseline went past the end of the mapping.
    #[error("read past the end of the mapping")]
    PastMapping,
    /// A worker thread panicked (a bug in the harness, not a measurement).
    #[error("a benchmark thread panicked")]
    WorkerPanicked,
}

impl BenchError {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// A failed file operation, `context` naming it and its file.
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> BenchError {
        ErrorKind::Io {
            context: context.into(),
            source,
        }
        .into()
    }

    /// A pool operation that failed, `context` naming it.
    pub(crate) fn pool(context: impl Into<String>, source: pool::PoolError) -> BenchError {
        ErrorKind::Pool {
            context: context.into(),
            source,
        }
        .into()
    }
}

impl From<ErrorKind> for BenchError {
    fn from(kind: ErrorKind) -> BenchError {
        BenchError(Box::new(kind))
    }
}

impl From<OptionsError> for BenchError {
    fn from(e: OptionsError) -> BenchError {
        ErrorKind::Options(e).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn the_error_is_one_pointer_wide() {
        assert_eq!(
            std::mem::size_of::<Result<(), BenchError>>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn an_io_error_says_what_failed_and_keeps_the_cause() {
        let e = BenchError::io("cannot open /x", io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(e.to_string(), "cannot open /x");
        let cause = e.source().expect("the system's error is the cause");
        assert_eq!(
            cause.to_string(),
            io::Error::from(io::ErrorKind::NotFound).to_string()
        );
        assert!(matches!(e.kind(), ErrorKind::Io { .. }));
    }
}
