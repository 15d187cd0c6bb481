//! A concurrent buffer pool over real files: the embeddable half of bufcache.
//!
//! ```
//! use pool::{BufferPool, Lookup, MemStorage, WritePolicy};
//!
//! let pool = BufferPool::builder()
//!     .capacity_frames(64)
//!     .policy("clock")
//!     .lookup(Lookup::Mapped)
//!     .write_policy(WritePolicy::write_back())
//!     .build_with_storage(MemStorage::new())?;
//! let f = pool.create("/data")?;
//! pool.write(f, 4090, b"spans two pages")?;
//! let mut buf = [0u8; 15];
//! assert_eq!(pool.read(f, 4090, &mut buf)?, 15);
//! assert_eq!(&buf, b"spans two pages");
//! // zero-copy access to the same frame `read` copied from (one copy, as in UBC)
//! assert_eq!(&pool.pin(f, 1)?[..9], b"two pages");
//! pool.fsync(f)?;
//! pool.close(f)?;
//! # Ok::<(), pool::PoolError>(())
//! ```
//!
//! # Design in one page (the long form is `docs/pool.md`)
//!
//! * **Frames** are one page-aligned allocation (valid `O_DIRECT` buffers), each with a
//!   header holding its latch word (shared pin count / exclusive bit), owner, dirty flag,
//!   dirty time and a reference counter. All `unsafe` code is in two private modules:
//!   `frames` (the arena and latches) and `uring` (reads handed to the kernel).
//! * **Lookup** is either [`Lookup::Hashed`] (a sharded hash table) or [`Lookup::Mapped`]
//!   (a per-file page table indexed by page number, XMF's address arithmetic). A hit is a
//!   lookup, a pin (one compare-and-swap) and an owner check: no pool-wide lock.
//! * **Replacement** reuses the policy crate. The policy sits behind a mutex taken only on
//!   misses; hits never wait for it. Each policy declares what it does with hits
//!   ([`policy::HitPath`]): where a hit only sets a bit or raises a capped counter (clock,
//!   gclock, sieve, s3fifo, ...; fifo and random ignore hits) a hit bumps a per-frame
//!   counter that is fed to the policy when eviction runs; where hits reorder the policy
//!   (lru, arc, 2q, lirs, ..., and any policy that declares nothing) they run BP-Wrapper
//!   style: each thread queues its hits and they are applied in batches under the lock.
//!   Only offline `belady` is refused ([`PoolError::PolicyNotConcurrent`]).
//! * **Writes**: write-back with a flusher thread that writes pages dirty for longer than
//!   `age` every `interval` and keeps a small pool of clean free frames (XMF's clock
//!   daemon), or write-through. Eviction never writes unless every evictable frame is
//!   dirty. `fsync` writes the file's dirty pages and syncs; errors reach the caller and
//!   the pages stay dirty.
//!
//! # Blocking
//!
//! [`PageRef`] behaves like a read lock on its page and [`PageMut`] like a write lock:
//! holding a `PageRef` and then writing the same page from the same thread (or holding a
//! `PageMut` and reading it) waits forever, exactly as with `RwLock`. Pins of *different*
//! pages never block each other, whatever else runs: `set_len` and `close` refuse with
//! [`PoolError::PagePinned`] rather than wait for a pin they would have to drop, and no
//! operation waits for a pin while it holds a lock another operation could wait for
//! (`docs/pool.md`, "Lengths, truncation and close").

pub mod budget;
mod error;
mod frames;
mod lookup;
mod pool;
mod stats;
pub mod storage;
pub mod testing;
mod uring;

pub use budget::{BudgetError, Consumer, MemoryBudget, PoolConsumer};
pub use error::PoolError;
pub use pool::{
    BufferPool, BufferPoolBuilder, FileHandle, IoMode, Lookup, OrderingFault, OrderingStats,
    PageHint, PageMut, PageRef, PoolStats, ResidentMap, WriteId, WritePolicy, MAX_OPEN_FILES,
    MAX_OPEN_FILES_HASHED, OPTIMISTIC_TRIES, TICK_NS,
};
pub use storage::{BatchRead, FileStorage, OpenMode, Storage, StorageFile};
pub use testing::{FaultKind, FaultOp, MemStorage, RecordingStorage, StorageEvent};
