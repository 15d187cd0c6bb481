//! `bufcache mrc`: miss-ratio curves — exact for LRU in one pass, by sweep for other
//! policies, or approximated from a spatial sample in one streaming pass
//! ([`crate::mrc_approx`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::ProgressBar;
use policy::PolicySpec;
use report::{Axis, Bounds, Figure, Series};
use serde::Serialize;
use sim::mrc::{even_grid, exact_curve, ExactMethod, MrcPoint};
use sim::{CacheSize, CompactTrace, ReplayOptions};

use crate::input::{self, ReadArgs};
use crate::util;

/// Arguments of `bufcache mrc`.
#[derive(Args, Debug)]
pub struct MrcArgs {
    /// Trace files (default: the built-in synthetic workload of `bufcache replay`, in unit
    /// mode).
    #[arg(long = "trace", value_name = "FILE", num_args = 1..)]
    pub traces: Vec<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Policies, comma-separated (default: lru).
    #[arg(long = "policy", value_name = "P", value_delimiter = ',')]
    pub policies: Vec<PolicySpec>,
    /// Either a number of points N (sizes spread evenly up to the whole working set) or a
    /// comma-separated list of sizes (1000, 64MiB, 0.1).
    #[arg(long, value_name = "N|LIST", default_value = "20")]
    pub sizes: String,
    /// Unit mode: every object occupies one unit; otherwise capacities are bytes.
    #[arg(long)]
    pub ignore_size: bool,
    /// How to compute the curves: exact (the whole trace in memory: LRU in one pass,
    /// other policies by replay at every size), shards (LRU from a fixed-rate sample),
    /// shards-fixed (LRU from a sample of at most --samples keys), minisim (every policy
    /// on a fixed-rate sample in caches scaled by the rate). The last three stream.
    #[arg(long, value_enum, default_value = "exact")]
    pub method: MrcMethod,
    /// Sampling rate of shards and minisim, in (0, 1].
    #[arg(long, value_name = "R", default_value_t = 0.01)]
    pub rate: f64,
    /// Sample budget (keys) of shards-fixed.
    #[arg(long, value_name = "N", default_value_t = 32_768)]
    pub samples: usize,
    /// shards and minisim: the fewest sampled objects a cache should hold. Smaller sizes
    /// are served at a higher rate of the same (nested) sample, up to 1, so that their
    /// caches hold this many (objects of the mean size in byte mode); 0 keeps every size at
    /// --rate. shards-fixed (object mode) does the same within half its --samples. The rate
    /// of each point is in the output.
    #[arg(long, value_name = "N", default_value_t = sim::mrc::DEFAULT_MIN_SAMPLED)]
    pub min_sampled: u64,
    /// shards and shards-fixed (--ignore-size): promote up to N of the hottest keys, found
    /// during the pass, and sample them at the square root of each estimator's rate (a
    /// shards-fixed sample without levels: at rate 1), the rest at its rate (stratified
    /// sampling; see docs/mrc.md). 0, the default, samples every key alike.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub hot: usize,
    /// Leave out SHARDS' first-bucket adjustment (see docs/mrc.md).
    #[arg(long)]
    pub no_adjust: bool,
    /// Seed for randomized policies and the built-in workload.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Seed of the key sample of shards, shards-fixed and minisim: 0 is the fixed hash,
    /// another seed draws another sample at the same rate (to see the spread of the error).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub sample_seed: u64,
    /// Also draw the curves into this SVG file (written atomically).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// One JSON object per point and line.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// CSV with a header line.
    #[arg(long)]
    pub csv: bool,
}

/// `--method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MrcMethod {
    /// Exact curves from the whole trace in memory.
    Exact,
    /// SHARDS at a fixed rate (LRU).
    Shards,
    /// SHARDS with a fixed sample budget (LRU).
    ShardsFixed,
    /// Miniature simulation of every policy.
    Minisim,
}

/// One point of a computed curve.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Point {
    pub capacity: u64,
    pub requests: u64,
    /// Misses (estimated for sampled curves, rounded).
    pub misses: u64,
    pub miss_ratio: f64,
    /// Byte miss ratio where the method gives it.
    pub byte_miss_ratio: Option<f64>,
    /// Sampled curves: whether the sample resolves this size (see docs/mrc.md).
    pub resolved: Option<bool>,
    /// Sampled curves: the rate that served this size (raised at small sizes).
    pub rate: Option<f64>,
    /// Stratified SHARDS: whether this size's estimator sampled the hot keys apart.
    pub hot: Option<bool>,
}

impl From<MrcPoint> for Point {
    fn from(p: MrcPoint) -> Self {
        Point {
            capacity: p.capacity,
            requests: p.requests,
            misses: p.misses,
            miss_ratio: p.miss_ratio(),
            byte_miss_ratio: None,
            resolved: None,
            rate: None,
            hot: None,
        }
    }
}

/// One computed curve.
pub(crate) struct Curve {
    pub trace: String,
    pub policy: String,
    pub method: &'static str,
    /// Sampling rate (None for exact curves and sweeps).
    pub rate: Option<f64>,
    pub points: Vec<Point>,
}

#[derive(Serialize)]
struct Row<'a> {
    trace: &'a str,
    policy: &'a str,
    method: &'a str,
    rate: Option<f64>,
    mode: &'a str,
    capacity: u64,
    requests: u64,
    misses: u64,
    miss_ratio: f64,
    byte_miss_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hot: Option<bool>,
}

/// `--sizes`: `Some(n)` when it is a number of points, `None` when it is a list.
pub(crate) fn point_count(text: &str) -> Result<Option<usize>> {
    let t = text.trim();
    if t.contains(',') || t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    let n: usize = t
        .parse()
        .with_context(|| format!("--sizes {t}: too many points"))?;
    if n == 0 || n > 10_000 {
        bail!("--sizes {t}: give between 1 and 10000 points, or a list of sizes");
    }
    Ok(Some(n))
}

/// Resolve `--sizes` into capacities in units for `trace`.
fn capacities(text: &str, trace: &CompactTrace, ignore_size: bool) -> Result<Vec<u64>> {
    let total = if ignore_size {
        trace.summary().distinct_keys
    } else {
        trace.summary().footprint_bytes
    };
    if let Some(n) = point_count(text)? {
        return Ok(even_grid(total, n));
    }
    let mut caps = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let size = CacheSize::parse(part)?;
        caps.push(size.resolve(ignore_size, trace.working_set())?);
    }
    if caps.is_empty() {
        bail!("--sizes: no sizes given");
    }
    caps.sort_unstable();
    caps.dedup();
    Ok(caps)
}

/// Run `bufcache mrc`.
pub fn run(args: MrcArgs) -> Result<()> {
    // A typo in a policy must not cost the time of reading the trace.
    crate::run_opts::check_policies(&args.policies, args.seed)?;
    if args.method != MrcMethod::Exact {
        let curves = crate::mrc_approx::run(&args)?;
        return output(&args, &curves.curves, &curves.notes);
    }
    // The built-in workload's objects are all 4 KiB: count objects (exact one-pass LRU).
    let mut args = args;
    if args.traces.is_empty() {
        args.ignore_size = true;
    }
    let mut inputs: Vec<(String, CompactTrace)> = Vec::new();
    if args.traces.is_empty() {
        let s = input::default_replay_workload(args.seed)?;
        inputs.push((s.label, s.trace));
    } else {
        for path in &args.traces {
            crate::mrc_approx::ensure_exact_fits(path, &args.read)?;
            inputs.push((input::describe(path), input::load(path, &args.read)?));
        }
    }
    let policies = if args.policies.is_empty() {
        vec![PolicySpec::parse("lru")?]
    } else {
        args.policies.clone()
    };
    let options = ReplayOptions {
        ignore_size: args.ignore_size,
        seed: args.seed,
    };
    let mut curves = Vec::new();
    for (label, trace) in &inputs {
        let caps = capacities(&args.sizes, trace, args.ignore_size)?;
        for spec in &policies {
            // A bar only for replays: the one pass is over in moments.
            let bar = match ExactMethod::for_spec(trace, spec) {
                ExactMethod::Sweep => util::progress(
                    trace.summary().requests * caps.len() as u64,
                    &format!("{} sweep", spec.label()),
                ),
                ExactMethod::OnePass => ProgressBar::hidden(),
            };
            let done = AtomicU64::new(0);
            let curve = exact_curve(trace, spec, &caps, options, &|n| {
                bar.set_position(done.fetch_add(n, Ordering::Relaxed) + n);
            })
            .with_context(|| format!("{label}: {}", spec.label()))?;
            bar.finish_and_clear();
            let byte_ratios = curve.byte_miss_ratios.as_deref();
            let points = curve
                .points
                .iter()
                .enumerate()
                .map(|(i, &p)| Point {
                    byte_miss_ratio: byte_ratios.map(|b| b[i]),
                    ..Point::from(p)
                })
                .collect();
            let method = curve.method.label();
            curves.push(Curve {
                trace: label.clone(),
                policy: spec.label(),
                method,
                rate: None,
                points,
            });
        }
    }
    output(&args, &curves, &[])
}

/// Writes the curves as a table (with `notes` under each trace's table), JSON lines or
/// CSV, and the plot.
pub(crate) fn output(args: &MrcArgs, curves: &[Curve], notes: &[(String, String)]) -> Result<()> {
    if let Some(path) = &args.plot {
        report::write_svg(path, &figure(curves, args.ignore_size))?;
    }
    let mode = if args.ignore_size { "units" } else { "bytes" };
    let rows = curves.iter().flat_map(|c| {
        c.points.iter().map(move |p| Row {
            trace: &c.trace,
            policy: &c.policy,
            method: c.method,
            rate: p.rate.or(c.rate),
            mode,
            capacity: p.capacity,
            requests: p.requests,
            misses: p.misses,
            miss_ratio: p.miss_ratio,
            byte_miss_ratio: p.byte_miss_ratio,
            resolved: p.resolved,
            hot: p.hot,
        })
    });
    let mut out = String::new();
    if args.json {
        for r in rows {
            out.push_str(&serde_json::to_string(&r)?);
            out.push('\n');
        }
        for (_, json) in notes {
            out.push_str(json);
            out.push('\n');
        }
    } else if args.csv {
        out.push_str(
            "trace,policy,method,rate,mode,capacity,requests,misses,miss_ratio,byte_miss_ratio\n",
        );
        let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        for r in rows {
            out.push_str(&util::csv_line(&[
                r.trace.to_string(),
                r.policy.to_string(),
                r.method.to_string(),
                opt(r.rate),
                r.mode.to_string(),
                r.capacity.to_string(),
                r.requests.to_string(),
                r.misses.to_string(),
                r.miss_ratio.to_string(),
                opt(r.byte_miss_ratio),
            ]));
        }
    } else {
        let mut labels: Vec<&String> = curves.iter().map(|c| &c.trace).collect();
        labels.dedup();
        for (i, label) in labels.into_iter().enumerate() {
            let mine: Vec<&Curve> = curves.iter().filter(|c| &c.trace == label).collect();
            out.push_str(&format!("trace: {label}\n"));
            let mut header = vec![if args.ignore_size {
                "objects".to_string()
            } else {
                "bytes".to_string()
            }];
            // A rate column when some size was served above its curve's base rate (every
            // miniature policy of a pass has the same rate at a size; a SHARDS curve shown
            // beside them keeps its base rate, named in its header).
            let raised = mine.iter().find(|c| {
                c.points
                    .iter()
                    .any(|p| p.rate.is_some() && p.rate != c.rate)
            });
            if raised.is_some() {
                header.push("rate".to_string());
            }
            header.extend(mine.iter().map(|c| match c.rate {
                Some(r) => format!("{} ({} R={r:.4})", c.policy, c.method),
                None => format!("{} ({})", c.policy, c.method),
            }));
            let rows: Vec<Vec<String>> = (0..mine[0].points.len())
                .map(|i| {
                    let mut row = vec![util::thousands(mine[0].points[i].capacity)];
                    if let Some(c) = raised {
                        row.push(format!("{:.4}", c.points[i].rate.unwrap_or(1.0)));
                    }
                    row.extend(
                        mine.iter()
                            .map(|c| format!("{:.4}", c.points[i].miss_ratio)),
                    );
                    row
                })
                .collect();
            out.push_str(&util::table(&header, &rows));
            if let Some((text, _)) = notes.get(i) {
                out.push_str(text);
            }
            out.push('\n');
        }
        if let Some(path) = &args.plot {
            out.push_str(&format!("plot written to {}\n", path.display()));
        }
    }
    util::emit(&out)
}

/// Every curve as one line of a figure: miss ratio (0 to 1) against cache size.
fn figure(curves: &[Curve], ignore_size: bool) -> Figure {
    let x_label = if ignore_size {
        "cache size (objects)"
    } else {
        "cache size (bytes)"
    };
    let multi_trace = curves.iter().any(|c| c.trace != curves[0].trace);
    let line = |c: &Curve| {
        let name = if multi_trace {
            format!("{} — {}", c.policy, c.trace)
        } else {
            c.policy.clone()
        };
        let xy = c
            .points
            .iter()
            .map(|p| (p.capacity as f64, p.miss_ratio))
            .collect();
        Series::line(name, xy)
    };
    Figure::new(
        "Miss-ratio curve",
        Axis::new(x_label)
            .bounds(Bounds::FromZero { headroom: 0.0 })
            .whole_numbers(),
        Axis::new("miss ratio").bounds(Bounds::Fixed { min: 0.0, max: 1.0 }),
    )
    .with_all_series(curves.iter().map(line))
}
