//! `bufcache mrc --method shards|shards-fixed|minisim`: sampled curves in one streaming
//! pass per trace ([`sim::mrc::approximate`]), with the sample's working-set estimate, the
//! SHARDS state and the process's peak resident memory reported next to the curves.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use policy::PolicySpec;
use serde::Serialize;
use sim::mrc::{approximate, ApproxConfig, HotConfig, Method};
use sim::CacheSize;
use trace::{Format, TraceError, TraceReader};

use crate::input::{self, ReadArgs};
use crate::mrc_cmd::{Curve, MrcArgs, MrcMethod, Point};
use crate::util;

/// Curves of every trace, and per trace a text note and a JSON summary line.
pub(crate) struct Computed {
    pub curves: Vec<Curve>,
    pub notes: Vec<(String, String)>,
}

#[derive(Serialize)]
struct Summary<'a> {
    trace: &'a str,
    summary: bool,
    method: &'static str,
    rate: f64,
    requests: u64,
    sampled_requests: u64,
    sampled_keys: u64,
    hot_limit: usize,
    hot_keys: u64,
    hot_requests: u64,
    hot_filled_at: Option<u64>,
    working_set_objects: f64,
    working_set_bytes: f64,
    shards_state_bytes: u64,
    min_resolved_capacity: u64,
    min_sampled: u64,
    miniature_requests: u64,
    peak_rss_bytes: Option<u64>,
    passes: u32,
    wall_s: f64,
}

/// The process's peak resident memory (`VmHWM` of `/proc/self/status`), where the
/// system has it.
pub fn peak_rss_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Bytes per request the exact method holds: the compact trace (16) and its Fenwick tree
/// and position map (about 12 more).
const EXACT_BYTES_PER_REQUEST: u64 = 28;

/// The exact method loads the whole trace: refuse a trace whose request count (known from
/// the size of an uncompressed oracleGeneral file, 24 bytes a record) would not fit.
pub fn ensure_exact_fits(path: &Path, read: &ReadArgs) -> Result<()> {
    let format = read.format.or_else(|| Format::from_path(path));
    if format == Some(Format::OracleGeneral) {
        if let Ok(meta) = std::fs::metadata(path) {
            let requests = meta.len() / 24;
            util::ensure_fits_in_memory(
                requests * EXACT_BYTES_PER_REQUEST,
                &format!(
                    "the exact curve of {requests} requests (it keeps the whole trace in \
                     memory; --method shards, shards-fixed or minisim stream it instead)"
                ),
            )?;
        }
    }
    Ok(())
}

/// `--sizes` for a stream: a number of points, or sizes resolved after (or before) the pass.
fn sizes(text: &str) -> Result<(Vec<CacheSize>, usize)> {
    let t = text.trim();
    if !t.contains(',') && !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let n: usize = t
            .parse()
            .with_context(|| format!("--sizes {t}: too many points"))?;
        if n == 0 || n > 10_000 {
            bail!("--sizes {t}: give between 1 and 10000 points, or a list of sizes");
        }
        return Ok((Vec::new(), n));
    }
    let list = t
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(CacheSize::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if list.is_empty() {
        bail!("--sizes: no sizes given");
    }
    Ok((list, 0))
}

/// Computes the sampled curves of every `--trace`.
pub(crate) fn run(args: &MrcArgs) -> Result<Computed> {
    if args.traces.is_empty() {
        bail!("--method shards, shards-fixed and minisim stream a trace file: give --trace");
    }
    let policies = if args.policies.is_empty() {
        vec![PolicySpec::parse("lru")?]
    } else {
        args.policies.clone()
    };
    let method = match args.method {
        MrcMethod::Shards => Method::ShardsRate(args.rate),
        MrcMethod::ShardsFixed => Method::ShardsSize(args.samples),
        MrcMethod::Minisim => Method::MiniSim(args.rate),
        MrcMethod::Exact => unreachable!("the exact method is not sampled"),
    };
    let shards_only = !matches!(method, Method::MiniSim(_));
    if shards_only
        && policies
            .iter()
            .any(|p| p.name != "lru" || !p.params.is_empty())
    {
        bail!(
            "--method {} gives the LRU curve only (stack distances); use --method minisim for \
             other policies",
            method.name()
        );
    }
    let (list, points) = sizes(&args.sizes)?;
    let config = ApproxConfig {
        method,
        sizes: list,
        points,
        byte_mode: !args.ignore_size,
        policies: policies.clone(),
        adjust: !args.no_adjust,
        seed: args.seed,
        sample_seed: args.sample_seed,
        min_sampled: args.min_sampled,
        hot: HotConfig::new(args.hot),
    };
    config.validate()?;
    let mut computed = Computed {
        curves: Vec::new(),
        notes: Vec::new(),
    };
    let options = trace::ReadOptions {
        page_size: args.read.page_size,
        ..trace::ReadOptions::default()
    };
    anyhow::ensure!(
        args.read.page_size > 0,
        "--page-size must be at least 1 byte"
    );
    for path in &args.traces {
        let label = input::describe(path);
        let open = || -> Result<Box<dyn TraceReader>, TraceError> {
            trace::open(path, args.read.format, &options)
        };
        let bar = util::progress(0, &format!("{} {label}", method.name()));
        let start = Instant::now();
        let result = approximate(&open, &config, &|n| bar.inc(n))
            .with_context(|| format!("{label}: {}", method.name()))?;
        bar.finish_and_clear();
        let wall_s = start.elapsed().as_secs_f64();
        // SHARDS comes first; with miniature simulation it is the same sample's LRU curve,
        // shown only when LRU itself was not simulated.
        let mini_lru = !shards_only && policies.iter().any(|p| p.label() == "lru");
        for (i, c) in result.curves.iter().enumerate() {
            if i == 0 && !shards_only && mini_lru {
                continue;
            }
            computed.curves.push(Curve {
                trace: label.clone(),
                policy: c.policy.clone(),
                method: c.method,
                rate: Some(c.rate),
                points: c
                    .points
                    .iter()
                    .map(|p| Point {
                        capacity: p.capacity,
                        requests: result.requests,
                        misses: p.misses.round() as u64,
                        miss_ratio: p.miss_ratio,
                        byte_miss_ratio: Some(p.byte_miss_ratio),
                        resolved: Some(p.resolved),
                        rate: Some(p.rate),
                        hot: (args.hot > 0).then_some(p.hot),
                    })
                    .collect(),
            });
        }
        let rate = result.curves[0].rate;
        let summary = Summary {
            trace: &label,
            summary: true,
            method: method.name(),
            rate,
            requests: result.requests,
            sampled_requests: result.sampled_requests,
            sampled_keys: result.sampled_keys,
            hot_limit: args.hot,
            hot_keys: result.hot_keys,
            hot_requests: result.hot_requests,
            hot_filled_at: result.hot_filled_at,
            working_set_objects: result.working_set.objects,
            working_set_bytes: result.working_set.bytes,
            shards_state_bytes: result.shards_state_bytes,
            min_resolved_capacity: result.curves[0].min_resolved_capacity,
            min_sampled: config.min_sampled,
            miniature_requests: result.miniature_requests,
            peak_rss_bytes: peak_rss_bytes(),
            passes: result.passes,
            wall_s,
        };
        let text = format!(
            "{}: rate {rate:.6}, sampled {} of {} requests ({} keys), {} pass(es), {:.2} s\n\
             working set (estimated): {} objects, {}\n\
             SHARDS state at most {}; peak resident memory {}\n\
             sizes below {} ({} at rate {rate:.6}: under one sampled object) are not \
             resolved{}{}\n",
            method.name(),
            util::thousands(result.sampled_requests),
            util::thousands(result.requests),
            util::thousands(result.sampled_keys),
            result.passes,
            wall_s,
            util::thousands(result.working_set.objects.round() as u64),
            util::human_bytes(result.working_set.bytes.round() as u64),
            util::human_bytes(result.shards_state_bytes),
            summary
                .peak_rss_bytes
                .map_or("unknown".into(), util::human_bytes),
            util::thousands(summary.min_resolved_capacity),
            if args.ignore_size {
                "1/rate objects"
            } else {
                "1/rate objects of mean size"
            },
            raised_note(&result, config.min_sampled),
            hot_note(&result, args.hot),
        );
        computed
            .notes
            .push((text, serde_json::to_string(&summary)?));
    }
    Ok(computed)
}

/// The note on stratified sampling: how many keys were promoted and the requests they
/// drew. Empty when it was off.
fn hot_note(result: &sim::mrc::ApproxResult, limit: usize) -> String {
    if limit == 0 {
        return String::new();
    }
    format!(
        "\nstratified: {} of at most {} hot keys tracked at rate 1 ({} requests from their \
         promotion on), the rest sampled at the rate",
        util::thousands(result.hot_keys),
        util::thousands(limit as u64),
        util::thousands(result.hot_requests),
    )
}

/// The note on sizes served above the base rate: how many, and the requests their
/// miniature caches (or SHARDS' nested levels) served in all (the cost of raising them).
/// Empty when no size was raised.
fn raised_note(result: &sim::mrc::ApproxResult, min_sampled: u64) -> String {
    let raised = result
        .curves
        .iter()
        .map(|c| c.points.iter().filter(|p| p.rate > c.rate).count())
        .max()
        .unwrap_or(0);
    if raised == 0 {
        return String::new();
    }
    format!(
        "\n{raised} smaller size(s) served at a higher rate of the same sample (column rate) \
         so that each cache holds at least {} sampled objects; {} served {} requests in all",
        util::thousands(min_sampled),
        if result.curves.len() > 1 {
            "the miniature caches"
        } else {
            "SHARDS' nested levels"
        },
        util::thousands(result.miniature_requests),
    )
}
