//! `bufcache bench pool`: the speed of the real buffer pool (`bufcache-pool`) against the
//! operating system's own ways of reading a file.
//!
//! Four benchmarks, each a family of measurements (one JSON object or table row each):
//!
//! - **xmf-read** — XMF's micro-benchmark (Braunstein, Riley, Wilkes 1989, §5): the cost
//!   of reading data that is already cached, for transfers of 4 B to 64 KiB at random
//!   aligned offsets of a file that fits in the cache. Schemes: the pool with the `Mapped`
//!   lookup (a per-file translation table, XMF's address arithmetic), the pool with the
//!   `Hashed` lookup, `pread` of the file from the OS page cache, and a copy out of an
//!   `mmap` of it. The first two isolate the lookup; the last two are what an application
//!   would use without a pool.
//! - **pin-hit** — pin and unpin a random resident page, nothing copied: the pool's hit
//!   path alone (vmcache's `fixS`/`unfixS`).
//! - **random-evict** — random 4 KiB reads over a file twice the pool, so about half the
//!   reads miss and every miss evicts. (a) `O_DIRECT` from a file dropped from the page
//!   cache, compared with plain `O_DIRECT` `pread` of the same file by the same number of
//!   threads in the same run (the device's rate at that many reads in flight); (b) buffered,
//!   from a file in the page cache, compared with buffered `pread`.
//! - **scan** — one sequential pass over a cold file in 4 KiB reads through a pool a
//!   quarter of its size, with and without read-ahead, next to `pread` with `O_DIRECT`
//!   (no read-ahead at all) and buffered `pread` (the kernel's read-ahead).
//!
//! How it measures: every worker thread runs its loop until a stop flag is raised after a
//! fixed duration, and counts its operations; a run's rate is the sum over threads of each
//! thread's operations over its own elapsed time. Each measurement is the best of
//! `--repeat` runs, because the machine may be shared and interference only ever slows a
//! run down. Random offsets come from a seeded SplitMix64 stream per thread, turned into a
//! slot number by a multiply-shift (a 64-bit division would cost as much as a pin-hit).
//! Data files live in a temporary directory (`--dir` chooses where it is made) and are
//! removed at the end.

use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::bench_os::{self, AlignedPage};
use crate::util;

/// Page size of every pool in these benchmarks (the pool's default, and the unit XMF,
/// vmcache and the OS page cache all use).
const PAGE_BYTES: usize = 4096;
const MIB: u64 = 1 << 20;

/// The benchmarks of `bufcache bench pool`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum PoolBench {
    /// Cost per read of cached data, by transfer size and scheme.
    XmfRead,
    /// Pin and unpin a random resident page.
    PinHit,
    /// Random 4 KiB reads over twice the pool: O_DIRECT and buffered.
    RandomEvict,
    /// Sequential scan bandwidth with and without read-ahead.
    Scan,
}

impl PoolBench {
    fn name(self) -> &'static str {
        match self {
            PoolBench::XmfRead => "xmf-read",
            PoolBench::PinHit => "pin-hit",
            PoolBench::RandomEvict => "random-evict",
            PoolBench::Scan => "scan",
        }
    }
}

/// The schemes `--scheme` can select.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    /// The pool with the per-file translation table.
    Mapped,
    /// The pool with the hash table.
    Hashed,
    /// `pread` without a pool.
    Pread,
    /// Copy from an `mmap` of the file (xmf-read only).
    Mmap,
}

/// The I/O modes `--io` can select.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum IoArg {
    /// `O_DIRECT`, from a file not in the OS page cache.
    Direct,
    /// Through the OS page cache.
    Buffered,
}

/// Arguments of `bufcache bench pool`.
#[derive(Args, Debug)]
pub struct BenchPoolArgs {
    /// Benchmarks to run, comma-separated (default: all).
    #[arg(long = "bench", value_name = "B", value_delimiter = ',')]
    pub benches: Vec<PoolBench>,
    /// Schemes to measure, comma-separated (default: all). random-evict always measures
    /// raw `pread` too: it is what the pool's rate is a fraction of.
    #[arg(long = "scheme", value_name = "S", value_delimiter = ',')]
    pub schemes: Vec<SchemeArg>,
    /// I/O modes of random-evict and of the scan's `pread` baselines (default: both).
    #[arg(long = "io", value_name = "MODE", value_delimiter = ',')]
    pub ios: Vec<IoArg>,
    /// Thread counts, comma-separated.
    #[arg(long, value_name = "N", value_delimiter = ',', default_value = "1,2")]
    pub threads: Vec<usize>,
    /// Reads in flight per thread in random-evict, comma-separated. 1: demand reads, one
    /// at a time. N > 1: each pool thread prefetches batches of 2N random pages (about
    /// half are resident, so about N reads go to the device in one submission) and then
    /// reads them; raw `pread` runs N threads per pool thread.
    #[arg(long, value_name = "N", value_delimiter = ',', default_value = "1,8")]
    pub in_flight: Vec<usize>,
    /// Transfer sizes of xmf-read in bytes, comma-separated.
    #[arg(
        long,
        value_name = "BYTES",
        value_delimiter = ',',
        default_value = "4,64,1024,4096,8192,65536"
    )]
    pub transfers: Vec<usize>,
    /// Small files and short runs: finishes in well under a minute.
    #[arg(long)]
    pub quick: bool,
    /// Minuscule files and runs, for tests of the command itself (numbers meaningless).
    #[arg(long, hide = true)]
    pub tiny: bool,
    /// One JSON object per measurement and line.
    #[arg(long)]
    pub json: bool,
    /// Directory in which the temporary data directory is made (default: the system's).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Seed of the random offsets.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Runs per measurement; the best is reported (default 3, 1 with --quick).
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    /// Length of one timed run in milliseconds (default 1000, 150 with --quick).
    #[arg(long, value_name = "MS")]
    pub duration_ms: Option<u64>,
    /// Size of the cached file of xmf-read and pin-hit, MiB (default 256, 32 with --quick).
    #[arg(long, value_name = "MIB")]
    pub cached_mib: Option<u64>,
    /// Pool size of random-evict with O_DIRECT, MiB; the file is twice that
    /// (default 64, 8 with --quick).
    #[arg(long, value_name = "MIB")]
    pub direct_pool_mib: Option<u64>,
    /// Pool size of random-evict buffered, MiB; the file is twice that
    /// (default 256, 32 with --quick).
    #[arg(long, value_name = "MIB")]
    pub buffered_pool_mib: Option<u64>,
    /// File size of scan, MiB; the pool is a quarter of it (default 256, 32 with --quick).
    #[arg(long, value_name = "MIB")]
    pub scan_mib: Option<u64>,
    /// Read-ahead depth in pages of the scan with read-ahead.
    #[arg(long, value_name = "PAGES", default_value_t = 32)]
    pub read_ahead: u32,
}

/// Everything a run needs, with the defaults of `--quick` / `--tiny` applied.
#[derive(Debug, Clone)]
struct Plan {
    benches: Vec<PoolBench>,
    schemes: Vec<SchemeArg>,
    ios: Vec<IoKind>,
    threads: Vec<usize>,
    in_flight: Vec<usize>,
    transfers: Vec<usize>,
    seed: u64,
    repeat: u32,
    duration: Duration,
    cached_bytes: u64,
    direct_pool_bytes: u64,
    buffered_pool_bytes: u64,
    scan_bytes: u64,
    read_ahead_pages: u32,
}

impl Plan {
    fn from_args(a: &BenchPoolArgs) -> Result<Plan> {
        // (repeat, duration ms, cached, direct pool, buffered pool, scan) per mode.
        let (repeat, ms, cached, direct, buffered, scan) = if a.tiny {
            (1, 10, MIB, MIB / 4, MIB / 4, MIB)
        } else if a.quick {
            (1, 150, 32 * MIB, 8 * MIB, 32 * MIB, 32 * MIB)
        } else {
            (3, 1000, 256 * MIB, 64 * MIB, 256 * MIB, 256 * MIB)
        };
        let plan = Plan {
            benches: if a.benches.is_empty() {
                PoolBench::value_variants().to_vec()
            } else {
                a.benches.clone()
            },
            schemes: if a.schemes.is_empty() {
                SchemeArg::value_variants().to_vec()
            } else {
                a.schemes.clone()
            },
            ios: if a.ios.is_empty() {
                vec![IoKind::Direct, IoKind::Buffered]
            } else {
                a.ios
                    .iter()
                    .map(|io| match io {
                        IoArg::Direct => IoKind::Direct,
                        IoArg::Buffered => IoKind::Buffered,
                    })
                    .collect()
            },
            threads: a.threads.clone(),
            in_flight: a.in_flight.clone(),
            transfers: a.transfers.clone(),
            seed: a.seed,
            repeat: a.repeat.unwrap_or(repeat),
            duration: Duration::from_millis(a.duration_ms.unwrap_or(ms)),
            cached_bytes: a.cached_mib.map_or(cached, |m| m * MIB),
            direct_pool_bytes: a.direct_pool_mib.map_or(direct, |m| m * MIB),
            buffered_pool_bytes: a.buffered_pool_mib.map_or(buffered, |m| m * MIB),
            scan_bytes: a.scan_mib.map_or(scan, |m| m * MIB),
            read_ahead_pages: a.read_ahead,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// The pool's lookup schemes selected by `--scheme`.
    fn lookups(&self) -> Vec<Lookup> {
        [
            (SchemeArg::Mapped, Lookup::Mapped),
            (SchemeArg::Hashed, Lookup::Hashed),
        ]
        .into_iter()
        .filter(|(s, _)| self.schemes.contains(s))
        .map(|(_, l)| l)
        .collect()
    }

    fn validate(&self) -> Result<()> {
        ensure!(self.repeat >= 1, "--repeat must be at least 1");
        ensure!(
            !self.threads.is_empty() && self.threads.iter().all(|&t| (1..=256).contains(&t)),
            "--threads must list thread counts from 1 to 256"
        );
        ensure!(
            !self.in_flight.is_empty() && self.in_flight.iter().all(|&d| (1..=64).contains(&d)),
            "--in-flight must list depths from 1 to 64"
        );
        for &t in &self.transfers {
            ensure!(
                t >= 1 && t as u64 <= self.cached_bytes,
                "transfer size {t} must be between 1 byte and the cached file ({} bytes)",
                self.cached_bytes
            );
        }
        for (what, bytes) in [
            ("--cached-mib", self.cached_bytes),
            ("--direct-pool-mib", self.direct_pool_bytes),
            ("--buffered-pool-mib", self.buffered_pool_bytes),
            ("--scan-mib", self.scan_bytes),
        ] {
            ensure!(
                bytes >= 4 * PAGE_BYTES as u64,
                "{what} must be at least 16 KiB"
            );
            // Terabytes of test files are a typo, not a benchmark.
            ensure!(bytes <= 1 << 40, "{what} is too large");
        }
        Ok(())
    }
}

/// One measurement: a JSON line of `--json`, a row of the table otherwise.
#[derive(Serialize, Debug, Clone)]
struct Row {
    bench: &'static str,
    /// mapped, hashed (the pool with that lookup), pread, mmap.
    scheme: &'static str,
    /// How the data reaches the reader: `cached` (resident before the run), `direct`
    /// (O_DIRECT, from the device), `buffered` (through the OS page cache).
    io: &'static str,
    transfer_bytes: u64,
    threads: usize,
    /// random-evict: reads in flight each thread asked for (`--in-flight`).
    #[serde(skip_serializing_if = "Option::is_none")]
    in_flight: Option<usize>,
    /// random-evict: device reads per read call the scheme actually issued (raw `pread`:
    /// one per thread; the pool: pages per prefetch submission).
    #[serde(skip_serializing_if = "Option::is_none")]
    reads_per_call: Option<f64>,
    /// Operations per second, all threads together.
    ops_per_s: f64,
    /// Wall time of one operation on one thread.
    ns_per_op: f64,
    bytes_per_s: f64,
    /// Bytes of file the operations are spread over.
    working_set_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pool_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_ahead_pages: Option<u32>,
    /// Fraction of the pool's page lookups that missed (random-evict).
    #[serde(skip_serializing_if = "Option::is_none")]
    miss_ratio: Option<f64>,
    /// Device (or page-cache) reads per second the scheme issued (random-evict).
    #[serde(skip_serializing_if = "Option::is_none")]
    reads_per_s: Option<f64>,
    /// The measurement `ratio` compares with, as `scheme/io`.
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio_to: Option<String>,
    /// This measurement over `ratio_to`: operations per second for xmf-read; for
    /// random-evict the median over runs of the pool's reads per second over raw `pread`'s
    /// in the run just before (how close the pool's miss path comes to the raw file).
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio: Option<f64>,
    /// random-evict: each run's ratio (pool reads/s over the raw reads/s of the run just
    /// before it); `ratio` is their median.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ratio_runs: Vec<f64>,
    /// Runs measured; the best is reported.
    runs: u32,
    seed: u64,
}

impl Row {
    fn new(
        bench: PoolBench,
        scheme: &'static str,
        io: &'static str,
        transfer_bytes: u64,
        threads: usize,
        m: Measured,
        plan: &Plan,
    ) -> Row {
        Row {
            bench: bench.name(),
            scheme,
            io,
            transfer_bytes,
            threads,
            in_flight: None,
            reads_per_call: m.reads_per_call,
            ops_per_s: m.ops_per_s,
            ns_per_op: if m.ops_per_s > 0.0 {
                threads as f64 * 1e9 / m.ops_per_s
            } else {
                f64::INFINITY
            },
            bytes_per_s: m.ops_per_s * transfer_bytes as f64,
            working_set_bytes: 0,
            pool_bytes: None,
            read_ahead_pages: None,
            miss_ratio: None,
            reads_per_s: None,
            ratio_to: None,
            ratio: None,
            ratio_runs: Vec::new(),
            runs: plan.repeat,
            seed: plan.seed,
        }
    }
}

/// Result of one timed run (or the best of several).
#[derive(Debug, Clone, Copy, Default)]
struct Measured {
    ops_per_s: f64,
    /// Device or page-cache reads per second, where the scheme can count them.
    reads_per_s: Option<f64>,
    miss_ratio: Option<f64>,
    reads_per_call: Option<f64>,
}

impl Measured {
    fn best(self, other: Measured) -> Measured {
        if other.ops_per_s > self.ops_per_s {
            other
        } else {
            self
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded stream, fast enough that drawing
/// an offset costs a few cycles next to the operation measured.
#[derive(Debug, Clone)]
struct SplitMix(u64);

impl SplitMix {
    fn new(seed: u64, stream: u64) -> SplitMix {
        SplitMix(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` by multiply-shift (Lemire): no division on the hot path. The
    /// bias, at most n / 2^64, is far below anything a benchmark could see.
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// Operations a worker does between two looks at the stop flag: few enough that a run
/// overshoots its duration by microseconds, many enough that the look costs nothing.
const OPS_PER_CHECK: u64 = 64;

/// Timed runs so far in this process: each run's workers draw from their own random
/// streams (run × 1024 + thread), so a run never replays the offsets of the run before
/// it, which would find exactly the pages that run left cached.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// Run `worker(stream, stop)` on `threads` threads for `duration`; each returns how many
/// operations it did. Rate = Σ ops_i / elapsed_i.
fn timed<W>(threads: usize, duration: Duration, worker: W) -> Result<f64>
where
    W: Fn(u64, &AtomicBool) -> Result<u64> + Sync,
{
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (stop, barrier, worker) = (&stop, &barrier, &worker);
                s.spawn(move || -> Result<(u64, Duration)> {
                    barrier.wait();
                    let t0 = Instant::now();
                    let r = worker(run * 1024 + i as u64, stop);
                    // An early error must still let the others stop.
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    Ok((r?, t0.elapsed()))
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        while t0.elapsed() < duration && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1).min(duration));
        }
        stop.store(true, Ordering::Relaxed);
        let mut rate = 0.0;
        for h in handles {
            let (ops, elapsed) = h
                .join()
                .map_err(|_| anyhow::anyhow!("a benchmark thread panicked"))??;
            rate += ops as f64 / elapsed.as_secs_f64().max(1e-9);
        }
        Ok(rate)
    })
}

/// Loop `op` until `stop`, checking the flag every [`OPS_PER_CHECK`] operations.
#[inline]
fn until_stopped(stop: &AtomicBool, mut op: impl FnMut() -> Result<()>) -> Result<u64> {
    let mut ops = 0;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..OPS_PER_CHECK {
            op()?;
        }
        ops += OPS_PER_CHECK;
    }
    Ok(ops)
}

/// Best of `plan.repeat` runs of `run`.
fn best_of(plan: &Plan, mut run: impl FnMut() -> Result<Measured>) -> Result<Measured> {
    let mut best = run()?;
    for _ in 1..plan.repeat {
        best = best.best(run()?);
    }
    Ok(best)
}

/// Something that copies cached file data into a buffer: the pool, `pread`, `mmap`.
trait CachedRead: Sync {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
}

/// `pread` on a file the OS has cached.
struct Pread(File);

impl CachedRead for Pread {
    #[inline]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.0.read_exact_at(buf, offset).context("pread failed")
    }
}

/// Copy out of a mapping of the file.
struct MmapCopy(memmap2::Mmap);

impl CachedRead for MmapCopy {
    #[inline]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let start = offset as usize;
        let src = self
            .0
            .get(start..start + buf.len())
            .context("read past the end of the mapping")?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// Random reads of `transfer` bytes at offsets aligned to `transfer` within `file_bytes`.
fn random_reads<R: CachedRead>(
    reader: &R,
    file_bytes: u64,
    transfer: usize,
    threads: usize,
    plan: &Plan,
) -> Result<f64> {
    let slots = file_bytes / transfer as u64;
    timed(threads, plan.duration, |i, stop| {
        let mut rng = SplitMix::new(plan.seed, i);
        let mut buf = vec![0u8; transfer];
        until_stopped(stop, || {
            let offset = rng.below(slots) * transfer as u64;
            reader.read_at(offset, &mut buf)?;
            black_box(&buf);
            Ok(())
        })
    })
}

/// The data files of one invocation, in a temporary directory removed on drop.
struct DataDir {
    dir: tempfile::TempDir,
}

impl DataDir {
    fn new(parent: Option<&Path>) -> Result<DataDir> {
        let mut b = tempfile::Builder::new();
        b.prefix("bufcache-bench-pool-");
        let dir = match parent {
            Some(p) => b
                .tempdir_in(p)
                .with_context(|| format!("cannot make a directory in {}", p.display()))?,
            None => b.tempdir().context("cannot make a temporary directory")?,
        };
        Ok(DataDir { dir })
    }

    /// A file of `bytes` bytes whose every 8-byte word holds its own offset (so a wrong
    /// page would be visible), written, synced and closed.
    fn file(&self, name: &str, bytes: u64) -> Result<PathBuf> {
        let path = self.dir.path().join(name);
        let mut f = std::io::BufWriter::with_capacity(
            MIB as usize,
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?,
        );
        let mut offset = 0u64;
        while offset < bytes {
            f.write_all(&offset.to_le_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            offset += 8;
        }
        let f = f
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {}", path.display()))?;
        f.sync_all()
            .with_context(|| format!("cannot sync {}", path.display()))?;
        Ok(path)
    }
}

/// Read all of `path` through the OS page cache, so that buffered reads of it hit.
fn warm_page_cache(path: &Path) -> Result<()> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    std::io::copy(&mut f, &mut std::io::sink())
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(())
}

/// Run the benchmarks of `args`.
pub fn run(args: BenchPoolArgs) -> Result<()> {
    let plan = Plan::from_args(&args)?;
    let data = DataDir::new(args.dir.as_deref())?;
    let chatty = !args.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut rows = Vec::new();
    for &bench in &plan.benches {
        if chatty {
            eprintln!("{} ...", bench.name());
        }
        match bench {
            PoolBench::XmfRead => xmf_read(&plan, &data, &mut rows)?,
            PoolBench::PinHit => pin_hit(&plan, &data, &mut rows)?,
            PoolBench::RandomEvict => random_evict(&plan, &data, &mut rows)?,
            PoolBench::Scan => scan(&plan, &data, &mut rows)?,
        }
    }
    let mut out = String::new();
    if args.json {
        for r in &rows {
            out.push_str(&serde_json::to_string(r)?);
            out.push('\n');
        }
    } else {
        out.push_str(&table(&plan, &rows));
    }
    util::emit(&out)
}

fn table(plan: &Plan, rows: &[Row]) -> String {
    let header: Vec<String> = [
        "bench",
        "scheme",
        "io",
        "transfer",
        "threads",
        "in flight",
        "M ops/s",
        "ns/op",
        "MiB/s",
        "ratio",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let scheme = match r.read_ahead_pages {
                Some(ra) => format!("{} ra={ra}", r.scheme),
                None => r.scheme.to_string(),
            };
            vec![
                r.bench.to_string(),
                scheme,
                r.io.to_string(),
                r.transfer_bytes.to_string(),
                r.threads.to_string(),
                match (r.in_flight, r.reads_per_call) {
                    (Some(d), Some(got)) if d > 1 => format!("{d} ({got:.1})"),
                    (Some(d), _) => d.to_string(),
                    _ => String::new(),
                },
                format!("{:.3}", r.ops_per_s / 1e6),
                format!("{:.1}", r.ns_per_op),
                format!("{:.1}", r.bytes_per_s / MIB as f64),
                match (&r.ratio, &r.ratio_to) {
                    (Some(x), Some(to)) => format!("{x:.2} of {to}"),
                    _ => String::new(),
                },
            ]
        })
        .collect();
    format!(
        "best of {} run(s) of {} ms each, seed {}\n\n{}",
        plan.repeat,
        plan.duration.as_millis(),
        plan.seed,
        util::table(&header, &body)
    )
}

/// xmf-read: every transfer size and thread count for each scheme, then `ratio` of the
/// pool schemes to `pread` at the same transfer and threads.
fn xmf_read(plan: &Plan, data: &DataDir, rows: &mut Vec<Row>) -> Result<()> {
    let bytes = plan.cached_bytes;
    let path = data.file("cached.dat", bytes)?;
    warm_page_cache(&path)?;
    let first = rows.len();
    let mut record = |scheme, reader: &dyn Fn(usize, usize) -> Result<f64>| -> Result<()> {
        for &transfer in &plan.transfers {
            for &threads in &plan.threads {
                let m = best_of(plan, || {
                    Ok(Measured {
                        ops_per_s: reader(transfer, threads)?,
                        ..Measured::default()
                    })
                })?;
                let mut row = Row::new(
                    PoolBench::XmfRead,
                    scheme,
                    "cached",
                    transfer as u64,
                    threads,
                    m,
                    plan,
                );
                row.working_set_bytes = bytes;
                rows.push(row);
            }
        }
        Ok(())
    };
    for lookup in plan.lookups() {
        let reader = PoolReader::cached(&path, bytes, lookup)?;
        record(lookup.scheme(), &|t, n| {
            random_reads(&reader, bytes, t, n, plan)
        })?;
    }
    let file = File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    if plan.schemes.contains(&SchemeArg::Pread) {
        let pread = Pread(
            file.try_clone()
                .context("cannot duplicate the file handle")?,
        );
        record("pread", &|t, n| random_reads(&pread, bytes, t, n, plan))?;
    }
    if plan.schemes.contains(&SchemeArg::Mmap) {
        let map = MmapCopy(bench_os::map_populated(&file)?);
        record("mmap", &|t, n| random_reads(&map, bytes, t, n, plan))?;
    }
    // Every scheme over pread at the same transfer and thread count.
    let base: Vec<Row> = rows[first..]
        .iter()
        .filter(|r| r.scheme == "pread")
        .cloned()
        .collect();
    for r in rows[first..].iter_mut().filter(|r| r.scheme != "pread") {
        if let Some(b) = base
            .iter()
            .find(|b| b.transfer_bytes == r.transfer_bytes && b.threads == r.threads)
        {
            r.ratio_to = Some("pread/cached".to_string());
            r.ratio = Some(r.ops_per_s / b.ops_per_s);
        }
    }
    Ok(())
}

/// pin-hit: pin and unpin random pages of a resident file, Mapped and Hashed.
fn pin_hit(plan: &Plan, data: &DataDir, rows: &mut Vec<Row>) -> Result<()> {
    let bytes = plan.cached_bytes;
    let path = data.file("pinned.dat", bytes)?;
    warm_page_cache(&path)?;
    let pages = bytes / PAGE_BYTES as u64;
    for lookup in plan.lookups() {
        let reader = PoolReader::cached(&path, bytes, lookup)?;
        for &threads in &plan.threads {
            let m = best_of(plan, || {
                let ops_per_s = timed(threads, plan.duration, |i, stop| {
                    let mut rng = SplitMix::new(plan.seed, i);
                    until_stopped(stop, || reader.pin_unpin(rng.below(pages)))
                })?;
                Ok(Measured {
                    ops_per_s,
                    ..Measured::default()
                })
            })?;
            let mut row = Row::new(
                PoolBench::PinHit,
                lookup.scheme(),
                "cached",
                PAGE_BYTES as u64,
                threads,
                m,
                plan,
            );
            // Nothing is copied: bytes/s would mislead.
            row.bytes_per_s = 0.0;
            row.working_set_bytes = bytes;
            row.pool_bytes = Some(reader.pool_bytes);
            rows.push(row);
        }
    }
    Ok(())
}

/// random-evict: (a) O_DIRECT, (b) buffered; each pool run next to raw `pread` with the
/// same I/O mode, thread count and file, interleaved run by run so both see the same load.
fn random_evict(plan: &Plan, data: &DataDir, rows: &mut Vec<Row>) -> Result<()> {
    for &io in &plan.ios {
        let pool_bytes = match io {
            IoKind::Direct => plan.direct_pool_bytes,
            IoKind::Buffered => plan.buffered_pool_bytes,
        };
        let pool_bytes = pool_bytes / PAGE_BYTES as u64 * PAGE_BYTES as u64;
        let file_bytes = 2 * pool_bytes;
        let path = data.file(&format!("evict-{}.dat", io.name()), file_bytes)?;
        match io {
            IoKind::Direct => bench_os::drop_from_page_cache(&path)?,
            IoKind::Buffered => warm_page_cache(&path)?,
        }
        let raw = RawReader::open(&path, io)?;
        for &threads in &plan.threads {
            for &depth in &plan.in_flight {
                evict_point(plan, &path, &raw, (io, pool_bytes), threads, depth, rows)?;
            }
        }
    }
    Ok(())
}

/// One random-evict point: `threads` pool threads at `depth` reads in flight each, next
/// to raw `pread` on `threads × depth` threads.
fn evict_point(
    plan: &Plan,
    path: &Path,
    raw: &RawReader,
    (io, pool_bytes): (IoKind, u64),
    threads: usize,
    depth: usize,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let file_bytes = 2 * pool_bytes;
    let raw_threads = threads * depth;
    let mut raw_best = Measured::default();
    let lookups = plan.lookups();
    let mut pool_best = vec![Measured::default(); lookups.len()];
    // The device's rate drifts from run to run by more than the effect measured, so each
    // pool run is compared with the raw run right before it, and the reported ratio is
    // the median of those paired ratios.
    let mut paired: Vec<Vec<f64>> = vec![Vec::new(); lookups.len()];
    for _ in 0..plan.repeat {
        let ops = random_pages(raw, file_bytes, raw_threads, plan)?;
        raw_best = raw_best.best(Measured {
            ops_per_s: ops,
            reads_per_s: Some(ops),
            miss_ratio: None,
            reads_per_call: Some(1.0),
        });
        for (k, &lookup) in lookups.iter().enumerate() {
            let m = PoolReader::evicting(path, pool_bytes, lookup, io)?
                .measure_random(file_bytes, threads, depth, plan)?;
            if let Some(reads) = m.reads_per_s {
                paired[k].push(reads / ops);
            }
            pool_best[k] = pool_best[k].best(m);
        }
    }
    let mut raw_row = Row::new(
        PoolBench::RandomEvict,
        "pread",
        io.name(),
        PAGE_BYTES as u64,
        raw_threads,
        raw_best,
        plan,
    );
    raw_row.working_set_bytes = file_bytes;
    raw_row.reads_per_s = raw_best.reads_per_s;
    raw_row.in_flight = Some(1);
    for (k, &lookup) in lookups.iter().enumerate() {
        let m = pool_best[k];
        let mut row = Row::new(
            PoolBench::RandomEvict,
            lookup.scheme(),
            io.name(),
            PAGE_BYTES as u64,
            threads,
            m,
            plan,
        );
        row.in_flight = Some(depth);
        row.working_set_bytes = file_bytes;
        row.pool_bytes = Some(pool_bytes);
        row.miss_ratio = m.miss_ratio;
        row.reads_per_s = m.reads_per_s;
        row.ratio_to = Some(format!("pread/{}", io.name()));
        row.ratio = median(&paired[k]);
        row.ratio_runs = paired[k].clone();
        rows.push(row);
    }
    rows.push(raw_row);
    Ok(())
}

/// The median of `xs` (the mean of the middle two for an even count); `None` when empty.
fn median(xs: &[f64]) -> Option<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Random page reads straight from the file (no pool), `threads` at a time.
fn random_pages(raw: &RawReader, file_bytes: u64, threads: usize, plan: &Plan) -> Result<f64> {
    let pages = file_bytes / PAGE_BYTES as u64;
    timed(threads, plan.duration, |i, stop| {
        let mut rng = SplitMix::new(plan.seed, i);
        let mut page = AlignedPage::boxed();
        until_stopped(stop, || {
            raw.read_page(rng.below(pages), &mut page)?;
            black_box(&page.0);
            Ok(())
        })
    })
}

/// How a benchmark reads its file from the OS.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum IoKind {
    Direct,
    Buffered,
}

impl IoKind {
    fn name(self) -> &'static str {
        match self {
            IoKind::Direct => "direct",
            IoKind::Buffered => "buffered",
        }
    }
}

/// A file opened for `pread`, with `O_DIRECT` or without.
struct RawReader {
    file: File,
}

impl RawReader {
    fn open(path: &Path, io: IoKind) -> Result<RawReader> {
        let file = match io {
            IoKind::Direct => bench_os::open_direct(path)?,
            IoKind::Buffered => {
                File::open(path).with_context(|| format!("cannot open {}", path.display()))?
            }
        };
        Ok(RawReader { file })
    }

    #[inline]
    fn read_page(&self, page: u64, buf: &mut AlignedPage) -> Result<()> {
        self.file
            .read_exact_at(&mut buf.0, page * PAGE_BYTES as u64)
            .with_context(|| format!("pread of page {page} failed"))
    }
}

/// scan: one cold sequential pass in 4 KiB reads.
fn scan(plan: &Plan, data: &DataDir, rows: &mut Vec<Row>) -> Result<()> {
    let file_bytes = plan.scan_bytes / PAGE_BYTES as u64 * PAGE_BYTES as u64;
    let pool_bytes = (file_bytes / 4).max(4 * PAGE_BYTES as u64);
    let path = data.file("scan.dat", file_bytes)?;
    let pages = file_bytes / PAGE_BYTES as u64;
    let mut push = |scheme: &'static str, io: IoKind, ra: Option<u32>, pool: bool, m: Measured| {
        let mut row = Row::new(
            PoolBench::Scan,
            scheme,
            io.name(),
            PAGE_BYTES as u64,
            1,
            m,
            plan,
        );
        row.working_set_bytes = file_bytes;
        row.read_ahead_pages = ra;
        row.pool_bytes = pool.then_some(pool_bytes);
        rows.push(row);
    };
    for ra in [0, plan.read_ahead_pages] {
        for lookup in plan.lookups() {
            let m = best_of(plan, || {
                bench_os::drop_from_page_cache(&path)?;
                let reader = PoolReader::scanning(&path, pool_bytes, lookup, ra)?;
                timed_pass(pages, |p, buf| reader.read_page(p, buf))
            })?;
            push(lookup.scheme(), IoKind::Direct, Some(ra), true, m);
        }
    }
    let pread = plan.schemes.contains(&SchemeArg::Pread);
    for &io in plan.ios.iter().filter(|_| pread) {
        let m = best_of(plan, || {
            bench_os::drop_from_page_cache(&path)?;
            let raw = RawReader::open(&path, io)?;
            let mut page = AlignedPage::boxed();
            timed_pass(pages, |p, _| raw.read_page(p, &mut page))
        })?;
        push("pread", io, None, false, m);
    }
    Ok(())
}

/// Time one sequential pass over `pages` pages.
fn timed_pass(
    pages: u64,
    mut read: impl FnMut(u64, &mut [u8; PAGE_BYTES]) -> Result<()>,
) -> Result<Measured> {
    let mut buf = [0u8; PAGE_BYTES];
    let t0 = Instant::now();
    for p in 0..pages {
        read(p, &mut buf)?;
        black_box(&buf);
    }
    let secs = t0.elapsed().as_secs_f64().max(1e-9);
    Ok(Measured {
        ops_per_s: pages as f64 / secs,
        ..Measured::default()
    })
}

// ---------------------------------------------------------------------------------------
// The pool's side.

/// The pool's two lookup schemes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Lookup {
    Mapped,
    Hashed,
}

impl Lookup {
    fn scheme(self) -> &'static str {
        match self {
            Lookup::Mapped => "mapped",
            Lookup::Hashed => "hashed",
        }
    }

    fn to_pool(self) -> pool::Lookup {
        match self {
            Lookup::Mapped => pool::Lookup::Mapped,
            Lookup::Hashed => pool::Lookup::Hashed,
        }
    }
}

/// A pool with one open file.
struct PoolReader {
    pool: Arc<pool::BufferPool>,
    file: pool::FileHandle,
    pool_bytes: u64,
}

impl PoolReader {
    fn build(
        path: &Path,
        capacity_frames: usize,
        lookup: Lookup,
        io: IoKind,
        read_ahead: u32,
    ) -> Result<PoolReader> {
        let pool = pool::BufferPool::builder()
            .capacity_frames(capacity_frames)
            .page_size(PAGE_BYTES)
            .policy("clock")
            .lookup(lookup.to_pool())
            .read_ahead(read_ahead as usize)
            .io_mode(match io {
                IoKind::Direct => pool::IoMode::Direct,
                IoKind::Buffered => pool::IoMode::Buffered,
            })
            .build()
            .context("cannot build the pool")?;
        let file = pool
            .open(path)
            .with_context(|| format!("pool cannot open {}", path.display()))?;
        Ok(PoolReader {
            pool: Arc::new(pool),
            file,
            pool_bytes: capacity_frames as u64 * PAGE_BYTES as u64,
        })
    }

    /// A pool that holds all of `path` (plus slack, so that no background freeing of
    /// frames can touch it), with every page loaded.
    fn cached(path: &Path, file_bytes: u64, lookup: Lookup) -> Result<PoolReader> {
        let pages = file_bytes.div_ceil(PAGE_BYTES as u64) as usize;
        let r = PoolReader::build(path, pages + pages / 4 + 64, lookup, IoKind::Buffered, 0)?;
        let mut buf = [0u8; PAGE_BYTES];
        for p in 0..pages as u64 {
            r.read_page(p, &mut buf)?;
        }
        Ok(r)
    }

    /// A pool of `pool_bytes` over `path`, filled with its first pages.
    fn evicting(path: &Path, pool_bytes: u64, lookup: Lookup, io: IoKind) -> Result<PoolReader> {
        let frames = (pool_bytes / PAGE_BYTES as u64) as usize;
        let r = PoolReader::build(path, frames, lookup, io, 0)?;
        let mut buf = [0u8; PAGE_BYTES];
        for p in 0..frames as u64 {
            r.read_page(p, &mut buf)?;
        }
        Ok(r)
    }

    /// An empty pool for a scan.
    fn scanning(
        path: &Path,
        pool_bytes: u64,
        lookup: Lookup,
        read_ahead: u32,
    ) -> Result<PoolReader> {
        let frames = (pool_bytes / PAGE_BYTES as u64) as usize;
        PoolReader::build(path, frames, lookup, IoKind::Direct, read_ahead)
    }

    #[inline]
    fn read_page(&self, page: u64, buf: &mut [u8; PAGE_BYTES]) -> Result<()> {
        self.read_at(page * PAGE_BYTES as u64, buf)
    }

    #[inline]
    fn pin_unpin(&self, page: u64) -> Result<()> {
        let guard = self.pool.pin(self.file, page).context("pin failed")?;
        black_box(&guard);
        Ok(())
    }

    /// Random page reads over `file_bytes`, `depth` reads in flight per thread (see
    /// `--in-flight`); misses and reads counted by the pool.
    fn measure_random(
        &self,
        file_bytes: u64,
        threads: usize,
        depth: usize,
        plan: &Plan,
    ) -> Result<Measured> {
        let before = self.pool.stats();
        let t0 = Instant::now();
        let ops_per_s = if depth == 1 {
            random_reads(self, file_bytes, PAGE_BYTES, threads, plan)?
        } else {
            self.prefetched_reads(file_bytes, threads, 2 * depth, plan)?
        };
        let secs = t0.elapsed().as_secs_f64();
        let after = self.pool.stats();
        let lookups = (after.misses - before.misses) + (after.hits - before.hits);
        let pages_read = after.pages_read - before.pages_read;
        let calls = after.read_calls - before.read_calls;
        Ok(Measured {
            ops_per_s,
            reads_per_s: Some(pages_read as f64 / secs),
            miss_ratio: (lookups > 0).then(|| pages_read as f64 / lookups as f64),
            reads_per_call: (calls > 0).then(|| pages_read as f64 / calls as f64),
        })
    }

    /// Batches of `batch` random pages: prefetch them (the misses' reads in flight
    /// together), then read each.
    fn prefetched_reads(
        &self,
        file_bytes: u64,
        threads: usize,
        batch: usize,
        plan: &Plan,
    ) -> Result<f64> {
        let pages = file_bytes / PAGE_BYTES as u64;
        timed(threads, plan.duration, |i, stop| {
            let mut rng = SplitMix::new(plan.seed, i);
            let mut list = vec![0u64; batch];
            let mut buf = [0u8; PAGE_BYTES];
            let batches = until_stopped(stop, || {
                list.iter_mut().for_each(|p| *p = rng.below(pages));
                self.pool
                    .prefetch(self.file, &list)
                    .context("prefetch failed")?;
                for &p in &list {
                    self.read_page(p, &mut buf)?;
                    black_box(&buf);
                }
                Ok(())
            })?;
            Ok(batches * batch as u64)
        })
    }
}

impl CachedRead for PoolReader {
    #[inline]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let n = self
            .pool
            .read(self.file, offset, buf)
            .context("pool read failed")?;
        if n != buf.len() {
            bail!("short pool read at {offset}: {n} of {} bytes", buf.len());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (from the published reference code).
        let mut r = SplitMix(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SplitMix::new(7, 3);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let x = r.below(10);
            assert!(x < 10);
            seen[x as usize] += 1;
        }
        // Each bucket expects 1000; 800 is over 6 standard deviations away.
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
    }

    #[test]
    fn timed_counts_every_operation_of_every_thread() {
        let counter = std::sync::atomic::AtomicU64::new(0);
        let rate = timed(2, Duration::from_millis(20), |_, stop| {
            until_stopped(stop, || {
                counter.fetch_add(1, Ordering::Relaxed);
                Ok(())
            })
        })
        .unwrap();
        let total = counter.load(Ordering::Relaxed);
        assert!(total > 0 && total.is_multiple_of(OPS_PER_CHECK));
        assert!(rate > 0.0);
    }

    #[test]
    fn a_worker_error_stops_the_run_and_is_returned() {
        let err = timed(2, Duration::from_secs(3600), |i, stop| {
            if i % 1024 == 1 {
                bail!("boom");
            }
            until_stopped(stop, || Ok(()))
        })
        .unwrap_err();
        assert!(err.to_string().contains("boom"));
    }

    #[test]
    fn data_file_words_hold_their_offsets() {
        let d = DataDir::new(None).unwrap();
        let p = d.file("x", 3 * 4096).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len(), 3 * 4096);
        for (i, w) in bytes.chunks(8).enumerate() {
            assert_eq!(u64::from_le_bytes(w.try_into().unwrap()), i as u64 * 8);
        }
    }

    #[test]
    fn mmap_and_pread_read_the_same_bytes() {
        let d = DataDir::new(None).unwrap();
        let p = d.file("x", 8 * 4096).unwrap();
        let f = File::open(&p).unwrap();
        let map = MmapCopy(bench_os::map_populated(&f).unwrap());
        let pread = Pread(f);
        let (mut a, mut b) = (vec![0u8; 64], vec![0u8; 64]);
        map.read_at(4096 + 64, &mut a).unwrap();
        pread.read_at(4096 + 64, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(u64::from_le_bytes(a[..8].try_into().unwrap()), 4096 + 64);
        assert!(map.read_at(8 * 4096 - 8, &mut a).is_err());
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[0.7]), Some(0.7));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn plan_rejects_bad_sizes() {
        let base = Plan {
            benches: vec![],
            schemes: vec![],
            ios: vec![],
            threads: vec![1],
            in_flight: vec![1, 8],
            transfers: vec![4],
            seed: 1,
            repeat: 1,
            duration: Duration::from_millis(1),
            cached_bytes: MIB,
            direct_pool_bytes: MIB,
            buffered_pool_bytes: MIB,
            scan_bytes: MIB,
            read_ahead_pages: 0,
        };
        assert!(base.validate().is_ok());
        let mut p = base.clone();
        p.transfers = vec![2 * MIB as usize];
        assert!(p.validate().is_err());
        let mut p = base.clone();
        p.threads = vec![0];
        assert!(p.validate().is_err());
        let mut p = base.clone();
        p.in_flight = vec![65];
        assert!(p.validate().is_err());
        let mut p = base.clone();
        p.scan_bytes = 4096;
        assert!(p.validate().is_err());
        let mut p = base;
        p.repeat = 0;
        assert!(p.validate().is_err());
    }
}
