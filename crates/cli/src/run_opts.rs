//! What a `cachesim` user expects of a replay run: a warm-up, intervals, a thread count,
//! streaming for traces larger than memory, and checks that fail before a long load.

use std::path::Path;

use anyhow::{bail, Context, Result};
use clap::Args;
use policy::{BuildContext, ConfigError, PolicySpec};
use serde::Serialize;
use sim::{CompactTrace, Counts, RunResult, Schedule, Summary};

use crate::input::{self, ReadArgs};

/// Run options of `bufcache replay`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Requests served before counting starts: a count (100000) or a fraction of the trace
    /// (0.1). Deletes count as positions.
    #[arg(long, value_name = "N|F", value_parser = parse_warmup)]
    pub warmup: Option<Warmup>,
    /// Also report the miss ratio of every N requests (positions in the trace, warm-up
    /// included): rows with `interval` in --json and --csv, a table otherwise.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub interval: Option<u64>,
    /// Worker threads for the runs (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Stream the trace instead of loading it: two passes over the file, memory in
    /// proportion to the distinct objects, not the requests. Refuses offline policies.
    #[arg(long)]
    pub stream: bool,
}

/// A warm-up length as written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Warmup {
    /// A number of positions.
    Requests(u64),
    /// A fraction of the trace's positions, in `[0, 1)`.
    Fraction(f64),
}

fn parse_warmup(s: &str) -> Result<Warmup, String> {
    if s.contains('.') {
        match s.parse::<f64>() {
            Ok(f) if (0.0..1.0).contains(&f) => Ok(Warmup::Fraction(f)),
            _ => Err(format!(
                "`{s}`: a fraction of the trace must be in 0..1 (a count has no decimal point)"
            )),
        }
    } else {
        s.parse::<u64>().map(Warmup::Requests).map_err(|_| {
            format!("`{s}`: expected a count of requests (100000) or a fraction (0.1)")
        })
    }
}

impl RunArgs {
    /// The schedule over a trace of `ops` positions (deletes included).
    pub fn schedule(&self, ops: u64) -> Result<Schedule> {
        let warmup = match self.warmup {
            None => 0,
            Some(Warmup::Requests(n)) => n,
            Some(Warmup::Fraction(f)) => (f * ops as f64) as u64,
        };
        if warmup >= ops && ops > 0 {
            bail!("--warmup {warmup} leaves nothing to count: the trace has {ops} operations");
        }
        Ok(Schedule {
            warmup,
            interval: self.interval,
        })
    }

    /// Sizes rayon's pool as asked (once, before any parallel work).
    pub fn apply_threads(&self) -> Result<()> {
        if let Some(n) = self.threads {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n as usize)
                .build_global()
                .context("setting up --threads")?;
        }
        Ok(())
    }
}

/// Builds each policy once at a small capacity, so that an unknown name, parameter or
/// value fails before a trace is read. Capacity errors wait for the real sizes.
pub fn check_policies(policies: &[PolicySpec], seed: u64) -> Result<()> {
    for p in policies {
        match p.build(&BuildContext::new(64, seed)) {
            Ok(_) | Err(ConfigError::Capacity { .. }) => {}
            Err(e) => return Err(e).with_context(|| format!("bad policy `{}`", p.label())),
        }
    }
    Ok(())
}

/// An empty trace gives no miss ratio: say so instead of printing zeros.
pub fn refuse_empty(label: &str, summary: &Summary) -> Result<()> {
    if summary.requests == 0 {
        bail!("trace {label} holds no requests (nothing to replay)");
    }
    Ok(())
}

/// Streams `path` through the runs ([`sim::stream`]).
pub fn replay_streamed(
    path: &Path,
    read: &ReadArgs,
    grid: &sim::replay::Grid<'_>,
    run: &RunArgs,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Summary, Vec<RunResult>)> {
    if path.as_os_str() == "-" {
        bail!("--stream reads the trace twice, which standard input cannot do: give a file");
    }
    anyhow::ensure!(read.page_size > 0, "--page-size must be at least 1 byte");
    let open = || input::reader(path, read);
    let mut reader = open().with_context(|| format!("cannot open trace {}", path.display()))?;
    let first = sim::stream::number_keys(&mut reader)
        .with_context(|| format!("cannot read trace {}", path.display()))?;
    let summary = first.summary();
    refuse_empty(&input::describe(path), &summary)?;
    let schedule = run.schedule(summary.requests + summary.deletes)?;
    let mut reader = open().with_context(|| format!("cannot open trace {}", path.display()))?;
    let results = sim::stream::replay_numbered(
        &first,
        &mut reader,
        &sim::replay::Grid { schedule, ..*grid },
        progress,
    )
    .context("cannot replay")?;
    Ok((summary, results))
}

/// The capacity in bytes and in objects. One of them is the run's own unit; the other is
/// converted at the working set's mean object size (footprint / distinct objects).
pub fn capacity_both(capacity: u64, ignore_size: bool, s: &Summary) -> (u64, u64) {
    let mean = if s.distinct_keys == 0 {
        1.0
    } else {
        s.footprint_bytes as f64 / s.distinct_keys as f64
    };
    if ignore_size {
        ((capacity as f64 * mean) as u64, capacity)
    } else {
        (capacity, (capacity as f64 / mean.max(1.0)) as u64)
    }
}

/// One interval of one run, for --json and --csv.
#[derive(Serialize)]
pub struct IntervalRow<'a> {
    /// The trace.
    pub trace: &'a str,
    /// The policy as written.
    pub policy: &'a str,
    /// The size as written.
    pub size: &'a str,
    /// 0-based interval number.
    pub interval: usize,
    /// First position of the interval.
    pub start: u64,
    /// Requests in it (deletes excluded).
    pub requests: u64,
    /// Hits in it.
    pub hits: u64,
    /// Misses over requests.
    pub miss_ratio: f64,
}

/// The interval rows of every run.
pub fn interval_rows<'a>(
    label: &'a str,
    every: u64,
    results: &'a [RunResult],
) -> Vec<IntervalRow<'a>> {
    results
        .iter()
        .flat_map(|r| {
            r.intervals
                .iter()
                .enumerate()
                .map(move |(k, c): (usize, &Counts)| IntervalRow {
                    trace: label,
                    policy: &r.policy,
                    size: &r.size,
                    interval: k,
                    start: k as u64 * every,
                    requests: c.requests,
                    hits: c.hits,
                    miss_ratio: c.miss_ratio(),
                })
        })
        .collect()
}

const INTERVAL_HEADER: &[&str] = &[
    "trace",
    "policy",
    "size",
    "interval",
    "start",
    "requests",
    "hits",
    "miss_ratio",
];

/// The interval rows as CSV (what `--csv --interval` prints).
pub fn interval_csv(label: &str, every: u64, results: &[RunResult]) -> Result<String> {
    let mut out = crate::util::csv_line(INTERVAL_HEADER);
    for r in interval_rows(label, every, results) {
        let v = serde_json::to_value(&r)?;
        let fields: Vec<String> = INTERVAL_HEADER
            .iter()
            .map(|k| match &v[*k] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        out.push_str(&crate::util::csv_line(&fields));
    }
    Ok(out)
}

/// The miss ratio of each interval (rows) of each run (columns), for people.
pub fn interval_table(every: u64, results: &[RunResult]) -> String {
    let mut header = vec!["from request".to_string()];
    header.extend(results.iter().map(|r| format!("{} @ {}", r.policy, r.size)));
    let n = results.iter().map(|r| r.intervals.len()).max().unwrap_or(0);
    let rows: Vec<Vec<String>> = (0..n)
        .map(|k| {
            let mut row = vec![crate::util::thousands(k as u64 * every)];
            row.extend(results.iter().map(|r| {
                r.intervals
                    .get(k)
                    .map_or(String::new(), |c| format!("{:.4}", c.miss_ratio()))
            }));
            row
        })
        .collect();
    format!(
        "\nmiss ratio every {} requests (warm-up included):\n{}",
        crate::util::thousands(every),
        crate::util::table(&header, &rows)
    )
}

/// In-memory replay with the schedule.
pub fn replay_loaded(
    trace: &CompactTrace,
    grid: &sim::replay::Grid<'_>,
    run: &RunArgs,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RunResult>> {
    let schedule = run.schedule(trace.len() as u64)?;
    sim::replay_scheduled(trace, &sim::replay::Grid { schedule, ..*grid }, progress)
        .context("cannot replay")
}
