//! Storage doubles for tests: what the pool's own tests, its examples and embedders' tests
//! run the pool over instead of real files.
//!
//! * [`MemStorage`] keeps files in memory: fast, no disk, and clones share the files so a
//!   test can reopen through a new pool what an old one wrote.
//! * [`RecordingStorage`] logs every write, length change and sync ([`StorageEvent`]) in
//!   the order they took effect, and fails chosen operations ([`FaultOp`]) with a chosen
//!   error ([`FaultKind`]): `EIO`, `ENOSPC` or a short write. The crash test rebuilds every
//!   state a crash could leave on disk from its log; the fault tests drive every error path.
//!   Over real files (`RecordingStorage::faults_over`) it injects faults without logging.
//!
//! They are ordinary `Storage` implementations, compiled in every build (the crate's
//! examples and documentation use `MemStorage`), and re-exported at the crate root.

mod mem;
mod recording;

pub use mem::MemStorage;
pub use recording::{FaultKind, FaultOp, RecordingStorage, StorageEvent};
