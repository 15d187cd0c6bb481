//! `bufcache experiment NAME`: reproduce a paper's experiment; CSV and SVG under `--out`,
//! a summary (or JSON lines) on stdout.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use report::FigureFile;
use serde::Serialize;
use sim::experiments::{burnett_ordering, kotz_ellis, xmf_cleaning, EXPERIMENTS};

use crate::util;

/// `bufcache experiment ...`
#[derive(Subcommand, Debug)]
pub enum ExperimentCommand {
    /// List the experiments.
    List,
    /// Kotz & Ellis 1992: caching and write policies on parallel disks.
    KotzEllis(ExperimentArgs),
    /// XMF 1989 appendix I: getnewbuf against the clock daemon (Figure 21).
    XmfCleaning(ExperimentArgs),
    /// Burnett 2006 ch.4: fsync, barriers and asynchronous graphs (Figures 4.12-4.19).
    BurnettOrdering(ExperimentArgs),
    /// Burnett 2006 ch.4 on real files: the same transactions through the pool, buffered
    /// and O_DIRECT (throughput, device writes, syncs, commit latency).
    BurnettOrderingReal(crate::ordering_real_cmd::RealArgs),
    /// Nelson 1990: file cache and virtual memory sharing one memory (ECD, IFS; Figures
    /// 1-6, Tables 2-4) under every arbiter.
    Nelson(ExperimentArgs),
    /// Silvers 2000 (UBC): Table 1's dd series, split vs unified cache (simulated; with
    /// `--real`, on real files too: O_DIRECT, page cache, pool over O_DIRECT and buffered).
    Ubc(crate::ubc_cmd::UbcArgs),
    /// Burnett 2006 §2.5: the cache-aware file server (Figures 2.20-2.21), on real files.
    CacheAwareServer(crate::serve_cmd::CacheAwareArgs),
    /// Burnett 2006 ch.3: InfoReplace's accuracy and overhead, PinRange on index lookups
    /// (Figures 3.1 and 3.2).
    Inforeplace(crate::inforeplace_cmd::InfoReplaceArgs),
}

/// Options every experiment takes.
#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// Folder for the CSV data and SVG figures (created if missing).
    #[arg(long, value_name = "DIR", default_value = "bufcache-results")]
    pub out: PathBuf,
    /// Print one JSON object per data point on stdout instead of the summary (the CSV and
    /// SVG files are written either way).
    #[arg(long)]
    pub json: bool,
    /// Fewer points, for a quick look.
    #[arg(long)]
    pub quick: bool,
    /// Seed of the workloads' random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Run `bufcache experiment ...`.
pub fn run(cmd: ExperimentCommand) -> Result<()> {
    match cmd {
        ExperimentCommand::List => {
            let mut rows: Vec<Vec<String>> = EXPERIMENTS
                .iter()
                .map(|e| vec![e.name.to_string(), e.summary.to_string()])
                .collect();
            rows.push(vec![
                "burnett-ordering-real".into(),
                "Burnett 2006 ch.4 on real files through the pool: no ordering, fsync, barriers, graphs".into(),
            ]);
            rows.push(vec![
                "cache-aware-server".into(),
                crate::serve_cmd::EXPERIMENT_SUMMARY.into(),
            ]);
            util::emit(&util::table(&["name", "reproduces"], &rows))
        }
        ExperimentCommand::KotzEllis(a) => kotz(a),
        ExperimentCommand::XmfCleaning(a) => xmf(a),
        ExperimentCommand::BurnettOrdering(a) => burnett(a),
        ExperimentCommand::BurnettOrderingReal(a) => crate::ordering_real_cmd::run(a),
        ExperimentCommand::Nelson(a) => crate::nelson_cmd::run(a),
        ExperimentCommand::Ubc(a) => crate::ubc_cmd::run(a),
        ExperimentCommand::CacheAwareServer(a) => crate::serve_cmd::run_experiment(a),
        ExperimentCommand::Inforeplace(a) => crate::inforeplace_cmd::run(a),
    }
}

/// Write `rows` as CSV to `path`, atomically (`report::write_csv`, for every experiment
/// command: this one, `serve_cmd`, `inforeplace_cmd`).
pub(crate) fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    Ok(report::write_csv(path, rows)?)
}

/// One JSON object per row and line (`report::json_lines`).
pub(crate) fn json_lines<T: Serialize>(rows: &[T]) -> Result<String> {
    Ok(report::json_lines(rows)?)
}

pub(crate) fn prepare(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

/// Write the points as `csv_name` and every figure under `out`; the paths written, the
/// CSV first.
fn write_results<T: Serialize>(
    out: &Path,
    csv_name: &str,
    points: &[T],
    figures: &[FigureFile],
) -> Result<Vec<PathBuf>> {
    let csv = out.join(csv_name);
    write_csv(&csv, points)?;
    let mut written = vec![csv];
    for f in figures {
        written.push(f.write_into(out)?);
    }
    Ok(written)
}

/// The list of files written, one indented path a line.
fn file_list(written: &[PathBuf]) -> String {
    written
        .iter()
        .map(|w| format!("  {}\n", w.display()))
        .collect()
}

fn kotz(a: ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let points = kotz_ellis::run(kotz_ellis::Options {
        seed: a.seed,
        quick: a.quick,
    });
    let written = write_results(
        &a.out,
        "kotz-ellis.csv",
        &points,
        &kotz_ellis::figures(&points),
    )?;
    if a.json {
        return util::emit(&json_lines(&points)?);
    }
    let mut out = format!("{}\n\n", kotz_ellis::CACHING_TABLE_TITLE);
    out.push_str(&kotz_ellis::caching_table(&points).to_text());
    out.push_str(&format!("\n{} points; files:\n", points.len()));
    out.push_str(&file_list(&written));
    util::emit(&out)
}

fn xmf(a: ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let points = xmf_cleaning::run(a.seed, a.quick);
    let written = write_results(
        &a.out,
        "xmf-cleaning.csv",
        &points,
        &xmf_cleaning::figures(&points),
    )?;
    if a.json {
        return util::emit(&json_lines(&points)?);
    }
    let mut out = xmf_cleaning::table(&points).to_text();
    out.push_str("\nfiles:\n");
    out.push_str(&file_list(&written));
    util::emit(&out)
}

fn burnett(a: ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let points = burnett_ordering::run(a.seed, a.quick);
    let written = write_results(
        &a.out,
        "burnett-ordering.csv",
        &points,
        &burnett_ordering::figures(&points, a.quick),
    )?;
    let violations: u64 = points.iter().map(|p| p.violations).sum();
    if a.json {
        util::emit(&json_lines(&points)?)?;
    } else {
        let mut out = format!("{}\n\n", burnett_ordering::DEFAULTS_TABLE_TITLE);
        out.push_str(&burnett_ordering::defaults_table(&points, a.quick).to_text());
        out.push_str(&format!(
            "\n{} points, {violations} ordering violations; files:\n",
            points.len()
        ));
        out.push_str(&file_list(&written));
        util::emit(&out)?;
    }
    anyhow::ensure!(
        violations == 0,
        "the ordering checker found {violations} violations"
    );
    Ok(())
}
