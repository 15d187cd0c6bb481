//! Why InfoReplace refused a source or a target, or an operation failed.

use thiserror::Error;

/// A source could not answer.
#[derive(Debug, Error)]
pub enum SourceError {
    /// The buffer pool refused (closed handle, I/O error, ...).
    #[error("buffer pool: {0}")]
    Pool(#[from] pool::PoolError),
    /// A page was named in a file the source did not open.
    #[error("file {file} is not open in {source_name}")]
    UnknownFile {
        /// The file number given.
        file: u32,
        /// The source's description.
        source_name: String,
    },
    /// The source cannot list its next victims.
    #[error("{source_name} cannot list its next victims")]
    NoVictimList {
        /// The source's description.
        source_name: String,
    },
    /// A system call on a file of the page cache failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A page past the end of the file.
    #[error("page {page} is past the end of the file ({pages} pages)")]
    PageBeyondEnd {
        /// The page asked for.
        page: u64,
        /// Pages of the file.
        pages: u64,
    },
    /// Dust's ground truth (cachestat or mincore) failed.
    #[error("page-cache ground truth: {0}")]
    Truth(#[from] dust::DustError),
}

impl SourceError {
    /// A closure turning an I/O error into [`SourceError::Io`] about `path`.
    pub(crate) fn io(
        what: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> SourceError {
        let path = path.to_path_buf();
        move |source| SourceError::Io { what, path, source }
    }
}

/// InfoReplace could not be set up, or one of its calls failed.
#[derive(Debug, Error)]
pub enum InfoReplaceError {
    /// The source does not raise a page's priority when it is accessed (FIFO, Random):
    /// re-reading a page about to go cannot keep it, so no target can be emulated (thesis
    /// §3.3.1).
    #[error(
        "{source_name} does not raise a page's priority when it is read (its hits change nothing), so InfoReplace cannot steer it"
    )]
    SourceIgnoresAccess {
        /// The source's description.
        source_name: String,
    },
    /// The source has no victim list to watch.
    #[error("{source_name} has no victim list: InfoReplace needs to see the next evictions")]
    NoVictimList {
        /// The source's description.
        source_name: String,
    },
    /// The target needs to know the future (Belady): nothing online can emulate it.
    #[error("target `{target}` needs future knowledge and cannot be emulated online")]
    TargetNeedsFuture {
        /// The target's label.
        target: String,
    },
    /// The target may refuse to cache a page it was asked for (admission by contest,
    /// TinyUFO): every source caches what it reads, so the target's resident set could
    /// never be reached.
    #[error(
        "target `{target}` may refuse to cache a page that was just read (admission by contest), but every source caches what it reads: give the target's form that admits every page (for TinyUFO, `tinyufo:contest=false`)"
    )]
    TargetRefusesPages {
        /// The target's label.
        target: String,
    },
    /// The target policy could not be built.
    #[error("target policy: {0}")]
    Target(#[from] policy::ConfigError),
    /// A setting is out of range.
    #[error("InfoReplace setting `{setting}`: {why}")]
    Config {
        /// The setting.
        setting: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A page number too large for the key InfoReplace forms (`file << 32 | page`).
    #[error("page {page} is beyond the 2^32 pages a file may have here")]
    PageOutOfRange {
        /// The page asked for.
        page: u64,
    },
    /// The source failed.
    #[error(transparent)]
    Source(#[from] SourceError),
}
