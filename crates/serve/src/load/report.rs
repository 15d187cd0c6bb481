//! The load generator's report: JSON for programs, a table for people.

use std::fmt::Write;

use serde::Serialize;

use super::stats::{LatencySummary, Recorder};
use super::{LoadConfig, LoopMode};
use linux::DeviceReads;

/// What a load run measured, with the configuration that produced it.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    /// The server.
    pub target: String,
    /// `closed` or `open`.
    pub mode: &'static str,
    /// Open loop only: the rate asked for.
    pub rate_per_s: Option<f64>,
    /// Client connections.
    pub connections: usize,
    /// `uniform` or `surge`.
    pub workload: String,
    /// Files in the set.
    pub files: usize,
    /// Seed of the draws.
    pub seed: u64,
    /// Requests warmed up with before measuring.
    pub warmup_requests: u64,
    /// Measured wall-clock seconds.
    pub seconds: f64,
    /// Successful responses.
    pub ok: u64,
    /// 503 answers (queue full).
    pub rejected: u64,
    /// Failures and unexpected statuses.
    pub errors: u64,
    /// Successful responses per second.
    pub throughput_rps: f64,
    /// Body megabytes (10^6) per second.
    pub throughput_mb_s: f64,
    /// Latency of every successful response.
    pub latency: LatencySummary,
    /// Of responses the server called hits.
    pub latency_hit: LatencySummary,
    /// Of responses the server called misses.
    pub latency_miss: LatencySummary,
    /// Responses with both a prediction and the server's ground truth.
    pub predictions_compared: u64,
    /// Fraction of those where they agreed (`null` when none could be compared).
    pub prediction_accuracy: Option<f64>,
    /// Disagreements: predicted hits that missed.
    pub false_hits: u64,
    /// Disagreements: predicted misses that hit.
    pub false_misses: u64,
    /// Compared responses whose pages a request already in service was reading
    /// (`x-bufcache-actual: joined`; misses in the strict count).
    pub joined: u64,
    /// Agreement counting a predicted hit that joined another request's read as right
    /// (it read nothing from the disk itself).
    pub prediction_accuracy_joined: Option<f64>,
    /// Reads of the file set's device during the measured run (all processes).
    pub device_reads: Option<DeviceReads>,
}

impl LoadReport {
    /// Build from a run's record.
    pub fn new(
        config: &LoadConfig,
        r: &Recorder,
        seconds: f64,
        device: Option<DeviceReads>,
    ) -> Self {
        let [latency, latency_hit, latency_miss] = r.summaries();
        let per_s = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
        LoadReport {
            target: config.target.to_string(),
            mode: match config.mode {
                LoopMode::Closed => "closed",
                LoopMode::Open { .. } => "open",
            },
            rate_per_s: match config.mode {
                LoopMode::Closed => None,
                LoopMode::Open { rate_per_s } => Some(rate_per_s),
            },
            connections: config.connections,
            workload: config.manifest.workload.clone(),
            files: config.manifest.files.len(),
            seed: config.seed,
            warmup_requests: config.warmup_requests,
            seconds,
            ok: r.ok,
            rejected: r.rejected,
            errors: r.errors,
            throughput_rps: per_s(r.ok as f64),
            throughput_mb_s: per_s(r.bytes as f64 / 1e6),
            latency,
            latency_hit,
            latency_miss,
            predictions_compared: r.compared,
            prediction_accuracy: (r.compared > 0).then(|| r.agreed as f64 / r.compared as f64),
            false_hits: r.false_hits,
            false_misses: r.compared - r.agreed - r.false_hits,
            joined: r.joined,
            prediction_accuracy_joined: (r.compared > 0)
                .then(|| r.agreed_counting_joined() as f64 / r.compared as f64),
            device_reads: device,
        }
    }

    /// A table for people.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let rate = self
            .rate_per_s
            .map(|r| format!(" at {r:.0}/s"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "{} loop{rate}, {} connections, {} ({} files), seed {}, {} warm-up requests",
            self.mode, self.connections, self.workload, self.files, self.seed, self.warmup_requests
        );
        let _ = writeln!(
            s,
            "{} ok, {} rejected (503), {} errors in {:.2} s: {:.1} req/s, {:.2} MB/s",
            self.ok,
            self.rejected,
            self.errors,
            self.seconds,
            self.throughput_rps,
            self.throughput_mb_s
        );
        let _ = writeln!(
            s,
            "{:<6} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "class", "count", "mean ms", "p50", "p90", "p99", "p99.9", "max"
        );
        for (name, l) in [
            ("all", &self.latency),
            ("hit", &self.latency_hit),
            ("miss", &self.latency_miss),
        ] {
            let _ = writeln!(
                s,
                "{:<6} {:>8} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
                name, l.count, l.mean_ms, l.p50_ms, l.p90_ms, l.p99_ms, l.p999_ms, l.max_ms
            );
        }
        match self.prediction_accuracy {
            Some(a) => {
                let _ = writeln!(
                    s,
                    "predictions: {:.1}% right of {} checked against the ground truth ({} predicted hits missed, {} predicted misses hit)",
                    100.0 * a,
                    self.predictions_compared,
                    self.false_hits,
                    self.false_misses
                );
                if let Some(j) = self.prediction_accuracy_joined.filter(|_| self.joined > 0) {
                    let _ = writeln!(
                        s,
                        "predictions: {:.1}% right counting the {} requests that joined a read in service as hits",
                        100.0 * j,
                        self.joined
                    );
                }
            }
            None => {
                let _ = writeln!(
                    s,
                    "predictions: none checked (no prediction or no ground truth)"
                );
            }
        }
        match self.device_reads {
            Some(d) => {
                let _ = writeln!(
                    s,
                    "device reads: {} requests, {:.1} MB (whole device, all processes)",
                    d.reads,
                    d.bytes as f64 / 1e6
                );
            }
            None => {
                let _ = writeln!(s, "device reads: not available for this file system");
            }
        }
        s
    }
}
