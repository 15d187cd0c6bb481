//! `bufcache bench replay`: single-threaded requests per second of each policy.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use policy::PolicySpec;
use serde::Serialize;
use sim::bench::{self, BenchResult};
use trace::Format;

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
    #[arg(long, default_value_t = bench::DEFAULT_REQUESTS)]
    pub requests: u64,
    /// Distinct keys of the synthetic workload.
    #[arg(long, default_value_t = bench::DEFAULT_KEYS)]
    pub keys: u64,
    /// Zipf exponent of the synthetic workload.
    #[arg(long, default_value_t = bench::DEFAULT_ALPHA)]
    pub alpha: f64,
    /// Seed of the workload and of randomized policies.
    #[arg(long, default_value_t = bench::DEFAULT_SEED)]
    pub seed: u64,
    /// Cache size (default: 10% of the distinct keys).
    #[arg(long, value_name = "S")]
    pub size: Option<sim::CacheSize>,
    /// One JSON object per policy and line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Row<'a> {
    workload: &'a str,
    policy: &'a str,
    size: u64,
    requests: u64,
    seconds: f64,
    requests_per_s: f64,
    miss_ratio: f64,
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
    let (scale, runs) = if a.quick { (1, 1) } else { (10, a.runs) };
    let mut results = Vec::new();
    for (case, system, workload) in bench::des_cases(scale) {
        results.push(bench::des_throughput(&case, &system, &workload, runs)?);
    }
    let start = std::time::Instant::now();
    let points = sim::experiments::kotz_ellis::run(sim::experiments::kotz_ellis::Options {
        seed: 1,
        quick: a.quick,
    });
    let experiment_s = start.elapsed().as_secs_f64();
    let mut out = String::new();
    if a.json {
        for r in &results {
            out.push_str(&serde_json::to_string(r)?);
            out.push('\n');
        }
        out.push_str(&serde_json::to_string(&serde_json::json!({
            "case": "experiment kotz-ellis", "points": points.len(), "seconds": experiment_s,
            "threads": rayon::current_num_threads(),
        }))?);
        out.push('\n');
    } else {
        let header: Vec<String> = ["case", "events", "seconds", "events/s"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let rows: Vec<Vec<String>> = results
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
        out.push_str(&util::table(&header, &rows));
        out.push_str(&format!(
            "\nexperiment kotz-ellis: {} points in {:.2} s on {} threads\n",
            points.len(),
            experiment_s,
            rayon::current_num_threads()
        ));
    }
    util::emit(&out)
}

fn replay(a: BenchReplayArgs) -> Result<()> {
    let (label, trace) = match &a.trace {
        Some(path) => (input::describe(path), input::load(path, &a.read)?),
        None => {
            anyhow::ensure!(a.keys > 0, "--keys must be at least 1");
            let keys = a.keys.to_string();
            let alpha = a.alpha.to_string();
            let workload =
                trace::synth::Workload::from_params("zipf", &[("keys", &keys), ("alpha", &alpha)])
                    .context("bad benchmark workload")?;
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
    let size = match &a.size {
        Some(s) => s.clone(),
        None => sim::CacheSize::parse(&bench::DEFAULT_FRACTION.to_string())?,
    };
    // Benchmarks count objects: the policies' cost per request is what is measured.
    let capacity = size.resolve(true, trace.working_set())?;
    let policies: Vec<PolicySpec> = if a.policies.is_empty() {
        policy::POLICIES
            .iter()
            .map(|p| PolicySpec {
                name: p.name.to_string(),
                params: Vec::new(),
            })
            .collect()
    } else {
        a.policies.clone()
    };
    // Name each policy as it starts, on a terminal only (runs take seconds each).
    let chatty = std::io::stderr().is_terminal();
    let mut results: Vec<BenchResult> = Vec::new();
    for spec in &policies {
        if chatty {
            eprint!("{} ", spec.label());
        }
        results.push(bench::replay_throughput(
            &trace, spec, capacity, true, a.seed,
        )?);
    }
    if chatty {
        eprintln!();
    }
    let mut out = String::new();
    if a.json {
        for r in &results {
            out.push_str(&serde_json::to_string(&Row {
                workload: &label,
                policy: &r.policy,
                size: r.capacity,
                requests: r.requests,
                seconds: r.seconds,
                requests_per_s: r.requests_per_s,
                miss_ratio: r.miss_ratio,
            })?);
            out.push('\n');
        }
    } else {
        out.push_str(&format!(
            "workload: {label}\ncache: {} objects, one thread\n\n",
            util::thousands(capacity)
        ));
        let header: Vec<String> = ["policy", "requests/s", "seconds", "miss ratio"]
            .iter()
            .map(|s| s.to_string())
            .collect();
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
        out.push_str(&util::table(&header, &rows));
    }
    if let Some(path) = &a.trace {
        let r = bench::read_throughput(
            path,
            a.read.format,
            &trace::ReadOptions {
                page_size: a.read.page_size,
                ..trace::ReadOptions::default()
            },
        )
        .with_context(|| format!("cannot read trace {}", path.display()))?;
        let fmt = a
            .read
            .format
            .or_else(|| Format::from_path(path))
            .map_or("?".to_string(), |f| f.to_string());
        if a.json {
            out.push_str(&serde_json::to_string(&serde_json::json!({
                "trace": label, "format": fmt, "records": r.records,
                "seconds": r.seconds, "records_per_s": r.records_per_s,
            }))?);
            out.push('\n');
        } else {
            out.push_str(&format!(
                "\nreading {label} ({fmt}): {} records in {:.3} s = {:.1} M records/s\n",
                util::thousands(r.records),
                r.seconds,
                r.records_per_s / 1e6
            ));
        }
    }
    util::emit(&out)
}
