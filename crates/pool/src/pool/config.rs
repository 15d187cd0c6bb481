//! Building a pool: its settings (capacity, page size, policy, lookup, write policy,
//! read-ahead, I/O mode, limits) and their validation, which the builder does once so that
//! nothing later has to check them.

use super::{
    online_policies, BufferPool, FileSlot, HitMode, HitQueue, Inner, PolicyState, Sizing,
    NEXT_POOL_ID,
};
use crate::error::PoolError;
use crate::frames::Frames;
use crate::lookup::{Hashed, Mapped, Table};
use crate::stats::{Counters, STRIPE_COUNT};
use crate::storage::{FileStorage, Storage};
use parking_lot::{Condvar, Mutex};
use policy::{BuildContext, Policy, PolicySpec};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How (file, page) is translated to a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lookup {
    /// Per-file page tables indexed by page number (XMF, vmcache): no hashing on a hit.
    #[default]
    Mapped,
    /// A sharded concurrent hash table.
    Hashed,
}

/// How files are opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IoMode {
    /// Through the OS page cache.
    #[default]
    Buffered,
    /// `O_DIRECT`: the pool is the only cache. Pages are read and written whole; a file's
    /// length is trimmed back to its logical length on `fsync` and `close`.
    Direct,
}

/// When dirty pages reach storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePolicy {
    /// Delayed writes: a flusher thread wakes every `interval` and writes the pages that
    /// have been dirty for at least `age`; `fsync`, `close`, `sync_all` and eviction
    /// pressure write the rest.
    WriteBack {
        /// How often the flusher runs.
        interval: Duration,
        /// How long a page stays dirty before the flusher writes it.
        age: Duration,
    },
    /// Every `write` reaches storage before it returns (not synced: `fsync` still syncs).
    WriteThrough,
}

impl WritePolicy {
    /// Write-back with the flusher every second and pages written once 5 s old: short
    /// enough to bound what a crash loses without fsync, long enough that a page rewritten
    /// in a burst is written once (Sprite used 30 s, the Unix `update` daemon 30 s too;
    /// we prefer less exposure).
    pub fn write_back() -> Self {
        WritePolicy::WriteBack {
            interval: Duration::from_secs(1),
            age: Duration::from_secs(5),
        }
    }
}

impl Default for WritePolicy {
    fn default() -> Self {
        WritePolicy::write_back()
    }
}

/// Upper bound of [`BufferPoolBuilder::max_open_files`] with the mapped lookup, whose
/// per-file page table costs 16 KiB a slot up front.
pub const MAX_OPEN_FILES: usize = 4096;
/// Upper bound of [`BufferPoolBuilder::max_open_files`] with the hashed lookup, where a
/// slot costs about a hundred bytes; the bound is the policy's page key, which holds the
/// slot in its top 16 bits.
pub const MAX_OPEN_FILES_HASHED: usize = 1 << 16;

#[derive(Clone, Copy, Debug)]
pub(super) enum Capacity {
    Frames(usize),
    Bytes(u64),
}

/// Configures and builds a [`BufferPool`]; see [`BufferPool::builder`].
#[derive(Clone, Debug)]
pub struct BufferPoolBuilder {
    pub(super) capacity: Capacity,
    pub(super) page_size: usize,
    pub(super) policy: String,
    pub(super) lookup: Lookup,
    pub(super) write_policy: WritePolicy,
    pub(super) read_ahead: usize,
    pub(super) io_mode: IoMode,
    pub(super) max_open_files: usize,
    pub(super) pin_limit: usize,
    pub(super) seed: u64,
    pub(super) free_reserve: Option<usize>,
    pub(super) admission: Option<String>,
    pub(super) ordering_fault: Option<super::ordering::OrderingFault>,
}

impl Default for BufferPoolBuilder {
    fn default() -> Self {
        BufferPoolBuilder {
            capacity: Capacity::Frames(1024),
            page_size: 4096,
            policy: "clock".into(),
            lookup: Lookup::Mapped,
            write_policy: WritePolicy::write_back(),
            read_ahead: 8,
            io_mode: IoMode::Buffered,
            max_open_files: 64,
            pin_limit: 4,
            seed: 0,
            free_reserve: None,
            admission: None,
            ordering_fault: None,
        }
    }
}

impl BufferPoolBuilder {
    /// Test-only: break one rule of ordered writes on purpose, so that the crash
    /// enumeration can show its checker catches it (`tests/crash_ordering.rs`). Never
    /// use it otherwise: the pool then loses its ordering promise.
    #[doc(hidden)]
    pub fn ordering_fault(mut self, fault: super::ordering::OrderingFault) -> Self {
        self.ordering_fault = Some(fault);
        self
    }

    /// Capacity in frames (default 1024).
    pub fn capacity_frames(mut self, frames: usize) -> Self {
        self.capacity = Capacity::Frames(frames);
        self
    }

    /// Capacity in bytes, rounded down to whole pages.
    pub fn capacity_bytes(mut self, bytes: u64) -> Self {
        self.capacity = Capacity::Bytes(bytes);
        self
    }

    /// Page size: a power of two from 4 KiB to 64 KiB (default 4 KiB).
    pub fn page_size(mut self, bytes: usize) -> Self {
        self.page_size = bytes;
        self
    }

    /// Replacement policy as a `policy::PolicySpec` string (default `clock`). Every online
    /// policy is accepted; how its hits are recorded follows from its
    /// [`policy::HitPath`]. The spec is checked by [`build`](Self::build), not here: a bad
    /// name, parameter or value is [`PoolError::Policy`], an offline policy (`belady`)
    /// [`PoolError::PolicyNotConcurrent`].
    pub fn policy(mut self, spec: &str) -> Self {
        self.policy = spec.to_string();
        self
    }

    /// Lookup scheme (default [`Lookup::Mapped`]).
    pub fn lookup(mut self, lookup: Lookup) -> Self {
        self.lookup = lookup;
        self
    }

    /// Write policy (default [`WritePolicy::write_back`]).
    pub fn write_policy(mut self, wp: WritePolicy) -> Self {
        self.write_policy = wp;
        self
    }

    /// Pages read ahead when a file is read sequentially (default 8; 0 turns it off).
    pub fn read_ahead(mut self, pages: usize) -> Self {
        self.read_ahead = pages;
        self
    }

    /// Buffered or `O_DIRECT` I/O (default buffered).
    pub fn io_mode(mut self, mode: IoMode) -> Self {
        self.io_mode = mode;
        self
    }

    /// Files open at once (default 64; at most 4096 with the mapped lookup, whose slots
    /// cost 16 KiB each up front, so the limit bounds that memory at 64 MiB; at most
    /// 65,536 with the hashed lookup).
    pub fn max_open_files(mut self, n: usize) -> Self {
        self.max_open_files = n;
        self
    }

    /// Pages the application promises to keep pinned at most at once (default 4). The
    /// builder refuses a capacity that could not also hold a read-ahead window and a frame
    /// to load into; pinning more than this at run time can make misses fail with
    /// [`PoolError::AllPinned`].
    pub fn pin_limit(mut self, pages: usize) -> Self {
        self.pin_limit = pages;
        self
    }

    /// Seed for policies that draw random numbers (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The low-water mark of clean free frames the flusher keeps ready for misses (XMF's
    /// free pool); it refills to twice this. Default: 1/64 of the pool, at most 256, none
    /// below 64 frames. `0` turns the reserve off: frames are then freed only by the
    /// thread that needs one, so which pages are resident depends on the accesses alone,
    /// never on when the flusher ran (what a prober such as Dust needs to be repeatable).
    /// Values above a quarter of the pool are capped there.
    pub fn free_reserve(mut self, frames: usize) -> Self {
        self.free_reserve = Some(frames);
        self
    }

    /// Admission filter as a `policy::AdmissionSpec` string (`secondhit`, `prob:p=0.1`;
    /// default none: every page is admitted). It is asked on each page read from storage
    /// for a shared access; a page it refuses is still read and served, from a frame kept
    /// out of the policy and reused before any policy victim (docs/pool.md). Checked by
    /// [`build`](Self::build): a bad spec is [`PoolError::Admission`].
    pub fn admission(mut self, spec: &str) -> Self {
        self.admission = Some(spec.to_string());
        self
    }

    /// Build a pool over real files.
    pub fn build(self) -> Result<BufferPool, PoolError> {
        self.build_with_storage(FileStorage)
    }

    /// Build a pool over `storage` (e.g. [`crate::MemStorage`], [`crate::RecordingStorage`]).
    pub fn build_with_storage<S: Storage>(self, storage: S) -> Result<BufferPool, PoolError> {
        let ps = self.page_size;
        if !ps.is_power_of_two() || !(4096..=65536).contains(&ps) {
            return Err(PoolError::BadPageSize { page_size: ps });
        }
        let frames = match self.capacity {
            Capacity::Frames(n) => n,
            Capacity::Bytes(b) => usize::try_from(b / ps as u64).unwrap_or(usize::MAX),
        };
        let needed = self
            .pin_limit
            .saturating_add(self.read_ahead)
            .saturating_add(1);
        if frames < needed {
            return Err(PoolError::CapacityBelowPinLimit {
                capacity_frames: frames,
                pin_limit: self.pin_limit,
                read_ahead: self.read_ahead,
            });
        }
        if frames >= u32::MAX as usize {
            return Err(PoolError::OutOfMemory {
                bytes: frames as u128 * ps as u128,
            });
        }
        if let WritePolicy::WriteBack { interval, .. } = self.write_policy {
            if interval.is_zero() {
                return Err(PoolError::BadWritePolicy);
            }
        }
        let spec = PolicySpec::parse(&self.policy)?;
        let ctx = BuildContext::new(frames as u64, self.seed);
        let policy = spec.build(&ctx)?;
        let admission = match &self.admission {
            Some(text) => Some(Mutex::new(
                policy::AdmissionSpec::parse(text)
                    .and_then(|a| a.build(&ctx))
                    .map_err(PoolError::Admission)?,
            )),
            None => None,
        };
        let Some(mode) = HitMode::of(policy.hit_path()) else {
            return Err(PoolError::PolicyNotConcurrent {
                name: spec.name,
                allowed: online_policies(),
            });
        };
        let most = match self.lookup {
            Lookup::Mapped => MAX_OPEN_FILES,
            Lookup::Hashed => MAX_OPEN_FILES_HASHED,
        };
        if self.max_open_files == 0 || self.max_open_files > most {
            return Err(PoolError::TooManyOpenFiles {
                max: self.max_open_files,
            });
        }
        let arena = Frames::new(frames, ps).ok_or(PoolError::OutOfMemory {
            bytes: frames as u128 * ps as u128,
        })?;
        let table = match self.lookup {
            Lookup::Hashed => Table::Hashed(Hashed::new(frames)),
            Lookup::Mapped => Table::Mapped(Mapped::new(self.max_open_files)),
        };
        let sizing = Sizing::of(frames, self.free_reserve);
        let inner = Arc::new(Inner {
            id: NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed),
            frames: arena,
            table,
            files: (0..self.max_open_files).map(|_| FileSlot::new()).collect(),
            open_lock: Mutex::new(()),
            policy: Mutex::new(PolicyState {
                time: 0,
                policy,
                resident: vec![false; frames],
                transient: super::admit::Transient::new(frames),
            }),
            hit_mode: mode,
            hit_cap: match mode {
                HitMode::Counter(c) => c,
                HitMode::Queue => 0,
            },
            hit_queues: (0..STRIPE_COUNT)
                .map(|_| HitQueue(Mutex::new(Vec::new())))
                .collect(),
            // Pop from the end: hand out low frame ids first (nicer for debugging).
            free: Mutex::new((0..frames as u32).rev().collect()),
            storage: Arc::new(storage),
            page_size: ps,
            page_shift: ps.trailing_zeros(),
            read_ahead: self.read_ahead as u64,
            write_policy: self.write_policy,
            direct: self.io_mode == IoMode::Direct,
            batch: AtomicUsize::new(sizing.batch),
            low_water: AtomicUsize::new(sizing.low_water),
            capacity: AtomicUsize::new(frames),
            retired: Mutex::new(Vec::new()),
            resizing: Mutex::new(()),
            unreleased: Mutex::new(Vec::new()),
            release_pending: std::sync::atomic::AtomicBool::new(false),
            free_reserve: self.free_reserve,
            pin_limit: self.pin_limit,
            clock: AtomicU32::new(0),
            counters: Counters::new(),
            dirty_pages: AtomicU64::new(0),
            started: Instant::now(),
            flusher: (Mutex::new(false), Condvar::new()),
            flusher_wake: std::sync::atomic::AtomicBool::new(false),
            order: super::ordering::Order::new(
                frames,
                matches!(self.write_policy, WritePolicy::WriteBack { .. }),
                self.ordering_fault,
            ),
            admission,
        });
        let interval = match self.write_policy {
            WritePolicy::WriteBack { interval, .. } => interval,
            WritePolicy::WriteThrough => Duration::from_millis(100),
        };
        let worker = Arc::clone(&inner);
        let flusher = std::thread::Builder::new()
            .name("bufcache-flusher".into())
            .spawn(move || worker.flusher_loop(interval))
            .map_err(|e| PoolError::Io {
                path: PathBuf::new(),
                op: "spawn flusher",
                source: e,
            })?;
        Ok(BufferPool {
            inner,
            flusher: Some(flusher),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::{quiet_builder, small_pool};
    use super::*;
    use crate::testing::MemStorage;

    fn build(b: BufferPoolBuilder) -> Result<BufferPool, PoolError> {
        b.build_with_storage(MemStorage::new())
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn page_sizes_are_powers_of_two_from_4_to_64_kib() {
        for ps in [4096, 8192, 65536] {
            assert!(build(quiet_builder(8, "lru").page_size(ps)).is_ok(), "{ps}");
        }
        for ps in [0, 2048, 6144, 131072] {
            assert!(
                matches!(
                    build(quiet_builder(8, "lru").page_size(ps)),
                    Err(PoolError::BadPageSize { page_size }) if page_size == ps
                ),
                "{ps}"
            );
        }
    }

    /// 4 pins + 8 pages of read-ahead + 1 frame to load into = 13 frames at least.
    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn capacity_must_hold_the_pins_a_read_ahead_window_and_one_more() {
        let b = || BufferPool::builder().pin_limit(4).read_ahead(8);
        assert!(matches!(
            build(b().capacity_frames(12)),
            Err(PoolError::CapacityBelowPinLimit {
                capacity_frames: 12,
                pin_limit: 4,
                read_ahead: 8
            })
        ));
        let pool = build(b().capacity_frames(13)).unwrap();
        assert_eq!(pool.capacity_frames(), 13);
        // bytes round down to whole pages: 13 pages and 4095 bytes are 13 frames
        let pool = build(b().capacity_bytes(13 * 4096 + 4095)).unwrap();
        assert_eq!(pool.capacity_frames(), 13);
        assert!(build(b().capacity_bytes(13 * 4096 - 1)).is_err());
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_write_back_interval_of_zero_is_refused() {
        let wp = WritePolicy::WriteBack {
            interval: Duration::ZERO,
            age: Duration::from_secs(1),
        };
        assert!(matches!(
            build(quiet_builder(8, "lru").write_policy(wp)),
            Err(PoolError::BadWritePolicy)
        ));
        // write-through has no interval to check
        assert!(build(quiet_builder(8, "lru").write_policy(WritePolicy::WriteThrough)).is_ok());
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn open_files_are_limited_by_the_lookup() {
        for n in [0, MAX_OPEN_FILES + 1] {
            assert!(matches!(
                build(quiet_builder(8, "lru").max_open_files(n)),
                Err(PoolError::TooManyOpenFiles { max }) if max == n
            ));
        }
        assert!(build(quiet_builder(8, "lru").max_open_files(MAX_OPEN_FILES)).is_ok());
        // The hashed lookup has no per-slot table: sixteen times as many.
        let hashed = || quiet_builder(8, "lru").lookup(Lookup::Hashed);
        assert!(build(hashed().max_open_files(MAX_OPEN_FILES_HASHED)).is_ok());
        assert!(matches!(
            build(hashed().max_open_files(MAX_OPEN_FILES_HASHED + 1)),
            Err(PoolError::TooManyOpenFiles { .. })
        ));
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn policies_are_checked_by_name_parameters_and_hit_path() {
        assert!(matches!(
            build(quiet_builder(8, "nonesuch")),
            Err(PoolError::Policy(policy::ConfigError::UnknownPolicy { .. }))
        ));
        assert!(matches!(
            build(quiet_builder(8, "gclock:max=oops")),
            Err(PoolError::Policy(policy::ConfigError::BadValue { .. }))
        ));
        match build(quiet_builder(8, "belady")) {
            Err(PoolError::PolicyNotConcurrent { name, allowed }) => {
                assert_eq!(name, "belady");
                assert!(allowed.split(", ").any(|n| n == "lru"));
                assert!(!allowed.split(", ").any(|n| n == "belady"));
            }
            other => panic!("belady was not refused: {:?}", other.err()),
        }
    }

    /// The derived settings: a batch of 1/32 of the pool (1 to 256 frames), a free-frame
    /// reserve of 1/64 (at most 256, and a quarter of the pool at most when asked for),
    /// and the hit path's counter cap.
    #[test]
    #[cfg_attr(miri, ignore = "builds a 64 MiB arena, slow under Miri")]
    fn derived_settings_follow_the_capacity() {
        let inner = |b: BufferPoolBuilder| {
            let pool = build(b).unwrap();
            let i = &pool.inner;
            (i.batch(), i.low_water(), i.hit_cap)
        };
        let b = |frames| {
            BufferPool::builder()
                .capacity_frames(frames)
                .policy("clock")
        };
        assert_eq!(inner(b(16)), (1, 0, 1));
        assert_eq!(inner(b(640)), (20, 10, 1));
        // 16384 frames: 512 and 256 before the caps
        assert_eq!(inner(b(16384)), (256, 256, 1));
        assert_eq!(inner(b(640).free_reserve(1000)), (20, 160, 1));
        assert_eq!(inner(b(640).free_reserve(0)), (20, 0, 1));
        assert_eq!(inner(b(640).policy("gclock:max=5")).2, 5);
        assert_eq!(inner(b(640).policy("lru")).2, 0);
        assert_eq!(inner(b(640).policy("fifo")).2, 0);
    }

    #[test]
    #[cfg_attr(miri, ignore = "builds a whole pool: minutes under Miri")]
    fn a_new_pool_has_every_frame_free_and_keeps_its_invariants() {
        let pool = small_pool(8, "arc");
        pool.inner.check_invariants();
        let s = pool.stats();
        assert_eq!((s.free_frames, s.capacity_frames), (8, 8));
        assert_eq!(
            pool.inner.free.lock().last(),
            Some(&0),
            "low frame ids first"
        );
    }
}
