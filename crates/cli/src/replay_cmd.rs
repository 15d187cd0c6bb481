//! `bufcache replay`: miss ratios of policies at cache sizes over one trace.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use clap::Args;
use policy::{AdmissionSpec, PolicySpec, PrefetchSpec};
use serde::Serialize;
use sim::{CacheSize, ReplayOptions, RunResult, Summary};

use crate::input::{self, ReadArgs};
use crate::intervals;
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
    /// Draw the miss ratio of every interval into this SVG file (needs --interval).
    #[arg(long, value_name = "FILE.svg", requires = "interval")]
    pub plot: Option<PathBuf>,
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
    let (label, summary, results, schedule, marks) = match &args.trace {
        Some(path) if args.run.stream => {
            let label = input::describe(path);
            let bar = util::progress(0, "replay");
            let (summary, results, schedule, marks) =
                run_opts::replay_streamed(path, &args.read, &grid, &args.run, &|n| {
                    bar.inc(n);
                })?;
            bar.finish_and_clear();
            (label, summary, results, schedule, marks)
        }
        trace_path => {
            let loaded = load(trace_path.as_deref(), &args)?;
            run_opts::refuse_empty(&loaded.label, loaded.trace.summary())?;
            let ops = loaded.trace.len() as u64 - loaded.prefix;
            let schedule = args.run.schedule(loaded.prefix, ops, &loaded.marks)?;
            let total = loaded.trace.summary().requests * (policies.len() * sizes.len()) as u64;
            let bar = util::progress(total, "replay");
            let results = run_opts::replay_loaded(&loaded.trace, &grid, schedule.clone(), &|n| {
                let now = done.fetch_add(n, Ordering::Relaxed) + n;
                bar.set_position(now);
            })?;
            bar.finish_and_clear();
            let summary = *loaded.trace.summary();
            (loaded.label, summary, results, schedule, loaded.marks)
        }
    };
    let count = results.iter().map(|r| r.intervals.len()).max().unwrap_or(0);
    let axis = intervals::IntervalAxis::new(&schedule, &marks, args.run.ticks_per_second, count);
    if let Some(path) = &args.plot {
        intervals::plot(path, &label, &axis, &results)?;
    }

    let mut out = String::new();
    if args.json {
        for r in &results {
            out.push_str(&serde_json::to_string(&row(&label, &args, &summary, r))?);
            out.push('\n');
        }
        if args.run.interval.is_some() {
            for r in intervals::rows(&label, &axis, &results) {
                out.push_str(&serde_json::to_string(&r)?);
                out.push('\n');
            }
        }
    } else if args.csv && args.run.interval.is_some() {
        out = intervals::csv(&label, &axis, &results)?;
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
        if args.run.interval.is_some() {
            out.push_str(&intervals::table(&axis, &results));
        }
        if let Some(path) = &args.plot {
            out.push_str(&format!("\nplot written to {}\n", path.display()));
        }
    }
    util::emit(&out)
}

/// A trace in memory: --warmup-trace's requests (`prefix` positions) then the trace's
/// own, and the spans of trace time found in the latter's timestamps.
struct Loaded {
    label: String,
    trace: sim::CompactTrace,
    prefix: u64,
    marks: sim::trace_time::TimeMarks,
}

/// Loads --warmup-trace, then the trace (or the built-in workload), into one compact trace,
/// watching the trace's own timestamps for the spans of --warmup and --interval.
fn load(path: Option<&Path>, args: &ReplayArgs) -> Result<Loaded> {
    let mut marks = args.run.time_marks();
    let mut builder = sim::TraceBuilder::new();
    if let Some(warm) = &args.run.warmup_trace {
        input::push_file(&mut builder, warm, &args.read, &mut |_| {}).context("--warmup-trace")?;
    }
    let prefix = builder.len() as u64;
    let mut position = prefix;
    let mut watch = |time: u64| {
        marks.observe(position, time);
        position += 1;
    };
    let label = match path {
        Some(path) => {
            input::push_file(&mut builder, path, &args.read, &mut watch)?;
            input::describe(path)
        }
        None => input::push_default_workload(&mut builder, args.seed, &mut watch)?,
    };
    let label = match &args.run.warmup_trace {
        Some(warm) => format!("{label} (warmed up with {})", warm.display()),
        None => label,
    };
    Ok(Loaded {
        label,
        trace: builder.finish(),
        prefix,
        marks,
    })
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
    out.push_str(&resolved_sizes(s, args.ignore_size, sizes, results));
    out
}

/// Each size in bytes and in objects: the run's own unit exactly, the other converted at
/// the working set's mean object size (`~`), as `capacity_bytes` and `capacity_objects`.
fn resolved_sizes(
    s: &Summary,
    ignore_size: bool,
    sizes: &[CacheSize],
    results: &[RunResult],
) -> String {
    let each: Vec<String> = sizes
        .iter()
        .zip(results)
        .map(|(size, r)| {
            let (bytes, objects) = run_opts::capacity_both(r.capacity, ignore_size, s);
            let (bytes, objects) = (util::human_bytes(bytes), util::thousands(objects));
            if ignore_size {
                format!("{} = {objects} objects ~ {bytes}", size.text)
            } else {
                format!("{} = {bytes} ~ {objects} objects", size.text)
            }
        })
        .collect();
    format!("sizes: {}\n", each.join("; "))
}
