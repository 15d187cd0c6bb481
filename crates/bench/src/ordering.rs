//! Burnett's TPC-B-like transactions (thesis §4.4.2, `sim::des::tpcb`) through the real
//! pool over real files: no ordering, `fsync` of the log per transaction, barriers, and
//! asynchronous graphs, buffered and `O_DIRECT`.
//!
//! Each transaction appends a log record, then (per mechanism) calls `fsync(log)`,
//! `barrier()` or nothing, reads one byte at `pages_read` random pages of the data file
//! and writes one byte at `pages_written` random pages; with graphs the log record is a
//! `graph_write` with no dependency and each data write a `graph_write` after it. A run
//! goes for a fixed time on several threads, then syncs everything (counted in its time).
//!
//! Barriers and graphs run twice: *async* (nobody waits, as in the thesis) and *wait*
//! (each transaction waits for its commit — the barrier after its log record, or its log
//! write — to be durable, as a database acknowledging commits does). `fsync` always waits.
//! Commit latencies (transaction start to durable commit) go into an HDR histogram.
//! Device writes are the bytes the kernel counted as written for this process
//! (`write_bytes` of `/proc/self/io`, which includes the final sync).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use pool::{BufferPool, FileHandle, FileStorage, IoMode, WriteId};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use sim::des::tpcb::Mechanism;

use crate::error::ErrorKind;
use crate::slow_sync::SlowSync;
use crate::BenchError;

/// Whether transactions wait for their commit to be durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Commit {
    /// Nobody waits (none, and barriers and graphs as in the thesis).
    Async,
    /// Each transaction waits (fsync always; barriers and graphs through `wait_durable`).
    Wait,
}

/// The runs of the experiment, in order: (mechanism, commit).
pub const VARIANTS: [(Mechanism, Commit); 6] = [
    (Mechanism::None, Commit::Async),
    (Mechanism::Fsync, Commit::Wait),
    (Mechanism::Barrier, Commit::Async),
    (Mechanism::Barrier, Commit::Wait),
    (Mechanism::Graph, Commit::Async),
    (Mechanism::Graph, Commit::Wait),
];

/// The experiment's knobs; the defaults keep a whole run (12 points) under a minute.
#[derive(Clone, Debug)]
pub struct RealOptions {
    /// Folder for the data and log files (must be on a file system with `O_DIRECT` for
    /// the direct runs).
    pub dir: PathBuf,
    /// I/O modes to run.
    pub io_modes: Vec<IoMode>,
    /// The variants to run in each I/O mode, in this order (all of [`VARIANTS`] by
    /// default; one alone lets a profiler or `/usr/bin/time` see one variant's cost).
    pub variants: Vec<(Mechanism, Commit)>,
    /// Seconds each point runs before its final sync.
    pub seconds: f64,
    /// Threads running transactions.
    pub threads: usize,
    /// Data file size in 4 KiB pages.
    pub data_pages: u64,
    /// Pool frames (4 KiB each).
    pub frames: usize,
    /// Bytes appended to the log per transaction.
    pub log_bytes: usize,
    /// One-byte reads per transaction.
    pub pages_read: u32,
    /// One-byte writes per transaction.
    pub pages_written: u32,
    /// Seed of the offsets.
    pub seed: u64,
    /// Modeled latency added to every sync (zero: the storage's own cost only), for
    /// storage whose flushes cost what a real disk's do (see [`crate::slow_sync`]).
    pub sync_delay: Duration,
    /// A control for the `none` variant: a side thread syncs the log (`fsync`, which
    /// writes its dirty pages first) at this interval and the data file once a second,
    /// as asynchronous graphs' levels and flusher do, without any ordering bookkeeping.
    /// It tells the cost of the syncs themselves from the pool's own.
    pub control_sync: Option<Duration>,
}

impl RealOptions {
    /// The defaults in `dir`: 4 threads, 2 s per point, 64 MiB data, 16 MiB pool, 128-byte
    /// log records, 3 reads and 3 writes (Table 4.1's transaction).
    pub fn new(dir: PathBuf) -> Self {
        RealOptions {
            dir,
            io_modes: vec![IoMode::Buffered, IoMode::Direct],
            variants: VARIANTS.to_vec(),
            seconds: 2.0,
            threads: 4,
            data_pages: 16_384,
            frames: 4096,
            log_bytes: 128,
            pages_read: 3,
            pages_written: 3,
            seed: 1,
            sync_delay: Duration::ZERO,
            control_sync: None,
        }
    }
}

/// One point: a mechanism, a commit mode and an I/O mode.
#[derive(Clone, Debug, Serialize)]
pub struct RealPoint {
    /// `buffered` or `direct`.
    pub io: &'static str,
    /// `none`, `fsync`, `barrier`, `graph`.
    pub mechanism: &'static str,
    /// `async` or `wait`.
    pub commit: Commit,
    /// Transactions completed.
    pub transactions: u64,
    /// Wall time including the final sync.
    pub seconds: f64,
    /// Transactions per second.
    pub tps: f64,
    /// Bytes the kernel counted as written by this process, per transaction.
    pub device_bytes_per_txn: f64,
    /// Pages the pool wrote (write-back and levels), per transaction.
    pub pool_pages_per_txn: f64,
    /// File syncs: `fsync` calls, plus the ones levels issued.
    pub syncs: u64,
    /// Levels written (barriers and graphs).
    pub levels: u64,
    /// Duplicated pages (barriers mostly).
    pub duplicates: u64,
    /// Modeled latency added to each sync, in milliseconds (0: none).
    pub sync_delay_ms: f64,
    /// The control's log sync interval in milliseconds (`none` only; 0: no control).
    pub control_sync_ms: f64,
    /// Commit latency percentiles in microseconds (0 when nobody waits).
    pub commit_p50_us: u64,
    /// 99th percentile.
    pub commit_p99_us: u64,
    /// 99.9th percentile.
    pub commit_p999_us: u64,
}

/// Run every variant in every I/O mode; the data file is written once in `opts.dir`.
pub fn run(opts: &RealOptions) -> Result<Vec<RealPoint>, BenchError> {
    let data = opts.dir.join("data");
    write_data_file(&data, opts.data_pages)?;
    let mut out = Vec::new();
    for &io in &opts.io_modes {
        for &(mechanism, commit) in &opts.variants {
            out.push(run_point(opts, &data, io, mechanism, commit)?);
        }
    }
    Ok(out)
}

fn write_data_file(path: &Path, pages: u64) -> Result<(), BenchError> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)
        .map_err(|e| BenchError::io(format!("cannot create {}", path.display()), e))?;
    let chunk = vec![0u8; 1 << 20];
    let mut left = pages * 4096;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])
            .map_err(|e| BenchError::io(format!("cannot write {}", path.display()), e))?;
        left -= n as u64;
    }
    f.sync_all()
        .map_err(|e| BenchError::io(format!("cannot sync {}", path.display()), e))
}

/// `write_bytes` of `/proc/self/io` (0 where the kernel does not keep it).
fn process_write_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("write_bytes:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// What every thread shares during a point.
struct Shared<'a> {
    pool: &'a BufferPool,
    log: FileHandle,
    data: FileHandle,
    log_end: AtomicU64,
    fsyncs: AtomicU64,
    opts: &'a RealOptions,
    mechanism: Mechanism,
    commit: Commit,
}

fn run_point(
    opts: &RealOptions,
    data_path: &Path,
    io: IoMode,
    mechanism: Mechanism,
    commit: Commit,
) -> Result<RealPoint, BenchError> {
    let pool_err = |what: &str| {
        let what = what.to_string();
        move |e| BenchError::pool(what, e)
    };
    let pool = BufferPool::builder()
        .capacity_frames(opts.frames)
        .io_mode(io)
        .build_with_storage(SlowSync::new(FileStorage, opts.sync_delay))
        .map_err(pool_err("cannot build the pool"))?;
    let data = pool.open(data_path).map_err(pool_err("open data"))?;
    let log = pool
        .create(opts.dir.join("log"))
        .map_err(pool_err("create log"))?;
    let shared = Shared {
        pool: &pool,
        log,
        data,
        log_end: AtomicU64::new(0),
        fsyncs: AtomicU64::new(0),
        opts,
        mechanism,
        commit,
    };
    let written_before = process_write_bytes();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(opts.seconds);
    let control = opts.control_sync.filter(|_| mechanism == Mechanism::None);
    let results: Vec<Result<(u64, Histogram<u64>), BenchError>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..opts.threads)
            .map(|t| {
                let shared = &shared;
                s.spawn(move || worker(shared, t as u64, deadline))
            })
            .collect();
        let syncer = control.map(|every| {
            let shared = &shared;
            s.spawn(move || control_syncs(shared, data_path, every, deadline))
        });
        if let Some(Ok(Err(e))) = syncer.map(|t| t.join()) {
            return vec![Err(e)];
        }
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(ErrorKind::WorkerPanicked.into()))
            })
            .collect()
    });
    let mut transactions = 0;
    let mut latency = new_histogram();
    for r in results {
        let (n, h) = r?;
        transactions += n;
        latency.add(&h).expect("histograms of one shape");
    }
    pool.sync_all().map_err(pool_err("final sync"))?;
    let seconds = start.elapsed().as_secs_f64();
    let device = process_write_bytes().saturating_sub(written_before);
    let stats = pool.stats();
    let ord = pool.ordering_stats();
    let per_txn = |x: f64| {
        if transactions > 0 {
            x / transactions as f64
        } else {
            0.0
        }
    };
    let waits = !latency.is_empty();
    let pct = |q: f64| {
        if waits {
            latency.value_at_quantile(q)
        } else {
            0
        }
    };
    let fsyncs = shared.fsyncs.load(Ordering::Relaxed);
    drop(pool);
    Ok(RealPoint {
        io: match io {
            IoMode::Buffered => "buffered",
            IoMode::Direct => "direct",
        },
        mechanism: mechanism.name(),
        commit,
        transactions,
        seconds,
        tps: crate::per_second(transactions, seconds),
        device_bytes_per_txn: per_txn(device as f64),
        pool_pages_per_txn: per_txn(stats.pages_written as f64),
        syncs: fsyncs + ord.syncs,
        levels: ord.levels,
        sync_delay_ms: opts.sync_delay.as_secs_f64() * 1e3,
        control_sync_ms: control.map_or(0.0, |d| d.as_secs_f64() * 1e3),
        duplicates: ord.duplicates_made,
        commit_p50_us: pct(0.5),
        commit_p99_us: pct(0.99),
        commit_p999_us: pct(0.999),
    })
}

/// The control's side thread (see [`RealOptions::control_sync`]): the log synced every
/// `every`, the data file once a second (through a second descriptor: a sync of the
/// file's pages in the kernel, not of the pool's dirty frames), counted with the fsyncs.
fn control_syncs(
    s: &Shared<'_>,
    data_path: &Path,
    every: Duration,
    deadline: Instant,
) -> Result<(), BenchError> {
    let data = std::fs::File::open(data_path)
        .map_err(|e| BenchError::io(format!("cannot open {}", data_path.display()), e))?;
    let mut last_data = Instant::now();
    while Instant::now() < deadline {
        std::thread::sleep(every);
        s.pool
            .fsync(s.log)
            .map_err(|e| BenchError::pool("control fsync log", e))?;
        s.fsyncs.fetch_add(1, Ordering::Relaxed);
        if last_data.elapsed() >= Duration::from_secs(1) {
            data.sync_all()
                .map_err(|e| BenchError::io(format!("cannot sync {}", data_path.display()), e))?;
            s.fsyncs.fetch_add(1, Ordering::Relaxed);
            last_data = Instant::now();
        }
    }
    Ok(())
}

fn new_histogram() -> Histogram<u64> {
    // 1 µs to 100 s, three significant digits.
    Histogram::new_with_bounds(1, 100_000_000, 3).expect("valid histogram bounds")
}

/// One thread's transactions until `deadline`: (count, commit latencies).
fn worker(
    s: &Shared<'_>,
    thread: u64,
    deadline: Instant,
) -> Result<(u64, Histogram<u64>), BenchError> {
    let o = s.opts;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(
        o.seed ^ (thread + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
    );
    let mut latency = new_histogram();
    let record = vec![thread as u8 + 1; o.log_bytes];
    let err = |what: &'static str| move |e| BenchError::pool(what, e);
    let mut done = 0;
    while Instant::now() < deadline {
        let began = Instant::now();
        let at = s.log_end.fetch_add(o.log_bytes as u64, Ordering::Relaxed);
        let mut commit: Option<WriteId> = None;
        let mut log_id = None;
        match s.mechanism {
            Mechanism::Graph => {
                log_id = Some(
                    s.pool
                        .graph_write(s.log, at, &record, &[])
                        .map_err(err("log graph_write"))?,
                );
                commit = log_id;
            }
            _ => s.pool.write(s.log, at, &record).map_err(err("log write"))?,
        }
        match s.mechanism {
            Mechanism::Fsync => {
                s.pool.fsync(s.log).map_err(err("fsync log"))?;
                s.fsyncs.fetch_add(1, Ordering::Relaxed);
                record_latency(&mut latency, began);
            }
            Mechanism::Barrier => commit = Some(s.pool.barrier().map_err(err("barrier"))?),
            Mechanism::None | Mechanism::Graph => {}
        }
        let mut byte = [0u8; 1];
        for _ in 0..o.pages_read {
            let off = rng.gen_range(0..o.data_pages) * 4096 + rng.gen_range(0..4096);
            s.pool
                .read(s.data, off, &mut byte)
                .map_err(err("data read"))?;
        }
        for _ in 0..o.pages_written {
            let off = rng.gen_range(0..o.data_pages) * 4096 + rng.gen_range(0..4096);
            let value = [rng.gen::<u8>()];
            match log_id {
                Some(l) => {
                    s.pool
                        .graph_write(s.data, off, &value, &[l])
                        .map_err(err("data graph_write"))?;
                }
                None => s
                    .pool
                    .write(s.data, off, &value)
                    .map_err(err("data write"))?,
            }
        }
        if let (Commit::Wait, Some(id)) = (s.commit, commit) {
            s.pool.wait_durable(id).map_err(err("wait_durable"))?;
            record_latency(&mut latency, began);
        }
        done += 1;
    }
    Ok((done, latency))
}

fn record_latency(h: &mut Histogram<u64>, began: Instant) {
    let us = began.elapsed().as_micros().clamp(1, 100_000_000) as u64;
    h.record(us).expect("clamped into the histogram's bounds");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny run of every variant over real files in a temporary folder: every point
    /// did transactions, waiting variants recorded latencies, and only fsync syncs
    /// without levels. (No timing is checked.)
    #[test]
    #[cfg_attr(miri, ignore = "real files")]
    fn every_variant_runs_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = RealOptions::new(dir.path().to_path_buf());
        o.io_modes = vec![IoMode::Buffered];
        o.seconds = 0.05;
        o.threads = 2;
        o.data_pages = 64;
        o.frames = 32;
        let points = run(&o).unwrap();
        assert_eq!(points.len(), VARIANTS.len());
        for p in &points {
            assert!(p.transactions > 0, "{p:?}");
            let waits = p.commit == Commit::Wait;
            assert_eq!(p.commit_p50_us > 0, waits, "{p:?}");
            match p.mechanism {
                "none" => assert_eq!((p.levels, p.syncs), (0, 0), "{p:?}"),
                "fsync" => assert_eq!(p.levels, 0, "{p:?}"),
                _ => assert!(p.levels > 0, "{p:?}"),
            }
        }
    }
}
