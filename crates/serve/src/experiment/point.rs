//! A run's result as one row of the experiment's CSV, and the summaries judged from the
//! rows against the targets.

use std::fmt::Write;

use serde::Serialize;

use super::{Line, Measure};
use crate::load::fileset::Manifest;
use crate::load::LoadReport;

/// One point of the figures.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// `uniform` or `surge`.
    pub workload: String,
    /// The scheduler.
    pub scheduler: &'static str,
    /// `closed` or `open` loop.
    pub mode: &'static str,
    /// Open loop: the rate offered, requests per second.
    pub offered_rps: Option<f64>,
    /// Open loop: the rate offered as a fraction of fifo's saturated throughput.
    pub load: Option<f64>,
    /// Mirror: estimate / nominal cache size.
    pub mirror_ratio: Option<f64>,
    /// Mirror: the estimate in MiB.
    pub mirror_mib: Option<f64>,
    /// The page cache the cgroup was sized for (40% of the set), MiB; for the pool its
    /// capacity.
    pub cache_mib: f64,
    /// The file set's size, MiB.
    pub set_mib: f64,
    /// The server's read bandwidth limit, MB/s (none when not asked, or without cgroups).
    pub disk_limit_mb_s: Option<u64>,
    /// Page cache charged to the cgroup at the end of the run, MiB (where measured).
    pub cgroup_cache_mib: Option<f64>,
    /// Successful responses per second.
    pub throughput_rps: f64,
    /// MB (10^6) per second.
    pub throughput_mb_s: f64,
    /// Mean response time, ms.
    pub mean_ms: f64,
    /// Median, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// 99.9th percentile, ms.
    pub p999_ms: f64,
    /// Responses that were cache hits (the server's ground truth).
    pub hits: u64,
    /// Responses that were misses.
    pub misses: u64,
    /// Mean response time of hits, ms.
    pub hit_mean_ms: f64,
    /// Mean response time of misses, ms.
    pub miss_mean_ms: f64,
    /// How often the scheduler's prediction matched the ground truth.
    pub prediction_accuracy: Option<f64>,
    /// Wrong predictions: predicted hits that missed.
    pub false_hits: u64,
    /// Wrong predictions: predicted misses that hit.
    pub false_misses: u64,
    /// Misses that joined a read already in service (see `LoadReport::joined`).
    pub joined: u64,
    /// Agreement counting predicted hits that joined a read in service as right.
    pub prediction_accuracy_joined: Option<f64>,
    /// Device read requests during the measured run (all processes).
    pub device_reads: Option<u64>,
    /// Device MB read during the measured run (all processes).
    pub device_read_mb: Option<f64>,
    /// Successful responses.
    pub ok: u64,
    /// 503s and errors.
    pub failed: u64,
    /// Open loop: the round of the sweep (0 for the first). Last, with the mirror's
    /// policy, so that the CSV's earlier columns keep their places.
    pub round: Option<usize>,
    /// Mirror: the simulated policy.
    pub mirror_policy: Option<String>,
    /// The server's cgroup poll (`stat:50ms`, `usage:50ms`), if any; with
    /// `mirror_tracked`, the mirror's size followed it.
    pub cgroup_poll: Option<String>,
    /// Mirror: whether its size followed the poll's readings.
    pub mirror_tracked: bool,
    /// At the end of the run, from the cgroup's `memory.stat`: file pages that refaulted
    /// (`workingset_refault_file`, the whole run including warm-up) ...
    pub cgroup_refaults: Option<u64>,
    /// ... and the active and inactive file lists, MiB.
    pub cgroup_active_file_mib: Option<f64>,
    /// The inactive file list, MiB.
    pub cgroup_inactive_file_mib: Option<f64>,
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// What a run was, besides what its load report measured.
pub(super) struct RunFacts {
    pub mirror_bytes: Option<u64>,
    pub mirror_policy: Option<String>,
    pub cache_bytes: u64,
    pub cgroup_cache_bytes: Option<u64>,
    pub disk_limit_mb_s: Option<u64>,
    pub cgroup_poll: Option<String>,
    pub mirror_tracked: bool,
    pub cgroup_lists: CgroupLists,
}

/// The cgroup's reclaim counters at the end of a run (see [`Point::cgroup_refaults`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CgroupLists {
    pub refaults: Option<u64>,
    pub active_file_bytes: Option<u64>,
    pub inactive_file_bytes: Option<u64>,
}

impl Point {
    pub(super) fn new(
        manifest: &Manifest,
        line: &Line,
        measure: Measure,
        facts: RunFacts,
        r: &LoadReport,
    ) -> Self {
        let (mode, offered_rps) = match measure {
            Measure::Closed => ("closed", None),
            Measure::Open { rate_per_s, .. } => ("open", Some(rate_per_s)),
        };
        Point {
            workload: manifest.workload.clone(),
            scheduler: line.name(),
            mode,
            offered_rps,
            load: None,
            mirror_ratio: match line {
                Line::Mirror { ratio } | Line::AdaptiveMirror { ratio } => Some(*ratio),
                _ => None,
            },
            mirror_mib: facts.mirror_bytes.map(mib),
            cache_mib: mib(facts.cache_bytes),
            set_mib: mib(manifest.total_bytes()),
            disk_limit_mb_s: facts.disk_limit_mb_s,
            cgroup_cache_mib: facts.cgroup_cache_bytes.map(mib),
            throughput_rps: r.throughput_rps,
            throughput_mb_s: r.throughput_mb_s,
            mean_ms: r.latency.mean_ms,
            p50_ms: r.latency.p50_ms,
            p99_ms: r.latency.p99_ms,
            p999_ms: r.latency.p999_ms,
            hits: r.latency_hit.count,
            misses: r.latency_miss.count,
            hit_mean_ms: r.latency_hit.mean_ms,
            miss_mean_ms: r.latency_miss.mean_ms,
            prediction_accuracy: r.prediction_accuracy,
            false_hits: r.false_hits,
            false_misses: r.false_misses,
            joined: r.joined,
            prediction_accuracy_joined: r.prediction_accuracy_joined,
            device_reads: r.device_reads.map(|d| d.reads),
            device_read_mb: r.device_reads.map(|d| d.bytes as f64 / 1e6),
            ok: r.ok,
            failed: r.rejected + r.errors,
            round: None,
            mirror_policy: facts.mirror_policy,
            cgroup_poll: facts.cgroup_poll,
            mirror_tracked: facts.mirror_tracked,
            cgroup_refaults: facts.cgroup_lists.refaults,
            cgroup_active_file_mib: facts.cgroup_lists.active_file_bytes.map(mib),
            cgroup_inactive_file_mib: facts.cgroup_lists.inactive_file_bytes.map(mib),
        }
    }
}

/// The targets, judged from the points: for each workload, mirror at the right
/// size against fifo (throughput +10%, mean response time halved), the mirror's
/// prediction accuracy (90%), and the ratio of mirror's throughput across estimates.
pub fn summary(points: &[Point]) -> String {
    let mut s = String::new();
    for workload in ["uniform", "surge"] {
        let of = |name: &str, ratio: Option<f64>| {
            points.iter().find(|p| {
                p.mode == "closed"
                    && p.workload == workload
                    && p.scheduler == name
                    && p.mirror_ratio == ratio
            })
        };
        let (Some(fifo), Some(mirror)) = (of("fifo", None), of("mirror", Some(1.0))) else {
            continue;
        };
        let gain = mirror.throughput_rps / fifo.throughput_rps - 1.0;
        let speedup = fifo.mean_ms / mirror.mean_ms;
        let _ = writeln!(
            s,
            "{workload}: mirror at the right size vs fifo: throughput {:+.0}% (target >= +10%: {}), mean response time {:.2}x lower (target >= 2x: {})",
            100.0 * gain,
            if gain >= 0.10 { "met" } else { "missed" },
            speedup,
            if speedup >= 2.0 { "met" } else { "missed" },
        );
        if let Some(a) = mirror.prediction_accuracy {
            let _ = writeln!(
                s,
                "{workload}: mirror predictions agree with cachestat {:.1}% of the time (target >= 90%: {})",
                100.0 * a,
                if a >= 0.9 { "met" } else { "missed" }
            );
        }
        if let Some(a) = mirror
            .prediction_accuracy_joined
            .filter(|_| mirror.joined > 0)
        {
            let _ = writeln!(
                s,
                "{workload}: {} requests joined a read in service; counting the predicted hits among them as right: {:.1}% ({})",
                mirror.joined,
                100.0 * a,
                if a >= 0.9 { "met" } else { "missed" }
            );
        }
        let sweep: Vec<String> = points
            .iter()
            .filter(|p| {
                p.mode == "closed" && p.workload == workload && p.scheduler.starts_with("mirror")
            })
            .map(|p| {
                format!(
                    "{}{}x {:.0}/s {:.1} ms",
                    if p.scheduler == "mirror" {
                        ""
                    } else {
                        "adaptive "
                    },
                    p.mirror_ratio.unwrap_or(0.0),
                    p.throughput_rps,
                    p.mean_ms
                )
            })
            .collect();
        let _ = writeln!(s, "{workload}: mirror by estimate: {}", sweep.join("; "));
    }
    s
}

/// The open loop against its target, load by load and round by round: each scheduler's
/// mean and p99 response time, its hit share, and fifo's mean over its mean (the target:
/// at least 2x for the mirror at the right size); with several rounds, the median and
/// range of the mirror's ratio at each load.
pub fn open_loop_summary(points: &[Point]) -> String {
    let open: Vec<&Point> = points.iter().filter(|p| p.mode == "open").collect();
    let mut s = String::new();
    let mut loads: Vec<f64> = open.iter().filter_map(|p| p.load).collect();
    loads.sort_by(f64::total_cmp);
    loads.dedup();
    for load in loads {
        let mut ratios = Vec::new();
        let mut rounds: Vec<usize> = open
            .iter()
            .filter(|p| p.load == Some(load))
            .map(|p| p.round.unwrap_or(0))
            .collect();
        rounds.dedup();
        for round in rounds {
            let at: Vec<&&Point> = open
                .iter()
                .filter(|p| p.load == Some(load) && p.round.unwrap_or(0) == round)
                .collect();
            if let Some(ratio) = round_line(&mut s, load, round, &at) {
                ratios.push(ratio);
            }
        }
        if ratios.len() > 1 {
            ratios.sort_by(f64::total_cmp);
            let median = if ratios.len() % 2 == 1 {
                ratios[ratios.len() / 2]
            } else {
                (ratios[ratios.len() / 2 - 1] + ratios[ratios.len() / 2]) / 2.0
            };
            let _ = writeln!(
                s,
                "  at {load} x capacity over {} rounds: mirror vs fifo {median:.2}x (median; {:.2}x to {:.2}x; target >= 2x: {})",
                ratios.len(),
                ratios[0],
                ratios[ratios.len() - 1],
                if median >= 2.0 { "met" } else { "missed" }
            );
        }
    }
    s
}

/// One round at one load: its line of the summary, and fifo's mean over the mirror's.
fn round_line(s: &mut String, load: f64, round: usize, at: &[&&Point]) -> Option<f64> {
    let fifo = at.iter().find(|p| p.scheduler == "fifo");
    let cells: Vec<String> = at
        .iter()
        .map(|p| {
            let vs_fifo = fifo
                .filter(|_| p.scheduler != "fifo" && p.mean_ms > 0.0)
                .map(|f| format!(", {:.2}x lower", f.mean_ms / p.mean_ms))
                .unwrap_or_default();
            let answered = p.hits + p.misses;
            let hit_pct = if answered > 0 {
                100.0 * p.hits as f64 / answered as f64
            } else {
                0.0
            };
            format!(
                "{} {:.0} ms mean / {:.0} ms p99, {hit_pct:.0}% hits{vs_fifo}",
                p.scheduler, p.mean_ms, p.p99_ms
            )
        })
        .collect();
    let rate = at.first().and_then(|p| p.offered_rps).unwrap_or(0.0);
    let _ = writeln!(
        s,
        "open loop at {load} x capacity ({rate:.1}/s), round {}: {}",
        round + 1,
        cells.join("; ")
    );
    let (f, m) = (fifo?, at.iter().find(|p| p.scheduler == "mirror")?);
    let ratio = f.mean_ms / m.mean_ms;
    let _ = writeln!(
        s,
        "  mirror vs fifo mean response time: {ratio:.2}x lower (target >= 2x: {})",
        if ratio >= 2.0 { "met" } else { "missed" }
    );
    Some(ratio)
}
