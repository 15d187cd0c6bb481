//! `bufcache replay`: miss ratios of policies at cache sizes over one trace.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use clap::Args;
use policy::{AdmissionSpec, PolicySpec, PrefetchSpec};
use serde::Serialize;
use sim::{CacheSize, ReplayOptions, RunResult, Summary};

use crate::input::{self, ReadArgs};
use crate::run_opts::{self, RunArgs};
use crate::util;

/// Policies of the default replay, in display order; those not registered are skipped.
pub const DEFAULT_POLICIES: &[&str] = &[
    "lru", "fifo", "clock", "arc", "s3fifo", "sieve", "twoq", "belady",
];

/// Sizes of the default replay, as fractions of the working set.
pub const DEFAULT_SIZES: &[&str] = &["0.01", "0.05", "0.1", "0.2"];

/// Arguments of `bufcache replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Trace file (default: a built-in seeded synthetic workload of 4 KiB objects, replayed
    /// in unit mode).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Policies, comma-separated, each `name[:param=value...]` (see `bufcache policies`).
    #[arg(long = "policy", value_name = "P", value_delimiter = ',')]
    pub policies: Vec<PolicySpec>,
    /// Cache sizes, comma-separated: a count (1000), bytes (64MiB) or a fraction of the
    /// working set (0.1).
    #[arg(long = "size", value_name = "S", value_delimiter = ',')]
    pub sizes: Vec<CacheSize>,
    /// Unit mode: every object occupies one unit, whatever its size.
    #[arg(long)]
    pub ignore_size: bool,
    /// Admission filter in front of every policy, `name[:param=value...]`: always, prob:p=,
    /// secondhit, size:below=, doorkeeper:window=, adaptsize:c= (docs/cli.md).
    #[arg(long, value_name = "A", default_value = "always")]
    pub admission: AdmissionSpec,
    /// Prefetcher beside every policy, `name[:param=value...]`: obl:k=, readahead:depth=,k=
    /// (docs/cli.md). Prefetches are not requests; --json/--csv report how many were used.
    #[arg(long, value_name = "P")]
    pub prefetch: Option<PrefetchSpec>,
    /// Seed for randomized policies and the built-in workload.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// One JSON object per run and line.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// CSV with a header line.
    #[arg(long)]
    pub csv: bool,
}

/// The registered subset of [`DEFAULT_POLICIES`].
pub fn default_policies() -> Vec<PolicySpec> {
    DEFAULT_POLICIES
        .iter()
        .filter(|n| policy::POLICIES.iter().any(|p| p.name == **n))
        .map(|n| PolicySpec {
            name: (*n).to_string(),
            params: Vec::new(),
        })
        .collect()
}

#[derive(Serialize)]
struct Row<'a> {
    trace: &'a str,
    mode: &'static str,
    seed: u64,
    admission: String,
    policy: &'a str,
    size: &'a str,
    capacity: u64,
    requests: u64,
    hits: u64,
    misses: u64,
    miss_ratio: f64,
    bytes_missed: u64,
    byte_miss_ratio: f64,
    wall_s: f64,
    capacity_bytes: u64,
    capacity_objects: u64,
    prefetch: String,
    prefetches: u64,
    prefetch_hits: u64,
    prefetch_accuracy: f64,
}

const CSV_HEADER: &[&str] = &[
    "trace",
    "mode",
    "seed",
    "admission",
    "policy",
    "size",
    "capacity",
    "requests",
    "hits",
    "misses",
    "miss_ratio",
    "bytes_missed",
    "byte_miss_ratio",
    "wall_s",
    "capacity_bytes",
    "capacity_objects",
    "prefetch",
    "prefetches",
    "prefetch_hits",
    "prefetch_accuracy",
];

fn row<'a>(label: &'a str, args: &ReplayArgs, s: &Summary, r: &'a RunResult) -> Row<'a> {
    let (capacity_bytes, capacity_objects) =
        run_opts::capacity_both(r.capacity, args.ignore_size, s);
    Row {
        trace: label,
        mode: mode(args.ignore_size),
        seed: args.seed,
        admission: args.admission.label(),
        policy: &r.policy,
        size: &r.size,
        capacity: r.capacity,
        capacity_bytes,
        capacity_objects,
        requests: r.counts.requests,
        hits: r.counts.hits,
        misses: r.misses(),
        miss_ratio: r.miss_ratio(),
        bytes_missed: r.counts.bytes_missed,
        byte_miss_ratio: r.byte_miss_ratio(),
        wall_s: r.wall_s,
        prefetch: args
            .prefetch
            .as_ref()
            .map_or_else(|| "none".to_string(), PrefetchSpec::label),
        prefetches: r.prefetch.issued,
        prefetch_hits: r.prefetch.used,
        prefetch_accuracy: r.prefetch.accuracy(),
    }
}

fn mode(ignore_size: bool) -> &'static str {
    if ignore_size {
        "units"
    } else {
        "bytes"
    }
}

/// Run `bufcache replay`.
pub fn run(args: ReplayArgs) -> Result<()> {
    // The built-in workload's objects are all 4 KiB, so counting objects gives the same
    // miss ratios as counting bytes, and keeps per-run memory proportional to objects.
    let mut args = args;
    // A typo in the filter must not cost the time of reading the trace.
    args.admission.check().context("bad --admission")?;
    if let Some(p) = &args.prefetch {
        p.check().context("bad --prefetch")?;
    }
    if args.trace.is_none() {
        args.ignore_size = true;
    }
    let policies = if args.policies.is_empty() {
        default_policies()
    } else {
        args.policies.clone()
    };
    // A typo in a policy must not cost a minute of loading.
    run_opts::check_policies(&policies, args.seed)?;
    args.run.apply_threads()?;
    let sizes: Vec<CacheSize> = if args.sizes.is_empty() {
        DEFAULT_SIZES
            .iter()
            .map(|s| CacheSize::parse(s))
            .collect::<Result<_, _>>()?
    } else {
        args.sizes.clone()
    };
    let options = ReplayOptions {
        ignore_size: args.ignore_size,
        seed: args.seed,
    };
    let grid = sim::replay::Grid {
        policies: &policies,
        sizes: &sizes,
        admission: &args.admission,
        prefetch: args.prefetch.as_ref(),
        options,
        schedule: sim::Schedule::default(),
    };
    let done = AtomicU64::new(0);
    let (label, summary, results) = match &args.trace {
        Some(path) if args.run.stream => {
            let label = input::describe(path);
            let bar = util::progress(0, "replay");
            let (summary, results) =
                run_opts::replay_streamed(path, &args.read, &grid, &args.run, &|n| {
                    bar.inc(n);
                })?;
            bar.finish_and_clear();
            (label, summary, results)
        }
        trace_path => {
            let (label, trace) = match trace_path {
                Some(path) => (input::describe(path), input::load(path, &args.read)?),
                None => {
                    let s = input::default_replay_workload(args.seed)?;
                    (s.label, s.trace)
                }
            };
            run_opts::refuse_empty(&label, trace.summary())?;
            let total = trace.summary().requests * (policies.len() * sizes.len()) as u64;
            let bar = util::progress(total, "replay");
            let results = run_opts::replay_loaded(&trace, &grid, &args.run, &|n| {
                let now = done.fetch_add(n, Ordering::Relaxed) + n;
                bar.set_position(now);
            })?;
            bar.finish_and_clear();
            (label, *trace.summary(), results)
        }
    };

    let mut out = String::new();
    if args.json {
        for r in &results {
            out.push_str(&serde_json::to_string(&row(&label, &args, &summary, r))?);
            out.push('\n');
        }
        if let Some(every) = args.run.interval {
            for r in run_opts::interval_rows(&label, every, &results) {
                out.push_str(&serde_json::to_string(&r)?);
                out.push('\n');
            }
        }
    } else if let (true, Some(every)) = (args.csv, args.run.interval) {
        out = run_opts::interval_csv(&label, every, &results)?;
    } else if args.csv {
        out.push_str(&util::csv_line(CSV_HEADER));
        for r in &results {
            let v = serde_json::to_value(row(&label, &args, &summary, r))?;
            let fields: Vec<String> = CSV_HEADER
                .iter()
                .map(|k| match &v[*k] {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            out.push_str(&util::csv_line(&fields));
        }
    } else {
        out = matrix(&label, &summary, &args, &policies, &sizes, &results);
        if let Some(every) = args.run.interval {
            out.push_str(&run_opts::interval_table(every, &results));
        }
    }
    util::emit(&out)
}

/// The readable form: one row per policy, one column per size, the best miss ratio of each
/// column marked with `*`.
fn matrix(
    label: &str,
    s: &Summary,
    args: &ReplayArgs,
    policies: &[PolicySpec],
    sizes: &[CacheSize],
    results: &[RunResult],
) -> String {
    let unit = if args.ignore_size { "objects" } else { "bytes" };
    let admission = if args.admission.name == "always" {
        String::new()
    } else {
        format!("; admission {}", args.admission)
    };
    let admission = match &args.prefetch {
        Some(p) => format!("{admission}; prefetch {p}"),
        None => admission,
    };
    let mut out = format!(
        "trace: {label}\n{} requests, {} distinct objects, footprint {}; sizes in {unit}{admission}\n\n",
        util::thousands(s.requests),
        util::thousands(s.distinct_keys),
        util::human_bytes(s.footprint_bytes),
    );
    let mut header = vec!["miss ratio".to_string()];
    for (j, size) in sizes.iter().enumerate() {
        let cap = results[j].capacity;
        let cap = if args.ignore_size {
            util::thousands(cap)
        } else {
            util::human_bytes(cap)
        };
        if size.text == cap || size.text == results[j].capacity.to_string() {
            header.push(size.text.clone());
        } else {
            header.push(format!("{} ({cap})", size.text));
        }
    }
    let n = sizes.len();
    let best: Vec<f64> = (0..n)
        .map(|j| {
            (0..policies.len())
                .map(|i| results[i * n + j].miss_ratio())
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let rows: Vec<Vec<String>> = policies
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut row = vec![p.label()];
            for (j, b) in best.iter().enumerate() {
                let mr = results[i * n + j].miss_ratio();
                let mark = if mr == *b && policies.len() > 1 {
                    "*"
                } else {
                    " "
                };
                row.push(format!("{mr:.4}{mark}"));
            }
            row
        })
        .collect();
    out.push_str(&util::table(&header, &rows));
    let wall: f64 = results.iter().map(|r| r.wall_s).sum();
    out.push_str(&format!(
        "\n* best at that size. {} runs, {:.2} s of replay in total (--json or --csv for every counter).\n",
        results.len(),
        wall
    ));
    out
}
