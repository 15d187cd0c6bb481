//! `bufcache experiment nelson`: Nelson 1990's ECD and IFS benchmarks on the memory
//! simulator. Writes `nelson-ecd.csv`, `nelson-ifs.csv`, figures like the paper's Figures
//! 1-6 plus two of our own, and `nelson-tables.md` (Tables 2-4 and every arbiter); prints
//! the tables (or, with `--json`, one JSON object per run).

use std::path::PathBuf;

use anyhow::Result;
use sim::experiments::nelson::{self, EcdPoint, IfsPoint, NelsonResults, FIXED_MB};

use crate::experiment_cmd::{json_lines, prepare, write_csv, ExperimentArgs};
use crate::util;
use report::{Axis, Figure, FigureFile, Series};

/// Nelson's Table 3 (no penalty) and Table 4 (120 s): sleep, min, max, avg response,
/// sort time, page-ins, page-outs, cache min and max (KB).
const PAPER_TABLE_3: [[f64; 9]; 4] = [
    [1.0, 0.0, 4.7, 0.1, 79.6, 173.0, 456.0, 152.0, 784.0],
    [5.0, 0.0, 4.5, 0.8, 83.8, 437.0, 509.0, 157.0, 842.0],
    [10.0, 1.9, 13.3, 5.9, 103.4, 1605.0, 1177.0, 146.0, 1226.0],
    [30.0, 12.5, 22.0, 15.8, 96.3, 1250.0, 983.0, 141.0, 2533.0],
];
const PAPER_TABLE_4: [[f64; 9]; 4] = [
    [1.0, 0.0, 0.4, 0.03, 74.8, 1.0, 4.0, 64.0, 178.0],
    [5.0, 0.0, 0.1, 0.02, 72.8, 0.0, 0.0, 64.0, 168.0],
    [10.0, 0.0, 0.1, 0.01, 72.1, 0.0, 0.0, 64.0, 168.0],
    [30.0, 0.0, 0.1, 0.03, 74.0, 0.0, 0.0, 64.0, 168.0],
];
/// Nelson's Table 2: memory (MB), cache min and max (MB), FS asks VM, satisfied, VM asks
/// FS, satisfied.
const PAPER_TABLE_2: [[f64; 7]; 5] = [
    [10.0, 0.25, 5.6, 8125.0, 1810.0, 2942.0, 1846.0],
    [11.0, 0.25, 6.4, 7105.0, 1889.0, 2610.0, 1967.0],
    [12.0, 0.25, 6.9, 5840.0, 1964.0, 2555.0, 2075.0],
    [14.0, 0.25, 8.7, 4012.0, 1957.0, 2669.0, 2162.0],
    [16.0, 0.34, 8.8, 3652.0, 1937.0, 2629.0, 2229.0],
];

/// Run the experiment.
pub fn run(a: ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let results = nelson::run(a.quick);
    let mut written = Vec::new();
    let ecd_csv = a.out.join("nelson-ecd.csv");
    write_csv(&ecd_csv, &results.ecd)?;
    written.push(ecd_csv);
    let ifs_csv = a.out.join("nelson-ifs.csv");
    write_csv(&ifs_csv, &results.ifs)?;
    written.push(ifs_csv);
    written.extend(figures(&a, &results)?);
    let tables = tables(&results);
    let tables_path = a.out.join("nelson-tables.md");
    util::write_atomic(&tables_path, tables.as_bytes())?;
    written.push(tables_path);
    if a.json {
        let mut out = json_lines(&results.ecd)?;
        out.push_str(&json_lines(&results.ifs)?);
        return util::emit(&out);
    }
    let mut out = tables;
    out.push_str("\nfiles:\n");
    for w in &written {
        out.push_str(&format!("  {}\n", w.display()));
    }
    util::emit(&out)
}

fn ecd<'a>(r: &'a NelsonResults, arbiter: &'a str) -> impl Iterator<Item = &'a EcdPoint> + 'a {
    r.ecd
        .iter()
        .filter(move |p| p.arbiter == arbiter && p.finished)
}

fn ifs<'a>(r: &'a NelsonResults, arbiter: &'a str) -> impl Iterator<Item = &'a IfsPoint> + 'a {
    r.ifs.iter().filter(move |p| p.arbiter == arbiter)
}

fn fixed_label(mb: f64) -> String {
    format!("fixed-{}", (mb * 256.0) as u64)
}

/// The memory sizes that ran.
fn memories(r: &NelsonResults) -> Vec<f64> {
    let mut m: Vec<f64> = r.ecd.iter().map(|p| p.memory_mb).collect();
    m.dedup();
    m
}

fn variable_labels() -> Vec<String> {
    nelson::variable_arbiters()
        .iter()
        .map(|a| a.label())
        .collect()
}

/// Draws one figure: file name, title, x and y descriptions, lines.
type DrawFn<'a> = dyn FnMut(&str, &str, &str, &str, Vec<Series>) -> Result<()> + 'a;

fn figures(a: &ExperimentArgs, r: &NelsonResults) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut draw = |file: &str, title: &str, x_desc: &str, y_desc: &str, series: Vec<Series>| {
        let figure =
            Figure::new(title, Axis::new(x_desc), Axis::from_zero(y_desc)).with_all_series(series);
        written.push(FigureFile::new(file, figure).write_into(&a.out)?);
        anyhow::Ok(())
    };
    // Figure 1: fixed caches, one line per memory size, against the cache size.
    let by_memory = |metric: fn(&EcdPoint) -> f64| -> Vec<Series> {
        memories(r)
            .iter()
            .map(|&m| {
                let pts = r
                    .ecd
                    .iter()
                    .filter(|p| p.memory_mb == m && p.finished)
                    .filter_map(|p| p.fixed_cache_mb.map(|f| (f, metric(p))))
                    .collect();
                Series::marked_line(format!("{m} MB"), pts)
            })
            .collect()
    };
    draw(
        "fig1-elapsed.svg",
        "Figure 1a: ECD elapsed time, fixed-size caches",
        "file cache (MB)",
        "elapsed (s)",
        by_memory(|p| p.elapsed_s),
    )?;
    draw(
        "fig1-server.svg",
        "Figure 1b: ECD server utilization, fixed-size caches",
        "file cache (MB)",
        "server utilization (%)",
        by_memory(|p| 100.0 * p.server_utilization),
    )?;
    // Figure 2: traffic against the fixed cache size at the largest memory.
    let largest = memories(r).last().copied().unwrap_or(16.0);
    let traffic = |metric: fn(&EcdPoint) -> f64| -> Vec<(f64, f64)> {
        r.ecd
            .iter()
            .filter(|p| p.memory_mb == largest && p.finished)
            .filter_map(|p| p.fixed_cache_mb.map(|f| (f, metric(p))))
            .collect()
    };
    draw(
        "fig2-traffic.svg",
        &format!("Figure 2: ECD MB transferred, fixed-size caches, {largest} MB"),
        "file cache (MB)",
        "MB transferred",
        vec![
            Series::marked_line("FS bytes", traffic(|p| p.fs_mb)),
            Series::marked_line("VM bytes", traffic(|p| p.vm_mb)),
            Series::marked_line("total bytes", traffic(|p| p.total_mb)),
        ],
    )?;
    // Figures 3-6 and ours: against memory size, one line per arbiter.
    let smallest = fixed_label(FIXED_MB[0]);
    let against_memory = |labels: &[String], metric: fn(&EcdPoint) -> f64| -> Vec<Series> {
        labels
            .iter()
            .map(|l| {
                Series::marked_line(
                    l.clone(),
                    ecd(r, l).map(|p| (p.memory_mb, metric(p))).collect(),
                )
            })
            .collect()
    };
    let fig3 = vec!["sprite".to_string(), smallest.clone()];
    // Figures 3 and 5 are each a pair: elapsed time and server utilization.
    let time_and_server =
        |draw: &mut DrawFn<'_>, figure: &str, what: &str, labels: &[String]| -> Result<()> {
            draw(
                &format!("fig{figure}-elapsed.svg"),
                &format!("Figure {figure}a: ECD elapsed time, {what}"),
                "client memory (MB)",
                "elapsed (s)",
                against_memory(labels, |p| p.elapsed_s),
            )?;
            draw(
                &format!("fig{figure}-server.svg"),
                &format!("Figure {figure}b: ECD server utilization, {what}"),
                "client memory (MB)",
                "server utilization (%)",
                against_memory(labels, |p| 100.0 * p.server_utilization),
            )
        };
    time_and_server(&mut draw, "3", "variable vs smallest fixed", &fig3)?;
    let mut fig4 = against_memory(&fig3, |p| p.fs_mb);
    fig4.extend(against_memory(&fig3, |p| p.vm_mb));
    fig4.extend(against_memory(&fig3, |p| p.total_mb));
    for (s, what) in fig4
        .iter_mut()
        .zip(["FS", "FS", "VM", "VM", "total", "total"])
    {
        s.label = s.label.take().map(|l| format!("{what} {l}"));
    }
    draw(
        "fig4-traffic.svg",
        "Figure 4: ECD MB transferred, variable vs smallest fixed",
        "client memory (MB)",
        "MB transferred",
        fig4,
    )?;
    let penalties: Vec<String> = variable_labels()
        .into_iter()
        .take(nelson::PENALTIES_S.len())
        .collect();
    time_and_server(&mut draw, "5", "with penalties", &penalties)?;
    draw(
        "fig6-vm.svg",
        "Figure 6a: ECD VM traffic with penalties",
        "client memory (MB)",
        "MB transferred",
        against_memory(&penalties, |p| p.vm_mb),
    )?;
    draw(
        "fig6-fs.svg",
        "Figure 6b: ECD file traffic with penalties",
        "client memory (MB)",
        "MB transferred",
        against_memory(&penalties, |p| p.fs_mb),
    )?;
    draw(
        "fig6-total.svg",
        "Figure 6c: ECD total traffic with penalties",
        "client memory (MB)",
        "MB transferred",
        against_memory(&penalties, |p| p.total_mb),
    )?;
    let mut all = variable_labels();
    all.push(smallest);
    draw(
        "arbiters-ecd.svg",
        "ECD elapsed time under every arbiter",
        "client memory (MB)",
        "elapsed (s)",
        against_memory(&all, |p| p.elapsed_s),
    )?;
    let by_sleep = |metric: fn(&IfsPoint) -> f64| -> Vec<Series> {
        variable_labels()
            .iter()
            .map(|l| {
                Series::marked_line(
                    l.clone(),
                    ifs(r, l).map(|p| (p.sleep_s, metric(p))).collect(),
                )
            })
            .collect()
    };
    draw(
        "arbiters-ifs-response.svg",
        "IFS mean interactive response under every arbiter",
        "sleep interval (s)",
        "mean response (s)",
        by_sleep(|p| p.response_mean_s),
    )?;
    draw(
        "arbiters-ifs-sort.svg",
        "IFS sort time under every arbiter",
        "sleep interval (s)",
        "sort time (s)",
        by_sleep(|p| p.sort_s),
    )?;
    Ok(written)
}

fn strings(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|s| s.to_string()).collect()
}

fn ifs_table(r: &NelsonResults, arbiter: &str, paper: &[[f64; 9]; 4]) -> String {
    let header = strings(&[
        "sleep s",
        "resp min",
        "max",
        "avg",
        "p90",
        "sort s",
        "deg",
        "page ins",
        "page outs",
        "cache KB min",
        "max",
        "paper: resp avg",
        "sort s",
        "ins",
        "outs",
        "cache KB max",
    ]);
    let rows: Vec<Vec<String>> = ifs(r, arbiter)
        .map(|p| {
            let paper_row = paper.iter().find(|row| row[0] == p.sleep_s);
            let mut row = vec![
                format!("{}", p.sleep_s),
                format!("{:.2}", p.response_min_s),
                format!("{:.2}", p.response_max_s),
                format!("{:.2}", p.response_mean_s),
                format!("{:.2}", p.response_p90_s),
                format!("{:.1}", p.sort_s),
                format!("{:.0}%", 100.0 * p.sort_degradation),
                p.page_ins.to_string(),
                p.page_outs.to_string(),
                p.cache_min_kb.to_string(),
                p.cache_max_kb.to_string(),
            ];
            row.extend(match paper_row {
                Some(q) => vec![
                    format!("{}", q[3]),
                    format!("{}", q[4]),
                    format!("{}", q[5]),
                    format!("{}", q[6]),
                    format!("{}", q[8]),
                ],
                None => vec![String::new(); 5],
            });
            row
        })
        .collect();
    util::table(&header, &rows)
}

/// Tables 2-4 beside the paper's, and every arbiter on both benchmarks.
fn tables(r: &NelsonResults) -> String {
    let mut out = String::new();
    out.push_str("Table 2: ECD under Sprite's negotiation (ours | paper)\n\n");
    let header = strings(&[
        "memory MB",
        "cache min MB",
        "max",
        "FS asks VM",
        "satisfied",
        "VM asks FS",
        "satisfied",
        "paper: max",
        "FS asks",
        "sat",
        "VM asks",
        "sat",
    ]);
    let rows: Vec<Vec<String>> = ecd(r, "sprite")
        .map(|p| {
            let q = PAPER_TABLE_2.iter().find(|q| q[0] == p.memory_mb);
            let mut row = vec![
                format!("{}", p.memory_mb),
                format!("{:.2}", p.cache_min_mb),
                format!("{:.2}", p.cache_max_mb),
                p.fs_asks_vm.to_string(),
                p.fs_satisfied.to_string(),
                p.vm_asks_fs.to_string(),
                p.vm_satisfied.to_string(),
            ];
            row.extend(match q {
                Some(q) => q[2..].iter().map(|v| format!("{v}")).collect(),
                None => vec![String::new(); 5],
            });
            row
        })
        .collect();
    out.push_str(&util::table(&header, &rows));
    out.push_str(&format!(
        "\nTable 3: IFS, variable-size cache, no penalty (sort alone: {:.1} s; paper: 60 s)\n\n",
        r.sort_standalone_s
    ));
    out.push_str(&ifs_table(r, "sprite", &PAPER_TABLE_3));
    out.push_str("\nTable 4: IFS, variable-size cache, 120 s penalty\n\n");
    out.push_str(&ifs_table(r, "penalty-120", &PAPER_TABLE_4));
    out.push_str("\nEvery arbiter, ECD (elapsed s per memory size; fixed rows are Figure 1)\n\n");
    let mems = memories(r);
    let mut header = vec!["arbiter".to_string()];
    header.extend(mems.iter().map(|m| format!("{m} MB")));
    header.extend(strings(&[
        "VM refaults",
        "FS refaults",
        "page ins",
        "page outs",
        "FS MB",
        "VM MB",
    ]));
    let mut labels: Vec<String> = FIXED_MB.iter().map(|&f| fixed_label(f)).collect();
    labels.extend(variable_labels());
    let rows: Vec<Vec<String>> = labels
        .iter()
        .map(|l| {
            let mut row = vec![l.clone()];
            for &m in &mems {
                row.push(
                    match r.ecd.iter().find(|p| &p.arbiter == l && p.memory_mb == m) {
                        Some(p) if p.finished => format!("{:.1}", p.elapsed_s),
                        Some(_) => "thrash".into(),
                        None => String::new(),
                    },
                );
            }
            let sum = |f: fn(&EcdPoint) -> f64| -> f64 {
                r.ecd.iter().filter(|p| &p.arbiter == l).map(f).sum()
            };
            row.extend([
                format!("{}", sum(|p| p.vm_refaults as f64)),
                format!("{}", sum(|p| p.fs_refaults as f64)),
                format!("{}", sum(|p| p.page_ins as f64)),
                format!("{}", sum(|p| p.page_outs as f64)),
                format!("{:.0}", sum(|p| p.fs_mb)),
                format!("{:.0}", sum(|p| p.vm_mb)),
            ]);
            row
        })
        .collect();
    out.push_str(&util::table(&header, &rows));
    out.push_str("(refaults, page-ins, page-outs and MB are totals over the memory sizes)\n");
    out.push_str(
        "\nEvery arbiter, IFS (per sleep interval: mean / p90 / max response s, sort s)\n\n",
    );
    let header = strings(&[
        "arbiter",
        "sleep s",
        "resp mean",
        "p90",
        "max",
        "sort s",
        "page ins",
        "page outs",
        "VM refaults",
        "FS reads",
        "FS writes",
        "FS refaults",
        "cache KB max",
    ]);
    let rows: Vec<Vec<String>> = variable_labels()
        .iter()
        .flat_map(|l| ifs(r, l).collect::<Vec<_>>())
        .map(|p| {
            vec![
                p.arbiter.clone(),
                format!("{}", p.sleep_s),
                format!("{:.2}", p.response_mean_s),
                format!("{:.2}", p.response_p90_s),
                format!("{:.2}", p.response_max_s),
                format!("{:.1}", p.sort_s),
                p.page_ins.to_string(),
                p.page_outs.to_string(),
                p.vm_refaults.to_string(),
                p.fs_reads.to_string(),
                p.fs_writes.to_string(),
                p.fs_refaults.to_string(),
                p.cache_max_kb.to_string(),
            ]
        })
        .collect();
    out.push_str(&util::table(&header, &rows));
    out
}
