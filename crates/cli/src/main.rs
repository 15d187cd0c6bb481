//! `bufcache`: replay traces through cache policies, draw miss-ratio curves, inspect and
//! convert traces, list policies and measure their speed.
//!
//! Thin glue over the `policy`, `trace` and `sim` crates: every subcommand parses its
//! arguments, calls a library function and formats the result (a table for people,
//! `--json` or `--csv` for programs). Errors are reported with their context and a
//! non-zero exit status, never a panic.

mod bench_cmd;
mod bench_pool;
mod des_cmd;
mod dust_cmd;
mod experiment_cmd;
mod inforeplace_cmd;
mod input;
mod interrupt;
mod intervals;
mod mirror_replay_cmd;
mod mrc_approx;
mod mrc_cmd;
mod nelson_cmd;
mod ordering_real_cmd;
mod replay_cmd;
mod run_opts;
mod serve_cmd;
mod sweep_cmd;
mod trace_cmd;
mod ubc_cmd;
mod ubc_real_cmd;
mod util;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// A file buffer cache you can embed, simulate and fingerprint.
#[derive(Parser, Debug)]
#[command(name = "bufcache", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replay a trace through policies at cache sizes and report miss ratios.
    Replay(replay_cmd::ReplayArgs),
    /// Many traces through policies at sizes into a results file that a rerun resumes.
    Sweep(sweep_cmd::SweepArgs),
    /// Miss-ratio curves: exact LRU in one pass, other policies by sweep.
    Mrc(mrc_cmd::MrcArgs),
    /// Inspect, convert and generate traces.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCommand),
    /// List every policy with its parameters and defaults.
    Policies,
    /// Throughput benchmarks.
    #[command(subcommand)]
    Bench(bench_cmd::BenchCommand),
    /// Run a discrete-event simulation scenario (TOML).
    Des(des_cmd::DesArgs),
    /// Reproduce a paper's experiment: CSV data and SVG figures.
    #[command(subcommand)]
    Experiment(experiment_cmd::ExperimentCommand),
    /// Measure a cache's size and fingerprint its replacement policy (Burnett's Dust).
    Dust(dust_cmd::DustArgs),
    /// Serve a directory over HTTP, scheduling cached requests first (Burnett's NeST).
    Serve(serve_cmd::ServeArgs),
    /// Load an HTTP file server: closed or open loop, latency split by hit and miss.
    Load(serve_cmd::LoadArgs),
    /// Write a load generator's file set (uniform or SURGE-like) and its manifest.
    MakeFiles(serve_cmd::MakeFilesArgs),
    /// Score mirror models offline against a `bufcache serve --trace` log.
    MirrorReplay(mirror_replay_cmd::MirrorReplayArgs),
}

fn policies() -> Result<()> {
    let mut out = String::new();
    let width = policy::POLICIES
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    for p in policy::POLICIES {
        out.push_str(&format!("{:<width$}  {}\n", p.name, p.summary));
        for param in p.params {
            out.push_str(&format!(
                "{:<width$}    {}={}  {}\n",
                "", param.name, param.default, param.help
            ));
        }
    }
    out.push_str(
        "\nWrite parameters after the name: --policy s3fifo:small=0.1 (see each policy's docs).\n",
    );
    util::emit(&out)
}

/// The error and its causes joined by `: `, skipping a cause whose text the message
/// before it already contains (library errors often print their source inline).
fn render(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve(_)) {
        if let Err(e) = interrupt::remove_temp_files_on_interrupt() {
            eprintln!("error: {}", render(&e));
            return ExitCode::FAILURE;
        }
    }
    let result = match cli.command {
        Command::Replay(a) => replay_cmd::run(a),
        Command::Sweep(a) => sweep_cmd::run(a),
        Command::Mrc(a) => mrc_cmd::run(a),
        Command::Trace(c) => trace_cmd::run(c),
        Command::Policies => policies(),
        Command::Bench(c) => bench_cmd::run(c),
        Command::Des(a) => des_cmd::run(a),
        Command::Experiment(c) => experiment_cmd::run(c),
        Command::Dust(a) => dust_cmd::run(a),
        Command::Serve(a) => serve_cmd::run_serve(a),
        Command::Load(a) => serve_cmd::run_load(a),
        Command::MakeFiles(a) => serve_cmd::run_make_files(a),
        Command::MirrorReplay(a) => mirror_replay_cmd::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", render(&e));
            ExitCode::FAILURE
        }
    }
}
