//! `bufcache experiment ubc`: Table 1 of the UBC paper (Silvers 2000) on the simulated
//! split and unified caches. Writes `ubc-sim.csv` and `ubc-time.svg`; prints the table
//! beside the paper's (or, with `--json`, one JSON object per row and design). With
//! `--real`, the same series on real files of this machine follows
//! (`ubc_real_cmd`, `ubc-real.csv`).

use anyhow::Result;
use clap::Args;
use sim::experiments::ubc::{self, UbcPoint};

use crate::experiment_cmd::{json_lines, prepare, write_csv, ExperimentArgs};
use crate::util;

/// `bufcache experiment ubc` options.
#[derive(Args, Debug)]
pub struct UbcArgs {
    #[command(flatten)]
    pub common: ExperimentArgs,
    #[command(flatten)]
    pub real: crate::ubc_real_cmd::RealArgs,
}

/// Run the experiment.
pub fn run(args: UbcArgs) -> Result<()> {
    let a = args.common;
    // The simulated half always (about a second), then the real one if asked for.
    run_simulated(&a)?;
    if args.real.real {
        crate::ubc_real_cmd::run(&a, &args.real)?;
    }
    Ok(())
}

fn run_simulated(a: &ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let points = ubc::run();
    let csv = a.out.join("ubc-sim.csv");
    write_csv(&csv, &points)?;
    let mut written = vec![csv];
    for f in &ubc::figures(&points) {
        written.push(f.write_into(&a.out)?);
    }
    if a.json {
        return util::emit(&json_lines(&points)?);
    }
    let header: Vec<String> = [
        "row",
        "input",
        "output",
        "MB",
        "design",
        "dev reads",
        "dev writes",
        "copies",
        "held MB",
        "held twice MB",
        "time s",
        "paper s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p: &UbcPoint| {
            vec![
                p.row.to_string(),
                p.input.to_string(),
                p.output.to_string(),
                p.size_mb.to_string(),
                p.layout.to_string(),
                p.device_reads.to_string(),
                p.device_writes.to_string(),
                p.copies.to_string(),
                format!("{:.1}", p.held_mb),
                format!("{:.1}", p.held_twice_mb),
                format!("{:.1}", p.time_s),
                p.paper_s.map(|s| format!("{s}")).unwrap_or_default(),
            ]
        })
        .collect();
    let mut out = String::from("UBC Table 1 (dd series), simulated; counts in 64 KB blocks\n\n");
    out.push_str(&util::table(&header, &rows));
    out.push_str("\nfiles:\n");
    for w in &written {
        out.push_str(&format!("  {}\n", w.display()));
    }
    util::emit(&out)
}
