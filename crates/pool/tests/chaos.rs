//! The randomized multi-threaded model test: several threads run every public operation of
//! the pool on three files at once (write, read, pin, pin_mut, fsync, set_len, close and
//! reopen, prefetch, sync_all), holding pins across operations, while faults are injected
//! into storage. Every result is checked exactly against a model; at the end the pool,
//! storage, and a fresh pool over the same storage must all equal the model.
//!
//! Each run draws its configuration (policy of either family, lookup, storage, write
//! policy, read-ahead, faults) and every thread's operations from one seed. The seed is
//! printed; set `BUFCACHE_CHAOS_SEED` to run that seed again (same configuration and
//! operation streams; the threads' interleaving differs from run to run, so a rare race
//! may need several tries). `BUFCACHE_CHAOS_SECS` is the total time (default 20 s, split
//! into runs of `BUFCACHE_CHAOS_RUN_SECS`, default 2 s); `docs/pool.md` gives the command
//! for long runs.
//!
//! # How the model stays exact
//!
//! Each file is cut into regions of 3,001 bytes (so pages are shared by two or three
//! regions, and a write inside one region spans at most two pages). An operation locks the
//! regions it reads or changes, so its result is known exactly, while operations on other
//! regions of the same pages, eviction and the flusher run concurrently. `set_len(n)`
//! locks every region from the one holding `n` to the end. Every operation on a file holds
//! that file's handle lock shared; close and reopen hold it exclusively.
//!
//! A thread that holds pins only *tries* the model's locks (skipping the operation when
//! one is busy) and never writes: a writer blocked on its pin may hold a lock it would
//! wait for. That is the application's side of the contract; the pool's side is that
//! nothing else it does waits forever, which the watchdog checks.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard};
use pool::{
    BufferPool, FaultKind, FaultOp, FileHandle, FileStorage, IoMode, Lookup, MemStorage, PageRef,
    PoolError, RecordingStorage, WritePolicy,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const REGION: usize = 3001;
const REGIONS: usize = 24;
const FILE_MAX: usize = REGION * REGIONS;
const FILES: usize = 3;
const THREADS: usize = 4;
/// Pins one thread holds at most across operations.
const MAX_HELD: usize = 2;
/// Page slots tracked per file (pages of up to 64 KiB... down to 4 KiB: 18 pages).
const PAGE_SLOTS: usize = 32;

const POLICIES: &[&str] = &[
    // hits as per-frame counters
    "clock",
    "gclock",
    "clock2hand",
    "sieve",
    "s3fifo",
    "clockpro",
    "car",
    "fifo",
    "random",
    // hits queued (BP-Wrapper)
    "lru",
    "arc",
    "twoq",
    "lirs",
    "lruk",
    "wtinylfu",
    "linux",
    "mru",
    "lfu",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StorageKind {
    Memory,
    /// Real files opened with `O_DIRECT`, in a directory on the target's file system.
    DirectFiles,
    /// Real files through the OS page cache.
    BufferedFiles,
}

#[derive(Clone, Debug)]
struct Config {
    seed: u64,
    policy: &'static str,
    lookup: Lookup,
    storage: StorageKind,
    io: IoMode,
    write_policy: WritePolicy,
    read_ahead: usize,
    page_size: usize,
    frames: usize,
    faults: bool,
}

impl Config {
    fn draw(seed: u64) -> Config {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0xC4A0_5EED);
        let storage = match rng.gen_range(0..4) {
            0 => StorageKind::DirectFiles,
            1 => StorageKind::BufferedFiles,
            _ => StorageKind::Memory,
        };
        // Memory storage can still run the pool's O_DIRECT logic (whole-page writes, trims).
        let io = match storage {
            StorageKind::DirectFiles => IoMode::Direct,
            StorageKind::BufferedFiles => IoMode::Buffered,
            StorageKind::Memory if rng.gen_bool(0.5) => IoMode::Direct,
            StorageKind::Memory => IoMode::Buffered,
        };
        let write_policy = match rng.gen_range(0..4) {
            0 => WritePolicy::WriteThrough,
            1 => WritePolicy::WriteBack {
                interval: Duration::from_millis(50),
                age: Duration::from_millis(100),
            },
            _ => WritePolicy::WriteBack {
                interval: Duration::from_micros(500),
                age: Duration::ZERO,
            },
        };
        let read_ahead = rng.gen_range(0..4);
        Config {
            seed,
            policy: POLICIES[rng.gen_range(0..POLICIES.len())],
            lookup: if rng.gen_bool(0.5) {
                Lookup::Mapped
            } else {
                Lookup::Hashed
            },
            storage,
            io,
            write_policy,
            read_ahead,
            page_size: if rng.gen_bool(0.8) { 4096 } else { 8192 },
            // far fewer frames than the three files' pages: most misses evict
            frames: THREADS * (MAX_HELD + 1) + read_ahead + rng.gen_range(2..12),
            faults: rng.gen_bool(0.5),
        }
    }

    fn build(&self, st: &RecordingStorage) -> BufferPool {
        BufferPool::builder()
            .capacity_frames(self.frames)
            .page_size(self.page_size)
            .pin_limit(THREADS * (MAX_HELD + 1))
            .read_ahead(self.read_ahead)
            .lookup(self.lookup)
            .policy(self.policy)
            .io_mode(self.io)
            .write_policy(self.write_policy)
            .seed(self.seed)
            .build_with_storage(st.clone())
            .unwrap_or_else(|e| panic!("{self:?}: build: {e}"))
    }
}

/// Pins of one page: held now, and taken ever (to judge a `PagePinned` refusal).
#[derive(Default)]
struct PinCount {
    held: AtomicUsize,
    taken: AtomicU64,
}

/// The model of one file.
struct FileModel {
    path: PathBuf,
    handle: RwLock<FileHandle>,
    regions: Vec<Mutex<Vec<u8>>>,
    /// The file's length. Writes raise it (after the pool's write returns), `set_len` sets
    /// it while holding every region from the new end on.
    len: AtomicU64,
    pins: Vec<PinCount>,
    /// The last operations that changed the file's length, for the failure report.
    history: Mutex<std::collections::VecDeque<String>>,
}

impl FileModel {
    fn note(&self, what: String) {
        let mut h = self.history.lock();
        if h.len() == 40 {
            h.pop_front();
        }
        h.push_back(what);
    }
}

struct Shared {
    cfg: Config,
    pool: BufferPool,
    st: RecordingStorage,
    files: Vec<FileModel>,
    stop: AtomicBool,
    progress: AtomicU64,
    /// The first check that failed, by any thread.
    first_failure: Mutex<Option<String>>,
}

fn pages_of(len: u64, ps: u64) -> u64 {
    len.div_ceil(ps)
}

/// An error the injected faults may explain: storage failed, or a miss found only dirty
/// pages whose writes failed.
fn fault_explains(e: &PoolError) -> bool {
    matches!(e, PoolError::Io { .. } | PoolError::WriteBackStalled { .. })
}

/// See [`Worker::lock_page`].
struct PageLocks<'a> {
    fh: RwLockReadGuard<'a, FileHandle>,
    regs: Vec<MutexGuard<'a, Vec<u8>>>,
    /// The first locked region.
    from: usize,
    count: &'a PinCount,
    /// The model's length once the locks are held.
    len0: u64,
}

/// A pin held by a worker across operations.
struct Held<'a> {
    file: usize,
    page: u64,
    guard: PageRef<'a>,
}

struct Worker<'a> {
    sh: &'a Shared,
    id: usize,
    rng: SmallRng,
    held: Vec<Held<'a>>,
    next_value: u8,
}

impl<'a> Worker<'a> {
    fn ps(&self) -> u64 {
        self.sh.cfg.page_size as u64
    }

    fn fail(&self, what: std::fmt::Arguments<'_>) -> ! {
        let msg = format!(
            "seed {} thread {}: {what}\nconfig: {:?}",
            self.sh.cfg.seed, self.id, self.sh.cfg
        );
        // Only the first failure is the finding; others may follow from the state it left.
        let mut first = self.sh.first_failure.lock();
        let msg = format!(
            "{msg}\nlast length changes, per file:\n{}",
            self.sh
                .files
                .iter()
                .enumerate()
                .map(|(i, f)| format!(
                    "  file {i}: {}",
                    f.history
                        .lock()
                        .iter()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("\n    ")
                ))
                .collect::<Vec<_>>()
                .join("\n")
        );
        if first.is_none() {
            *first = Some(msg.clone());
        }
        self.sh.stop.store(true, Ordering::Relaxed);
        drop(first);
        panic!("{msg}")
    }

    fn check_error(&self, op: &str, e: &PoolError) {
        if !(self.sh.cfg.faults && fault_explains(e)) {
            self.fail(format_args!("{op}: unexpected error {e:?}"));
        }
    }

    /// The handle lock, tried only while pins are held (see the module docs).
    fn handle(&self, file: usize) -> Option<RwLockReadGuard<'a, FileHandle>> {
        let h = &self.sh.files[file].handle;
        if self.held.is_empty() {
            Some(h.read())
        } else {
            h.try_read()
        }
    }

    /// Regions `from..to` of `file`, in order; tried only while pins are held.
    fn regions(&self, file: usize, from: usize, to: usize) -> Option<Vec<MutexGuard<'a, Vec<u8>>>> {
        let regions = &self.sh.files[file].regions;
        let mut out = Vec::with_capacity(to - from);
        for r in &regions[from..to] {
            if self.held.is_empty() {
                out.push(r.lock());
            } else {
                out.push(r.try_lock()?);
            }
        }
        Some(out)
    }

    /// A byte value for a write that differs from every byte it overwrites (so that a
    /// failed write's effect can be told from the old contents), or `None`.
    fn fresh_value(&mut self, old: &[u8]) -> Option<u8> {
        let mut seen = [false; 256];
        for &b in old {
            seen[b as usize] = true;
        }
        for _ in 0..255 {
            self.next_value = self.next_value.wrapping_add(1).max(1);
            if !seen[self.next_value as usize] {
                return Some(self.next_value);
            }
        }
        None
    }

    fn run(&mut self, deadline: Instant) {
        while Instant::now() < deadline && !self.sh.stop.load(Ordering::Relaxed) {
            if !self.held.is_empty() && (self.held.len() >= MAX_HELD || self.rng.gen_bool(0.3)) {
                let i = self.rng.gen_range(0..self.held.len());
                let h = self.held.swap_remove(i);
                let (file, page) = (h.file, h.page);
                drop(h.guard);
                self.sh.files[file].pins[page as usize]
                    .held
                    .fetch_sub(1, Ordering::AcqRel);
            }
            let file = self.rng.gen_range(0..FILES);
            match self.rng.gen_range(0..100) {
                0..=29 if self.held.is_empty() => self.write(file),
                0..=59 => self.read(file),
                60..=69 => self.pin(file),
                70..=74 if self.held.is_empty() => self.pin_mut(file),
                70..=74 => self.read(file),
                75..=79 => self.fsync(file),
                80..=86 => self.set_len(file),
                87..=88 => self.reopen(file),
                89..=97 => self.prefetch(file),
                _ => {
                    if let Err(e) = self.sh.pool.sync_all() {
                        self.check_error("sync_all", &e);
                    }
                }
            }
            self.sh.progress.fetch_add(1, Ordering::Relaxed);
        }
        for h in self.held.drain(..) {
            drop(h.guard);
            self.sh.files[h.file].pins[h.page as usize]
                .held
                .fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// A random byte range inside one region: (region, start, end) within the region.
    fn range(&mut self) -> (usize, usize, usize) {
        let r = self.rng.gen_range(0..REGIONS);
        let a = self.rng.gen_range(0..REGION);
        let b = self.rng.gen_range(a + 1..=REGION);
        (r, a, b)
    }

    fn write(&mut self, file: usize) {
        let (r, a, b) = self.range();
        let Some(fh) = self.handle(file) else { return };
        let Some(mut regs) = self.regions(file, r, r + 1) else {
            return;
        };
        let reg = &mut regs[0];
        let Some(v) = self.fresh_value(&reg[a..b]) else {
            return;
        };
        let m = &self.sh.files[file];
        let base = (r * REGION) as u64;
        match self.sh.pool.write(*fh, base + a as u64, &vec![v; b - a]) {
            Ok(()) => {
                reg[a..b].fill(v);
                let was = m.len.fetch_max(base + b as u64, Ordering::AcqRel);
                if was < base + b as u64 {
                    m.note(format!(
                        "t{} write {}..{} -> len {} (pool {:?})",
                        self.id,
                        base + a as u64,
                        base + b as u64,
                        base + b as u64,
                        self.sh.pool.len(*fh)
                    ));
                }
            }
            Err(e) => {
                self.check_error("write", &e);
                // The pool applies a write page by page: some prefix of whole page pieces
                // may have been applied. Read back to learn which, and check it is one.
                let ps = self.ps();
                let mut cuts = vec![a];
                let mut pos = base + a as u64;
                while pos < base + b as u64 {
                    pos = ((pos / ps + 1) * ps).min(base + b as u64);
                    cuts.push((pos - base) as usize);
                }
                // The length before the read back: a `set_len` of a later region may
                // lengthen the file past this region meanwhile, never shorten it into it.
                let len0 = m.len.load(Ordering::Acquire);
                let pool_len = self.sh.pool.len(*fh);
                let back = self.read_back(*fh, file, r);
                let applied = cuts.iter().position(|&cut| {
                    let mut cand = reg.clone();
                    cand[a..cut].fill(v);
                    let cand_len = if cut > a {
                        len0.max(base + cut as u64)
                    } else {
                        len0
                    };
                    self.matches_region(&back, &cand, base, cand_len)
                });
                let Some(k) = applied else {
                    let diff = (0..back.len()).find(|&i| back[i] != reg[i]);
                    self.fail(format_args!(
                        "failed write of {v} to {file}:{}..{} ({e}) left a state that is no \
                         prefix of it: read back {} bytes, length {len0}, first difference \
                         from the old contents at {diff:?} (got {:?}, old {:?}); pool length \
                         {pool_len:?} before the read back, {:?} after",
                        base + a as u64,
                        base + b as u64,
                        back.len(),
                        diff.map(|i| back[i]),
                        diff.map(|i| reg[i]),
                        self.sh.pool.len(*fh),
                    ))
                };
                let cut = cuts[k];
                reg[a..cut].fill(v);
                if cut > a {
                    m.len.fetch_max(base + cut as u64, Ordering::AcqRel);
                }
                m.note(format!(
                    "t{} failed write {}..{} applied to {} (pool {:?})",
                    self.id,
                    base + a as u64,
                    base + b as u64,
                    base + cut as u64,
                    self.sh.pool.len(*fh)
                ));
            }
        }
    }

    /// Read a whole region with retries (faults may fail reads): what the pool holds.
    /// Retried for up to 10 s: while one file's writes all fail and every frame holds a
    /// dirty page of it, misses fail (`WriteBackStalled`) until the injector lifts the fault.
    fn read_back(&self, fh: FileHandle, file: usize, r: usize) -> Vec<u8> {
        let mut buf = vec![0u8; REGION];
        let give_up = Instant::now() + Duration::from_secs(10);
        while Instant::now() < give_up {
            match self.sh.pool.read(fh, (r * REGION) as u64, &mut buf) {
                Ok(n) => {
                    buf.truncate(n);
                    return buf;
                }
                Err(e) => self.check_error("read back", &e),
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        self.fail(format_args!("file {file} region {r} unreadable for 10 s"))
    }

    /// Whether `got` (a read of the whole region at `base`) is what a region holding
    /// `model` in a file of length at least `len` reads as.
    fn matches_region(&self, got: &[u8], model: &[u8], base: u64, len: u64) -> bool {
        let want_min = len.saturating_sub(base).min(REGION as u64) as usize;
        got.len() >= want_min && got == &model[..got.len()]
    }

    fn read(&mut self, file: usize) {
        let (r, a, b) = self.range();
        let Some(fh) = self.handle(file) else { return };
        let Some(regs) = self.regions(file, r, r + 1) else {
            return;
        };
        let reg = &regs[0];
        let m = &self.sh.files[file];
        let base = (r * REGION) as u64;
        let len0 = m.len.load(Ordering::Acquire);
        let mut buf = vec![0xEEu8; b - a];
        match self.sh.pool.read(*fh, base + a as u64, &mut buf) {
            Ok(n) => {
                // Writes to later regions may lengthen the file meanwhile, never shorten it
                // below this region's end; bytes past the length are zero in the model.
                let want_min = len0.saturating_sub(base + a as u64).min((b - a) as u64) as usize;
                if n < want_min || n > b - a || buf[..n] != reg[a..a + n] {
                    let first_bad = (0..n).find(|&i| buf[i] != reg[a + i]);
                    self.fail(format_args!(
                        "read {file}:{}+{}: got {n} bytes (at least {want_min} expected), \
                         first difference at {first_bad:?} (got {:?}, model {:?}); length {len0}",
                        base + a as u64,
                        b - a,
                        first_bad.map(|i| buf[i]),
                        first_bad.map(|i| reg[a + i]),
                    ));
                }
            }
            Err(e) => self.check_error("read", &e),
        }
    }

    /// The regions a page overlaps: `from..to`.
    fn regions_of_page(&self, page: u64) -> (usize, usize) {
        let ps = self.ps() as usize;
        let start = page as usize * ps;
        let from = (start / REGION).min(REGIONS);
        let to = (start + ps).div_ceil(REGION).min(REGIONS);
        (from, to)
    }

    /// Check a page's bytes against the locked regions `from..` (bytes of the page past
    /// the model's regions must be zero).
    fn check_page(
        &self,
        what: &str,
        file: usize,
        page: u64,
        bytes: &[u8],
        regs: &[MutexGuard<'_, Vec<u8>>],
        from: usize,
    ) {
        let ps = self.ps() as usize;
        let start = page as usize * ps;
        for (i, &got) in bytes.iter().enumerate() {
            let pos = start + i;
            let want = if pos < FILE_MAX && pos / REGION >= from && pos / REGION < from + regs.len()
            {
                regs[pos / REGION - from][pos % REGION]
            } else {
                0
            };
            if got != want {
                self.fail(format_args!(
                    "{what} {file} page {page}: byte {i} is {got}, model {want}"
                ));
            }
        }
    }

    /// What a pin of `page` of `file` is checked under: the handle lock, the locks of the
    /// regions the page overlaps, and the page's pin count, raised before the pin exists
    /// (so the count never misses a pin the pool sees; the caller lowers it again).
    fn lock_page(&self, file: usize, page: u64) -> Option<PageLocks<'a>> {
        let fh = self.handle(file)?;
        let (from, to) = self.regions_of_page(page);
        let regs = self.regions(file, from, to)?;
        let m = &self.sh.files[file];
        let count = &m.pins[page as usize];
        count.held.fetch_add(1, Ordering::AcqRel);
        count.taken.fetch_add(1, Ordering::AcqRel);
        Some(PageLocks {
            fh,
            regs,
            from,
            count,
            len0: m.len.load(Ordering::Acquire),
        })
    }

    fn pin(&mut self, file: usize) {
        let ps = self.ps();
        let page = self.rng.gen_range(0..pages_of(FILE_MAX as u64, ps) + 1);
        if self.held.len() >= MAX_HELD || self.held.iter().any(|h| h.file == file && h.page == page)
        {
            return;
        }
        let Some(PageLocks {
            fh,
            regs,
            from,
            count,
            len0,
        }) = self.lock_page(file, page)
        else {
            return;
        };
        match self.sh.pool.pin(*fh, page) {
            // A page past the model's end may be inside the pool's: a write to a later
            // region may be lengthening the file right now. Its bytes are zero either way.
            Ok(g) => {
                self.check_page("pin", file, page, &g, &regs, from);
                self.held.push(Held {
                    file,
                    page,
                    guard: g,
                });
                return;
            }
            Err(PoolError::PastEnd { page: p, .. }) if p == page && page >= pages_of(len0, ps) => {}
            Err(e) => self.check_error("pin", &e),
        }
        count.held.fetch_sub(1, Ordering::AcqRel);
    }

    fn pin_mut(&mut self, file: usize) {
        let ps = self.ps();
        let page = self.rng.gen_range(0..pages_of(FILE_MAX as u64, ps) + 1);
        let Some(PageLocks {
            fh,
            mut regs,
            from,
            count,
            len0,
        }) = self.lock_page(file, page)
        else {
            return;
        };
        let m = &self.sh.files[file];
        let to = from + regs.len();
        match self.sh.pool.pin_mut(*fh, page) {
            Ok(mut g) => {
                let len = m.len.load(Ordering::Acquire);
                self.check_page("pin_mut", file, page, &g, &regs, from);
                // Change one byte inside the file and inside a locked region.
                let lo = page * ps;
                let hi = (lo + ps).min(len).min(FILE_MAX as u64);
                if lo < hi {
                    let pos = self.rng.gen_range(lo..hi) as usize;
                    if pos / REGION >= from && pos / REGION < to {
                        let old = regs[pos / REGION - from][pos % REGION];
                        if let Some(v) = self.fresh_value(&[old]) {
                            g[pos - lo as usize] = v;
                            regs[pos / REGION - from][pos % REGION] = v;
                        }
                    }
                }
                drop(g);
            }
            Err(PoolError::PastEnd { page: p, .. }) if p == page && page >= pages_of(len0, ps) => {}
            Err(e) => self.check_error("pin_mut", &e),
        }
        count.held.fetch_sub(1, Ordering::AcqRel);
    }

    fn fsync(&mut self, file: usize) {
        let Some(fh) = self.handle(file) else { return };
        if let Err(e) = self.sh.pool.fsync(*fh) {
            self.check_error("fsync", &e);
        }
    }

    fn prefetch(&mut self, file: usize) {
        let ps = self.ps();
        let top = pages_of(FILE_MAX as u64, ps) + 2;
        let pages: Vec<u64> = (0..self.rng.gen_range(1..6))
            .map(|_| self.rng.gen_range(0..top))
            .collect();
        let Some(fh) = self.handle(file) else { return };
        if let Err(e) = self.sh.pool.prefetch(*fh, &pages) {
            self.check_error("prefetch", &e);
        }
    }

    /// Snapshot of how many pins each page of `file` has had taken.
    fn pins_taken(&self, file: usize) -> Vec<u64> {
        self.sh.files[file]
            .pins
            .iter()
            .map(|c| c.taken.load(Ordering::Acquire))
            .collect()
    }

    /// A `PagePinned { page }` refusal is right if `page` of `file` was pinned at some
    /// moment of the call: held before it, or pinned since `before` was taken.
    fn check_pinned(
        &self,
        op: &str,
        file: usize,
        page: u64,
        before: &[u64],
        held_before: &[usize],
    ) {
        let p = page as usize;
        let plausible = p < PAGE_SLOTS
            && (held_before[p] > 0
                || self.sh.files[file].pins[p].taken.load(Ordering::Acquire) > before[p]);
        if !plausible {
            self.fail(format_args!(
                "{op} of file {file} refused: page {page} pinned, but it was not"
            ));
        }
    }

    fn pins_held(&self, file: usize) -> Vec<usize> {
        self.sh.files[file]
            .pins
            .iter()
            .map(|c| c.held.load(Ordering::Acquire))
            .collect()
    }

    fn set_len(&mut self, file: usize) {
        let ps = self.ps() as usize;
        let new = match self.rng.gen_range(0..4) {
            0 => self.rng.gen_range(0..=FILE_MAX / ps) * ps,
            1 => self.rng.gen_range(0..=REGIONS) * REGION,
            _ => self.rng.gen_range(0..=FILE_MAX),
        } as u64;
        let Some(fh) = self.handle(file) else { return };
        // At least the last region, even for a new end past every region: two `set_len`s
        // of one file must exclude each other, or the model's order could differ from the
        // pool's.
        let from = (new as usize / REGION).min(REGIONS - 1);
        let Some(mut regs) = self.regions(file, from, REGIONS) else {
            return;
        };
        let m = &self.sh.files[file];
        let (taken, held) = (self.pins_taken(file), self.pins_held(file));
        match self.sh.pool.set_len(*fh, new) {
            Ok(()) => {
                for (i, reg) in regs.iter_mut().enumerate() {
                    let base = (from + i) * REGION;
                    let cut = (new as usize).saturating_sub(base).min(REGION);
                    reg[cut..].fill(0);
                }
                m.len.store(new, Ordering::Release);
                m.note(format!(
                    "t{} set_len {new} (pool {:?})",
                    self.id,
                    self.sh.pool.len(*fh)
                ));
            }
            Err(PoolError::PagePinned { page }) => {
                let first = (new as usize / ps) as u64;
                if page < first {
                    self.fail(format_args!(
                        "set_len({new}) of {file} refused for kept page {page}"
                    ));
                }
                self.check_pinned("set_len", file, page, &taken, &held);
            }
            Err(e) => self.check_error("set_len", &e),
        }
    }

    fn reopen(&mut self, file: usize) {
        let m = &self.sh.files[file];
        let h = if self.held.is_empty() {
            Some(m.handle.write())
        } else {
            m.handle.try_write()
        };
        let Some(mut fh) = h else { return };
        let (taken, held) = (self.pins_taken(file), self.pins_held(file));
        match self.sh.pool.close(*fh) {
            Ok(()) => {}
            Err(PoolError::PagePinned { page }) => {
                self.check_pinned("close", file, page, &taken, &held);
                return;
            }
            Err(e) => {
                self.check_error("close", &e);
                return;
            }
        }
        // Closed with no operation on the file running: storage must equal the model, to
        // the byte and in length (an O_DIRECT file trimmed back).
        let want = self.model_image(file);
        let disk = self.sh.st.contents(&m.path).unwrap_or_default();
        if disk != want {
            let first_bad = (0..disk.len().min(want.len())).find(|&i| disk[i] != want[i]);
            self.fail(format_args!(
                "after close, storage of file {file} has {} bytes (model {}), first difference \
                 at {first_bad:?}",
                disk.len(),
                want.len()
            ));
        }
        *fh = match self.sh.pool.open(&m.path) {
            Ok(f) => f,
            Err(e) => self.fail(format_args!("reopen {file}: {e}")),
        };
        let len = self.sh.pool.len(*fh).unwrap();
        m.note(format!("t{} reopen, len {len}", self.id));
        if len != want.len() as u64 {
            self.fail(format_args!(
                "reopened {file} has length {len}, model {}",
                want.len()
            ));
        }
    }

    /// The model's contents of `file` (only consistent while no operation on it runs).
    fn model_image(&self, file: usize) -> Vec<u8> {
        image(&self.sh.files[file])
    }
}

fn image(m: &FileModel) -> Vec<u8> {
    let len = m.len.load(Ordering::Acquire) as usize;
    let mut out = Vec::with_capacity(FILE_MAX);
    for r in &m.regions {
        out.extend_from_slice(&r.lock());
    }
    out.truncate(len);
    out
}

/// Inject faults until told to stop: transient ones of every kind on every operation,
/// and now and then one file whose writes all fail with ENOSPC for a while.
fn inject_faults(sh: &Shared, seed: u64, deadline: Instant) {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xFA17);
    while Instant::now() < deadline && !sh.stop.load(Ordering::Relaxed) {
        let op = [
            FaultOp::Write,
            FaultOp::Read,
            FaultOp::Sync,
            FaultOp::SetLen,
        ][rng.gen_range(0..4)];
        let kind = [FaultKind::Eio, FaultKind::NoSpace, FaultKind::ShortWrite][rng.gen_range(0..3)];
        if rng.gen_bool(0.1) {
            let f = rng.gen_range(0..FILES);
            sh.st.inject_path(
                &sh.files[f].path,
                FaultOp::Write,
                FaultKind::NoSpace,
                0,
                usize::MAX,
            );
            std::thread::sleep(Duration::from_millis(rng.gen_range(1..20)));
            sh.st.clear_faults();
        } else {
            sh.st
                .inject(op, kind, rng.gen_range(0..30), rng.gen_range(1..4));
            std::thread::sleep(Duration::from_millis(rng.gen_range(1..5)));
        }
        if rng.gen_bool(0.05) {
            sh.st.clear_faults();
        }
    }
    sh.st.clear_faults();
}

/// Print to the real stderr (not the test harness's capture) and abort: for hangs, where
/// a panic would leave the stuck threads running and the test never ending.
fn abort_hang(cfg: &Config, what: &str) -> ! {
    let _ = writeln!(
        std::io::stderr(),
        "\nchaos: HANG ({what}): no progress for 20 s; seed {} (BUFCACHE_CHAOS_SEED={} \
         replays it)\nconfig: {cfg:?}",
        cfg.seed,
        cfg.seed
    );
    std::process::abort();
}

/// Run `f` on this thread while a watchdog aborts the process if `progress` stops moving.
fn watched<T>(cfg: &Config, what: &str, progress: &AtomicU64, f: impl FnOnce() -> T) -> T {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut last = (progress.load(Ordering::Relaxed), Instant::now());
            while !done.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(20));
                let now = progress.load(Ordering::Relaxed);
                if now != last.0 {
                    last = (now, Instant::now());
                } else if last.1.elapsed() > Duration::from_secs(20) {
                    abort_hang(cfg, what);
                }
            }
        });
        let out = f();
        done.store(true, Ordering::Release);
        out
    })
}

fn storage_for(cfg: &Config, dir: &std::path::Path) -> (RecordingStorage, Vec<PathBuf>) {
    let paths: Vec<PathBuf> = (0..FILES).map(|i| dir.join(format!("f{i}"))).collect();
    let st = match cfg.storage {
        StorageKind::Memory => RecordingStorage::faults_over(MemStorage::new()),
        StorageKind::DirectFiles | StorageKind::BufferedFiles => {
            RecordingStorage::faults_over(FileStorage)
        }
    };
    (st, paths)
}

/// One run of `secs` seconds with the configuration and operations drawn from `seed`.
fn run(seed: u64, secs: f64) {
    let cfg = Config::draw(seed);
    eprintln!("chaos: seed {seed} for {secs:.1} s: {cfg:?}");
    // Real files live under the target directory: /tmp may be tmpfs, which refuses O_DIRECT.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (st, paths) = storage_for(&cfg, dir.path());
    let pool = cfg.build(&st);
    let files: Vec<FileModel> = paths
        .iter()
        .map(|p| FileModel {
            path: p.clone(),
            handle: RwLock::new(
                pool.create(p)
                    .unwrap_or_else(|e| panic!("{cfg:?}: create: {e}")),
            ),
            regions: (0..REGIONS)
                .map(|_| Mutex::new(vec![0u8; REGION]))
                .collect(),
            len: AtomicU64::new(0),
            pins: (0..PAGE_SLOTS).map(|_| PinCount::default()).collect(),
            history: Mutex::new(Default::default()),
        })
        .collect();
    let sh = Shared {
        cfg: cfg.clone(),
        pool,
        st,
        files,
        stop: AtomicBool::new(false),
        progress: AtomicU64::new(0),
        first_failure: Mutex::new(None),
    };
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let panicked = watched(&cfg, "operations", &sh.progress, || {
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let sh = &sh;
                    s.spawn(move || {
                        let mut w = Worker {
                            sh,
                            id: t,
                            rng: SmallRng::seed_from_u64(
                                seed.wrapping_mul(1000).wrapping_add(t as u64),
                            ),
                            held: Vec::new(),
                            next_value: (t * 60) as u8,
                        };
                        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            w.run(deadline)
                        }));
                        if out.is_err() {
                            // Let the others stop (and drop their pins) so the run ends.
                            sh.stop.store(true, Ordering::Relaxed);
                            // Pins this thread held are gone with its stack; keep the
                            // progress moving so the watchdog does not mistake this for a hang.
                        }
                        out
                    })
                })
                .collect();
            if cfg.faults {
                let sh = &sh;
                s.spawn(move || inject_faults(sh, seed, deadline));
            }
            workers
                .into_iter()
                .filter_map(|w| w.join().unwrap().err())
                .next()
        })
    });
    if let Some(p) = panicked {
        match sh.first_failure.lock().take() {
            Some(msg) => panic!("{msg}"),
            None => std::panic::resume_unwind(p),
        }
    }
    sh.st.clear_faults();
    let progress = AtomicU64::new(0);
    watched(&cfg, "final checks", &progress, || {
        final_checks(&sh, &progress)
    });
    eprintln!(
        "chaos: seed {seed}: {} operations, {:?}",
        sh.progress.load(Ordering::Relaxed),
        sh.pool.stats()
    );
    let Shared {
        pool, st, files, ..
    } = sh;
    drop(pool);
    // A fresh pool over the same storage reads exactly the model.
    let fresh = cfg.build(&st);
    for (i, m) in files.iter().enumerate() {
        let want = image(m);
        let f = fresh.open(&m.path).unwrap();
        assert_eq!(
            fresh.len(f).unwrap(),
            want.len() as u64,
            "seed {seed}: fresh pool, file {i} length"
        );
        let mut back = vec![0u8; FILE_MAX + 10];
        let n = fresh.read(f, 0, &mut back).unwrap();
        assert!(
            back[..n] == want[..],
            "seed {seed}: fresh pool, file {i} contents"
        );
    }
}

fn final_checks(sh: &Shared, progress: &AtomicU64) {
    let seed = sh.cfg.seed;
    let mut tries = 0;
    while let Err(e) = sh.pool.sync_all() {
        tries += 1;
        assert!(
            tries < 100,
            "seed {seed}: sync_all keeps failing with no faults: {e}"
        );
        progress.fetch_add(1, Ordering::Relaxed);
    }
    for (i, m) in sh.files.iter().enumerate() {
        let want = image(m);
        let fh = *m.handle.read();
        assert_eq!(
            sh.pool.len(fh).unwrap(),
            want.len() as u64,
            "seed {seed}: file {i} length in the pool"
        );
        let mut back = vec![0u8; FILE_MAX + 10];
        let n = sh.pool.read(fh, 0, &mut back).unwrap();
        if back[..n] != want[..] {
            let bad = (0..n.min(want.len())).find(|&k| back[k] != want[k]);
            panic!("seed {seed}: file {i} in the pool differs from the model at {bad:?} (pool {n} bytes, model {})\nconfig: {:?}", want.len(), sh.cfg);
        }
        let disk = sh.st.contents(&m.path).unwrap();
        if disk != want {
            let bad = (0..disk.len().min(want.len())).find(|&k| disk[k] != want[k]);
            panic!("seed {seed}: file {i} in storage differs from the model at {bad:?} (storage {} bytes, model {})\nconfig: {:?}", disk.len(), want.len(), sh.cfg);
        }
        progress.fetch_add(1, Ordering::Relaxed);
    }
    let stats = sh.pool.stats();
    assert_eq!(
        stats.dirty_pages, 0,
        "seed {seed}: dirty pages after sync_all"
    );
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
        })
        .unwrap_or(default)
}

#[test]
fn pool_matches_the_model_under_concurrency_and_faults() {
    let run_secs = env_f64("BUFCACHE_CHAOS_RUN_SECS", 2.0);
    if let Ok(seed) = std::env::var("BUFCACHE_CHAOS_SEED") {
        let seed = seed.parse().expect("BUFCACHE_CHAOS_SEED: a number");
        run(seed, env_f64("BUFCACHE_CHAOS_SECS", run_secs));
        return;
    }
    let total = Duration::from_secs_f64(env_f64("BUFCACHE_CHAOS_SECS", 20.0));
    // Fresh seeds on every run: the clock's nanoseconds, mixed.
    let mut seed = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let start = Instant::now();
    let mut runs = 0;
    while start.elapsed() < total {
        run(seed % 1_000_000_007, run_secs);
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        runs += 1;
    }
    eprintln!(
        "chaos: {runs} runs in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
