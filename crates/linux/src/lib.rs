//! The Linux pieces that bufcache's experiments on real systems share.
//!
//! Dust probing the page cache, InfoReplace steering it, the cache-aware server asking it
//! what is resident and the UBC experiment bounding it all need the same few things from
//! the kernel. Each is wrapped once, here:
//!
//! * [`page_cache`]: whether pages of a file are resident (`cachestat(2)`, or `mincore(2)`
//!   on a mapping that is never touched), `posix_fadvise`, the page size.
//! * [`heap`]: keeping a process's large buffers out of glibc's arenas, so that its
//!   memory does not grow into the cgroup's page cache. The crate's `unsafe` is in these
//!   two modules.
//! * [`cgroup`]: a memory cgroup made for one experiment and removed after it, so the
//!   page cache under test is bounded without touching the rest of the machine.
//! * [`device`]: the block device's own read counters, because a result about caching
//!   whose misses never reached the disk proves nothing.
//! * [`memcg_reading`]: a memory cgroup's page cache read with or without flushing its
//!   statistics; [`memcg_flushes`]: the kernel's statistics flushes watched through a
//!   tracepoint, which flushes nothing.

pub mod cgroup;
pub mod device;
mod error;
pub mod heap;
pub mod memcg_flushes;
pub mod memcg_reading;
pub mod page_cache;

pub use cgroup::MemoryCgroup;
pub use device::{DeviceCounter, DeviceReads};
pub use error::LinuxError;
