//! The experiment's figures, as `report` specs built from its points (drawing is
//! `report`'s job): per workload, throughput and mean response time against the
//! mirror's size estimate with every other scheduler as a level line (Figures 2.20 and
//! 2.21), and the open loop's mean and p99 response time and hit share against the
//! offered rate.

use report::{Axis, Figure, FigureFile, Legend, Series};

use super::{Point, OPEN_LOOP_LINES};

/// One quantity drawn from the points.
struct Panel {
    /// End of the file name (`throughput` in `uniform-by-estimate-throughput.svg`).
    stem: &'static str,
    /// Caption after the workload's name.
    title: &'static str,
    /// The vertical axis' label.
    what: &'static str,
    /// The value of a point.
    metric: fn(&Point) -> f64,
    /// Logarithmic vertical axis (response times across saturation span decades).
    log: bool,
}

const ESTIMATE_PANELS: [Panel; 2] = [
    Panel {
        stem: "throughput",
        title: "throughput by the mirror's size estimate (Figure 2.20)",
        what: "requests per second",
        metric: |p| p.throughput_rps,
        log: false,
    },
    Panel {
        stem: "response",
        title: "mean response time by the mirror's size estimate (Figure 2.21)",
        what: "mean response time (ms)",
        metric: |p| p.mean_ms,
        log: false,
    },
];

const OPEN_PANELS: [Panel; 3] = [
    Panel {
        stem: "mean",
        title: "open loop: mean response time by offered load",
        what: "mean response time (ms)",
        metric: |p| p.mean_ms,
        log: true,
    },
    Panel {
        stem: "p99",
        title: "open loop: 99th percentile response time by offered load",
        what: "p99 response time (ms)",
        metric: |p| p.p99_ms,
        log: true,
    },
    Panel {
        stem: "hits",
        title: "open loop: share of responses served from cache",
        what: "hits (% of responses)",
        metric: hit_percent,
        log: false,
    },
];

/// Schedulers drawn as level lines in the estimate figures (they take no estimate).
const LEVEL_LINES: [&str; 4] = ["fifo", "nowait", "cachestat", "pool"];

fn hit_percent(p: &Point) -> f64 {
    let answered = p.hits + p.misses;
    if answered == 0 {
        0.0
    } else {
        100.0 * p.hits as f64 / answered as f64
    }
}

/// Every figure the points support, in a fixed order: by workload (in the order the
/// points first name them), the estimate figures where there are closed-loop mirror
/// points, the open-loop figures where there are open-loop points.
pub fn figures(points: &[Point]) -> Vec<FigureFile> {
    let mut workloads: Vec<&str> = Vec::new();
    for p in points {
        if !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    let mut out = Vec::new();
    for workload in workloads {
        let of = |mode: &str| -> Vec<&Point> {
            points
                .iter()
                .filter(|p| p.workload == workload && p.mode == mode)
                .collect()
        };
        let closed = of("closed");
        if closed.iter().any(|p| p.scheduler == "mirror") {
            out.extend(
                ESTIMATE_PANELS
                    .iter()
                    .map(|panel| by_estimate(workload, &closed, panel)),
            );
        }
        let open = of("open");
        if !open.is_empty() {
            out.extend(
                OPEN_PANELS
                    .iter()
                    .map(|panel| open_loop(workload, &open, panel)),
            );
        }
    }
    out
}

fn by_estimate(workload: &str, closed: &[&Point], panel: &Panel) -> FigureFile {
    let sweep = |scheduler: &str| -> Vec<(f64, f64)> {
        closed
            .iter()
            .filter(|p| p.scheduler == scheduler)
            .filter_map(|p| Some((p.mirror_ratio?, (panel.metric)(p))))
            .collect()
    };
    let mirror = sweep("mirror");
    let xs = mirror.iter().map(|&(x, _)| x);
    let (lo, hi) = xs.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    let mut figure = Figure::new(
        format!("{workload}: {}", panel.title),
        Axis::new("size estimate / the cache's size").log(),
        Axis::from_zero(panel.what),
    )
    .with_legend(Legend::LowerRight)
    .with_series(Series::marked_line("mirror", mirror));
    let adaptive = sweep("mirror-adaptive");
    if !adaptive.is_empty() {
        // Dots, not a line: each is its own run, started from that estimate.
        figure = figure.with_series(Series {
            label: Some("adaptive mirror (from)".into()),
            ..Series::points(adaptive, 5)
        });
    }
    for name in LEVEL_LINES {
        if let Some(p) = closed.iter().find(|p| p.scheduler == name) {
            let y = (panel.metric)(p);
            figure = figure.with_series(Series::line(name, vec![(lo, y), (hi, y)]));
        }
    }
    FigureFile::new(format!("{workload}-by-estimate-{}.svg", panel.stem), figure)
}

fn open_loop(workload: &str, open: &[&Point], panel: &Panel) -> FigureFile {
    let y_axis = if panel.log {
        Axis::new(panel.what).log()
    } else {
        Axis::from_zero(panel.what)
    };
    let mut figure = Figure::new(
        format!("{workload}: {}", panel.title),
        Axis::new("offered load (requests per second)"),
        y_axis,
    )
    .with_legend(Legend::UpperLeft);
    for line in OPEN_LOOP_LINES {
        let xy: Vec<(f64, f64)> = open
            .iter()
            .filter(|p| p.scheduler == line.name())
            .filter_map(|p| Some((p.offered_rps?, (panel.metric)(p))))
            // A log axis cannot show a run that served nothing.
            .filter(|&(_, y)| !panel.log || y > 0.0)
            .collect();
        if !xy.is_empty() {
            figure = figure.with_series(Series::marked_line(line.name(), xy));
        }
    }
    FigureFile::new(format!("{workload}-open-loop-{}.svg", panel.stem), figure)
}
