//! `bufcache bench pool`: the arguments and the printing. The benchmarks themselves (what
//! each measures and how it times) are `bench::pool` in the `bufcache-bench` crate.

use std::path::PathBuf;

use anyhow::Result;
use bench::pool::{IoKind, Plan, PoolBench, PoolBenchOptions, PoolRow, Scale, Scheme, MIB};
use clap::Args;

use crate::util;

/// Arguments of `bufcache bench pool`.
#[derive(Args, Debug)]
pub struct BenchPoolArgs {
    /// Benchmarks to run, comma-separated (default: all).
    #[arg(long = "bench", value_name = "B", value_delimiter = ',')]
    pub benches: Vec<PoolBench>,
    /// Schemes to measure, comma-separated (default: all). random-evict always measures
    /// raw `pread` too: it is what the pool's rate is a fraction of.
    #[arg(long = "scheme", value_name = "S", value_delimiter = ',')]
    pub schemes: Vec<Scheme>,
    /// I/O modes of random-evict and of the scan's `pread` baselines (default: both).
    #[arg(long = "io", value_name = "MODE", value_delimiter = ',')]
    pub ios: Vec<IoKind>,
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

impl BenchPoolArgs {
    /// The library's options: the flags as given, `--tiny` over `--quick` for the scale.
    fn options(&self) -> PoolBenchOptions {
        PoolBenchOptions {
            benches: self.benches.clone(),
            schemes: self.schemes.clone(),
            ios: self.ios.clone(),
            threads: self.threads.clone(),
            in_flight: self.in_flight.clone(),
            transfers: self.transfers.clone(),
            scale: if self.tiny {
                Scale::Tiny
            } else if self.quick {
                Scale::Quick
            } else {
                Scale::Full
            },
            seed: self.seed,
            repeat: self.repeat,
            duration_ms: self.duration_ms,
            cached_mib: self.cached_mib,
            direct_pool_mib: self.direct_pool_mib,
            buffered_pool_mib: self.buffered_pool_mib,
            scan_mib: self.scan_mib,
            read_ahead: self.read_ahead,
        }
    }
}

/// Run the benchmarks of `args`.
pub fn run(args: BenchPoolArgs) -> Result<()> {
    let plan = Plan::new(&args.options())?;
    let chatty = !args.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let rows = bench::pool::run(&plan, args.dir.as_deref(), |b| {
        if chatty {
            eprintln!("{} ...", b.name());
        }
    })?;
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

fn table(plan: &Plan, rows: &[PoolRow]) -> String {
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
            let scheme = match (r.read_ahead_pages, r.variant) {
                (Some(ra), _) => format!("{} ra={ra}", r.scheme),
                (None, Some(v)) => format!("{} {v}", r.scheme),
                (None, None) => r.scheme.to_string(),
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
