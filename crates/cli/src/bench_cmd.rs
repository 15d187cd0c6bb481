//! `bufcache bench replay|des|pool`: the arguments and the printing; the harnesses are in
//! the `bufcache-bench` crate.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result};
use bench::des::{DesBenchOptions, DesBenchReport};
use bench::replay::{self, ReadThroughput, ReplayThroughput};
use clap::{Args, Subcommand};
use policy::PolicySpec;
use serde::Serialize;

use crate::input::{self, ReadArgs};
use crate::util;

/// `bufcache bench ...`
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Requests per second of each policy over an in-memory trace, on one thread.
    Replay(BenchReplayArgs),
    /// Events per second of the discrete-event simulator, one thread, and the time of the
    /// whole kotz-ellis experiment on all cores.
    Des(BenchDesArgs),
    /// Speed of the real buffer pool: cached reads, pin hits, eviction, scans.
    Pool(crate::bench_pool::BenchPoolArgs),
}

/// Arguments of `bufcache bench des`.
#[derive(Args, Debug)]
pub struct BenchDesArgs {
    /// Smaller cases and one run each.
    #[arg(long)]
    pub quick: bool,
    /// Runs per case (the fastest counts).
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// One JSON object per measurement.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `bufcache bench replay`.
#[derive(Args, Debug)]
pub struct BenchReplayArgs {
    /// Trace file (default: a seeded Zipf workload). Its read throughput is reported too.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Policies, comma-separated (default: every registered policy).
    #[arg(long = "policy", value_name = "P", value_delimiter = ',')]
    pub policies: Vec<PolicySpec>,
    /// Requests of the synthetic workload.
    #[arg(long, default_value_t = replay::DEFAULT_REQUESTS)]
    pub requests: u64,
    /// Distinct keys of the synthetic workload.
    #[arg(long, default_value_t = replay::DEFAULT_KEYS)]
    pub keys: u64,
    /// Zipf exponent of the synthetic workload.
    #[arg(long, default_value_t = replay::DEFAULT_ALPHA)]
    pub alpha: f64,
    /// Seed of the workload and of randomized policies.
    #[arg(long, default_value_t = replay::DEFAULT_SEED)]
    pub seed: u64,
    /// Cache size in objects: a count (100000) or a fraction of the distinct keys (0.1);
    /// default 10% of the distinct keys. With --bytes, in bytes: 64MiB, a plain number of
    /// bytes, or a fraction of the working set's bytes.
    #[arg(long, value_name = "S")]
    pub size: Option<sim::CacheSize>,
    /// Byte mode: every object occupies its size in bytes (for the size-aware policies:
    /// GDSF, LHD, `hyperbolic:sizes=true`...). Default: unit mode, one unit per object.
    #[arg(long)]
    pub bytes: bool,
    /// One JSON object per policy and line.
    #[arg(long)]
    pub json: bool,
}

/// A JSON line of `bench replay`: the workload, then the policy's measurement.
#[derive(Serialize)]
struct ReplayRow<'a> {
    workload: &'a str,
    #[serde(flatten)]
    result: &'a ReplayThroughput,
}

/// Run `bufcache bench ...`.
pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Replay(a) => replay(a),
        BenchCommand::Des(a) => des(a),
        BenchCommand::Pool(a) => crate::bench_pool::run(a),
    }
}

fn des(a: BenchDesArgs) -> Result<()> {
    let report = bench::des::run(DesBenchOptions {
        quick: a.quick,
        runs: a.runs,
    })?;
    let out = if a.json {
        des_json(&report)?
    } else {
        des_table(&report)
    };
    util::emit(&out)
}

fn des_json(report: &DesBenchReport) -> Result<String> {
    let mut out = String::new();
    for r in &report.cases {
        out.push_str(&serde_json::to_string(r)?);
        out.push('\n');
    }
    out.push_str(&serde_json::to_string(&report.experiment)?);
    out.push('\n');
    Ok(out)
}

fn des_table(report: &DesBenchReport) -> String {
    let rows: Vec<Vec<String>> = report
        .cases
        .iter()
        .map(|r| {
            vec![
                r.case.clone(),
                util::thousands(r.events),
                format!("{:.3}", r.seconds),
                format!("{:.2} M", r.events_per_s / 1e6),
            ]
        })
        .collect();
    let e = &report.experiment;
    format!(
        "{}\nexperiment kotz-ellis: {} points in {:.2} s on {} threads\n",
        util::table(&["case", "events", "seconds", "events/s"], &rows),
        e.points,
        e.seconds,
        e.threads
    )
}

fn replay(a: BenchReplayArgs) -> Result<()> {
    // Refused before the trace is read or made: unit mode counts objects, never bytes.
    if let Some(sim::CacheSize {
        kind: sim::size::SizeKind::Bytes(_),
        text,
    }) = &a.size
    {
        anyhow::ensure!(
            a.bytes,
            "--size {text}: bench replay counts objects (every object is one unit) unless --bytes is given, so a byte size means nothing here: give a count of objects (100000) or a fraction of the distinct keys (0.1), or add --bytes"
        );
    }
    let (label, trace) = match &a.trace {
        Some(path) => (input::describe(path), input::load(path, &a.read)?),
        None => {
            let workload = replay::zipf_workload(a.keys, a.alpha)?;
            (
                format!(
                    "{workload}, {} requests, seed {}",
                    util::thousands(a.requests),
                    a.seed
                ),
                input::synthesize(&workload, a.requests, a.seed)?,
            )
        }
    };
    let ignore_size = !a.bytes;
    let capacity = replay::capacity(a.size.as_ref(), &trace, ignore_size)?;
    // Name each policy as it starts, on a terminal only (runs take seconds each).
    let chatty = std::io::stderr().is_terminal();
    let mut results = Vec::new();
    for spec in replay::policies_or_all(&a.policies) {
        if chatty {
            eprint!("{} ", spec.label());
        }
        results.push(replay::replay_throughput(
            &trace,
            &spec,
            capacity,
            ignore_size,
            a.seed,
        )?);
    }
    if chatty {
        eprintln!();
    }
    let mut out = String::new();
    if a.json {
        for result in &results {
            out.push_str(&serde_json::to_string(&ReplayRow {
                workload: &label,
                result,
            })?);
            out.push('\n');
        }
    } else {
        out.push_str(&format!(
            "workload: {label}\ncache: {} {}, one thread\n\n",
            util::thousands(capacity),
            replay::mode_name(ignore_size)
        ));
        out.push_str(&replay_table(&results));
    }
    if let Some(path) = &a.trace {
        let options = trace::ReadOptions {
            page_size: a.read.page_size,
            ..trace::ReadOptions::default()
        };
        let r = replay::read_throughput(path, a.read.format, &options)
            .with_context(|| format!("cannot read trace {}", path.display()))?;
        out.push_str(&read_line(&r, a.json)?);
    }
    util::emit(&out)
}

fn replay_table(results: &[ReplayThroughput]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.policy.clone(),
                format!("{:.2} M", r.requests_per_s / 1e6),
                format!("{:.3}", r.seconds),
                format!("{:.4}", r.miss_ratio),
            ]
        })
        .collect();
    util::table(&["policy", "requests/s", "seconds", "miss ratio"], &rows)
}

/// The trace-reading measurement: a JSON line, or a sentence after the table.
fn read_line(r: &ReadThroughput, json: bool) -> Result<String> {
    Ok(if json {
        format!("{}\n", serde_json::to_string(r)?)
    } else {
        format!(
            "\nreading {} ({}): {} records in {:.3} s = {:.1} M records/s\n",
            r.trace,
            r.format,
            util::thousands(r.records),
            r.seconds,
            r.records_per_s / 1e6
        )
    })
}
