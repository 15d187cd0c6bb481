//! `replay --interval`: the miss ratio of each interval of each run, as JSON or CSV rows,
//! a table, or a figure (`--plot`). Intervals are counts of requests or spans of trace time;
//! one [`IntervalAxis`] says where each starts, so every output labels them the same way.

use std::path::Path;

use anyhow::{Context, Result};
use report::{Axis, Bounds, Figure, Series};
use serde::Serialize;
use sim::trace_time::TimeMarks;
use sim::{Intervals, RunResult, Schedule};

/// Where each interval starts: a position in the trace, and for spans of trace time the
/// seconds after the first request.
pub struct IntervalAxis {
    starts: Vec<u64>,
    seconds: Option<Vec<f64>>,
}

impl IntervalAxis {
    /// The axis of `schedule`'s intervals (`marks` holds the spans of trace time it was
    /// made from), for runs reporting at most `count` intervals.
    pub fn new(
        schedule: &Schedule,
        marks: &TimeMarks,
        ticks_per_second: u64,
        count: usize,
    ) -> Self {
        match &schedule.interval {
            Intervals::None => IntervalAxis {
                starts: Vec::new(),
                seconds: None,
            },
            Intervals::Every(n) => IntervalAxis {
                starts: (0..count as u64).map(|k| k * n).collect(),
                seconds: None,
            },
            Intervals::Ends(ends) => IntervalAxis {
                starts: std::iter::once(0).chain(ends.iter().copied()).collect(),
                seconds: Some(
                    marks
                        .interval_start_times()
                        .iter()
                        .map(|&t| t as f64 / ticks_per_second as f64)
                        .collect(),
                ),
            },
        }
    }

    fn start(&self, k: usize) -> u64 {
        self.starts.get(k).copied().unwrap_or(0)
    }

    fn seconds(&self, k: usize) -> Option<f64> {
        self.seconds.as_ref().and_then(|s| s.get(k).copied())
    }

    /// The x value of interval `k` in tables and figures: seconds for spans of trace time,
    /// the first position otherwise.
    fn x(&self, k: usize) -> f64 {
        self.seconds(k).unwrap_or(self.start(k) as f64)
    }

    fn x_label(&self) -> &'static str {
        if self.seconds.is_some() {
            "trace time (s)"
        } else {
            "request"
        }
    }
}

/// One interval of one run, for --json and --csv.
#[derive(Serialize)]
pub struct IntervalRow<'a> {
    /// The trace.
    pub trace: &'a str,
    /// The policy as written.
    pub policy: &'a str,
    /// The size as written.
    pub size: &'a str,
    /// 0-based interval number.
    pub interval: usize,
    /// First position of the interval.
    pub start: u64,
    /// Seconds of trace time from the first request to the interval's start (null for
    /// intervals counted in requests).
    pub start_s: Option<f64>,
    /// Requests in it (deletes excluded).
    pub requests: u64,
    /// Hits in it.
    pub hits: u64,
    /// Misses over requests.
    pub miss_ratio: f64,
}

const HEADER: &[&str] = &[
    "trace",
    "policy",
    "size",
    "interval",
    "start",
    "start_s",
    "requests",
    "hits",
    "miss_ratio",
];

/// The interval rows of every run.
pub fn rows<'a>(
    label: &'a str,
    axis: &'a IntervalAxis,
    results: &'a [RunResult],
) -> Vec<IntervalRow<'a>> {
    results
        .iter()
        .flat_map(|r| {
            r.intervals
                .iter()
                .enumerate()
                .map(move |(k, c)| IntervalRow {
                    trace: label,
                    policy: &r.policy,
                    size: &r.size,
                    interval: k,
                    start: axis.start(k),
                    start_s: axis.seconds(k),
                    requests: c.requests,
                    hits: c.hits,
                    miss_ratio: c.miss_ratio(),
                })
        })
        .collect()
}

/// The interval rows as CSV (what `--csv --interval` prints).
pub fn csv(label: &str, axis: &IntervalAxis, results: &[RunResult]) -> Result<String> {
    let mut out = crate::util::csv_line(HEADER);
    for r in rows(label, axis, results) {
        let v = serde_json::to_value(&r)?;
        let fields: Vec<String> = HEADER
            .iter()
            .map(|k| match &v[*k] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            })
            .collect();
        out.push_str(&crate::util::csv_line(&fields));
    }
    Ok(out)
}

/// The miss ratio of each interval (rows) of each run (columns), for people.
pub fn table(axis: &IntervalAxis, results: &[RunResult]) -> String {
    let first = if axis.seconds.is_some() {
        "from second"
    } else {
        "from request"
    };
    let mut header = vec![first.to_string()];
    header.extend(results.iter().map(|r| format!("{} @ {}", r.policy, r.size)));
    let n = results.iter().map(|r| r.intervals.len()).max().unwrap_or(0);
    let rows: Vec<Vec<String>> = (0..n)
        .map(|k| {
            let mut row = vec![crate::util::thousands(axis.x(k) as u64)];
            row.extend(results.iter().map(|r| {
                r.intervals
                    .get(k)
                    .map_or(String::new(), |c| format!("{:.4}", c.miss_ratio()))
            }));
            row
        })
        .collect();
    format!(
        "\nmiss ratio per interval (warm-up included):\n{}",
        crate::util::table(&header, &rows)
    )
}

/// The miss ratio of each run over the intervals, one line per (policy, size).
pub fn figure(label: &str, axis: &IntervalAxis, results: &[RunResult]) -> Figure {
    let series = results.iter().map(|r| {
        let points = (0..r.intervals.len())
            .map(|k| (axis.x(k), r.intervals[k].miss_ratio()))
            .collect();
        Series::marked_line(format!("{} @ {}", r.policy, r.size), points)
    });
    Figure::new(
        format!("Miss ratio per interval: {label}"),
        Axis::from_zero(axis.x_label()),
        Axis::new("miss ratio").bounds(Bounds::Fixed { min: 0.0, max: 1.0 }),
    )
    .with_all_series(series)
}

/// Draws [`figure`] into `path` (`-` is standard output).
pub fn plot(path: &Path, label: &str, axis: &IntervalAxis, results: &[RunResult]) -> Result<()> {
    report::write_svg(path, &figure(label, axis, results))
        .with_context(|| format!("cannot write the plot to {}", path.display()))?;
    Ok(())
}
