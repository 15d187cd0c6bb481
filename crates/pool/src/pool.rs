//! The buffer pool: files, pages, pins, misses, eviction, write-back.
//!
//! # Invariants (checked by the tests in `tests/`)
//!
//! 1. A page is mapped to at most one frame (`Table::insert` is insert-if-absent), so there
//!    is never a second cached copy of a page (UBC's one copy).
//! 2. While a key maps to a frame, that frame's header names the key as owner: the owner is
//!    written before the mapping is published and cleared only after it is removed, both
//!    under the frame's exclusive latch. A reader that pins a frame and finds another owner
//!    therefore knows its mapping was stale and may remove it while still pinned.
//! 3. The policy holds exactly the frames that are mapped and loaded (`PolicyState::resident`
//!    mirrors it); free frames and frames being loaded are not in it.
//! 4. Bytes of a cached page beyond the file's logical length are zero, so growing a file
//!    never exposes old data.
//! 5. A dirty frame is never evicted and never dropped: it leaves the dirty state only by a
//!    successful write to storage (or by truncation of its page).
//! 6. No thread waits for a frame latch the application may hold while it holds a file's
//!    resize lock (a pin can be held for ever, and its holder may wait for that lock):
//!    `write` only tries latches under it, `set_len` and `close` refuse application pins.
//! 7. At most one write of a page to storage is in flight (`Header::writing`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, RwLock};
use policy::{Access, AnyPolicy, BuildContext, FrameId, HitPath, Policy, PolicySpec};

use crate::error::PoolError;
use crate::frames::{backoff, Exclusive, Frames, Header, Shared, NO_OWNER};
use crate::lookup::{Hashed, Mapped, PageKey, Table};
use crate::stats::{stripe, Counter, Counters, STRIPE_COUNT};
use crate::storage::{read_full_at, BatchRead, FileStorage, OpenMode, Storage, StorageFile};

/// A file opened in a pool. Copyable; stale after `close` (operations then return
/// [`PoolError::Closed`], even if the slot has been reused by another file). A handle is
/// only valid in the pool that opened it: another pool refuses it with `Closed` too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileHandle {
    /// The pool's identity (see `NEXT_POOL_ID`).
    pool: u64,
    slot: u32,
    gen: u32,
}

/// Identities handed to pools, so a handle from one pool is refused by another.
static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);

impl FileHandle {
    /// The frame-header owner word of this handle's pages (unique within its pool).
    #[inline]
    fn owner(self) -> u64 {
        (u64::from(self.gen) << 32) | u64::from(self.slot)
    }

    #[inline]
    fn key(self, page: u64) -> PageKey {
        PageKey {
            slot: self.slot,
            gen: self.gen,
            page,
        }
    }
}

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

/// How hits reach the policy, from what the policy declares ([`policy::HitPath`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HitMode {
    /// Per-frame saturating counter, capped at the value (0: hits are ignored). Hits cost
    /// a load (and a store until the counter saturates). See `docs/pool.md`.
    Counter(u8),
    /// Order-sensitive policies (a hit moves the page in a list), run BP-Wrapper style
    /// (Ding et al., ICDE 2009): each thread queues its hits and they are applied, in each
    /// thread's order, under the policy lock when a queue fills or eviction runs. Hits
    /// cost a queue push under a per-thread-stripe lock.
    Queue,
}

impl HitMode {
    /// `None` for a policy no online cache can run.
    fn of(path: HitPath) -> Option<HitMode> {
        match path {
            HitPath::Ignore => Some(HitMode::Counter(0)),
            HitPath::Counter { cap } => Some(HitMode::Counter(cap.max(1))),
            HitPath::Ordered => Some(HitMode::Queue),
            HitPath::Offline => None,
        }
    }
}

/// Hits a thread queues before it tries to apply them (BP-Wrapper's batch size).
const QUEUE_COMMIT: usize = 64;
/// Hits a queue holds at most; when the policy lock stays busy past this, further hits
/// are dropped (a lost hint) rather than making a reader wait.
const QUEUE_MAX: usize = 1024;

#[repr(align(128))]
struct HitQueue(Mutex<Vec<(u32, u32)>>);

/// The registered policies a pool can run (all but the offline ones), for the error that
/// refuses another.
fn online_policies() -> String {
    let ctx = BuildContext::new(16, 0);
    policy::POLICIES
        .iter()
        .filter(|info| {
            PolicySpec::parse(info.name)
                .and_then(|spec| spec.build(&ctx))
                .is_ok_and(|p| HitMode::of(p.hit_path()).is_some())
        })
        .map(|info| info.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Upper bound of [`BufferPoolBuilder::max_open_files`].
pub const MAX_OPEN_FILES: usize = 4096;

/// Counters and gauges of a pool (see [`BufferPool::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Page accesses (read, write, pin) that found the page resident.
    pub hits: u64,
    /// Page accesses that had to load (or zero-fill) the page.
    pub misses: u64,
    /// Read calls issued to storage (one per miss, read-ahead included in the same call).
    pub read_calls: u64,
    /// Pages read from storage.
    pub pages_read: u64,
    /// Of those, pages read ahead of demand.
    pub read_ahead_pages: u64,
    /// Of those, pages loaded by [`BufferPool::prefetch`] (not counted as misses: the
    /// accesses that follow count, as hits).
    pub prefetched_pages: u64,
    /// Pages written to storage by anyone.
    pub pages_written: u64,
    /// Pages written by a thread that needed a frame and found only dirty ones.
    pub foreground_writes: u64,
    /// Pages written by the flusher thread.
    pub flusher_writes: u64,
    /// Flusher wake-ups.
    pub flusher_runs: u64,
    /// Page writes that failed (the page stayed dirty).
    pub write_errors: u64,
    /// Pages evicted.
    pub evictions: u64,
    /// Pages dirty now.
    pub dirty_pages: u64,
    /// Free frames now.
    pub free_frames: u64,
    /// Frames in the pool.
    pub capacity_frames: u64,
}

/// Which pages of a file are resident: one bit per page (see [`BufferPool::resident`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResidentMap {
    pages: u64,
    words: Vec<u64>,
}

impl ResidentMap {
    /// A map of a file of `pages` pages in which `resident` are cached. The bitmap only
    /// extends to the highest resident page, so a huge sparse file costs nothing.
    fn new(pages: u64, resident: &[u64]) -> Self {
        let resident: Vec<u64> = resident.iter().copied().filter(|&p| p < pages).collect();
        let words = resident.iter().max().map_or(0, |&m| m / 64 + 1) as usize;
        let mut map = ResidentMap {
            pages,
            words: vec![0; words],
        };
        for p in resident {
            map.words[(p / 64) as usize] |= 1 << (p % 64);
        }
        map
    }

    /// Pages covered (the file's length in pages when the map was taken).
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// Whether `page` is resident.
    pub fn get(&self, page: u64) -> bool {
        self.words
            .get((page / 64) as usize)
            .is_some_and(|w| w & (1 << (page % 64)) != 0)
    }

    /// Number of resident pages.
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The resident page numbers in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            (0..64u64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| i as u64 * 64 + b)
        })
    }

    /// The bitmap words: bit `p % 64` of word `p / 64` is page `p`. There are only as
    /// many words as the highest resident page needs; pages beyond them are not resident.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

#[derive(Clone, Copy, Debug)]
enum Capacity {
    Frames(usize),
    Bytes(u64),
}

/// Configures and builds a [`BufferPool`]; see [`BufferPool::builder`].
#[derive(Clone, Debug)]
pub struct BufferPoolBuilder {
    capacity: Capacity,
    page_size: usize,
    policy: String,
    lookup: Lookup,
    write_policy: WritePolicy,
    read_ahead: usize,
    io_mode: IoMode,
    max_open_files: usize,
    pin_limit: usize,
    seed: u64,
    free_reserve: Option<usize>,
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
        }
    }
}

impl BufferPoolBuilder {
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
    /// [`policy::HitPath`].
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

    /// Files open at once (default 64, at most 4096). Each slot of the mapped lookup costs
    /// 16 KiB up front, so the limit bounds that memory at 64 MiB.
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
        let Some(mode) = HitMode::of(policy.hit_path()) else {
            return Err(PoolError::PolicyNotConcurrent {
                name: spec.name,
                allowed: online_policies(),
            });
        };
        if self.max_open_files == 0 || self.max_open_files > MAX_OPEN_FILES {
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
        // Evict a few percent of the pool per batch: large enough that feeding reference
        // counters (a scan of all headers) is amortized over many evictions, small enough
        // that a miss does not wait for a long scan.
        let batch = (frames / 32).clamp(1, 256);
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
            batch,
            // The flusher keeps 1/64 of the pool free (XMF's clean free pool); below 64
            // frames there is no reserve: a frame kept free would be 2% or more of the
            // cache, and small pools (tests) stay deterministic.
            low_water: self
                .free_reserve
                .map_or((frames / 64).min(256), |n| n.min(frames / 4)),
            counters: Counters::new(),
            dirty_pages: AtomicU64::new(0),
            dirty_map: (0..frames.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            touched: (0..frames.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            started: Instant::now(),
            flusher: (Mutex::new(false), Condvar::new()),
            flusher_wake: std::sync::atomic::AtomicBool::new(false),
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

/// A concurrent buffer pool over files. `Send + Sync`: share it with `Arc` and call it
/// through `&self` from any number of threads.
pub struct BufferPool {
    inner: Arc<Inner>,
    flusher: Option<JoinHandle<()>>,
}

struct PolicyState {
    /// Logical time: one tick per event the policy sees, in the order it sees them (LRU-K
    /// and ARC read `Access::time`).
    time: u64,
    policy: AnyPolicy,
    /// Mirrors which frames the policy holds (invariant 3), so that stale hit counters
    /// are never fed for a frame the policy does not know.
    resident: Vec<bool>,
}

struct OpenFile {
    file: Arc<dyn StorageFile>,
    path: PathBuf,
}

struct FileSlot {
    /// `gen << 2 | OPEN | BUSY`: the generation of the file that has (or last had) the
    /// slot, whether it is open, and whether a close is still releasing it. The slot is
    /// free for `open` only when neither flag is set.
    state: AtomicU64,
    file: RwLock<Option<OpenFile>>,
    /// Logical length: what `len` returns, including writes not yet on storage.
    len: AtomicU64,
    /// Shared while a write changes a page or a load brings one in; exclusive for
    /// `set_len`, `close` and the `O_DIRECT` trim, which must see every page of the file
    /// that exists and know that no other will appear. Never held while waiting for a
    /// frame latch the application may hold (a pin can be held for ever), which is what
    /// keeps pins of different pages from ever blocking each other.
    resize: RwLock<()>,
    /// The page after the last one loaded: a miss there is sequential (read-ahead).
    ra_next: AtomicU64,
}

/// `FileSlot::state`: a file is open in the slot.
const OPEN: u64 = 1;
/// `FileSlot::state`: a close is releasing the slot (not open, not yet free).
const BUSY: u64 = 2;

impl FileSlot {
    fn new() -> Self {
        FileSlot {
            state: AtomicU64::new(0),
            file: RwLock::new(None),
            len: AtomicU64::new(0),
            resize: RwLock::new(()),
            ra_next: AtomicU64::new(0),
        }
    }

    /// Generation of the slot's current or last file.
    fn gen(&self) -> u32 {
        (self.state.load(Ordering::Acquire) >> 2) as u32
    }
}

#[inline]
fn open_state(gen: u32) -> u64 {
    (u64::from(gen) << 2) | OPEN
}

struct Inner {
    /// This pool's identity, carried by its handles.
    id: u64,
    frames: Frames,
    table: Table,
    files: Box<[FileSlot]>,
    /// Serializes `open`s choosing a free slot.
    open_lock: Mutex<()>,
    policy: Mutex<PolicyState>,
    hit_mode: HitMode,
    /// The counter cap in `HitMode::Counter`, 0 otherwise (the hit path reads only this).
    hit_cap: u8,
    /// Per-thread-stripe hit queues in `HitMode::Queue`.
    hit_queues: Box<[HitQueue]>,
    free: Mutex<Vec<u32>>,
    storage: Arc<dyn Storage>,
    page_size: usize,
    page_shift: u32,
    read_ahead: u64,
    write_policy: WritePolicy,
    direct: bool,
    batch: usize,
    low_water: usize,
    counters: Counters,
    dirty_pages: AtomicU64,
    /// One bit per frame that may be dirty (see `mark_dirty`).
    dirty_map: Box<[AtomicU64]>,
    /// One bit per frame whose hit counter was bumped since the eviction path last looked.
    touched: Box<[AtomicU64]>,
    started: Instant,
    /// Flusher stop flag and wake-up.
    flusher: (Mutex<bool>, Condvar),
    /// A refill request for the flusher is pending.
    flusher_wake: std::sync::atomic::AtomicBool,
}

impl PolicyState {
    /// `a` with the next logical time.
    fn stamp(&mut self, mut a: Access) -> Access {
        self.time += 1;
        a.time = self.time;
        a
    }
}

/// A latch held by an operation: shared for reads, exclusive for writes and loads.
enum Latch<'a> {
    Shared(Shared<'a>),
    Excl(Exclusive<'a>),
}

impl<'a> Latch<'a> {
    fn into_shared(self) -> Shared<'a> {
        match self {
            Latch::Shared(s) => s,
            Latch::Excl(x) => x.downgrade(),
        }
    }

    fn into_excl(self) -> Option<Exclusive<'a>> {
        match self {
            Latch::Excl(x) => Some(x),
            Latch::Shared(_) => None,
        }
    }
}

/// How a page that is not resident gets its contents.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// Read it from storage.
    Read,
    /// The caller overwrites the whole page, or it lies past the end of the file.
    Zero,
}

/// Outcome of one eviction attempt.
enum Evicted {
    /// A frame for the caller (others may have gone to the free list).
    Frame(u32),
    /// Only dirty frames were evictable; some were written (or found unwritable and
    /// marked so), try again.
    Cleaned,
    /// Nothing evictable now, but some frames are only latched by the pool itself (loads,
    /// hits, writes in flight): wait a moment and try again.
    Busy,
    /// Every frame is pinned by the application.
    Nothing,
}

impl Inner {
    #[inline]
    fn slot(&self, fh: FileHandle) -> Result<&FileSlot, PoolError> {
        let s = self
            .files
            .get(fh.slot as usize)
            .ok_or(PoolError::Closed(fh))?;
        if s.state.load(Ordering::Acquire) != open_state(fh.gen) || fh.pool != self.id {
            return Err(PoolError::Closed(fh));
        }
        Ok(s)
    }

    /// The handle of the file whose pages carry `owner` (a frame header's owner word).
    #[inline]
    fn handle_of(&self, owner: u64) -> FileHandle {
        FileHandle {
            pool: self.id,
            slot: owner as u32,
            gen: (owner >> 32) as u32,
        }
    }

    #[inline]
    fn is_open(&self, fh: FileHandle) -> bool {
        self.slot(fh).is_ok()
    }

    #[inline]
    fn pages_of(&self, len: u64) -> u64 {
        // a shift, not a division: this is on the pin path
        (len >> self.page_shift) + u64::from(len & (self.page_size as u64 - 1) != 0)
    }

    fn file_of(&self, fh: FileHandle) -> Result<(Arc<dyn StorageFile>, PathBuf), PoolError> {
        let slot = self.slot(fh)?;
        let g = slot.file.read();
        match &*g {
            Some(f) if slot.state.load(Ordering::Acquire) == open_state(fh.gen) => {
                Ok((Arc::clone(&f.file), f.path.clone()))
            }
            _ => Err(PoolError::Closed(fh)),
        }
    }

    /// The policy's view of page `page` of the file in `slot` at generation `gen`.
    fn access_key(slot: u32, gen: u32, page: u64) -> Access {
        let mut a = Access::unit((u64::from(slot) << 48) ^ (u64::from(gen) << 40) ^ page, 0);
        a.stream = slot;
        a
    }

    fn access(fh: FileHandle, page: u64) -> Access {
        Self::access_key(fh.slot, fh.gen, page)
    }

    fn access_of(h: &Header) -> Access {
        let owner = h.owner.load(Ordering::Relaxed);
        Self::access_key(
            owner as u32,
            (owner >> 32) as u32,
            h.page.load(Ordering::Relaxed),
        )
    }

    /// Record a hit for the policy: bump the frame's counter (unless saturated, the common
    /// case for hot pages: then this is one load) and mark the frame in the touched bitmap
    /// so the eviction path finds it without scanning every header. The bit is set after
    /// every increment, so a counter bumped while the feeder resets it is marked again
    /// and fed next time; a lost increment under a race only loses a hint.
    #[inline]
    fn touch(&self, id: u32, h: &Header) {
        if self.hit_cap > 0 {
            let r = h.refs.load(Ordering::Relaxed);
            if r < self.hit_cap {
                h.refs.store(r + 1, Ordering::Relaxed);
                self.touched[(id / 64) as usize].fetch_or(1 << (id % 64), Ordering::AcqRel);
            }
        } else if self.hit_mode == HitMode::Queue {
            self.queue_hit(id, h);
        }
    }

    /// BP-Wrapper: queue the hit in this thread's stripe; once the queue holds a batch,
    /// apply it if the policy lock is free right now (never wait on the hit path).
    fn queue_hit(&self, id: u32, h: &Header) {
        let incarnation = h.incarnation.load(Ordering::Relaxed);
        let mut q = self.hit_queues[stripe()].0.lock();
        if q.len() < QUEUE_MAX {
            q.push((id, incarnation));
        }
        if q.len() >= QUEUE_COMMIT {
            if let Some(mut state) = self.policy.try_lock() {
                self.apply_queued(&mut state, &mut q);
            }
        }
    }

    /// Apply queued hits in queue order, skipping frames that were evicted or reloaded
    /// since the hit was recorded.
    fn apply_queued(&self, state: &mut PolicyState, q: &mut Vec<(u32, u32)>) {
        for (id, incarnation) in q.drain(..) {
            let h = self.frames.header(id);
            if state.resident[id as usize] && h.incarnation.load(Ordering::Relaxed) == incarnation {
                let a = state.stamp(Self::access_of(h));
                state.policy.on_hit(FrameId(id), &a);
            }
        }
    }

    fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    /// Mark frame `id` (exclusively latched by the caller) dirty. Its bit in the dirty
    /// map is set first, so that a dirty frame always has its bit (a bit may outlive
    /// the flag for a moment; readers of the map check the flag).
    fn mark_dirty(&self, id: u32, h: &Header) {
        if !h.dirty.load(Ordering::Relaxed) {
            self.dirty_map[(id / 64) as usize].fetch_or(1 << (id % 64), Ordering::Release);
            h.dirty_since_ns.store(self.now_ns(), Ordering::Relaxed);
            h.dirty.store(true, Ordering::Release);
            self.dirty_pages.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Mark frame `id` clean (the caller holds a latch on it, so no `mark_dirty` races).
    fn clear_dirty(&self, id: u32, h: &Header) {
        if h.dirty.swap(false, Ordering::AcqRel) {
            self.dirty_map[(id / 64) as usize].fetch_and(!(1 << (id % 64)), Ordering::Release);
            self.dirty_pages.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The frames whose dirty bit is set, in id order: what `fsync` and ageing look at,
    /// without walking every frame header (a 1 GiB pool has 262 144 of them, 16 MiB).
    fn dirty_frames(&self) -> impl Iterator<Item = u32> + '_ {
        self.dirty_map.iter().enumerate().flat_map(|(w, word)| {
            let mut bits = word.load(Ordering::Acquire);
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let id = (w * 64) as u32 + bits.trailing_zeros();
                    bits &= bits - 1;
                    id
                })
            })
        })
    }

    /// The hit fast path for shared pins: the page is resident and not a read-ahead
    /// trigger. No `Result`s are built or moved here (they are large); anything unusual
    /// returns `None` and the caller takes the general path (`acquire`), which re-checks
    /// everything.
    #[inline]
    fn hit_shared(
        &self,
        slot: &FileSlot,
        fh: FileHandle,
        page: u64,
        user: bool,
    ) -> Option<Shared<'_>> {
        if slot.state.load(Ordering::Acquire) != open_state(fh.gen) || fh.pool != self.id {
            return None;
        }
        let fid = self.table.get(fh.key(page))?;
        let mut g = self.frames.try_share(fid)?;
        let h = g.header();
        if h.owner.load(Ordering::Relaxed) != fh.owner()
            || h.page.load(Ordering::Relaxed) != page
            || h.ra_mark.load(Ordering::Relaxed)
        {
            return None;
        }
        if user {
            // Only now, with the page known to be ours: a pin counted as the application's
            // must never be one taken through a stale mapping, or `set_len` and `close`
            // could refuse because of another file's reader.
            g.mark_user();
        }
        self.touch(fid, h);
        self.counters.bump(Counter::Hits);
        Some(g)
    }

    /// `PastEnd` if `page` is past the end of the file now: a pin checks the length before
    /// it loads, and a truncation may run in between (the pin would then hold a page that
    /// is not part of the file, though `set_len` reported success).
    fn still_in_file(&self, slot: &FileSlot, page: u64) -> Result<(), PoolError> {
        let pages = self.pages_of(slot.len.load(Ordering::Acquire));
        if page < pages {
            Ok(())
        } else {
            Err(PoolError::PastEnd { page, pages })
        }
    }

    /// Pages beyond what the lookup table can address are an error, not a panic.
    fn check_in_range(&self, page: u64) -> Result<(), PoolError> {
        if self.table.page_in_range(page) {
            Ok(())
        } else {
            Err(PoolError::OutOfRange {
                offset: page.saturating_mul(self.page_size as u64),
                len: self.page_size as u64,
            })
        }
    }

    /// Find or load `page` of `fh` and latch it (exclusive when `excl`). With `wait` false,
    /// `Ok(None)` instead of waiting when the page is resident but latched by someone else
    /// (`write` must not wait for a latch while it holds the file's resize lock).
    #[allow(clippy::too_many_arguments)]
    fn acquire(
        &self,
        fh: FileHandle,
        page: u64,
        excl: bool,
        fill: Fill,
        read_ahead: bool,
        user: bool,
        wait: bool,
    ) -> Result<Option<Latch<'_>>, PoolError> {
        self.check_in_range(page)?;
        let key = fh.key(page);
        loop {
            let slot = self.slot(fh)?;
            if let Some(fid) = self.table.get(key) {
                let latch = match (excl, wait) {
                    (true, true) => Latch::Excl(self.frames.exclusive(fid)),
                    (false, true) => Latch::Shared(self.frames.share(fid)),
                    (true, false) => match self.frames.try_exclusive(fid) {
                        Some(g) => Latch::Excl(g),
                        None => return Ok(None),
                    },
                    (false, false) => match self.frames.try_share(fid) {
                        Some(g) => Latch::Shared(g),
                        None => return Ok(None),
                    },
                };
                let h = self.frames.header(fid);
                if h.owner.load(Ordering::Relaxed) == fh.owner()
                    && h.page.load(Ordering::Relaxed) == page
                {
                    self.touch(fid, h);
                    self.counters.bump(Counter::Hits);
                    if read_ahead
                        && h.ra_mark.load(Ordering::Relaxed)
                        && h.ra_mark.swap(false, Ordering::Relaxed)
                    {
                        // The reader reached the read-ahead window: fetch the next one.
                        let start = slot.ra_next.load(Ordering::Relaxed).max(page + 1);
                        self.read_ahead_run(fh, slot, start);
                    }
                    return Ok(Some(Self::as_user(latch, user)));
                }
                // Stale mapping (invariant 2): remove it while pinned, so the frame cannot
                // be reloaded for this key in between.
                self.table.remove(key, fid);
                drop(latch);
                continue;
            }
            if let Some(latch) = self.load(fh, slot, page, excl, fill, read_ahead)? {
                return Ok(Some(Self::as_user(latch, user)));
            }
        }
    }

    /// `acquire` that waits for the latch.
    fn acquire_waiting(
        &self,
        fh: FileHandle,
        page: u64,
        excl: bool,
        fill: Fill,
        read_ahead: bool,
        user: bool,
    ) -> Result<Latch<'_>, PoolError> {
        Ok(self
            .acquire(fh, page, excl, fill, read_ahead, user, true)?
            .expect("an acquire that waits always returns a latch"))
    }

    /// Count a shared latch as the application's pin (`user`), once its page is known.
    fn as_user(latch: Latch<'_>, user: bool) -> Latch<'_> {
        match latch {
            Latch::Shared(mut s) if user => {
                s.mark_user();
                Latch::Shared(s)
            }
            other => other,
        }
    }

    /// Take a free frame, evicting a batch if there is none. The frame is returned
    /// exclusively latched, with no owner.
    fn alloc_frame(&self, incoming: &Access) -> Result<Exclusive<'_>, PoolError> {
        // Each round either gets a frame, or wrote some dirty pages, or gives up; bound the
        // rounds in case other threads keep re-dirtying what this one cleans (enough to
        // pass over every frame once when their writes fail, a batch per round).
        for _ in 0..1000 + self.frames.len() / self.batch {
            let (popped, low) = {
                let mut free = self.free.lock();
                let id = free.pop();
                (id, free.len() < self.low_water)
            };
            if low {
                self.wake_flusher();
            }
            let id = match popped {
                Some(id) => id,
                None => match self.evict_batch(incoming)? {
                    Evicted::Frame(id) => id,
                    Evicted::Cleaned => continue,
                    Evicted::Busy => {
                        std::thread::yield_now();
                        continue;
                    }
                    Evicted::Nothing => {
                        return Err(PoolError::AllPinned {
                            frames: self.frames.len(),
                        })
                    }
                },
            };
            // A reader holding a stale mapping may pin a free frame for a moment.
            return Ok(self.frames.exclusive(id));
        }
        Err(PoolError::AllPinned {
            frames: self.frames.len(),
        })
    }

    /// Feed the hits recorded since the last call to the policy (under its lock).
    fn feed_refs(&self, state: &mut PolicyState) {
        if self.hit_mode == HitMode::Queue {
            for q in self.hit_queues.iter() {
                let mut q = q.0.lock();
                self.apply_queued(state, &mut q);
            }
            return;
        }
        if self.hit_cap == 0 {
            return;
        }
        for (w, word) in self.touched.iter().enumerate() {
            if word.load(Ordering::Relaxed) == 0 {
                continue;
            }
            let mut bits = word.swap(0, Ordering::AcqRel);
            while bits != 0 {
                let id = (w * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let h = self.frames.header(id);
                let r = h.refs.swap(0, Ordering::AcqRel);
                if state.resident[id as usize] {
                    for _ in 0..r.min(self.hit_cap) {
                        let a = state.stamp(Self::access_of(h));
                        state.policy.on_hit(FrameId(id), &a);
                    }
                }
            }
        }
    }

    /// Evict up to one batch of clean, idle frames (under the policy lock) into `freed`.
    /// Dirty frames are skipped, not written: writing is the flusher's job, or
    /// [`Inner::evict_batch`]'s when there is nothing else.
    fn evict_clean(&self, state: &mut PolicyState, incoming: &Access, freed: &mut Vec<u32>) {
        self.feed_refs(state);
        // One logical time for the whole batch: it is one miss (ARC adapts once per miss).
        let incoming = state.stamp(*incoming);
        let frames = &self.frames;
        let clean_idle =
            |f: FrameId| frames.is_idle(f.0) && !frames.header(f.0).dirty.load(Ordering::Relaxed);
        let goal = freed.len() + self.batch;
        let mut refused = 0;
        while freed.len() < goal && refused < self.batch {
            let Some(f) = state.policy.evict(&incoming, &clean_idle) else {
                break;
            };
            state.resident[f.index()] = false;
            if self.try_evict_frame(f.0) {
                freed.push(f.0);
            } else {
                // Pinned or dirtied since the predicate looked: keep it resident.
                refused += 1;
                let a = state.stamp(Self::access_of(frames.header(f.0)));
                state.policy.on_insert(f, &a);
                state.resident[f.index()] = true;
            }
        }
    }

    /// A frame for a thread that found the free list empty: one another thread freed
    /// while this one waited for the policy lock, or the first of a freshly evicted batch
    /// (the rest go to the free list).
    fn take_or_evict(&self, state: &mut PolicyState, incoming: &Access) -> Option<u32> {
        if let Some(id) = self.free.lock().pop() {
            return Some(id);
        }
        let mut freed = Vec::with_capacity(self.batch);
        self.evict_clean(state, incoming, &mut freed);
        let mine = freed.pop();
        if !freed.is_empty() {
            self.free.lock().extend_from_slice(&freed);
        }
        mine
    }

    /// The next `batch` victims in policy order that are idle and dirty (to be written
    /// before they can be evicted): those whose last write did not fail, or with `failed`
    /// only those whose last write did.
    fn dirty_victims(&self, state: &PolicyState, failed: bool) -> Vec<FrameId> {
        let frames = &self.frames;
        let pick = |f: FrameId| {
            let h = frames.header(f.0);
            frames.is_idle(f.0)
                && h.dirty.load(Ordering::Relaxed)
                && h.write_failed.load(Ordering::Relaxed) == failed
        };
        let mut out = Vec::new();
        state.policy.victims(self.batch, &pick, &mut out);
        out
    }

    /// Evict a batch; if every evictable frame is dirty (the flusher is behind), write the
    /// policy's next victims from this thread, outside the policy lock, and report
    /// `Cleaned` so the caller tries again. Pages whose writes failed are passed over
    /// while others can be written (one file on a full disk must not stall misses on every
    /// file); only when nothing else is left are they tried again, and if they fail the
    /// miss gets [`PoolError::WriteBackStalled`] with their file's error.
    fn evict_batch(&self, incoming: &Access) -> Result<Evicted, PoolError> {
        let mut state = self.policy.lock();
        if let Some(id) = self.take_or_evict(&mut state, incoming) {
            return Ok(Evicted::Frame(id));
        }
        let mut dirty = self.dirty_victims(&state, false);
        let only_failed = dirty.is_empty();
        if only_failed {
            dirty = self.dirty_victims(&state, true);
        }
        drop(state);
        if dirty.is_empty() {
            let frames = &self.frames;
            let all_user_pinned = (0..frames.len() as u32).all(|id| frames.user_pinned(id));
            return Ok(if all_user_pinned {
                Evicted::Nothing
            } else {
                Evicted::Busy
            });
        }
        let mut cleaned = 0;
        let mut first_err = None;
        for f in dirty {
            match self.clean_frame(f.0, false, Counter::ForegroundWrites, None) {
                Ok(true) => cleaned += 1,
                Ok(false) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) if cleaned == 0 && only_failed => Err(PoolError::WriteBackStalled {
                source: Box::new(e),
            }),
            // Those pages are marked failed now: the next round looks past them.
            Some(_) => Ok(Evicted::Cleaned),
            None if cleaned == 0 => Ok(Evicted::Busy),
            None => Ok(Evicted::Cleaned),
        }
    }

    /// Unmap a clean idle frame (the policy has already forgotten it).
    fn try_evict_frame(&self, id: u32) -> bool {
        let Some(g) = self.frames.try_exclusive(id) else {
            return false;
        };
        let h = g.header();
        if h.dirty.load(Ordering::Acquire) {
            return false;
        }
        let owner = h.owner.load(Ordering::Relaxed);
        if owner != NO_OWNER {
            self.table.remove(
                self.handle_of(owner).key(h.page.load(Ordering::Relaxed)),
                id,
            );
        }
        h.owner.store(NO_OWNER, Ordering::Relaxed);
        h.refs.store(0, Ordering::Relaxed);
        h.ra_mark.store(false, Ordering::Relaxed);
        self.counters.bump(Counter::Evictions);
        true
    }

    /// Give back a claimed frame that was never loaded (or whose load failed).
    fn unclaim(&self, g: Exclusive<'_>, published: Option<PageKey>) {
        let id = g.id();
        if let Some(key) = published {
            self.table.remove(key, id);
        }
        g.header().owner.store(NO_OWNER, Ordering::Relaxed);
        drop(g);
        self.free.lock().push(id);
    }

    /// Claim a free frame for `page` and publish the mapping. `Ok(None)`: someone else
    /// mapped the page first.
    fn claim(&self, fh: FileHandle, page: u64) -> Result<Option<Exclusive<'_>>, PoolError> {
        let g = self.alloc_frame(&Self::access(fh, page))?;
        let h = g.header();
        h.incarnation.fetch_add(1, Ordering::Relaxed);
        h.owner.store(fh.owner(), Ordering::Relaxed);
        h.page.store(page, Ordering::Relaxed);
        h.refs.store(0, Ordering::Relaxed);
        h.ra_mark.store(false, Ordering::Relaxed);
        h.write_failed.store(false, Ordering::Relaxed);
        debug_assert!(!h.dirty.load(Ordering::Relaxed));
        let key = fh.key(page);
        if self.table.insert(key, g.id()).is_err() {
            self.unclaim(g, None);
            self.slot(fh)?;
            return Ok(None);
        }
        if !self.is_open(fh) {
            // Closed while we claimed: leave nothing behind.
            self.unclaim(g, Some(key));
            return Err(PoolError::Closed(fh));
        }
        Ok(Some(g))
    }

    /// Register loaded frames with the policy.
    fn insert_loaded(&self, frames: &[u32]) {
        let mut state = self.policy.lock();
        for &id in frames {
            let a = state.stamp(Self::access_of(self.frames.header(id)));
            state.policy.on_insert(FrameId(id), &a);
            state.resident[id as usize] = true;
        }
    }

    /// Load `page` (a miss). `Ok(None)` when another thread mapped it first.
    fn load(
        &self,
        fh: FileHandle,
        slot: &FileSlot,
        page: u64,
        excl: bool,
        fill: Fill,
        read_ahead: bool,
    ) -> Result<Option<Latch<'_>>, PoolError> {
        // A load must not race a truncation: it could bring back a page past the new end,
        // with its old bytes (invariant 4). Recursive: `write` already holds it shared.
        let _resize = slot.resize.read_recursive();
        let Some(mut g) = self.claim(fh, page)? else {
            return Ok(None);
        };
        let len = slot.len.load(Ordering::Acquire);
        let ps = self.page_size as u64;
        let fill = if page.saturating_mul(ps) >= len {
            Fill::Zero
        } else {
            fill
        };
        self.counters.bump(Counter::Misses);
        let mut extra: Vec<Exclusive<'_>> = Vec::new();
        if fill == Fill::Zero {
            g.bytes_mut().fill(0);
        } else {
            let (file, path) = match self.file_of(fh) {
                Ok(f) => f,
                Err(e) => {
                    self.unclaim(g, Some(fh.key(page)));
                    return Err(e);
                }
            };
            let sequential =
                read_ahead && self.read_ahead > 0 && slot.ra_next.load(Ordering::Relaxed) == page;
            if sequential {
                let pages = self.pages_of(len);
                let end = (page + 1 + self.read_ahead).min(pages);
                extra = self.claim_run(fh, page + 1, end);
            }
            let result = {
                let mut bufs: Vec<&mut [u8]> = Vec::with_capacity(1 + extra.len());
                bufs.push(g.bytes_mut());
                for x in extra.iter_mut() {
                    bufs.push(x.bytes_mut());
                }
                self.read_into(&*file, &mut bufs, page * ps)
            };
            match result {
                Ok(()) => {}
                Err(e) => {
                    for x in extra {
                        let p = x.header().page.load(Ordering::Relaxed);
                        self.unclaim(x, Some(fh.key(p)));
                    }
                    self.unclaim(g, Some(fh.key(page)));
                    return Err(PoolError::Io {
                        path,
                        op: "read",
                        source: e,
                    });
                }
            }
            self.counters.bump(Counter::ReadCalls);
            self.counters
                .add(Counter::PagesRead, 1 + extra.len() as u64);
            self.counters
                .add(Counter::ReadAheadPages, extra.len() as u64);
        }
        slot.ra_next
            .store(page + 1 + extra.len() as u64, Ordering::Relaxed);
        let mut ids = Vec::with_capacity(1 + extra.len());
        ids.push(g.id());
        ids.extend(extra.iter().map(|x| x.id()));
        self.insert_loaded(&ids);
        if let Some(first) = extra.first() {
            first.header().ra_mark.store(true, Ordering::Relaxed);
        }
        drop(extra);
        Ok(Some(if excl {
            Latch::Excl(g)
        } else {
            Latch::Shared(g.downgrade())
        }))
    }

    /// Load the non-resident pages of `pages` with their reads in flight together; see
    /// [`BufferPool::prefetch`]. A chunk claims at most a quarter of the pool, so a huge
    /// list cannot latch every frame and starve other threads.
    fn prefetch(&self, fh: FileHandle, pages: &[u64]) -> Result<usize, PoolError> {
        let slot = self.slot(fh)?;
        for &page in pages {
            self.check_in_range(page)?;
        }
        // Like `load`: a prefetch must not race a truncation.
        let _resize = slot.resize.read_recursive();
        let (file, path) = self.file_of(fh)?;
        let in_file = self.pages_of(slot.len.load(Ordering::Acquire));
        let ps = self.page_size as u64;
        let mut loaded = 0;
        let mut first_err = None;
        for chunk in pages.chunks((self.frames.len() / 4).max(1)) {
            let mut claimed: Vec<Exclusive<'_>> = Vec::with_capacity(chunk.len());
            for &page in chunk {
                // Past the end there is nothing to read: an access there zero-fills.
                if page >= in_file || self.table.get(fh.key(page)).is_some() {
                    continue;
                }
                match self.claim(fh, page) {
                    Ok(Some(g)) => claimed.push(g),
                    Ok(None) => {}
                    Err(e) => {
                        for g in claimed {
                            let p = g.header().page.load(Ordering::Relaxed);
                            self.unclaim(g, Some(fh.key(p)));
                        }
                        return Err(e);
                    }
                }
            }
            if claimed.is_empty() {
                continue;
            }
            let results: Vec<std::io::Result<usize>> = {
                let mut reads: Vec<BatchRead<'_>> = claimed
                    .iter_mut()
                    .map(|g| {
                        let offset = g.header().page.load(Ordering::Relaxed) * ps;
                        BatchRead::new(offset, g.bytes_mut())
                    })
                    .collect();
                file.read_batch(&mut reads);
                reads.into_iter().map(|r| r.result).collect()
            };
            self.counters.bump(Counter::ReadCalls);
            let mut ok = Vec::with_capacity(claimed.len());
            for (mut g, result) in claimed.into_iter().zip(results) {
                match result {
                    Ok(n) => {
                        // Short only at the end of the file: the rest of the page is zeros.
                        g.bytes_mut()[n.min(self.page_size)..].fill(0);
                        ok.push(g);
                    }
                    Err(source) => {
                        let p = g.header().page.load(Ordering::Relaxed);
                        self.unclaim(g, Some(fh.key(p)));
                        first_err.get_or_insert(PoolError::Io {
                            path: path.clone(),
                            op: "read",
                            source,
                        });
                    }
                }
            }
            let ids: Vec<u32> = ok.iter().map(|g| g.id()).collect();
            self.insert_loaded(&ids);
            self.counters.add(Counter::PagesRead, ids.len() as u64);
            self.counters
                .add(Counter::PrefetchedPages, ids.len() as u64);
            loaded += ids.len();
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(loaded),
        }
    }

    /// Read consecutive pages into `bufs`, zero-filling whatever lies past the end of file.
    fn read_into(
        &self,
        file: &dyn StorageFile,
        bufs: &mut [&mut [u8]],
        offset: u64,
    ) -> std::io::Result<()> {
        let n = if bufs.len() == 1 {
            read_full_at(file, bufs[0], offset)?
        } else {
            file.read_vectored_at(bufs, offset)?
        };
        let ps = self.page_size;
        for (i, b) in bufs.iter_mut().enumerate() {
            let got = n.saturating_sub(i * ps).min(ps);
            b[got..].fill(0);
        }
        Ok(())
    }

    /// Claim frames for the non-resident pages `start..end`, stopping at the first page
    /// that is resident or when no frame is free without waiting. Read-ahead is a hint:
    /// it never fails and never writes dirty pages to make room.
    fn claim_run(&self, fh: FileHandle, start: u64, end: u64) -> Vec<Exclusive<'_>> {
        let mut out = Vec::new();
        for p in start..end {
            if self.table.get(fh.key(p)).is_some() {
                break;
            }
            // Only take frames that are free or clean: never block a hint on a write.
            let id = {
                let popped = self.free.lock().pop();
                match popped {
                    Some(id) => id,
                    // Never wait for another thread's eviction either.
                    None => match self.policy.try_lock() {
                        Some(mut state) => {
                            match self.take_or_evict(&mut state, &Self::access(fh, p)) {
                                Some(id) => id,
                                None => break,
                            }
                        }
                        None => break,
                    },
                }
            };
            let g = self.frames.exclusive(id);
            let h = g.header();
            h.incarnation.fetch_add(1, Ordering::Relaxed);
            h.owner.store(fh.owner(), Ordering::Relaxed);
            h.page.store(p, Ordering::Relaxed);
            h.refs.store(0, Ordering::Relaxed);
            h.ra_mark.store(false, Ordering::Relaxed);
            if self.table.insert(fh.key(p), id).is_err() {
                self.unclaim(g, None);
                break;
            }
            out.push(g);
        }
        if !self.is_open(fh) {
            for g in out.drain(..) {
                let p = g.header().page.load(Ordering::Relaxed);
                self.unclaim(g, Some(fh.key(p)));
            }
        }
        out
    }

    /// Read-ahead triggered by a hit on a marked page: load `start..start+depth`.
    fn read_ahead_run(&self, fh: FileHandle, slot: &FileSlot, start: u64) {
        // Never wait here: the caller holds a latch that a running `set_len` may wait for.
        let Some(_resize) = slot.resize.try_read_recursive() else {
            return;
        };
        let len = slot.len.load(Ordering::Acquire);
        let end = (start + self.read_ahead).min(self.pages_of(len));
        if start >= end {
            return;
        }
        let Ok((file, _)) = self.file_of(fh) else {
            return;
        };
        let mut run = self.claim_run(fh, start, end);
        if run.is_empty() {
            return;
        }
        let result = {
            let mut bufs: Vec<&mut [u8]> = run.iter_mut().map(|g| g.bytes_mut()).collect();
            self.read_into(&*file, &mut bufs, start * self.page_size as u64)
        };
        if result.is_err() {
            // A hint failed: forget it; the demand read will report the error.
            for g in run {
                let p = g.header().page.load(Ordering::Relaxed);
                self.unclaim(g, Some(fh.key(p)));
            }
            return;
        }
        self.counters.bump(Counter::ReadCalls);
        self.counters.add(Counter::PagesRead, run.len() as u64);
        self.counters.add(Counter::ReadAheadPages, run.len() as u64);
        slot.ra_next
            .store(start + run.len() as u64, Ordering::Relaxed);
        let ids: Vec<u32> = run.iter().map(|g| g.id()).collect();
        self.insert_loaded(&ids);
        run[0].header().ra_mark.store(true, Ordering::Relaxed);
    }

    /// Write a frame's page to storage. The caller holds a latch on the frame (shared or
    /// exclusive), so the bytes cannot change during the write. `Closed` when the page's
    /// file is being closed (`close` writes its pages itself).
    fn write_out(&self, h: &Header, bytes: &[u8]) -> Result<(), PoolError> {
        let fh = self.handle_of(h.owner.load(Ordering::Relaxed));
        let (file, path) = self.file_of(fh)?;
        let len = self.slot(fh)?.len.load(Ordering::Acquire);
        self.write_page(&*file, &path, h.page.load(Ordering::Relaxed), bytes, len)
    }

    /// Write page `page` (its frame's bytes) of a file of logical length `len`: the part
    /// inside the file, or in `O_DIRECT` mode the whole page (the bytes past `len` are
    /// zero, invariant 4, and the trim in `fsync` and `close` cuts them off again).
    fn write_page(
        &self,
        file: &dyn StorageFile,
        path: &Path,
        page: u64,
        bytes: &[u8],
        len: u64,
    ) -> Result<(), PoolError> {
        let ps = self.page_size as u64;
        let off = page * ps;
        let n = if self.direct {
            ps
        } else {
            len.saturating_sub(off).min(ps)
        } as usize;
        if n == 0 {
            return Ok(());
        }
        let result = loop {
            match file.write_at(&bytes[..n], off) {
                Ok(w) if w == n => break Ok(()),
                Ok(w) => {
                    break Err(std::io::Error::new(
                        std::io::ErrorKind::WriteZero,
                        format!("short write: {w} of {n} bytes at offset {off}"),
                    ))
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        match result {
            Ok(()) => {
                self.counters.bump(Counter::PagesWritten);
                Ok(())
            }
            Err(source) => {
                self.counters.bump(Counter::WriteErrors);
                Err(PoolError::Io {
                    path: path.to_path_buf(),
                    op: "write",
                    source,
                })
            }
        }
    }

    /// Write the page of exclusively latched frame `id` now (write-through) and mark it
    /// clean; on error it stays dirty for the next `fsync` to retry and report.
    fn write_latched(&self, id: u32, h: &Header, bytes: &[u8]) -> Result<(), PoolError> {
        match self.write_out(h, bytes) {
            Ok(()) => {
                self.clear_dirty(id, h);
                h.write_failed.store(false, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                h.write_failed.store(true, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Write frame `id` if dirty, under a shared pin, so readers go on meanwhile (`wait`:
    /// wait for the frame's latch and for a write already in flight, instead of skipping
    /// it). Only a page of `owner` is written, when given (the frame may have been reused
    /// since the caller chose it). `Ok(true)` if this call wrote it.
    fn clean_frame(
        &self,
        id: u32,
        wait: bool,
        by: Counter,
        owner: Option<u64>,
    ) -> Result<bool, PoolError> {
        let mut spins = 0;
        loop {
            let g = if wait {
                self.frames.share(id)
            } else {
                match self.frames.try_share(id) {
                    Some(g) => g,
                    None => return Ok(false),
                }
            };
            let h = g.header();
            let o = h.owner.load(Ordering::Relaxed);
            if !h.dirty.load(Ordering::Acquire) || o == NO_OWNER || owner.is_some_and(|w| w != o) {
                return Ok(false);
            }
            // One write of a page at a time (see `Header::writing`).
            if h.writing
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                if !wait {
                    return Ok(false);
                }
                drop(g);
                backoff(&mut spins);
                continue;
            }
            let out = match self.write_out(h, g.bytes()) {
                Ok(()) => {
                    self.clear_dirty(id, h);
                    h.write_failed.store(false, Ordering::Relaxed);
                    self.counters.bump(by);
                    Ok(true)
                }
                // Its file is being closed, and `close` writes its dirty pages itself.
                Err(PoolError::Closed(_)) => Ok(false),
                Err(e) => {
                    h.write_failed.store(true, Ordering::Relaxed);
                    Err(e)
                }
            };
            h.writing.store(false, Ordering::Release);
            return out;
        }
    }

    /// Frames currently owned by `fh` (a racy snapshot: callers re-check under a latch).
    fn frames_of(&self, fh: FileHandle) -> Vec<u32> {
        let owner = fh.owner();
        (0..self.frames.len() as u32)
            .filter(|&id| self.frames.header(id).owner.load(Ordering::Relaxed) == owner)
            .collect()
    }

    /// Write every dirty page of `fh`; the first error is returned after trying all.
    fn flush_file(&self, fh: FileHandle) -> Result<(), PoolError> {
        let mut first_err = None;
        let owner = fh.owner();
        let mine: Vec<u32> = self
            .dirty_frames()
            .filter(|&id| self.frames.header(id).owner.load(Ordering::Relaxed) == owner)
            .collect();
        for id in mine {
            if let Err(e) = self.clean_frame(id, true, Counter::ForegroundWrites, Some(owner)) {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// In direct mode whole-page writes may leave the file longer than its logical length
    /// `len`: cut it back. The caller holds the file's resize lock exclusively, so no
    /// write can extend the file meanwhile (a trim to a stale length would cut off a page
    /// written since).
    fn trim_to(&self, file: &dyn StorageFile, path: &Path, len: u64) -> Result<(), PoolError> {
        if !self.direct {
            return Ok(());
        }
        let io = |op, source| PoolError::Io {
            path: path.to_path_buf(),
            op,
            source,
        };
        if file.len().map_err(|e| io("stat", e))? != len {
            file.set_len(len).map_err(|e| io("set_len", e))?;
        }
        Ok(())
    }

    fn fsync(&self, fh: FileHandle) -> Result<(), PoolError> {
        self.flush_file(fh)?;
        let (file, path) = self.file_of(fh)?;
        if self.direct {
            let slot = self.slot(fh)?;
            let _resize = slot.resize.write();
            self.slot(fh)?;
            // After the flush: every whole-page write of a page dirty when fsync began has
            // landed (the `writing` flag made the flush wait for ones in flight).
            self.trim_to(&*file, &path, slot.len.load(Ordering::Acquire))?;
        }
        file.sync().map_err(|source| PoolError::Io {
            path,
            op: "sync",
            source,
        })
    }

    /// Latch exclusively every resident page of `fh` for which `wanted(page)` holds, and
    /// return them. The caller holds the file's resize lock exclusively, so no page of the
    /// file can be loaded meanwhile: a frame that is the file's now was the file's when the
    /// snapshot was taken, and one that is not can never become it. A wanted page the
    /// application has pinned is refused with `PagePinned` (an application pin can last for
    /// ever, and its holder may be waiting for the resize lock); the pool's own latches
    /// (a copy, a load, a flusher write) are brief and waited out.
    fn latch_pages(
        &self,
        fh: FileHandle,
        wanted: impl Fn(u64) -> bool,
    ) -> Result<Vec<(Exclusive<'_>, u64)>, PoolError> {
        let owner = fh.owner();
        let mut out = Vec::new();
        for id in self.frames_of(fh) {
            let h = self.frames.header(id);
            let mut spins = 0;
            loop {
                if let Some(g) = self.frames.try_exclusive(id) {
                    let page = h.page.load(Ordering::Relaxed);
                    if h.owner.load(Ordering::Relaxed) == owner && wanted(page) {
                        out.push((g, page));
                    }
                    break;
                }
                // Read the page between two reads of the owner: if both are ours, the frame
                // held this page of ours throughout (see above).
                if h.owner.load(Ordering::Acquire) != owner {
                    break;
                }
                let page = h.page.load(Ordering::Acquire);
                let pinned = self.frames.user_pinned(id);
                if h.owner.load(Ordering::Acquire) != owner || !wanted(page) {
                    break;
                }
                if pinned {
                    return Err(PoolError::PagePinned { page });
                }
                backoff(&mut spins);
            }
        }
        Ok(out)
    }

    /// Drop frame `id` (exclusively latched) from the cache entirely.
    fn discard(&self, g: Exclusive<'_>, state: &mut PolicyState) {
        let id = g.id();
        let h = g.header();
        let owner = h.owner.load(Ordering::Relaxed);
        if owner != NO_OWNER {
            self.table.remove(
                self.handle_of(owner).key(h.page.load(Ordering::Relaxed)),
                id,
            );
        }
        if state.resident[id as usize] {
            state.policy.remove(FrameId(id));
            state.resident[id as usize] = false;
        }
        self.clear_dirty(id, h);
        h.write_failed.store(false, Ordering::Relaxed);
        h.owner.store(NO_OWNER, Ordering::Relaxed);
        h.refs.store(0, Ordering::Relaxed);
        h.ra_mark.store(false, Ordering::Relaxed);
        drop(g);
        self.free.lock().push(id);
    }

    /// Ask the flusher to refill the free list now. The flag makes the request stick even
    /// if the flusher is busy (not waiting) when it is made: a bare `notify` would be lost.
    fn wake_flusher(&self) {
        if !self.flusher_wake.swap(true, Ordering::AcqRel) {
            // Taking the mutex orders this with the flusher's check of the flag: either it
            // has not checked yet (and will see it) or it is waiting (and is notified).
            let _g = self.flusher.0.lock();
            self.flusher.1.notify_one();
        }
    }

    /// The flusher thread: delayed writes every `interval`, and the free-frame reserve
    /// whenever a miss finds it below the low-water mark. The two are separate on purpose:
    /// a refill must not pay for a walk over every frame header, or a miss-heavy workload
    /// spends its time scanning.
    fn flusher_loop(&self, interval: Duration) {
        let mut next_ageing = Instant::now() + interval;
        loop {
            {
                let mut stop = self.flusher.0.lock();
                if !*stop && !self.flusher_wake.load(Ordering::Acquire) {
                    self.flusher.1.wait_until(&mut stop, next_ageing);
                }
                if *stop {
                    return;
                }
            }
            self.counters.bump(Counter::FlusherRuns);
            if self.flusher_wake.swap(false, Ordering::AcqRel) {
                self.refill_free();
            }
            if Instant::now() >= next_ageing {
                self.write_aged();
                next_ageing = Instant::now() + interval;
            }
        }
    }

    /// Write the pages dirty for longer than the delayed-write age.
    fn write_aged(&self) {
        let WritePolicy::WriteBack { age, .. } = self.write_policy else {
            return;
        };
        if self.dirty_pages.load(Ordering::Relaxed) == 0 {
            return;
        }
        let now = self.now_ns();
        let age_ns = u64::try_from(age.as_nanos()).unwrap_or(u64::MAX);
        for id in self.dirty_frames() {
            let h = self.frames.header(id);
            if h.dirty.load(Ordering::Relaxed)
                && now.saturating_sub(h.dirty_since_ns.load(Ordering::Relaxed)) >= age_ns
            {
                // Errors stay with the page: it remains dirty, and the next fsync (or
                // close, or sync_all) retries it and reports the error.
                let _ = self.clean_frame(id, false, Counter::FlusherWrites, None);
            }
        }
    }

    /// Refill the free list up to twice the low-water mark (XMF's pool of clean frames),
    /// a batch at a time. When the policy's next victims are all dirty, write them here,
    /// so that the threads that need frames do not have to.
    fn refill_free(&self) {
        let high_water = 2 * self.low_water;
        let mut freed = Vec::with_capacity(self.batch);
        // Bounded: other threads may take frames as fast as this one frees them.
        for _ in 0..high_water.div_ceil(self.batch) + 4 {
            if self.free.lock().len() >= high_water {
                return;
            }
            let dirty = {
                let mut state = self.policy.lock();
                self.evict_clean(&mut state, &Access::phantom(), &mut freed);
                if freed.is_empty() {
                    self.dirty_victims(&state, false)
                } else {
                    Vec::new()
                }
            };
            if !freed.is_empty() {
                self.free.lock().append(&mut freed);
                continue;
            }
            let mut cleaned = 0;
            for f in dirty {
                // Errors stay with the page (see `write_aged`).
                if let Ok(true) = self.clean_frame(f.0, false, Counter::FlusherWrites, None) {
                    cleaned += 1;
                }
            }
            if cleaned == 0 {
                return;
            }
        }
    }
}

impl BufferPool {
    /// A builder with the defaults: 1024 frames of 4 KiB, clock, mapped lookup,
    /// write-back, read-ahead 8, buffered I/O.
    pub fn builder() -> BufferPoolBuilder {
        BufferPoolBuilder::default()
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.inner.page_size
    }

    /// Frames in the pool.
    pub fn capacity_frames(&self) -> usize {
        self.inner.frames.len()
    }

    fn open_with(&self, path: &Path, create: bool) -> Result<FileHandle, PoolError> {
        let inner = &*self.inner;
        let _g = inner.open_lock.lock();
        // A free slot (neither open nor still being released by a close) whose generation
        // can still grow: a slot whose generation would wrap is retired, so that a handle
        // closed 2^32 opens ago can never become valid again.
        let Some(slot_no) = inner.files.iter().position(|s| {
            let state = s.state.load(Ordering::Acquire);
            state & (OPEN | BUSY) == 0 && s.gen() < u32::MAX
        }) else {
            return Err(PoolError::TooManyOpenFiles {
                max: inner.files.len(),
            });
        };
        let slot = &inner.files[slot_no];
        let io = |op, source| PoolError::Io {
            path: path.to_path_buf(),
            op,
            source,
        };
        let file = inner
            .storage
            .open(
                path,
                OpenMode {
                    create,
                    direct: inner.direct,
                },
            )
            .map_err(|e| io("open", e))?;
        let len = file.len().map_err(|e| io("stat", e))?;
        let gen = slot.gen() + 1;
        let fh = FileHandle {
            pool: inner.id,
            slot: slot_no as u32,
            gen,
        };
        *slot.file.write() = Some(OpenFile {
            file,
            path: path.to_path_buf(),
        });
        slot.len.store(len, Ordering::Release);
        slot.ra_next.store(0, Ordering::Relaxed);
        if let Table::Mapped(m) = &inner.table {
            m.open(fh.slot, gen);
        }
        slot.state.store(open_state(gen), Ordering::Release);
        Ok(fh)
    }

    /// Open an existing file for reading and writing.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<FileHandle, PoolError> {
        self.open_with(path.as_ref(), false)
    }

    /// Create a file (truncating an existing one) for reading and writing.
    pub fn create(&self, path: impl AsRef<Path>) -> Result<FileHandle, PoolError> {
        self.open_with(path.as_ref(), true)
    }

    /// Read at `offset` into `buf`, like `pread`: returns the bytes read, fewer than
    /// `buf.len()` only at end of file (0 at or past it). Reads see every completed write.
    #[inline]
    pub fn read(&self, f: FileHandle, offset: u64, buf: &mut [u8]) -> Result<usize, PoolError> {
        let inner = &*self.inner;
        // Fast path: the whole request lies in one resident page (XMF's small reads).
        if let Some(slot) = inner.files.get(f.slot as usize) {
            let len = slot.len.load(Ordering::Acquire);
            let in_page = (offset as usize) & (inner.page_size - 1);
            if offset < len && in_page + buf.len() <= inner.page_size {
                let n = (len - offset).min(buf.len() as u64) as usize;
                if let Some(g) = inner.hit_shared(slot, f, offset >> inner.page_shift, false) {
                    buf[..n].copy_from_slice(&g.bytes()[in_page..in_page + n]);
                    return Ok(n);
                }
            }
        }
        self.read_slow(f, offset, buf)
    }

    #[cold]
    fn read_slow(&self, f: FileHandle, offset: u64, buf: &mut [u8]) -> Result<usize, PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let len = slot.len.load(Ordering::Acquire);
        if offset >= len || buf.is_empty() {
            return Ok(0);
        }
        let n = (len - offset).min(buf.len() as u64) as usize;
        let ps = inner.page_size;
        let mut done = 0usize;
        while done < n {
            let pos = offset + done as u64;
            let page = pos >> inner.page_shift;
            let in_page = (pos as usize) & (ps - 1);
            let take = (ps - in_page).min(n - done);
            let shared = match inner.hit_shared(slot, f, page, false) {
                Some(g) => g,
                None => inner
                    .acquire_waiting(f, page, false, Fill::Read, true, false)?
                    .into_shared(),
            };
            buf[done..done + take].copy_from_slice(&shared.bytes()[in_page..in_page + take]);
            done += take;
        }
        Ok(n)
    }

    /// Write `buf` at `offset`, extending the file if needed. With write-back the bytes
    /// reach storage later; with write-through before this returns (an error then leaves
    /// the page dirty in the pool and is returned here). A write spanning pages is not
    /// atomic: other threads may see some pages of it before others, and on error a
    /// prefix of `buf` may already be in the pool (like a short `pwrite`).
    pub fn write(&self, f: FileHandle, offset: u64, buf: &[u8]) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let end = offset
            .checked_add(buf.len() as u64)
            .ok_or(PoolError::OutOfRange {
                offset,
                len: buf.len() as u64,
            })?;
        if buf.is_empty() {
            return Ok(());
        }
        let ps = inner.page_size;
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset + done as u64;
            let page = pos >> inner.page_shift;
            let in_page = (pos as usize) & (ps - 1);
            let take = (ps - in_page).min(buf.len() - done);
            let fill = if take == ps { Fill::Zero } else { Fill::Read };
            // The resize lock keeps the page and the length change together against a
            // truncation; it is never held while waiting for the page's latch, which an
            // application pin may hold for ever (a `set_len` waiting for the lock would
            // then stall everything behind it).
            let mut spins = 0;
            let (_resize, mut g) = loop {
                let resize = slot.resize.read();
                if let Some(latch) = inner.acquire(f, page, true, fill, false, false, false)? {
                    let g = latch
                        .into_excl()
                        .expect("acquire(excl = true) returns an exclusive latch");
                    break (resize, g);
                }
                drop(resize);
                backoff(&mut spins);
            };
            g.bytes_mut()[in_page..in_page + take].copy_from_slice(&buf[done..done + take]);
            done += take;
            slot.len.fetch_max(pos + take as u64, Ordering::AcqRel);
            inner.mark_dirty(g.id(), g.header());
            if inner.write_policy == WritePolicy::WriteThrough {
                inner.write_latched(g.id(), g.header(), g.bytes())?;
            }
        }
        debug_assert!(slot.len.load(Ordering::Relaxed) >= end);
        Ok(())
    }

    /// Logical length of the file (including writes not yet on storage).
    pub fn len(&self, f: FileHandle) -> Result<u64, PoolError> {
        Ok(self.inner.slot(f)?.len.load(Ordering::Acquire))
    }

    /// Truncate or extend the file. Cached pages past the new end are dropped, and the
    /// storage file is resized at once. Refused with [`PoolError::PagePinned`] (changing
    /// nothing) if the application pins a page that would be dropped, or the last page when
    /// it is cut inside.
    pub fn set_len(&self, f: FileHandle, len: u64) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let _resize = slot.resize.write();
        inner.slot(f)?;
        let old = slot.len.load(Ordering::Acquire);
        if len == old {
            return Ok(());
        }
        let ps = inner.page_size as u64;
        let keep_pages = inner.pages_of(len);
        // The last kept page, when the new end cuts it: its bytes past the end are zeroed
        // (invariant 4). Growing needs none: the old last page is zero past the old end.
        let cut_page = (len < old && !len.is_multiple_of(ps)).then(|| keep_pages - 1);
        let latched = if len < old {
            inner.latch_pages(f, |page| page >= keep_pages || Some(page) == cut_page)?
        } else {
            Vec::new()
        };
        let (file, path) = inner.file_of(f)?;
        file.set_len(len).map_err(|source| PoolError::Io {
            path,
            op: "set_len",
            source,
        })?;
        // Published while the pages are still latched: from here on a write of the cut
        // page (the flusher's, an eviction's) writes only up to the new end, never the old
        // bytes after the storage truncation.
        slot.len.store(len, Ordering::Release);
        let mut state = None;
        for (mut g, page) in latched {
            if page >= keep_pages {
                inner.discard(g, state.get_or_insert_with(|| inner.policy.lock()));
            } else {
                let from = (len % ps) as usize;
                g.bytes_mut()[from..].fill(0);
            }
        }
        Ok(())
    }

    /// Write the file's dirty pages and sync it. On error the pages that could not be
    /// written stay dirty and a later `fsync` retries them.
    pub fn fsync(&self, f: FileHandle) -> Result<(), PoolError> {
        self.inner.fsync(f)
    }

    /// `fsync` every open file; returns the first error after trying all.
    pub fn sync_all(&self) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let mut first_err = None;
        for (slot_no, s) in inner.files.iter().enumerate() {
            let state = s.state.load(Ordering::Acquire);
            if state & OPEN != 0 {
                let fh = FileHandle {
                    pool: inner.id,
                    slot: slot_no as u32,
                    gen: (state >> 2) as u32,
                };
                match inner.fsync(fh) {
                    Ok(()) | Err(PoolError::Closed(_)) => {}
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Write the file's dirty pages, drop its pages from the pool and close it. If a page
    /// cannot be written, or is pinned, the error is returned and the file stays open
    /// (nothing is lost; close again later). Close does not sync: call `fsync` first for
    /// durability. Operations on the file that run concurrently with a successful close
    /// either finish before it or fail with [`PoolError::Closed`].
    pub fn close(&self, f: FileHandle) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        // No write or load of the file runs while this is held, so no page of it appears.
        let _resize = slot.resize.write();
        inner.slot(f)?;
        // Every page of the file, latched: no hit, flusher write or eviction touches them
        // while the dirty ones are written and all are dropped. An application pin refuses
        // the close before anything changed.
        let latched = inner.latch_pages(f, |_| true)?;
        let (file, path) = inner.file_of(f)?;
        let len = slot.len.load(Ordering::Acquire);
        for (g, page) in &latched {
            let h = g.header();
            if h.dirty.load(Ordering::Acquire) {
                // The file stays open on error: the pages not yet written stay dirty.
                inner.write_page(&*file, &path, *page, g.bytes(), len)?;
                inner.clear_dirty(g.id(), h);
                h.write_failed.store(false, Ordering::Relaxed);
            }
        }
        // Last, after every whole-page write: nothing can write a page of the file now.
        inner.trim_to(&*file, &path, len)?;
        // Closed: new operations fail; ones already past their check find their pages
        // gone once the latches drop, and fail at the check when they retry.
        slot.state
            .store((u64::from(f.gen) << 2) | BUSY, Ordering::Release);
        let mut state = inner.policy.lock();
        for (g, _) in latched {
            inner.discard(g, &mut state);
        }
        drop(state);
        *slot.file.write() = None;
        // Free for `open` only now that nothing of the old file is left in the slot.
        slot.state.store(u64::from(f.gen) << 2, Ordering::Release);
        Ok(())
    }

    /// Load the pages of `f` listed in `pages` that are not resident, with all their reads
    /// in flight at once (on real files one `io_uring` submission per batch of up to 64;
    /// where the kernel refuses rings, one read after the other), and return how many were
    /// loaded. Resident pages, pages being loaded by another thread and pages past the end
    /// of the file are skipped. This is how one thread keeps several reads in flight: list
    /// the pages an operation will touch (an index probe's leaves, a join's next rows),
    /// prefetch them, then read or pin them as hits.
    ///
    /// A failed read leaves its page out of the cache and is returned after the others
    /// are loaded (the first error, like [`BufferPool::sync_all`]).
    ///
    /// ```
    /// use pool::{BufferPool, MemStorage};
    ///
    /// let pool = BufferPool::builder().capacity_frames(64).build_with_storage(MemStorage::new())?;
    /// let f = pool.create("/t")?;
    /// pool.write(f, 0, &[5u8; 8 * 4096])?;
    /// pool.sync_all()?;
    /// pool.close(f)?;
    /// let f = pool.open("/t")?;
    /// assert_eq!(pool.prefetch(f, &[1, 3, 5, 3, 99])?, 3); // 3 once; 99 is past the end
    /// assert_eq!(pool.stats().prefetched_pages, 3);
    /// assert_eq!(pool.pin(f, 3)?[0], 5); // a hit
    /// # Ok::<(), pool::PoolError>(())
    /// ```
    pub fn prefetch(&self, f: FileHandle, pages: &[u64]) -> Result<usize, PoolError> {
        self.inner.prefetch(f, pages)
    }

    /// Pin `page` for reading without copying: the guard derefs to the very frame that
    /// `read` copies from. The page is never evicted while pinned. Errors with
    /// [`PoolError::PastEnd`] for pages at or past the end of the file.
    #[inline]
    pub fn pin(&self, f: FileHandle, page: u64) -> Result<PageRef<'_>, PoolError> {
        let inner = &*self.inner;
        // The hit path builds no `Result` until it succeeds (they are large to move).
        if let Some(slot) = inner.files.get(f.slot as usize) {
            if page < inner.pages_of(slot.len.load(Ordering::Acquire)) {
                if let Some(guard) = inner.hit_shared(slot, f, page, true) {
                    return Ok(PageRef { guard, page });
                }
            }
        }
        self.pin_slow(f, page)
    }

    #[cold]
    fn pin_slow(&self, f: FileHandle, page: u64) -> Result<PageRef<'_>, PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let pages = inner.pages_of(slot.len.load(Ordering::Acquire));
        if page >= pages {
            return Err(PoolError::PastEnd { page, pages });
        }
        let latch = inner.acquire_waiting(f, page, false, Fill::Read, false, true)?;
        inner.still_in_file(slot, page)?;
        Ok(PageRef {
            guard: latch.into_shared(),
            page,
        })
    }

    /// Pin `page` for writing: exclusive, zero-copy, and marks the page dirty. Bytes past
    /// the file's length are not part of the file (they are zeroed again on release);
    /// extend the file with `set_len` or `write` first.
    pub fn pin_mut(&self, f: FileHandle, page: u64) -> Result<PageMut<'_>, PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let pages = inner.pages_of(slot.len.load(Ordering::Acquire));
        if page >= pages {
            return Err(PoolError::PastEnd { page, pages });
        }
        let latch = inner.acquire_waiting(f, page, true, Fill::Read, false, true)?;
        inner.still_in_file(slot, page)?;
        let mut guard = latch
            .into_excl()
            .expect("acquire(excl = true) returns an exclusive latch");
        guard.mark_user();
        inner.mark_dirty(guard.id(), guard.header());
        Ok(PageMut {
            guard,
            inner,
            slot,
            page,
        })
    }

    /// The next `n` pages the policy would evict, in order (Burnett's victim list). Pinned
    /// and dirty pages are skipped, as eviction would skip them.
    pub fn victims(&self, n: usize) -> Vec<(FileHandle, u64)> {
        let inner = &*self.inner;
        // No more victims than frames, whatever is asked (and no huge allocation).
        let n = n.min(inner.frames.len());
        let mut state = inner.policy.lock();
        inner.feed_refs(&mut state);
        let frames = &inner.frames;
        let mut out = Vec::with_capacity(n);
        state.policy.victims(
            n,
            &|f: FrameId| frames.is_idle(f.0) && !frames.header(f.0).dirty.load(Ordering::Relaxed),
            &mut out,
        );
        out.into_iter()
            .map(|f| {
                let h = frames.header(f.0);
                (
                    inner.handle_of(h.owner.load(Ordering::Relaxed)),
                    h.page.load(Ordering::Relaxed),
                )
            })
            .collect()
    }

    /// Whether page `page` of `f` is resident now: one lookup and an owner check, no
    /// pin, and nothing counted or told to the policy — so a prober (Dust) can ask before
    /// each read without disturbing what it measures. A page being loaded counts as
    /// resident (its frame is mapped).
    ///
    /// ```
    /// use pool::{BufferPool, MemStorage};
    ///
    /// let pool = BufferPool::builder().capacity_frames(16).build_with_storage(MemStorage::new())?;
    /// let f = pool.create("/t")?;
    /// pool.write(f, 0, &[1u8; 4096])?;
    /// assert!(pool.is_resident(f, 0)?);
    /// assert!(!pool.is_resident(f, 1)?);
    /// assert_eq!(pool.stats().hits, 0);
    /// # Ok::<(), pool::PoolError>(())
    /// ```
    pub fn is_resident(&self, f: FileHandle, page: u64) -> Result<bool, PoolError> {
        let inner = &*self.inner;
        inner.slot(f)?;
        if !inner.table.page_in_range(page) {
            return Ok(false);
        }
        Ok(inner.table.get(f.key(page)).is_some_and(|id| {
            let h = inner.frames.header(id);
            h.owner.load(Ordering::Acquire) == f.owner() && h.page.load(Ordering::Relaxed) == page
        }))
    }

    /// Which pages of the file are resident now.
    pub fn resident(&self, f: FileHandle) -> Result<ResidentMap, PoolError> {
        let inner = &*self.inner;
        let slot = inner.slot(f)?;
        let pages: Vec<u64> = inner
            .frames_of(f)
            .into_iter()
            .map(|id| inner.frames.header(id).page.load(Ordering::Relaxed))
            .collect();
        Ok(ResidentMap::new(
            inner.pages_of(slot.len.load(Ordering::Acquire)),
            &pages,
        ))
    }

    /// Counters and gauges.
    pub fn stats(&self) -> PoolStats {
        let i = &*self.inner;
        let c = &i.counters;
        PoolStats {
            hits: c.get(Counter::Hits),
            misses: c.get(Counter::Misses),
            read_calls: c.get(Counter::ReadCalls),
            pages_read: c.get(Counter::PagesRead),
            read_ahead_pages: c.get(Counter::ReadAheadPages),
            prefetched_pages: c.get(Counter::PrefetchedPages),
            pages_written: c.get(Counter::PagesWritten),
            foreground_writes: c.get(Counter::ForegroundWrites),
            flusher_writes: c.get(Counter::FlusherWrites),
            flusher_runs: c.get(Counter::FlusherRuns),
            write_errors: c.get(Counter::WriteErrors),
            evictions: c.get(Counter::Evictions),
            dirty_pages: i.dirty_pages.load(Ordering::Relaxed),
            free_frames: i.free.lock().len() as u64,
            capacity_frames: i.frames.len() as u64,
        }
    }
}

impl Drop for BufferPool {
    /// Stops the flusher and writes and syncs every dirty page. Errors cannot be returned
    /// from `drop`: call [`BufferPool::sync_all`] first to see them.
    fn drop(&mut self) {
        *self.inner.flusher.0.lock() = true;
        self.inner.flusher.1.notify_all();
        if let Some(h) = self.flusher.take() {
            let _ = h.join();
        }
        let _ = self.sync_all();
    }
}

/// A pinned page, read-only and zero-copy; unpinned on drop. Never evicted while alive.
#[must_use = "the page is unpinned as soon as the guard is dropped"]
pub struct PageRef<'a> {
    guard: Shared<'a>,
    page: u64,
}

impl PageRef<'_> {
    /// The page number.
    pub fn page(&self) -> u64 {
        self.page
    }
}

impl std::ops::Deref for PageRef<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.guard.bytes()
    }
}

/// A page pinned for writing, exclusive and zero-copy; marked dirty. On drop, bytes past
/// the file's end are re-zeroed and, in write-through mode, the page is written (an error
/// leaves it dirty for the next `fsync` to report).
#[must_use = "the page is released as soon as the guard is dropped"]
pub struct PageMut<'a> {
    guard: Exclusive<'a>,
    inner: &'a Inner,
    slot: &'a FileSlot,
    page: u64,
}

impl PageMut<'_> {
    /// The page number.
    pub fn page(&self) -> u64 {
        self.page
    }
}

impl std::ops::Deref for PageMut<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.guard.bytes()
    }
}

impl std::ops::DerefMut for PageMut<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.guard.bytes_mut()
    }
}

impl Drop for PageMut<'_> {
    fn drop(&mut self) {
        let ps = self.inner.page_size as u64;
        let len = self.slot.len.load(Ordering::Acquire);
        let start = self.page * ps;
        if len < start + ps {
            let from = len.saturating_sub(start) as usize;
            self.guard.bytes_mut()[from..].fill(0);
        }
        if self.inner.write_policy == WritePolicy::WriteThrough {
            // An error leaves the page dirty for the next `fsync` to retry and report.
            let _ =
                self.inner
                    .write_latched(self.guard.id(), self.guard.header(), self.guard.bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn pool_is_send_and_sync() {
        assert_send_sync::<BufferPool>();
        assert_send_sync::<FileHandle>();
    }

    #[test]
    fn owner_word_round_trips() {
        let pool = BufferPool::builder()
            .capacity_frames(16)
            .build_with_storage(crate::MemStorage::new())
            .unwrap();
        let fh = FileHandle {
            pool: pool.inner.id,
            slot: 7,
            gen: 9,
        };
        assert_eq!(pool.inner.handle_of(fh.owner()), fh);
        assert_ne!(fh.owner(), NO_OWNER);
    }

    /// A slot whose generation would wrap is retired: a handle closed 2^32 opens ago must
    /// never become valid again.
    #[test]
    fn a_slot_is_retired_before_its_generation_wraps() {
        let pool = BufferPool::builder()
            .capacity_frames(16)
            .max_open_files(2)
            .build_with_storage(crate::MemStorage::new())
            .unwrap();
        // as if slot 0 had been opened u32::MAX - 1 times
        pool.inner.files[0]
            .state
            .store(u64::from(u32::MAX - 1) << 2, Ordering::Release);
        let last = pool.create("/a").unwrap();
        assert_eq!((last.slot, last.gen), (0, u32::MAX));
        pool.close(last).unwrap();
        let next = pool.create("/b").unwrap();
        assert_eq!(next.slot, 1, "slot 0 is retired");
        assert!(matches!(pool.len(last), Err(PoolError::Closed(_))));
        assert!(matches!(
            pool.create("/c"),
            Err(PoolError::TooManyOpenFiles { max: 2 })
        ));
    }

    #[test]
    fn hit_modes_follow_the_declared_hit_paths() {
        let mode = |spec: &str| {
            let p = PolicySpec::parse(spec)
                .unwrap()
                .build(&BuildContext::new(64, 0))
                .unwrap();
            HitMode::of(p.hit_path())
        };
        assert_eq!(mode("fifo"), Some(HitMode::Counter(0)));
        assert_eq!(mode("clock"), Some(HitMode::Counter(1)));
        assert_eq!(mode("gclock:max=7"), Some(HitMode::Counter(7)));
        assert_eq!(mode("s3fifo"), Some(HitMode::Counter(3)));
        assert_eq!(mode("lru"), Some(HitMode::Queue));
        assert_eq!(mode("belady"), None);
        assert!(online_policies().contains("arc") && !online_policies().contains("belady"));
    }
}
