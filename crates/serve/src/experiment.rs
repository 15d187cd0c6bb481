//! `bufcache experiment cache-aware-server`: Burnett's Figures 2.20 and 2.21 on this
//! machine, and the same for a SURGE-like workload.
//!
//! For each workload the file set is written once; then every *run* starts with the set
//! dropped from the page cache (`POSIX_FADV_DONTNEED`), starts `bufcache serve` as a
//! child process inside a memory cgroup limited so that the page cache holds about 40% of
//! the set (the thesis: 80 MB of cache, 200 MB of files), warms up with the workload,
//! measures a closed loop, records the device's reads, and kills the server. The runs:
//! `fifo`; `mirror` (Clock, as the thesis' Linux 2.2 was) at size estimates from 1/8 to
//! 4 times the cache's nominal size; the adaptive mirror from the two worst estimates;
//! `nowait`; `cachestat`; and the pool (`O_DIRECT`,
//! outside the cgroup, capacity the same 40%). Where no memory cgroup can be made the
//! experiment says so and runs the pool line only. With `disk_mb_s` the server's reads
//! are throttled to a slow disk's bandwidth (the pool line is not: it runs outside).

use std::num::NonZeroU64;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::backend::PAGE_BYTES;
use crate::cgroup::MemoryCgroup;
use crate::device::DeviceCounter;
use crate::load::fileset::{make_files, FileSetSpec, Manifest};
use crate::load::{self, LoadConfig, LoadReport, LoopMode};
use crate::ServeError;

/// How the experiment is run.
#[derive(Clone, Debug)]
pub struct ExperimentConfig {
    /// The `bufcache` executable to start servers with.
    pub server_bin: PathBuf,
    /// Where the file sets are written (must be a real disk, not tmpfs).
    pub scratch: PathBuf,
    /// Fewer and smaller runs.
    pub quick: bool,
    /// Seed of the file sets and the draws.
    pub seed: u64,
    /// Make no cgroup even where one could be made (runs the pool line only).
    pub no_cgroup: bool,
    /// Limit the server's reads from the file sets' disk to this many MB/s (10^6 bytes),
    /// so that misses cost what they cost on the thesis' disks; 0: no limit.
    pub disk_mb_s: u64,
}

/// One run's scheduler.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// Cache-oblivious.
    Fifo,
    /// Mirror at `ratio` times the nominal cache size.
    Mirror {
        /// Estimate / nominal size.
        ratio: f64,
    },
    /// The adaptive mirror ([`crate::adaptive`]) starting from `ratio` times the size.
    AdaptiveMirror {
        /// Estimate / nominal size.
        ratio: f64,
    },
    /// `preadv2(RWF_NOWAIT)` probes.
    NoWait,
    /// `cachestat(2)`.
    Cachestat,
    /// `bufcache-pool`.
    Pool,
}

impl Line {
    fn name(&self) -> &'static str {
        match self {
            Line::Fifo => "fifo",
            Line::Mirror { .. } => "mirror",
            Line::AdaptiveMirror { .. } => "mirror-adaptive",
            Line::NoWait => "nowait",
            Line::Cachestat => "cachestat",
            Line::Pool => "pool",
        }
    }
}

/// The scale of one workload's runs.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadPlan {
    /// The file set.
    pub spec: FileSetSpec,
    /// Runs, in order.
    pub lines: Vec<Line>,
    /// Requests before measuring.
    pub warmup_requests: u64,
    /// Requests measured.
    pub requests: u64,
}

/// Fraction of a file set the cgroup's page cache is sized to hold.
pub const CACHE_FRACTION: f64 = 0.4;
/// Memory the server needs besides page cache (runtime, buffers of responses in
/// flight); added to the cgroup's limit.
pub const SERVER_ALLOWANCE_BYTES: u64 = 24 << 20;
/// Client connections (the thesis had 144 client threads on 4 machines; this machine
/// has 2 cores for clients and server together).
pub const CONNECTIONS: usize = 32;
/// Requests in service at once.
pub const IN_SERVICE: usize = 4;

/// The runs: every line on the uniform set; on the SURGE-like set every line but the
/// pool when the set has more files than the pool keeps open.
pub fn plan(config: &ExperimentConfig, cgroups: bool) -> Vec<WorkloadPlan> {
    let (ratios, adaptive): (&[f64], &[f64]) = if config.quick {
        (&[0.25, 1.0, 4.0], &[4.0])
    } else {
        (&[0.125, 0.25, 0.5, 1.0, 2.0, 4.0], &[0.125, 4.0])
    };
    let (uniform, surge, warmup, requests) = if config.quick {
        (
            FileSetSpec::Uniform {
                files: 40,
                size_bytes: 256 << 10,
            },
            FileSetSpec::Surge { files: 400 },
            100,
            200,
        )
    } else {
        (
            FileSetSpec::uniform_default(),
            FileSetSpec::surge_default(),
            600,
            1500,
        )
    };
    let lines = |spec: &FileSetSpec| {
        let mut v = Vec::new();
        if cgroups {
            v.push(Line::Fifo);
            v.extend(ratios.iter().map(|&ratio| Line::Mirror { ratio }));
            v.extend(adaptive.iter().map(|&ratio| Line::AdaptiveMirror { ratio }));
            v.push(Line::NoWait);
            v.push(Line::Cachestat);
        }
        let files = match spec {
            FileSetSpec::Uniform { files, .. } | FileSetSpec::Surge { files } => *files,
        };
        if files <= crate::backend::POOL_MAX_FILES {
            v.push(Line::Pool);
        }
        v
    };
    let surge_requests = |n: u64| if config.quick { n } else { 4 * n };
    vec![
        WorkloadPlan {
            lines: lines(&uniform),
            spec: uniform,
            warmup_requests: warmup,
            requests,
        },
        WorkloadPlan {
            lines: lines(&surge),
            spec: surge,
            warmup_requests: surge_requests(warmup),
            requests: surge_requests(requests),
        },
    ]
    .into_iter()
    .filter(|w| !w.lines.is_empty())
    .collect()
}

/// One point of the figures.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// `uniform` or `surge`.
    pub workload: String,
    /// The scheduler.
    pub scheduler: &'static str,
    /// Mirror: estimate / nominal cache size.
    pub mirror_ratio: Option<f64>,
    /// Mirror: the estimate in MiB.
    pub mirror_mib: Option<f64>,
    /// The page cache the cgroup was sized for (40% of the set), MiB; for the pool its
    /// capacity.
    pub cache_mib: f64,
    /// The file set's size, MiB.
    pub set_mib: f64,
    /// The server's read bandwidth limit, MB/s (none for the pool, or when not asked).
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
    /// Device read requests during the measured run (all processes).
    pub device_reads: Option<u64>,
    /// Device MB read during the measured run (all processes).
    pub device_read_mb: Option<f64>,
    /// Successful responses.
    pub ok: u64,
    /// 503s and errors.
    pub failed: u64,
}

/// What the experiment produced.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// Every run.
    pub points: Vec<Point>,
    /// Why the cgroup half did not run, if it did not.
    pub cgroup_note: Option<String>,
}

/// Drop a file set's pages from the page cache (clean pages go at once).
fn drop_cached(paths: &[PathBuf]) -> Result<(), ServeError> {
    for p in paths {
        let f = std::fs::File::open(p).map_err(ServeError::io("opening", p))?;
        rustix::fs::fadvise(&f, 0, None::<NonZeroU64>, rustix::fs::Advice::DontNeed)
            .map_err(|e| ServeError::io("dropping the cached pages of", p)(e.into()))?;
    }
    Ok(())
}

/// A `bufcache serve` child; killed when dropped.
struct ServerProcess {
    child: Child,
    addr: std::net::SocketAddr,
    /// Kept open so that the server never writes into a closed pipe.
    _stdout: BufReader<tokio::process::ChildStdout>,
}

async fn start_server(
    bin: &Path,
    root: &Path,
    args: &[String],
    cgroup: Option<&MemoryCgroup>,
) -> Result<ServerProcess, ServeError> {
    let mut child = Command::new(bin)
        .arg("serve")
        .arg("--root")
        .arg(root)
        .args(["--listen", "127.0.0.1:0", "--report-actual", "--in-service"])
        .arg(IN_SERVICE.to_string())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(ServeError::io("starting", bin))?;
    let pid = child.id().unwrap_or(0);
    // Moved before it has read a byte of the set: the server opens nothing until asked.
    if let Some(cg) = cgroup {
        cg.add(pid)?;
    }
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| ServeError::config("server", "no stdout"))?;
    let mut line = String::new();
    let mut stdout = BufReader::new(stdout);
    let read = stdout.read_line(&mut line);
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .map_err(|_| ServeError::config("server", "did not say where it listens within 30 s"))?
        .map_err(ServeError::io("reading the output of", bin))?;
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| ServeError::config("server", format!("unexpected first line {line:?}")))?;
    Ok(ServerProcess {
        child,
        addr,
        _stdout: stdout,
    })
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// Run every planned run; `progress` is told about each as it starts.
pub async fn run(
    config: &ExperimentConfig,
    mut progress: impl FnMut(&str),
) -> Result<Outcome, ServeError> {
    let probe = if config.no_cgroup {
        Err("--no-cgroup was given".to_string())
    } else {
        MemoryCgroup::create(&format!("bufcache-probe-{}", std::process::id()), 1 << 30)
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let cgroup_note = probe
        .err()
        .map(|why| format!("no memory cgroup ({why}): only the pool-backed line was run"));
    let mut points = Vec::new();
    for w in plan(config, cgroup_note.is_none()) {
        let dir = config.scratch.join(match w.spec {
            FileSetSpec::Uniform { .. } => "uniform",
            FileSetSpec::Surge { .. } => "surge",
        });
        std::fs::create_dir_all(&dir).map_err(ServeError::io("creating", &dir))?;
        progress(&format!(
            "writing the {:?} file set in {}",
            w.spec,
            dir.display()
        ));
        let manifest = make_files(&dir, &w.spec, config.seed)?;
        let set_bytes = manifest.total_bytes();
        let cache_bytes = (set_bytes as f64 * CACHE_FRACTION) as u64;
        for line in &w.lines {
            progress(&format!("{} {:?}", manifest.workload, line));
            points.push(run_line(config, &w, &dir, &manifest, line, cache_bytes).await?);
        }
    }
    Ok(Outcome {
        points,
        cgroup_note,
    })
}

async fn run_line(
    config: &ExperimentConfig,
    w: &WorkloadPlan,
    dir: &Path,
    manifest: &Manifest,
    line: &Line,
    cache_bytes: u64,
) -> Result<Point, ServeError> {
    let mut args: Vec<String> = vec!["--scheduler".into()];
    let mut mirror_bytes = None;
    match line {
        Line::Mirror { ratio } | Line::AdaptiveMirror { ratio } => {
            let bytes = ((cache_bytes as f64 * ratio) as u64).max(PAGE_BYTES);
            mirror_bytes = Some(bytes);
            args.extend(["mirror".into(), "--mirror-policy".into(), "clock".into()]);
            args.extend(["--mirror-size".into(), bytes.to_string()]);
            if matches!(line, Line::AdaptiveMirror { .. }) {
                args.push("--mirror-adaptive".into());
            }
        }
        Line::Pool => {
            args.extend(["pool".into(), "--pool-policy".into(), "clock".into()]);
            args.extend(["--pool-size".into(), cache_bytes.to_string()]);
        }
        other => args.push(other.name().into()),
    }
    drop_cached(&manifest.paths(dir))?;
    let cgroup = match line {
        Line::Pool => None,
        _ => {
            let mut cg = MemoryCgroup::create(
                &format!("bufcache-serve-{}", std::process::id()),
                cache_bytes + SERVER_ALLOWANCE_BYTES,
            )?;
            if config.disk_mb_s > 0 {
                let disk = DeviceCounter::for_path(dir)
                    .map(|d| d.disk())
                    .ok_or_else(|| {
                        ServeError::config("disk-mb-s", "the file sets' device has no counters")
                    })?;
                cg.throttle_reads(&disk, config.disk_mb_s * 1_000_000)?;
            }
            Some(cg)
        }
    };
    let server = start_server(&config.server_bin, dir, &args, cgroup.as_ref()).await?;
    let load = LoadConfig {
        target: server.addr,
        manifest: manifest.clone(),
        mode: LoopMode::Closed,
        connections: CONNECTIONS,
        requests: w.requests,
        warmup_requests: w.warmup_requests,
        max_duration: Duration::from_secs(if config.quick { 120 } else { 600 }),
        seed: config.seed,
        device_path: Some(dir.to_path_buf()),
        progress: false,
    };
    let report = load::run(&load).await;
    let cgroup_cache = cgroup.as_ref().and_then(|c| c.cache_bytes());
    let ServerProcess { mut child, .. } = server;
    let _ = child.kill().await;
    drop(cgroup);
    let r = report?;
    Ok(point(
        manifest,
        line,
        mirror_bytes,
        cache_bytes,
        cgroup_cache,
        &r,
    ))
}

fn point(
    manifest: &Manifest,
    line: &Line,
    mirror_bytes: Option<u64>,
    cache_bytes: u64,
    cgroup_cache: Option<u64>,
    r: &LoadReport,
) -> Point {
    Point {
        workload: manifest.workload.clone(),
        scheduler: line.name(),
        mirror_ratio: match line {
            Line::Mirror { ratio } | Line::AdaptiveMirror { ratio } => Some(*ratio),
            _ => None,
        },
        mirror_mib: mirror_bytes.map(mib),
        cache_mib: mib(cache_bytes),
        set_mib: mib(manifest.total_bytes()),
        disk_limit_mb_s: None,
        cgroup_cache_mib: cgroup_cache.map(mib),
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
        device_reads: r.device_reads.map(|d| d.reads),
        device_read_mb: r.device_reads.map(|d| d.bytes as f64 / 1e6),
        ok: r.ok,
        failed: r.rejected + r.errors,
    }
}

/// The targets, judged from the points: for each workload, mirror at the right
/// size against fifo (throughput +10%, mean response time halved), the mirror's
/// prediction accuracy (90%), and the ratio of mirror's throughput across estimates.
pub fn summary(points: &[Point]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for workload in ["uniform", "surge"] {
        let of = |name: &str, ratio: Option<f64>| {
            points
                .iter()
                .find(|p| p.workload == workload && p.scheduler == name && p.mirror_ratio == ratio)
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
        let sweep: Vec<String> = points
            .iter()
            .filter(|p| p.workload == workload && p.scheduler.starts_with("mirror"))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config(quick: bool) -> ExperimentConfig {
        ExperimentConfig {
            server_bin: "bufcache".into(),
            scratch: "/nonexistent".into(),
            quick,
            seed: 1,
            no_cgroup: false,
            disk_mb_s: 0,
        }
    }

    #[test]
    fn the_plan_has_every_line_and_drops_what_cannot_run() {
        let full = plan(&config(false), true);
        assert_eq!(full.len(), 2);
        // fifo, six mirror sizes, two adaptive mirrors, nowait, cachestat, pool.
        assert_eq!(full[0].lines.len(), 12);
        assert_eq!(full[0].lines[0], Line::Fifo);
        assert_eq!(full[0].lines[4], Line::Mirror { ratio: 1.0 });
        // 12,000 files are more than the pool keeps open: no pool line for SURGE.
        assert_eq!(full[1].lines.len(), 11);
        assert!(!full[1].lines.contains(&Line::Pool));
        // Without cgroups: the pool line only, and only where the pool can run.
        let pool_only = plan(&config(false), false);
        assert_eq!(pool_only.len(), 1);
        assert_eq!(pool_only[0].lines, [Line::Pool]);
        let quick = plan(&config(true), false);
        assert_eq!(
            quick.len(),
            2,
            "the quick SURGE set is small enough for the pool"
        );
    }
}
