//! The randomized multi-threaded model test: several threads run every public operation of
//! the pool on three files at once (write, read, pin, pin_mut, fsync, set_len, close and
//! reopen, prefetch, sync_all, resize), holding pins across operations, while faults are injected
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
    BufferPool, FaultKind, FaultOp, FileHandle, FileStorage, IoMode, Lookup, MemStorage, PageHint,
    PageRef, PoolError, RecordingStorage, WritePolicy,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

mod config;
mod file_ops;
mod page_ops;
mod watch;

use watch::{inject_faults, watched};

const REGION: usize = 3001;
const REGIONS: usize = 24;
const FILE_MAX: usize = REGION * REGIONS;
const FILES: usize = 3;
const THREADS: usize = 4;
/// Pins one thread holds at most across operations.
const MAX_HELD: usize = 2;
/// Page slots tracked per file (pages of up to 64 KiB... down to 4 KiB: 18 pages).
const PAGE_SLOTS: usize = 32;

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
    /// The admission filter, a catalogue name with its defaults (`None`: no filter).
    admission: Option<&'static str>,
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
    /// Page hints by (file, page), for the hinted reads and pins.
    hints: std::collections::HashMap<(usize, u64), PageHint>,
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
                            hints: std::collections::HashMap::new(),
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
