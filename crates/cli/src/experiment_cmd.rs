//! `bufcache experiment NAME`: reproduce a paper's experiment; CSV and SVG under `--out`,
//! a summary (or JSON lines) on stdout.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use sim::experiments::burnett_ordering::{self, OrderingPoint};
use sim::experiments::kotz_ellis::{self, KotzPoint, PAPER_CACHING_TABLE};
use sim::experiments::xmf_cleaning::{self, XmfPoint};
use sim::experiments::EXPERIMENTS;

use crate::plot::{self, Chart, Series};
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
    /// Also print one JSON object per data point on stdout (instead of the summary).
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
                "cache-aware-server".into(),
                crate::serve_cmd::EXPERIMENT_SUMMARY.into(),
            ]);
            util::emit(&util::table(&["name".into(), "reproduces".into()], &rows))
        }
        ExperimentCommand::KotzEllis(a) => kotz(a),
        ExperimentCommand::XmfCleaning(a) => xmf(a),
        ExperimentCommand::BurnettOrdering(a) => burnett(a),
        ExperimentCommand::CacheAwareServer(a) => crate::serve_cmd::run_experiment(a),
        ExperimentCommand::Inforeplace(a) => crate::inforeplace_cmd::run(a),
    }
}

pub(crate) fn prepare(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

pub(crate) fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    util::write_atomic(path, &bytes)
}

pub(crate) fn json_lines<T: Serialize>(rows: &[T]) -> Result<String> {
    let mut out = String::new();
    for r in rows {
        out.push_str(&serde_json::to_string(r)?);
        out.push('\n');
    }
    Ok(out)
}

fn kotz(a: ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let points = kotz_ellis::run(kotz_ellis::Options {
        seed: a.seed,
        quick: a.quick,
    });
    let csv = a.out.join("kotz-ellis.csv");
    write_csv(&csv, &points)?;
    let mut written = vec![csv];
    let by_size = [
        (
            "fig1",
            "gw",
            false,
            "fig1-gw.svg",
            "Figure 1: gw, cache size",
        ),
        (
            "fig2",
            "gw",
            true,
            "fig2-gw-compute.svg",
            "Figure 2: gw with computation",
        ),
        (
            "fig3",
            "lw1",
            false,
            "fig3-lw1.svg",
            "Figure 3: lw1, cache size",
        ),
        (
            "fig3",
            "lw1",
            true,
            "fig3-lw1-compute.svg",
            "Figure 3: lw1 with computation",
        ),
        (
            "fig4",
            "seg",
            false,
            "fig4-seg.svg",
            "Figure 4: seg, cache size",
        ),
    ];
    for (figure, pattern, compute, file, title) in by_size {
        let pts: Vec<&KotzPoint> = points
            .iter()
            .filter(|p| p.figure == figure && p.pattern == pattern && p.compute == compute)
            .collect();
        let path = a.out.join(file);
        plot::write_svg(
            &path,
            &kotz_chart(title, "cache size (1 KB buffers)", &pts, |p| {
                f64::from(p.cache_buffers)
            }),
        )?;
        written.push(path);
    }
    for (pattern, file) in [
        ("gw", "fig5a-gw.svg"),
        ("lw1", "fig5b-lw1.svg"),
        ("seg", "fig5c-seg.svg"),
    ] {
        let pts: Vec<&KotzPoint> = points
            .iter()
            .filter(|p| p.figure == "fig5" && p.pattern == pattern)
            .collect();
        let title = format!("Figure 5: {pattern}, record size (80 buffers)");
        let path = a.out.join(file);
        plot::write_svg(
            &path,
            &kotz_chart(&title, "record size (blocks)", &pts, |p| p.record_blocks),
        )?;
        written.push(path);
    }
    if a.json {
        return util::emit(&json_lines(&points)?);
    }
    let mut out = String::from(
        "Caching (§4.3): execution time in seconds, WriteBack cache of 80 buffers\n\n",
    );
    let header: Vec<String> = [
        "pattern",
        "record",
        "no cache (paper)",
        "no cache (ours)",
        "cache (paper)",
        "cache (ours)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let find = |pattern: &str, record: f64, policy: &str| {
        points
            .iter()
            .find(|p| {
                p.figure == "caching"
                    && p.pattern == pattern
                    && p.record_blocks == record
                    && p.write_policy == policy
            })
            .map_or(f64::NAN, |p| p.time_s)
    };
    let rows: Vec<Vec<String>> = PAPER_CACHING_TABLE
        .iter()
        .map(|&(pattern, record, none, cached)| {
            vec![
                pattern.to_string(),
                if record == 1.0 {
                    "1 block".into()
                } else {
                    "1/4 block".into()
                },
                format!("{none:.1}"),
                format!("{:.1}", find(pattern, record, "none")),
                format!("{cached:.1}"),
                format!("{:.1}", find(pattern, record, "writeback")),
            ]
        })
        .collect();
    out.push_str(&util::table(&header, &rows));
    out.push_str(&format!("\n{} points; files:\n", points.len()));
    for w in written {
        out.push_str(&format!("  {}\n", w.display()));
    }
    util::emit(&out)
}

/// Execution time per write policy against `x`, with the ideal time dashed.
fn kotz_chart<'a>(
    title: &'a str,
    x_desc: &'a str,
    pts: &[&KotzPoint],
    x: impl Fn(&KotzPoint) -> f64,
) -> Chart<'a> {
    let mut series: Vec<Series> = kotz_ellis::WRITE_POLICIES
        .iter()
        .map(|wp| {
            Series::line(
                wp.name(),
                pts.iter()
                    .filter(|p| p.write_policy == wp.name())
                    .map(|p| (x(p), p.time_s))
                    .collect(),
            )
        })
        .collect();
    let mut ideal: Vec<(f64, f64)> = pts
        .iter()
        .filter(|p| p.write_policy == "writefull")
        .map(|p| (x(p), p.ideal_s))
        .collect();
    ideal.sort_by(|a, b| a.0.total_cmp(&b.0));
    series.push(Series::reference("ideal", ideal));
    Chart {
        title,
        x_desc,
        y_desc: "execution time (s)",
        series,
        y_max: None,
    }
}

fn xmf(a: ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let points = xmf_cleaning::run(a.seed, a.quick);
    let csv = a.out.join("xmf-cleaning.csv");
    write_csv(&csv, &points)?;
    let series = |metric: fn(&XmfPoint) -> u64| -> Vec<Series> {
        xmf_cleaning::CLEANERS
            .iter()
            .map(|&(name, _, _)| {
                Series::line(
                    name,
                    points
                        .iter()
                        .filter(|p| p.cleaner == name)
                        .map(|p| (f64::from(p.cache_buffers) * 8.0 / 1024.0, metric(p) as f64))
                        .collect(),
                )
            })
            .collect()
    };
    let writes = a.out.join("fig21-writes.svg");
    plot::write_svg(
        &writes,
        &Chart {
            title: "Figure 21: disk writes against cache size",
            x_desc: "cache size (MB)",
            y_desc: "disk writes",
            series: series(|p| p.disk_writes),
            y_max: None,
        },
    )?;
    let reads = a.out.join("fig21-reads.svg");
    plot::write_svg(
        &reads,
        &Chart {
            title: "Figure 21: disk reads against cache size",
            x_desc: "cache size (MB)",
            y_desc: "disk reads",
            series: series(|p| p.disk_reads),
            y_max: None,
        },
    )?;
    if a.json {
        return util::emit(&json_lines(&points)?);
    }
    let header: Vec<String> = [
        "buffers",
        "MB",
        "getnewbuf reads",
        "clock reads",
        "getnewbuf writes",
        "clock writes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let sizes: Vec<u32> = points
        .iter()
        .filter(|p| p.cleaner == "getnewbuf")
        .map(|p| p.cache_buffers)
        .collect();
    let get = |cleaner: &str, n: u32| {
        points
            .iter()
            .find(|p| p.cleaner == cleaner && p.cache_buffers == n)
            .expect("every size ran")
    };
    let rows: Vec<Vec<String>> = sizes
        .iter()
        .map(|&n| {
            let (g, c) = (get("getnewbuf", n), get("clock", n));
            vec![
                n.to_string(),
                format!("{}", n * 8 / 1024),
                g.disk_reads.to_string(),
                c.disk_reads.to_string(),
                g.disk_writes.to_string(),
                c.disk_writes.to_string(),
            ]
        })
        .collect();
    let mut out = util::table(&header, &rows);
    out.push_str(&format!(
        "\nfiles:\n  {}\n  {}\n  {}\n",
        csv.display(),
        writes.display(),
        reads.display()
    ));
    util::emit(&out)
}

fn burnett(a: ExperimentArgs) -> Result<()> {
    prepare(&a.out)?;
    let points = burnett_ordering::run(a.seed, a.quick);
    let csv = a.out.join("burnett-ordering.csv");
    write_csv(&csv, &points)?;
    let mut written = vec![csv];
    let sweeps: &[burnett_ordering::Sweep] = if a.quick {
        &burnett_ordering::QUICK_SWEEPS
    } else {
        &burnett_ordering::SWEEPS
    };
    let x_desc = |param: &str| match param {
        "pages_read" => "pages read per transaction",
        "pages_written" => "pages written per transaction",
        "log_bytes" => "log write per transaction (bytes)",
        "transactions" => "transactions",
        _ => "cache size (16 KB pages)",
    };
    let series = |param: &str, scheduler: &str, metric: fn(&OrderingPoint) -> f64| -> Vec<Series> {
        ["none", "fsync", "barrier", "graph"]
            .iter()
            .map(|m| {
                Series::line(
                    *m,
                    points
                        .iter()
                        .filter(|p| {
                            p.param == param && p.scheduler == scheduler && p.mechanism == *m
                        })
                        .map(|p| (p.value as f64, metric(p)))
                        .collect(),
                )
            })
            .collect()
    };
    for sweep in sweeps {
        for scheduler in ["fifo", "clook"] {
            let title = format!(
                "Figure {}: execution time, {} scheduling",
                sweep.figure,
                scheduler.to_uppercase()
            );
            let path = a.out.join(format!(
                "fig{}-{}-time-{scheduler}.svg",
                sweep.figure, sweep.param
            ));
            plot::write_svg(
                &path,
                &Chart {
                    title: &title,
                    x_desc: x_desc(sweep.param),
                    y_desc: "execution time (s)",
                    series: series(sweep.param, scheduler, |p| p.time_s),
                    y_max: None,
                },
            )?;
            written.push(path);
        }
    }
    // Disk traffic (Figures 4.13, 4.15) and writes due to eviction (4.19), FIFO.
    let traffic = [
        (
            "pages_read",
            "4.13",
            "disk writes",
            (|p: &OrderingPoint| p.disk_writes as f64) as fn(&OrderingPoint) -> f64,
        ),
        ("pages_read", "4.13", "disk reads", |p: &OrderingPoint| {
            p.disk_reads as f64
        }),
        (
            "pages_written",
            "4.15",
            "disk writes",
            |p: &OrderingPoint| p.disk_writes as f64,
        ),
        (
            "pages_written",
            "4.15",
            "disk reads",
            |p: &OrderingPoint| p.disk_reads as f64,
        ),
        (
            "cache_pages",
            "4.19",
            "writes due to eviction",
            |p: &OrderingPoint| p.eviction_writes as f64,
        ),
    ];
    for (param, figure, what, metric) in traffic {
        let title = format!("Figure {figure}: {what}, FIFO scheduling");
        let path = a.out.join(format!(
            "fig{figure}-{param}-{}.svg",
            what.replace(' ', "-")
        ));
        plot::write_svg(
            &path,
            &Chart {
                title: &title,
                x_desc: x_desc(param),
                y_desc: what,
                series: series(param, "fifo", metric),
                y_max: None,
            },
        )?;
        written.push(path);
    }
    let violations: u64 = points.iter().map(|p| p.violations).sum();
    if a.json {
        util::emit(&json_lines(&points)?)?;
    } else {
        let mut out = String::from("At the thesis's defaults (3 pages read, 3 written, 128 B log writes, 10,000 transactions, 20,000 pages):\n\n");
        let header: Vec<String> = [
            "scheduler",
            "mechanism",
            "time_s",
            "disk_reads",
            "disk_writes",
            "duplicates",
            "violations",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let rows: Vec<Vec<String>> = points
            .iter()
            .filter(|p| {
                p.param == "transactions" && p.value == 10_000
                    || p.param == "cache_pages" && p.value == 20_000 && a.quick
            })
            .map(|p| {
                vec![
                    p.scheduler.to_string(),
                    p.mechanism.to_string(),
                    format!("{:.1}", p.time_s),
                    p.disk_reads.to_string(),
                    p.disk_writes.to_string(),
                    p.duplicates.to_string(),
                    p.violations.to_string(),
                ]
            })
            .collect();
        out.push_str(&util::table(&header, &rows));
        out.push_str(&format!(
            "\n{} points, {violations} ordering violations; files:\n",
            points.len()
        ));
        for w in &written {
            out.push_str(&format!("  {}\n", w.display()));
        }
        util::emit(&out)?;
    }
    anyhow::ensure!(
        violations == 0,
        "the ordering checker found {violations} violations"
    );
    Ok(())
}
