//! What processes do: scripts of file-system operations.
//!
//! A script is a list of [`Op`]s run in order. Most ops are explicit (`Write` at an
//! offset); [`Op::SharedRecords`] expresses Kotz & Ellis's self-scheduled `gw` pattern, in
//! which the next record a process writes depends on when it gets to the shared counter,
//! so it cannot be written down in advance without fixing the timing.

use super::time::Nanos;

/// A file, numbered densely from 0 in the order the workload declares them.
pub type FileId = u32;

/// One operation of a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Open a file (costs a system call; the file must be declared by the workload).
    Open(FileId),
    /// Read `len` bytes at `offset` (stops at the end of the file).
    Read {
        /// The file.
        file: FileId,
        /// First byte.
        offset: u64,
        /// Bytes to read.
        len: u64,
    },
    /// Write `len` bytes at `offset` (extends the file).
    Write {
        /// The file.
        file: FileId,
        /// First byte.
        offset: u64,
        /// Bytes to write.
        len: u64,
    },
    /// Close a file (costs a system call).
    Close(FileId),
    /// Delete a file: its cached blocks are dropped, dirty ones without being written.
    Delete(FileId),
    /// Cut a file to `len` bytes, dropping cached blocks past the end.
    Truncate {
        /// The file.
        file: FileId,
        /// New length in bytes.
        len: u64,
    },
    /// Compute for a fixed time.
    Compute(Nanos),
    /// Compute for the process's next delay from its fixed list (Kotz & Ellis: drawn once
    /// per workload, the same in every run).
    ComputeNext,
    /// Wait until the file's dirty blocks are on disk (`None`: every file): `fsync` and
    /// `sync`. Blocks that must follow other writes get those written first.
    Sync(Option<FileId>),
    /// `barrier()`: every write issued before reaches the disk before any issued after
    /// (Burnett §4.2).
    Barrier,
    /// `graphwrite()` (Burnett §4.3): write `len` bytes at `offset`, naming the write `id`
    /// and ordering it after the writes named by `Workload::deps[deps_start..][..deps_len]`.
    GraphWrite {
        /// The file.
        file: FileId,
        /// First byte.
        offset: u64,
        /// Bytes to write.
        len: u64,
        /// The write's id (unique in the workload).
        id: u32,
        /// Start of its dependency ids in [`Workload::deps`].
        deps_start: u32,
        /// Number of dependency ids.
        deps_len: u32,
    },
    /// Repeatedly take the next record number from shared counter `counter` and transfer
    /// that record of `file`, until `total_bytes` are covered; after each record, compute
    /// for the next delay if `compute`.
    SharedRecords {
        /// Which shared counter.
        counter: u16,
        /// The file.
        file: FileId,
        /// Record size in bytes.
        record_bytes: u64,
        /// Bytes in all records together.
        total_bytes: u64,
        /// Writes (true) or reads.
        write: bool,
        /// Compute after each record.
        compute: bool,
    },
}

/// A file the workload uses: its size on disk when the run starts and the room reserved
/// for it on disk (files are laid out back to back in declaration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSpec {
    /// Bytes already on disk at the start.
    pub initial_bytes: u64,
    /// Largest size the file reaches (reserves its disk space).
    pub max_bytes: u64,
}

/// One process: its operations and its fixed compute delays.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    /// Operations in order.
    pub ops: Vec<Op>,
    /// Delays taken by [`Op::ComputeNext`] and [`Op::SharedRecords`], in order; when they
    /// run out the process computes for zero time.
    pub delays: Vec<Nanos>,
}

/// Everything the processes do: the files and one script per process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    /// Files, indexed by [`FileId`].
    pub files: Vec<FileSpec>,
    /// One script per process.
    pub scripts: Vec<Script>,
    /// Number of shared record counters used by [`Op::SharedRecords`].
    pub counters: u16,
    /// Dependency ids of every [`Op::GraphWrite`], concatenated.
    pub deps: Vec<u32>,
}

impl Workload {
    /// True if any process uses `fsync`/`sync`, barriers or graph writes: the simulator
    /// then tracks ordering and checks every write that reaches the disk.
    pub fn uses_ordering(&self) -> bool {
        self.scripts
            .iter()
            .flat_map(|s| s.ops.iter())
            .any(|op| matches!(op, Op::Sync(_) | Op::Barrier | Op::GraphWrite { .. }))
    }
}
