//! One run of the experiment: the file set dropped from the page cache, a `bufcache
//! serve` child in a fresh memory cgroup (throttled to the slow disk's bandwidth when
//! asked), warm-up, one measured load (closed or open loop), the server killed and the
//! cgroup removed. Every line of both sweeps goes through [`run_line`].

use std::num::NonZeroU64;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::point::{CgroupLists, RunFacts};
use super::{ExperimentConfig, Line, Measure, Point, WorkloadPlan, IN_SERVICE};
use crate::backend::PAGE_BYTES;
use crate::load::fileset::Manifest;
use crate::load::{self, LoadConfig, LoadReport, LoopMode};
use crate::ServeError;
use linux::DeviceCounter;
use linux::MemoryCgroup;

/// Memory the server needs besides page cache (runtime, buffers of responses in
/// flight); added to the cgroup's limit. `bufcache serve` returns its response buffers to
/// the system when they are freed (`linux::heap`), so its resident memory stays at its
/// working size: 3.6 MiB median, 7.7 MiB at most, sampled every 50 ms through a uniform
/// run (4.8 and 5.9 MiB for SURGE). Before that it grew to 18-27 MiB during a run, and
/// the page cache shrank by as much under a 24 MiB allowance, unseen by the mirror.
pub const SERVER_ALLOWANCE_BYTES: u64 = 6 << 20;
/// The pool line's allowance: its frames are the server's own memory, not page cache,
/// and are not reclaimable, so it has room to spare.
const POOL_ALLOWANCE_BYTES: u64 = 48 << 20;
/// Client connections of the closed loop (the thesis had 144 client threads on 4
/// machines; this machine has 2 cores for clients and server together).
pub const CONNECTIONS: usize = 32;
/// Client connections of the open loop: enough that the clients never hold requests
/// back (a connection sends one request at a time), so the queue forms at the server,
/// where the scheduler can reorder it.
pub const OPEN_CONNECTIONS: usize = 256;

/// The open-file cache of the pool's server (see [`server_args`]).
const POOL_OPEN_FILES: usize = 4096;

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

/// The mirror a line ran, as its CSV row names it: the policy, and the bank of phases
/// where the plain mirror lines run one.
fn mirror_label(line: &Line, config: &ExperimentConfig) -> String {
    let watched = if config.mirror_flush_events {
        " flush_events"
    } else {
        ""
    };
    match (line, config.mirror_phases) {
        (Line::Mirror { .. }, Some((count, judge_us))) => format!(
            "{} phases={count} judge_us={judge_us}{watched}",
            config.mirror_policy
        ),
        (Line::Mirror { .. }, None) => format!("{}{watched}", config.mirror_policy),
        _ => config.mirror_policy.clone(),
    }
}

/// The `bufcache serve` arguments of a line, and the mirror's size where it has one.
/// The page-cache lines poll their cgroup as `config` says, and the plain mirror
/// follows the readings when asked; the pool's cache is its own, so it does neither.
fn server_args(
    line: &Line,
    config: &ExperimentConfig,
    cache_bytes: u64,
    files: usize,
) -> (Vec<String>, Option<u64>) {
    let mirror_policy = config.mirror_policy.as_str();
    let mut args: Vec<String> = vec!["--scheduler".into()];
    let mut mirror_bytes = None;
    match line {
        Line::Mirror { ratio } | Line::AdaptiveMirror { ratio } => {
            let bytes = ((cache_bytes as f64 * ratio) as u64).max(PAGE_BYTES);
            mirror_bytes = Some(bytes);
            args.extend([
                "mirror".into(),
                "--mirror-policy".into(),
                mirror_policy.into(),
            ]);
            args.extend(["--mirror-size".into(), bytes.to_string()]);
            match (line, config.mirror_phases) {
                (Line::AdaptiveMirror { .. }, _) => args.push("--mirror-adaptive".into()),
                (_, Some((count, judge_us))) => args.extend([
                    "--mirror-phases".into(),
                    count.to_string(),
                    "--mirror-judge-us".into(),
                    judge_us.to_string(),
                ]),
                _ => {}
            }
            if config.mirror_flush_events && matches!(line, Line::Mirror { .. }) {
                args.push("--mirror-flush-events".into());
            }
        }
        Line::Pool => {
            args.extend(["pool".into(), "--pool-policy".into(), "clock".into()]);
            args.extend(["--pool-size".into(), cache_bytes.to_string()]);
        }
        other => args.push(other.name().into()),
    }
    // Every file of the set stays open: the set is the whole tree, and its size is known.
    // The pool holds a descriptor of its own per file, so its server keeps fewer open
    // (both together stay under the usual hard limit of descriptors).
    let open_files = match line {
        Line::Pool => files.min(POOL_OPEN_FILES),
        _ => files,
    };
    args.extend(["--open-files".into(), open_files.max(1).to_string()]);
    if let Some(poll) = config.cgroup_poll.filter(|_| *line != Line::Pool) {
        args.extend([
            "--cgroup-poll".into(),
            poll.reading.name().into(),
            "--cgroup-poll-ms".into(),
            poll.every.as_millis().max(1).to_string(),
        ]);
        if config.mirror_track && matches!(line, Line::Mirror { .. }) {
            args.push("--mirror-track".into());
        }
    }
    (args, mirror_bytes)
}

/// `--trace FILE` for a mirror line when the experiment keeps request logs: a new file
/// in the trace folder, named by the line, its size estimate and the wall-clock
/// millisecond the run starts (so rounds and sweeps never overwrite one another).
fn trace_args(line: &Line, config: &ExperimentConfig) -> Result<Vec<String>, ServeError> {
    let (Some(dir), Line::Mirror { ratio } | Line::AdaptiveMirror { ratio }) =
        (&config.trace_dir, line)
    else {
        return Ok(Vec::new());
    };
    std::fs::create_dir_all(dir).map_err(ServeError::io("creating the trace folder", dir))?;
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let file = dir.join(format!("{}-{ratio}-{since_epoch}.jsonl", line.name()));
    Ok(vec!["--trace".into(), file.display().to_string()])
}

/// The cgroup of a run: the page cache limited to the nominal cache (the pool reads with
/// `O_DIRECT` and caches in its own memory, so its limit leaves room for its frames),
/// reads throttled when asked. `None` when the experiment runs without cgroups.
fn cgroup_for(
    config: &ExperimentConfig,
    dir: &Path,
    line: &Line,
    cache_bytes: u64,
    cgroups: bool,
) -> Result<Option<MemoryCgroup>, ServeError> {
    if !cgroups {
        return Ok(None);
    }
    let limit = match line {
        Line::Pool => cache_bytes + POOL_ALLOWANCE_BYTES,
        _ => cache_bytes + SERVER_ALLOWANCE_BYTES,
    };
    let mut cg = MemoryCgroup::create(&format!("bufcache-serve-{}", std::process::id()), limit)?;
    if config.disk_mb_s > 0 {
        let disk = DeviceCounter::for_path(dir)
            .map(|d| d.disk())
            .ok_or_else(|| {
                ServeError::config("disk-mb-s", "the file sets' device has no counters")
            })?;
        cg.throttle_reads(&disk, config.disk_mb_s * 1_000_000)?;
    }
    Ok(Some(cg))
}

/// Where a run's server reads from and what it is measured with.
pub(super) struct Run<'a> {
    pub config: &'a ExperimentConfig,
    pub plan: &'a WorkloadPlan,
    pub dir: &'a Path,
    pub manifest: &'a Manifest,
    pub cache_bytes: u64,
    /// Whether memory cgroups can be made here.
    pub cgroups: bool,
}

/// Run one line under one measure and return its point.
pub(super) async fn run_line(
    run: &Run<'_>,
    line: &Line,
    measure: Measure,
) -> Result<Point, ServeError> {
    let (mut args, mirror_bytes) =
        server_args(line, run.config, run.cache_bytes, run.manifest.files.len());
    args.extend(trace_args(line, run.config)?);
    drop_cached(&run.manifest.paths(run.dir))?;
    let cgroup = cgroup_for(run.config, run.dir, line, run.cache_bytes, run.cgroups)?;
    let server = start_server(&run.config.server_bin, run.dir, &args, cgroup.as_ref()).await?;
    let max_duration = Duration::from_secs(if run.config.quick { 120 } else { 600 });
    let base = LoadConfig {
        target: server.addr,
        manifest: run.manifest.clone(),
        mode: LoopMode::Closed,
        connections: CONNECTIONS,
        requests: run.plan.requests,
        warmup_requests: run.plan.warmup_requests,
        max_duration,
        seed: run.config.seed,
        device_path: Some(run.dir.to_path_buf()),
        progress: false,
    };
    let report = match measure {
        Measure::Closed => load::run(&base).await,
        Measure::Open {
            rate_per_s,
            seconds,
        } => open_loop(base, rate_per_s, seconds).await,
    };
    let cgroup_cache = cgroup.as_ref().and_then(|c| c.cache_bytes());
    let cgroup_lists = cgroup
        .as_ref()
        .map(|c| CgroupLists {
            refaults: c.stat("workingset_refault_file"),
            active_file_bytes: c.stat("active_file"),
            inactive_file_bytes: c.stat("inactive_file"),
        })
        .unwrap_or_default();
    let polled = run.config.cgroup_poll.filter(|_| *line != Line::Pool);
    let ServerProcess { mut child, .. } = server;
    let pid = child.id();
    let _ = child.kill().await;
    // Killed, the server could not remove its tracefs instance (--mirror-flush-events).
    if let Some(pid) = pid.filter(|_| run.config.mirror_flush_events) {
        linux::memcg_flushes::remove_instance(pid);
    }
    drop(cgroup);
    let r = report?;
    let facts = RunFacts {
        mirror_bytes,
        mirror_policy: mirror_bytes.map(|_| mirror_label(line, run.config)),
        cache_bytes: run.cache_bytes,
        cgroup_cache_bytes: cgroup_cache,
        disk_limit_mb_s: (run.cgroups && run.config.disk_mb_s > 0).then_some(run.config.disk_mb_s),
        cgroup_poll: polled.map(|p| format!("{}:{}ms", p.reading.name(), p.every.as_millis())),
        mirror_tracked: polled.is_some()
            && run.config.mirror_track
            && matches!(line, Line::Mirror { .. }),
        cgroup_lists,
    };
    Ok(Point::new(run.manifest, line, measure, facts, &r))
}

/// Warm up in a closed loop (as fast as the server goes), then measure an open loop of
/// `seconds` at `rate_per_s` from many connections.
async fn open_loop(
    base: LoadConfig,
    rate_per_s: f64,
    seconds: f64,
) -> Result<LoadReport, ServeError> {
    if base.warmup_requests > 0 {
        let warm = LoadConfig {
            requests: base.warmup_requests,
            warmup_requests: 0,
            device_path: None,
            ..base.clone()
        };
        load::run(&warm).await?;
    }
    let requests = (rate_per_s * seconds).ceil().max(1.0) as u64;
    let open = LoadConfig {
        mode: LoopMode::Open { rate_per_s },
        connections: OPEN_CONNECTIONS,
        requests,
        warmup_requests: 0,
        // Room for a queue that grows beyond saturation; what is unanswered at the end
        // is not counted (the point's `ok` says how much was).
        max_duration: Duration::from_secs_f64(3.0 * seconds + 30.0),
        ..base
    };
    load::run(&open).await
}

#[cfg(test)]
mod tests {
    use super::super::tests::config;
    use super::super::Sweep;
    use super::*;
    use crate::cgroup_poll::CgroupPoll;

    #[test]
    fn each_line_gets_its_scheduler_and_every_file_stays_open() {
        let mut c = config(false, Sweep::ByEstimate);
        let (args, mirror) = server_args(&Line::Mirror { ratio: 0.5 }, &c, 80 << 20, 200);
        assert_eq!(mirror, Some(40 << 20));
        assert_eq!(
            args.join(" "),
            format!(
                "--scheduler mirror --mirror-policy clock --mirror-size {} --open-files 200",
                40 << 20
            )
        );
        let (args, mirror) = server_args(&Line::Pool, &c, 1 << 20, 3);
        assert!(server_args(&Line::Pool, &c, 1, 12_000)
            .0
            .ends_with(&["--open-files".into(), "4096".into()]));
        assert_eq!(mirror, None);
        assert_eq!(
            args.join(" "),
            "--scheduler pool --pool-policy clock --pool-size 1048576 --open-files 3"
        );
        c.mirror_policy = "linux".into();
        let (args, _) = server_args(&Line::AdaptiveMirror { ratio: 4.0 }, &c, 4096, 1);
        assert!(args.contains(&"--mirror-adaptive".to_string()));
        assert_eq!(args[3], "linux");
        assert_eq!(server_args(&Line::NoWait, &c, 1, 1).0[1], "nowait");
        // A bank of phases runs on the plain mirror lines; the adaptive ones keep theirs.
        c.mirror_phases = Some((8, 5000));
        let (args, _) = server_args(&Line::Mirror { ratio: 1.0 }, &c, 4096, 1);
        assert!(args
            .join(" ")
            .contains("--mirror-phases 8 --mirror-judge-us 5000"));
        assert_eq!(
            mirror_label(&Line::Mirror { ratio: 1.0 }, &c),
            "linux phases=8 judge_us=5000"
        );
        let (args, _) = server_args(&Line::AdaptiveMirror { ratio: 4.0 }, &c, 4096, 1);
        assert!(!args.contains(&"--mirror-phases".to_string()));
        assert_eq!(
            mirror_label(&Line::AdaptiveMirror { ratio: 4.0 }, &c),
            "linux"
        );
        // Observed flushes: the plain mirror lines only, and their label says so.
        c.mirror_phases = None;
        c.mirror_flush_events = true;
        c.mirror_policy = "linux:stats_events=true".into();
        let (args, _) = server_args(&Line::Mirror { ratio: 1.0 }, &c, 4096, 1);
        assert!(args.contains(&"--mirror-flush-events".to_string()));
        assert_eq!(
            mirror_label(&Line::Mirror { ratio: 1.0 }, &c),
            "linux:stats_events=true flush_events"
        );
        let (args, _) = server_args(&Line::AdaptiveMirror { ratio: 4.0 }, &c, 4096, 1);
        assert!(!args.contains(&"--mirror-flush-events".to_string()));
        assert!(!server_args(&Line::Fifo, &c, 1, 1)
            .0
            .contains(&"--mirror-flush-events".to_string()));
        // With a bank of phases the flushes are watched (and logged) too.
        c.mirror_phases = Some((8, 5000));
        c.mirror_policy = "linux:stats_ms=2000".into();
        let (args, _) = server_args(&Line::Mirror { ratio: 1.0 }, &c, 4096, 1);
        assert!(args
            .join(" ")
            .contains("--mirror-phases 8 --mirror-judge-us 5000 --mirror-flush-events"));
        assert_eq!(
            mirror_label(&Line::Mirror { ratio: 1.0 }, &c),
            "linux:stats_ms=2000 phases=8 judge_us=5000 flush_events"
        );
    }

    /// Only mirror lines log, each run to a new file of the trace folder.
    #[test]
    fn mirror_lines_log_into_the_trace_folder() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(false, Sweep::ByEstimate);
        assert!(trace_args(&Line::Mirror { ratio: 1.0 }, &c)
            .unwrap()
            .is_empty());
        c.trace_dir = Some(dir.path().join("logs"));
        assert!(trace_args(&Line::Fifo, &c).unwrap().is_empty());
        assert!(trace_args(&Line::Pool, &c).unwrap().is_empty());
        let args = trace_args(&Line::Mirror { ratio: 0.5 }, &c).unwrap();
        assert_eq!(args[0], "--trace");
        let file = std::path::Path::new(&args[1]);
        assert_eq!(file.parent(), Some(dir.path().join("logs").as_path()));
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("mirror-0.5-") && name.ends_with(".jsonl"),
            "{name}"
        );
        assert!(dir.path().join("logs").is_dir());
    }

    /// A poll goes to every page-cache line but the pool; tracking only to the plain
    /// mirror.
    #[test]
    fn the_poll_goes_to_page_cache_lines_and_tracking_to_the_mirror() {
        use linux::memcg_reading::CacheReading;
        let mut c = config(false, Sweep::ByEstimate);
        c.cgroup_poll = Some(CgroupPoll {
            reading: CacheReading::Stat,
            every: Duration::from_millis(50),
        });
        c.mirror_track = true;
        let poll = "--cgroup-poll stat --cgroup-poll-ms 50";
        let args = |line: Line| server_args(&line, &c, 80 << 20, 200).0.join(" ");
        assert!(args(Line::Fifo).ends_with(poll));
        assert!(args(Line::Cachestat).ends_with(poll));
        assert!(args(Line::Mirror { ratio: 1.0 }).ends_with(&format!("{poll} --mirror-track")));
        assert!(args(Line::AdaptiveMirror { ratio: 1.0 }).ends_with(poll));
        assert!(!args(Line::Pool).contains("--cgroup-poll"));
    }
}
