//! `bufcache experiment ubc`: Table 1 of the UBC paper (Silvers 2000) on the simulated
//! split and unified caches. Writes `ubc-sim.csv` and `ubc-time.svg`; prints the table
//! beside the paper's (or, with `--json`, one JSON object per row and design).

use anyhow::Result;
use sim::experiments::ubc::{self, UbcPoint};

use crate::experiment_cmd::{json_lines, prepare, write_csv, ExperimentArgs};
use crate::plot::{self, Chart, Series};
use crate::util;

/// Run the experiment.
pub fn run(a: ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let points = ubc::run();
    let csv = a.out.join("ubc-sim.csv");
    write_csv(&csv, &points)?;
    let line = |layout: &str, paper: bool| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter(|p| p.layout == layout)
            .filter_map(|p| {
                let y = if paper { p.paper_s? } else { p.time_s };
                Some((p.row as f64, y))
            })
            .collect()
    };
    let figure = a.out.join("ubc-time.svg");
    plot::write_svg(
        &figure,
        &Chart {
            title: "UBC Table 1: dd run times, split vs unified (model) and NetBSD 1.4.2 vs UBC (paper)",
            x_desc: "Table 1 row",
            y_desc: "run time (s)",
            series: vec![
                Series::line("split (model)", line("split", false)),
                Series::line("unified (model)", line("unified", false)),
                Series::reference("NetBSD 1.4.2 (paper)", line("split", true)),
                Series::reference("NetBSD with UBC (paper)", line("unified", true)),
            ],
            y_max: None,
        },
    )?;
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
    out.push_str(&format!(
        "\nfiles:\n  {}\n  {}\n",
        csv.display(),
        figure.display()
    ));
    util::emit(&out)
}
