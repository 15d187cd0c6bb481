//! The pool's typed errors.

use std::path::PathBuf;

use crate::FileHandle;

/// Everything a pool operation can report. No operation panics on user input.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The page size is not a power of two in 4 KiB..=64 KiB.
    #[error("page size {page_size} is not a power of two between 4096 and 65536 bytes")]
    BadPageSize {
        /// The size asked for.
        page_size: usize,
    },
    /// The pool could not hold the pages that may be pinned plus room to load and read
    /// ahead (`pin_limit + read_ahead + 1` frames).
    #[error(
        "capacity of {capacity_frames} frames is below the pin limit: {pin_limit} pinned pages \
         + {read_ahead} read-ahead pages + 1 frame to load into"
    )]
    CapacityBelowPinLimit {
        /// Frames the pool would have.
        capacity_frames: usize,
        /// Pages the application may keep pinned at once.
        pin_limit: usize,
        /// Read-ahead depth in pages.
        read_ahead: usize,
    },
    /// The frame memory could not be allocated.
    #[error("cannot allocate {bytes} bytes of frames")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: u128,
    },
    /// The policy spec did not parse or name a policy.
    #[error("policy: {0}")]
    Policy(#[from] policy::ConfigError),
    /// The admission filter's spec did not parse or name a filter.
    #[error("admission: {0}")]
    Admission(policy::ConfigError),
    /// The policy exists but cannot run in a concurrent pool (its hits are order-sensitive).
    #[error("policy '{name}' cannot run concurrently in the pool (usable: {allowed})")]
    PolicyNotConcurrent {
        /// The policy asked for.
        name: String,
        /// The policies that can.
        allowed: String,
    },
    /// A write-back flusher interval of zero.
    #[error("write-back interval must be positive")]
    BadWritePolicy,
    /// The handle was closed, or never came from this pool.
    #[error("file handle {0:?} is closed or unknown")]
    Closed(FileHandle),
    /// Every file slot is in use (or the builder asked for 0 or more than
    /// [`crate::MAX_OPEN_FILES`] slots, [`crate::MAX_OPEN_FILES_HASHED`] with the hashed
    /// lookup).
    #[error("too many open files (at most {max})")]
    TooManyOpenFiles {
        /// The pool's limit.
        max: usize,
    },
    /// A pin of a page at or beyond the end of the file.
    #[error("page {page} is past the end of the file ({pages} pages)")]
    PastEnd {
        /// The page asked for.
        page: u64,
        /// Pages in the file.
        pages: u64,
    },
    /// An offset and length whose end does not fit in 64 bits, or a page number the mapped
    /// lookup cannot address (2^28 pages per file).
    #[error("byte range at offset {offset} of {len} bytes is out of range")]
    OutOfRange {
        /// Start offset.
        offset: u64,
        /// Length.
        len: u64,
    },
    /// `set_len` or `close` met a page that is pinned.
    #[error("page {page} is pinned")]
    PagePinned {
        /// The page.
        page: u64,
    },
    /// No frame could be freed: every resident page is pinned by the application (or every
    /// frame stayed latched by the pool's own operations for 10 s).
    #[error("all {frames} frames are pinned")]
    AllPinned {
        /// Frames in the pool.
        frames: usize,
    },
    /// A miss needed a frame, and the only pages that could make room were dirty pages
    /// whose writes failed. The error is the file's whose write failed (it may be another
    /// file than the one the miss was for); those pages stay dirty, and that file's own
    /// `fsync` reports the error too.
    #[error("no frame could be freed: every evictable page is dirty and could not be written ({source})")]
    WriteBackStalled {
        /// The write that failed.
        source: Box<PoolError>,
    },
    /// `resize` would leave fewer frames than the application pins (or the pins left
    /// too few evictable frames to get there). Nothing was dropped; the capacity is as it
    /// was.
    #[error("cannot shrink to {requested} frames: the application pins {pinned} pages")]
    ResizeBelowPinned {
        /// The capacity asked for.
        requested: usize,
        /// Pages the application pinned when the shrink gave up.
        pinned: usize,
    },
    /// `resize` beyond the most frames the arena can address (it grows by at most 1024
    /// chunks of a quarter of the first capacity, 64 frames at least).
    #[error("cannot grow to {requested} frames: at most {max}")]
    ResizeTooLarge {
        /// The capacity asked for.
        requested: usize,
        /// The most the pool can have.
        max: usize,
    },
    /// The storage failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`open`, `read`, `write`, `sync`, `set_len`).
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A write id (a dependency, or one waited for) that this pool never issued.
    #[error("write {id} was not issued by this pool")]
    UnknownWrite {
        /// The id's number.
        id: u64,
    },
    /// `barrier()` while a `PageMut` is alive: the page's changes would straddle epochs.
    #[error("barrier refused: {pinned} page(s) pinned for writing (drop the PageMut first)")]
    BarrierInsidePin {
        /// `PageMut`s alive at the call.
        pinned: usize,
    },
    /// A write that the waited-for write follows (or that write itself) could not be
    /// written or synced. The pool keeps the data: the next level retries it.
    #[error("ordered write {id} is not durable: {message}")]
    OrderedWriteFailed {
        /// The write waited for.
        id: u64,
        /// The storage error, as reported when it happened.
        message: String,
    },
}

impl PoolError {
    /// The underlying I/O error, if this is one (or a [`PoolError::WriteBackStalled`],
    /// whose cause is one).
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            PoolError::Io { source, .. } => Some(source),
            PoolError::WriteBackStalled { source } => source.io_error(),
            _ => None,
        }
    }
}
