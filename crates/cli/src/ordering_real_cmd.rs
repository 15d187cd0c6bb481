//! `bufcache experiment burnett-ordering-real`: the real-file half of Burnett ch.4 — the
//! TPC-B-like transactions through the pool over real files, with no ordering, `fsync`
//! per transaction, barriers and graphs (`bench::ordering` does the work).

use std::path::PathBuf;

use anyhow::{Context, Result};
use bench::ordering::{self, Commit, RealOptions, RealPoint};
use clap::{Args, ValueEnum};
use pool::IoMode;
use sim::des::tpcb::Mechanism;

use crate::experiment_cmd::{json_lines, prepare, write_csv};
use crate::util;

/// I/O modes on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Io {
    /// Through the OS page cache.
    Buffered,
    /// `O_DIRECT`: the pool's frames are the only cache.
    Direct,
}

/// The experiment's variants on the command line (mechanism and whether commits wait).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Variant {
    /// No ordering.
    None,
    /// `fsync` of the log per transaction.
    Fsync,
    /// Barriers, nobody waits.
    BarrierAsync,
    /// Barriers, each commit waits.
    BarrierWait,
    /// Asynchronous graphs, nobody waits.
    GraphAsync,
    /// Graphs, each commit waits.
    GraphWait,
}

impl Variant {
    fn to_bench(self) -> (Mechanism, Commit) {
        match self {
            Variant::None => (Mechanism::None, Commit::Async),
            Variant::Fsync => (Mechanism::Fsync, Commit::Wait),
            Variant::BarrierAsync => (Mechanism::Barrier, Commit::Async),
            Variant::BarrierWait => (Mechanism::Barrier, Commit::Wait),
            Variant::GraphAsync => (Mechanism::Graph, Commit::Async),
            Variant::GraphWait => (Mechanism::Graph, Commit::Wait),
        }
    }
}

/// Options of `burnett-ordering-real`.
#[derive(Args, Debug)]
pub struct RealArgs {
    /// Folder for the CSV (created if missing).
    #[arg(long, value_name = "DIR", default_value = "bufcache-results")]
    pub out: PathBuf,
    /// Print one JSON object per point instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Where the data and log files go (a fresh temporary folder inside it, removed at the
    /// end). Must be a real file system: tmpfs refuses `O_DIRECT` and makes `fsync` free.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// I/O modes to run.
    #[arg(long, value_delimiter = ',', default_values = ["buffered", "direct"])]
    pub io: Vec<Io>,
    /// Variants to run in each I/O mode (all six by default); one alone lets a profiler or
    /// `/usr/bin/time` see that variant's cost.
    #[arg(long, value_delimiter = ',', default_values = ["none", "fsync", "barrier-async",
        "barrier-wait", "graph-async", "graph-wait"])]
    pub variants: Vec<Variant>,
    /// Seconds each point runs (before its final sync).
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Threads running transactions.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Size of the data file in MiB (the thesis's 615 MB scaled down to run quickly).
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub data_mib: u64,
    /// Size of the pool in MiB (a quarter of the data by default, so misses evict).
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    pub pool_mib: u64,
    /// Seed of the offsets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Modeled latency in milliseconds added to every sync, for storage whose flushes
    /// cost what a real disk's cache flush costs (a fast virtual disk syncs in well under
    /// a millisecond). Only the time changes; the output's `sync_delay_ms` says it was used.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub sync_delay_ms: f64,
    /// A control for `none`: a side thread fsyncs the log every MS milliseconds and the
    /// data file once a second, the syncs asynchronous graphs issue, with no ordering
    /// bookkeeping (to tell the syncs' own cost from the pool's). 0: off.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub control_sync_ms: f64,
}

/// Run it.
pub fn run(a: RealArgs) -> Result<()> {
    anyhow::ensure!(
        a.seconds > 0.0 && a.seconds <= 3600.0,
        "--seconds must be in (0, 3600], not {}",
        a.seconds
    );
    anyhow::ensure!(
        (1..=256).contains(&a.threads),
        "--threads must be 1 to 256, not {}",
        a.threads
    );
    anyhow::ensure!(
        (1..=1 << 20).contains(&a.data_mib) && (1..=1 << 20).contains(&a.pool_mib),
        "--data-mib and --pool-mib must be 1 to 1048576"
    );
    anyhow::ensure!(
        (0.0..=10_000.0).contains(&a.sync_delay_ms),
        "--sync-delay-ms must be 0 to 10000, not {}",
        a.sync_delay_ms
    );
    anyhow::ensure!(
        (0.0..=60_000.0).contains(&a.control_sync_ms),
        "--control-sync-ms must be 0 to 60000, not {}",
        a.control_sync_ms
    );
    util::ensure_fits_in_memory(a.pool_mib << 20, "the pool")?;
    prepare(&a.out)?;
    let tmp = tempfile::Builder::new()
        .prefix("bufcache-ordering-")
        .tempdir_in(&a.dir)
        .with_context(|| format!("creating a temporary folder in {}", a.dir.display()))?;
    let mut opts = RealOptions::new(tmp.path().to_path_buf());
    opts.io_modes =
        a.io.iter()
            .map(|io| match io {
                Io::Buffered => IoMode::Buffered,
                Io::Direct => IoMode::Direct,
            })
            .collect();
    opts.variants = a.variants.iter().map(|v| v.to_bench()).collect();
    opts.data_pages = a.data_mib * 256;
    opts.frames = (a.pool_mib * 256) as usize;
    opts.seconds = a.seconds;
    opts.threads = a.threads;
    opts.seed = a.seed;
    opts.sync_delay = std::time::Duration::from_secs_f64(a.sync_delay_ms / 1e3);
    opts.control_sync = (a.control_sync_ms > 0.0)
        .then(|| std::time::Duration::from_secs_f64(a.control_sync_ms / 1e3));
    let points = ordering::run(&opts).context("running the transactions")?;
    let csv = a.out.join("burnett-ordering-real.csv");
    write_csv(&csv, &points)?;
    if a.json {
        return util::emit(&json_lines(&points)?);
    }
    let mut out = table(&points);
    if a.sync_delay_ms > 0.0 {
        out.push_str(&format!(
            "\nevery sync was charged a modeled {} ms on top of its real cost (--sync-delay-ms)\n",
            a.sync_delay_ms
        ));
    }
    out.push_str(&format!("\nfiles:\n  {}\n", csv.display()));
    util::emit(&out)
}

fn table(points: &[RealPoint]) -> String {
    let header: Vec<String> = [
        "io",
        "mechanism",
        "commit",
        "txn/s",
        "KiB/txn",
        "pages/txn",
        "syncs",
        "levels",
        "dups",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            vec![
                p.io.to_string(),
                p.mechanism.to_string(),
                format!("{:?}", p.commit).to_lowercase(),
                format!("{:.0}", p.tps),
                format!("{:.1}", p.device_bytes_per_txn / 1024.0),
                format!("{:.2}", p.pool_pages_per_txn),
                p.syncs.to_string(),
                p.levels.to_string(),
                p.duplicates.to_string(),
                p.commit_p50_us.to_string(),
                p.commit_p99_us.to_string(),
                p.commit_p999_us.to_string(),
            ]
        })
        .collect();
    util::table(&header, &rows)
}
