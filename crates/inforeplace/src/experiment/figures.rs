//! The thesis's Figures 3.1 and 3.2 from the experiment's rows, as specs for the shared
//! report crate (drawn by the caller with `FigureFile::write_into`).
//!
//! The report crate draws lines and dots on numeric axes, not bars, so a categorical
//! axis (targets, trees) is numbered and its names are spelled out in the axis label.

use super::accuracy::{AccuracyRow, THESIS_TARGETS};
use super::index::{IndexRun, LevelRow};
use super::linux::LinuxRow;
use report::{Axis, Figure, FigureFile, Legend, Series};

/// "1 fifo, 2 lru, ..." for a numbered axis.
fn numbered(names: &[&str]) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{} {n}", i + 1))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Figure 3.1: inaccuracy per target for each source (the pool's and simulated sources,
/// and the Linux page cache when its rows are given), and the overhead per call split
/// into its four parts for each source.
pub fn figure_3_1(rows: &[AccuracyRow], linux: &[LinuxRow]) -> Vec<FigureFile> {
    let targets = THESIS_TARGETS;
    let x_label = format!("target ({})", numbered(&targets));
    let mut sources: Vec<&str> = Vec::new();
    for r in rows {
        if !sources.contains(&r.source.as_str()) {
            sources.push(&r.source);
        }
    }
    let per_target = |f: &dyn Fn(&str) -> Option<f64>| -> Vec<(f64, f64)> {
        targets
            .iter()
            .enumerate()
            .filter_map(|(i, t)| f(t).map(|y| ((i + 1) as f64, y)))
            .collect()
    };
    let find = |s: &str, t: &str| rows.iter().find(|r| r.source == s && r.target == t);
    let mut inaccuracy = Figure::new(
        "Figure 3.1 (left): InfoReplace's inaccuracy on Dust's workload",
        Axis::new(&x_label).whole_numbers().ticks(targets.len()),
        Axis::from_zero("inaccuracy (% of the target's pages not cached)"),
    )
    .with_legend(Legend::UpperLeft);
    for &s in &sources {
        inaccuracy = inaccuracy.with_series(Series::marked_line(
            s,
            per_target(&|t| find(s, t).map(|r| r.inaccuracy * 100.0)),
        ));
    }
    for levers in ["none", "dontneed"] {
        let points = per_target(&|t| {
            linux
                .iter()
                .find(|r| r.target == t && r.levers == levers)
                .map(|r| r.inaccuracy * 100.0)
        });
        if !points.is_empty() {
            let label = format!("Linux page cache (mirror, levers {levers})");
            inaccuracy = inaccuracy.with_series(Series::marked_line(label, points));
        }
    }
    if let Some(&first) = sources.first() {
        inaccuracy = inaccuracy.with_series(Series::reference(
            format!("{first} alone"),
            per_target(&|t| find(first, t).map(|r| r.inaccuracy_alone * 100.0)),
        ));
    }
    let mut files = vec![FigureFile::new("fig3-1-inaccuracy.svg", inaccuracy)];
    for &s in &sources {
        let part = |name: &str, f: fn(&AccuracyRow) -> f64| {
            Series::marked_line(name, per_target(&|t| find(s, t).map(f)))
        };
        let figure = Figure::new(
            format!("Figure 3.1 (right): overhead per read or write, source {s}"),
            Axis::new(&x_label).whole_numbers().ticks(targets.len()),
            Axis::from_zero("microseconds per call"),
        )
        .with_legend(Legend::UpperLeft)
        .with_all_series([
            part("check", |r| r.check_us),
            part("refresh", |r| r.refresh_us),
            part("simulate", |r| r.simulate_us),
            part("rest", |r| r.rest_us),
        ]);
        let name = format!("fig3-1-overhead-{}.svg", s.replace(':', "-"));
        files.push(FigureFile::new(name, figure));
    }
    files
}

/// Figure 3.2: run time of each way relative to the `linux` way, per tree and engine
/// (left), and the hit rate per level of the first tree (right).
pub fn figure_3_2(runs: &[IndexRun], levels: &[LevelRow]) -> Vec<FigureFile> {
    let mut trees: Vec<&str> = Vec::new();
    for r in runs {
        if !trees.contains(&r.tree.as_str()) {
            trees.push(&r.tree);
        }
    }
    let mut engines: Vec<&str> = Vec::new();
    for r in runs {
        if !engines.contains(&r.engine) {
            engines.push(r.engine);
        }
    }
    let find = |e: &str, t: &str, w: &str| {
        runs.iter()
            .find(|r| r.engine == e && r.tree == t && r.way == w)
    };
    let mut run_time = Figure::new(
        "Figure 3.2 (left): run time relative to the Linux-like lists",
        Axis::new(format!("tree ({})", numbered(&trees)))
            .whole_numbers()
            .ticks(trees.len()),
        Axis::from_zero("run time / run time of linux"),
    )
    .with_legend(Legend::LowerLeft);
    // The ways each engine ran, in the order first seen (the page cache has its own).
    let ways_of = |e: &str| {
        let mut ways: Vec<&'static str> = Vec::new();
        for r in runs.iter().filter(|r| r.engine == e) {
            if !ways.contains(&r.way) {
                ways.push(r.way);
            }
        }
        ways
    };
    for &e in &engines {
        for way in ways_of(e) {
            let points: Vec<(f64, f64)> = trees
                .iter()
                .enumerate()
                .filter_map(|(i, &t)| {
                    let base = find(e, t, "linux")?.run_time_s;
                    let r = find(e, t, way)?;
                    (base > 0.0).then(|| ((i + 1) as f64, r.run_time_s / base))
                })
                .collect();
            let label = format!("{e} {way}");
            let series = if e == "sim" {
                Series::line(label, points)
            } else {
                Series::marked_line(label, points)
            };
            run_time = run_time.with_series(series);
        }
    }
    let mut files = vec![FigureFile::new("fig3-2-run-time.svg", run_time)];
    if let Some(&tree) = trees.first() {
        let mut by_level = Figure::new(
            format!("Figure 3.2 (right): hit rate per level, {tree}"),
            Axis::new("level (1 = root)").whole_numbers(),
            Axis::from_zero("hit rate"),
        )
        .with_legend(Legend::LowerLeft);
        for &e in &engines {
            for way in ways_of(e) {
                let points: Vec<(f64, f64)> = levels
                    .iter()
                    .filter(|l| l.engine == e && l.tree == tree && l.way == way)
                    .map(|l| (f64::from(l.level), l.hit_rate))
                    .collect();
                let label = format!("{e} {way}");
                let series = if e == "sim" {
                    Series::line(label, points)
                } else {
                    Series::marked_line(label, points)
                };
                by_level = by_level.with_series(series);
            }
        }
        files.push(FigureFile::new("fig3-2-levels.svg", by_level));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::index::{self, IndexSettings};

    /// The figures carry the rows' numbers: one inaccuracy line per source with a point
    /// per thesis target, and run-time ratios of 1 for the `linux` way.
    #[test]
    fn figures_carry_the_rows() {
        let rows = crate::experiment::accuracy::run(64, &THESIS_TARGETS, 1).unwrap();
        let files = figure_3_1(&rows, &[]);
        let left = &files[0].figure;
        assert_eq!(left.series.len(), 4 + 1);
        let mru = rows
            .iter()
            .find(|r| r.source == "pool:linux" && r.target == "mru")
            .unwrap();
        assert_eq!(left.series[0].points[2], (3.0, mru.inaccuracy * 100.0));
        assert_eq!(files.len(), 1 + 4);
        for f in &files {
            report::render_svg(&f.figure).unwrap();
        }
        let mut s = IndexSettings::quick(None, 3);
        s.trees.truncate(1);
        s.lookups = 200;
        let (runs, levels) = index::run(&s).unwrap();
        let files = figure_3_2(&runs, &levels);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].figure.series[0].points, [(1.0, 1.0)]);
        assert_eq!(files[1].figure.series[0].points.len(), 5);
        for f in &files {
            report::render_svg(&f.figure).unwrap();
        }
    }
}
