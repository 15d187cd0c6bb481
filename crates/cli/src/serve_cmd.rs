//! `bufcache serve`, `bufcache load` and `bufcache make-files`: argument parsing over the
//! `serve` crate (the cache-aware file server, its load generator and its file sets).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use serve::config::parse_size;
use serve::load::fileset::{make_files, FileSetSpec, Manifest};
use serve::load::{LoadConfig, LoopMode};
use serve::mirror::Mirror;
use serve::{MirrorBanking, SchedulerChoice, ServeConfig};

use crate::util;

/// `bufcache serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The directory to serve; nothing outside it is ever opened.
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Allow a non-loopback listen address.
    #[arg(long)]
    pub allow_remote: bool,
    /// How the next queued request is chosen: fifo, mirror, nowait, cachestat or pool.
    #[arg(long, default_value = "fifo")]
    pub scheduler: String,
    /// Requests in service at once; the rest wait in the queue.
    #[arg(long, default_value_t = 8)]
    pub in_service: usize,
    /// Requests that may wait; more are answered 503 with Retry-After.
    #[arg(long, default_value_t = 1024)]
    pub queue: usize,
    /// Connections open at once at most.
    #[arg(long, default_value_t = 4096)]
    pub max_connections: usize,
    /// mirror: the simulated policy (as in `bufcache policies`).
    #[arg(long, default_value = "clock")]
    pub mirror_policy: String,
    /// mirror: the estimate of the OS cache's size (e.g. 80M).
    #[arg(long, value_name = "SIZE")]
    pub mirror_size: Option<String>,
    /// mirror: take policy and size from a `bufcache dust --json` line instead.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["mirror_size"])]
    pub mirror_dust: Option<PathBuf>,
    /// mirror: correct the size estimate from observed read times (a bank of mirrors
    /// from 1/8 to 8 times the estimate; the best predictor of the timings is used).
    #[arg(long)]
    pub mirror_adaptive: bool,
    /// mirror: learn the phase of the policy's timer online (a policy with one, such
    /// as linux:stats_ms=2000): this many mirrors with their flushes spread over the
    /// period; the one that agreed best with the judged reads predicts.
    #[arg(long, value_name = "N", conflicts_with = "mirror_adaptive")]
    pub mirror_phases: Option<u64>,
    /// mirror, with --mirror-phases: a read is judged a hit when it was served within
    /// this many µs of its slot being granted (the offline bank's --judge-us).
    #[arg(long, value_name = "US", default_value_t = 5000)]
    pub mirror_judge_us: u64,
    /// mirror: tell the mirror's model each time the kernel flushes this server's
    /// memory cgroup statistics (watched through the memcg:memcg_flush_stats
    /// tracepoint, which flushes nothing; root, Linux 6.14+), for
    /// --mirror-policy linux:stats_events=true; with --trace the flushes are logged too
    /// (a bank of --mirror-phases keeps its timers and only logs them).
    #[arg(long, conflicts_with = "mirror_adaptive")]
    pub mirror_flush_events: bool,
    /// pool: the pool's policy.
    #[arg(long, default_value = "clock")]
    pub pool_policy: String,
    /// pool: the pool's capacity (e.g. 80M).
    #[arg(long, value_name = "SIZE")]
    pub pool_size: Option<String>,
    /// Seconds a client has to send a request's header.
    #[arg(long, default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Seconds without progress after which a connection is closed.
    #[arg(long, default_value_t = 30)]
    pub idle_timeout_secs: u64,
    /// Largest response body read into memory (larger ranges are refused).
    #[arg(long, default_value = "64M")]
    pub max_body: String,
    /// Stop by itself after this many seconds (default: run until interrupted).
    #[arg(long)]
    pub duration_secs: Option<u64>,
    /// Files kept open between requests (0: open every file for every request).
    #[arg(long, default_value_t = 4096)]
    pub open_files: usize,
    /// Milliseconds a kept-open file's path is trusted before it is resolved again.
    #[arg(long, default_value_t = 2000)]
    pub open_file_ttl_ms: u64,
    /// Ask the page cache (cachestat) whether each request's data was cached and say so
    /// in x-bufcache-actual (the pool always says).
    #[arg(long)]
    pub report_actual: bool,
    /// Write one JSON line per GET served to FILE: its place in the schedule, the
    /// prediction, the pages cached when its service began, the service's times (for
    /// `bufcache mirror-replay`). Implies --report-actual.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub poll: CgroupPollArgs,
}

/// `--cgroup-poll`, `--cgroup-poll-ms` and `--mirror-track`, for `bufcache serve` and
/// for the experiment's servers.
#[derive(Args, Debug)]
pub struct CgroupPollArgs {
    /// Read the server's memory cgroup's page-cache total every --cgroup-poll-ms: `stat`
    /// (memory.stat, exact; reading it flushes the cgroup's statistics, which changes
    /// how this kernel reclaims) or `usage` (the cgroup's charge less the server's
    /// anonymous memory; flushes nothing).
    #[arg(long, value_name = "stat|usage")]
    pub cgroup_poll: Option<String>,
    /// Milliseconds between --cgroup-poll readings.
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub cgroup_poll_ms: u64,
    /// mirror: take the mirror's size from the --cgroup-poll readings (the given size
    /// stands until the first).
    #[arg(long, requires = "cgroup_poll")]
    pub mirror_track: bool,
}

impl CgroupPollArgs {
    /// The poll asked for, if any.
    pub fn poll(&self) -> Result<Option<serve::cgroup_poll::CgroupPoll>> {
        use linux::memcg_reading::CacheReading;
        let Some(name) = &self.cgroup_poll else {
            return Ok(None);
        };
        let reading = CacheReading::parse(name)
            .with_context(|| format!("--cgroup-poll {name:?}: expected stat or usage"))?;
        if self.cgroup_poll_ms == 0 {
            bail!("--cgroup-poll-ms must be above zero");
        }
        Ok(Some(serve::cgroup_poll::CgroupPoll {
            reading,
            every: Duration::from_millis(self.cgroup_poll_ms),
        }))
    }
}

/// Blocks from this size up are mapped and unmapped on their own (see `run_serve`):
/// above the 4 KiB-64 KiB buffers of small files, which stay cheap.
const LARGE_BLOCK_BYTES: usize = 256 << 10;

fn scheduler(a: &ServeArgs) -> Result<SchedulerChoice> {
    Ok(match a.scheduler.as_str() {
        "fifo" => SchedulerChoice::Fifo,
        "nowait" => SchedulerChoice::NoWait,
        "cachestat" => SchedulerChoice::Cachestat,
        "mirror" => {
            let (policy, size_bytes) = match (&a.mirror_dust, &a.mirror_size) {
                (Some(report), _) => Mirror::from_dust_report(report)?,
                (None, Some(size)) => (a.mirror_policy.clone(), parse_size(size)?),
                (None, None) => bail!("--scheduler mirror needs --mirror-size or --mirror-dust"),
            };
            let bank = match (a.mirror_phases, a.mirror_adaptive) {
                (Some(count), _) => MirrorBanking::Phases {
                    count,
                    judge_us: a.mirror_judge_us,
                },
                (None, true) => MirrorBanking::Sizes,
                (None, false) => MirrorBanking::Single,
            };
            SchedulerChoice::Mirror {
                policy,
                size_bytes,
                bank,
            }
        }
        "pool" => {
            let size = a
                .pool_size
                .as_deref()
                .context("--scheduler pool needs --pool-size")?;
            SchedulerChoice::Pool {
                policy: a.pool_policy.clone(),
                capacity_bytes: parse_size(size)?,
            }
        }
        other => bail!(
            "unknown scheduler {other:?}; choose one of {}",
            SchedulerChoice::NAMES.join(", ")
        ),
    })
}

fn logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("BUFCACHE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Run `bufcache serve`.
pub fn run_serve(a: ServeArgs) -> Result<()> {
    logging();
    let mut config = ServeConfig::new(&a.root);
    config.listen = a.listen;
    config.allow_remote = a.allow_remote;
    config.in_service = a.in_service;
    config.queue_capacity = a.queue;
    config.max_connections = a.max_connections;
    config.scheduler = scheduler(&a)?;
    config.header_timeout = Duration::from_secs(a.header_timeout_secs);
    config.idle_timeout = Duration::from_secs(a.idle_timeout_secs);
    config.max_body_bytes = parse_size(&a.max_body)?;
    config.open_files = a.open_files;
    config.open_file_ttl = Duration::from_millis(a.open_file_ttl_ms);
    config.report_actual = a.report_actual;
    config.trace = a.trace.clone();
    config.cgroup_poll = a.poll.poll()?;
    config.mirror_track = a.poll.mirror_track;
    config.mirror_flush_events = a.mirror_flush_events;
    serve::server::raise_open_file_limit();
    // Response buffers (a whole file each) go back to the system when freed, instead of
    // growing glibc's arenas into the memory the page cache lives in (`linux::heap`).
    linux::heap::return_large_blocks(LARGE_BLOCK_BYTES);
    runtime()?.block_on(async {
        let server = serve::serve(config).await?;
        // The first line of standard output is the address: scripts and the experiment
        // read the port from it when they asked for port 0.
        let mut out = std::io::stdout();
        writeln!(out, "listening on http://{}", server.local_addr())?;
        out.flush()?;
        match a.duration_secs {
            Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
            None => tokio::signal::ctrl_c()
                .await
                .context("waiting for Ctrl-C")?,
        }
        server.shutdown().await;
        Ok(())
    })
}

/// `bufcache load`.
#[derive(Args, Debug)]
pub struct LoadArgs {
    /// The server's address.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub target: SocketAddr,
    /// Allow a non-loopback target.
    #[arg(long)]
    pub allow_remote: bool,
    /// The file set's directory (made by `bufcache make-files`; its manifest.json says
    /// which files to ask for and how often).
    #[arg(long, value_name = "DIR")]
    pub files: PathBuf,
    /// Client connections.
    #[arg(long, default_value_t = 32)]
    pub connections: usize,
    /// Requests measured.
    #[arg(long, default_value_t = 2000)]
    pub requests: u64,
    /// Requests sent first, not measured.
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
    /// Open loop at this many requests per second (default: closed loop).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Stop after this many seconds whatever has been sent.
    #[arg(long, default_value_t = 60)]
    pub duration_secs: u64,
    /// Seed of the file draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Run `bufcache load`.
pub fn run_load(a: LoadArgs) -> Result<()> {
    if !a.allow_remote && !a.target.ip().is_loopback() {
        bail!(
            "{} is not a loopback address; pass --allow-remote to load a server elsewhere",
            a.target
        );
    }
    let manifest = Manifest::load(&a.files)?;
    let config = LoadConfig {
        target: a.target,
        manifest,
        mode: match a.rate {
            Some(rate_per_s) => LoopMode::Open { rate_per_s },
            None => LoopMode::Closed,
        },
        connections: a.connections,
        requests: a.requests,
        warmup_requests: a.warmup,
        max_duration: Duration::from_secs(a.duration_secs),
        seed: a.seed,
        device_path: Some(a.files.clone()),
        progress: !a.json,
    };
    let report = runtime()?.block_on(serve::load::run(&config))?;
    if a.json {
        util::emit(&format!("{}\n", serde_json::to_string(&report)?))
    } else {
        util::emit(&report.table())
    }
}

/// `bufcache make-files`.
#[derive(Args, Debug)]
pub struct MakeFilesArgs {
    /// `uniform` (200 files of 1 MiB), `uniform:FILESxSIZE`, `surge` (12,000 files,
    /// Zipf popularity, heavy-tailed sizes) or `surge:FILES`.
    #[arg(long, default_value = "uniform")]
    pub workload: String,
    /// Directory to write the files and manifest.json into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Seed of the sizes, the popularity order and the contents.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Run `bufcache make-files`.
pub fn run_make_files(a: MakeFilesArgs) -> Result<()> {
    let spec = FileSetSpec::parse(&a.workload)?;
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    let m = make_files(&a.dir, &spec, a.seed)?;
    util::emit(&format!(
        "{} files, {} in all, workload {} (seed {}), manifest {}\n",
        m.files.len(),
        util::human_bytes(m.total_bytes()),
        m.workload,
        m.seed,
        a.dir.join(serve::load::fileset::MANIFEST).display()
    ))
}

/// `bufcache experiment list`'s line for the experiment.
pub const EXPERIMENT_SUMMARY: &str =
    "Burnett 2006 §2.5: cache-aware file server, fifo vs mirror by size estimate (Figures 2.20-2.21)";

/// `bufcache experiment cache-aware-server`.
#[derive(Args, Debug)]
pub struct CacheAwareArgs {
    #[command(flatten)]
    pub common: crate::experiment_cmd::ExperimentArgs,
    /// Where to write the file sets (a real disk, not tmpfs; default: the temporary
    /// directory). They are removed afterwards unless --keep-files.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Keep the file sets.
    #[arg(long)]
    pub keep_files: bool,
    /// Make no memory cgroup: run only the pool-backed line.
    #[arg(long)]
    pub no_cgroup: bool,
    /// Throttle the server's reads from the disk to this many MB/s (the thesis' disks
    /// were the bottleneck; a fast virtual disk is not); 0 for none.
    #[arg(long, default_value_t = 50)]
    pub disk_mb_s: u64,
    /// Sweep arrival rates in an open loop (uniform set; fifo's capacity first, then
    /// fifo, mirror, nowait, cachestat and pool at 0.3 to 1.2 times it) instead of the
    /// mirror's size estimate in a closed loop.
    #[arg(long)]
    pub open_loop: bool,
    /// The mirror's policy: linux (the registry's model of this kernel's active and
    /// inactive lists, which agrees with the kernel best here), or clock as the thesis'
    /// Linux 2.2, or any online policy of `bufcache policies`.
    #[arg(long, default_value = "linux")]
    pub mirror_policy: String,
    /// The mirror lines learn the phase of the mirror policy's timer online
    /// (`bufcache serve --mirror-phases`; e.g. with --mirror-policy
    /// linux:stats_ms=2000).
    #[arg(long, value_name = "N")]
    pub mirror_phases: Option<u64>,
    /// With --mirror-phases: the span below which a read is judged a hit, µs.
    #[arg(long, value_name = "US", default_value_t = 5000)]
    pub mirror_judge_us: u64,
    /// The mirror lines' servers watch the kernel flush their cgroup's statistics and
    /// tell the mirror (`bufcache serve --mirror-flush-events`; e.g. with
    /// --mirror-policy linux:stats_events=true; a bank of --mirror-phases only logs
    /// them, with --trace-dir).
    #[arg(long)]
    pub mirror_flush_events: bool,
    /// The mirror lines run the mirror told of the kernel's own statistics flushes
    /// (--mirror-policy linux:stats_events=true --mirror-flush-events) where the
    /// tracepoint can be watched (root, Linux 6.14+), the fresh linux mirror elsewhere;
    /// the output says which. No adaptive mirror lines
    #[arg(long, conflicts_with_all = ["mirror_policy", "mirror_flush_events", "mirror_phases"])]
    pub observed_flushes: bool,
    /// The mirror's size estimates as multiples of the nominal cache, comma-separated
    /// (e.g. 0.75,0.875,1); replaces the default 1/8 to 4 and the adaptive lines.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub mirror_ratios: Option<Vec<f64>>,
    /// Which file sets to run: uniform, surge or both (comma-separated).
    #[arg(long, default_value = "uniform,surge", value_name = "LIST")]
    pub workloads: String,
    /// Only these lines (comma-separated: fifo, mirror, mirror-adaptive, nowait,
    /// cachestat, pool); the open loop measures fifo's capacity whatever is asked.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub lines: Option<Vec<String>>,
    /// Open loop: the offered loads as multiples of fifo's capacity (comma-separated;
    /// default 0.3,0.6,0.8,0.95,1.2).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub loads: Option<Vec<f64>>,
    /// Open loop: run every load and line this many times, round after round.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Open loop: take this as fifo's capacity (requests/s) instead of measuring it, so
    /// that separate sweeps offer the same rates.
    #[arg(long, value_name = "RPS")]
    pub capacity: Option<f64>,
    /// Every mirror line's server writes its request log (`bufcache serve --trace`) into
    /// this folder, one file per run, for `bufcache mirror-replay`.
    #[arg(long, value_name = "DIR")]
    pub trace_dir: Option<PathBuf>,
    /// Every page-cache server polls its cgroup (--cgroup-poll), and the mirror lines
    /// track the readings (--mirror-track).
    #[command(flatten)]
    pub poll: CgroupPollArgs,
}

/// Run `bufcache experiment cache-aware-server`.
pub fn run_experiment(a: CacheAwareArgs) -> Result<()> {
    use crate::experiment_cmd::{json_lines, prepare, write_csv};
    use serve::experiment::{self, ExperimentConfig, Sweep};

    logging();
    let c = &a.common;
    prepare(&c.out)?;
    let base = a.scratch.clone().unwrap_or_else(std::env::temp_dir);
    let scratch = tempfile::Builder::new()
        .prefix("bufcache-cache-aware-")
        .tempdir_in(&base)
        .with_context(|| format!("creating a scratch directory in {}", base.display()))?;
    let config = ExperimentConfig {
        server_bin: std::env::current_exe().context("finding the bufcache executable")?,
        scratch: scratch.path().to_path_buf(),
        quick: c.quick,
        seed: c.seed,
        no_cgroup: a.no_cgroup,
        disk_mb_s: a.disk_mb_s,
        mirror_policy: a.mirror_policy.clone(),
        mirror_phases: a.mirror_phases.map(|count| (count, a.mirror_judge_us)),
        mirror_flush_events: a.mirror_flush_events,
        observed_flushes: a.observed_flushes,
        mirror_ratios: a.mirror_ratios.clone(),
        workloads: experiment::Workloads::parse(&a.workloads)?,
        lines: a.lines.clone(),
        open_loads: a.loads.clone(),
        rounds: a.rounds,
        capacity_rps: a.capacity,
        cgroup_poll: a.poll.poll()?,
        mirror_track: a.poll.mirror_track,
        trace_dir: a.trace_dir.clone(),
        sweep: if a.open_loop {
            Sweep::OpenLoop
        } else {
            Sweep::ByEstimate
        },
    };
    let outcome = runtime()?.block_on(experiment::run(&config, |what| eprintln!("{what}")))?;
    if a.keep_files {
        eprintln!("file sets kept in {}", scratch.keep().display());
    }
    let csv = c.out.join("cache-aware-server.csv");
    write_csv(&csv, &outcome.points)?;
    let json = c.out.join("cache-aware-server.json");
    util::write_atomic(&json, serde_json::to_string_pretty(&outcome)?.as_bytes())?;
    let mut svgs = Vec::new();
    for f in experiment::figures(&outcome.points) {
        svgs.push(f.write_into(&c.out)?);
    }
    if c.json {
        return util::emit(&json_lines(&outcome.points)?);
    }
    let mut out = String::new();
    for note in [&outcome.cgroup_note, &outcome.mirror_note]
        .into_iter()
        .flatten()
    {
        out.push_str(note);
        out.push('\n');
    }
    let header: Vec<String> = [
        "workload",
        "scheduler",
        "estimate, rate",
        "req/s",
        "MB/s",
        "mean ms",
        "p99 ms",
        "hits",
        "misses",
        "accuracy",
        "dev MB",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = outcome
        .points
        .iter()
        .map(|p| {
            vec![
                p.workload.clone(),
                p.scheduler.to_string(),
                [
                    p.mirror_mib.map(|m| {
                        format!("{} {m:.0} MiB", p.mirror_policy.as_deref().unwrap_or(""))
                    }),
                    p.offered_rps.map(|r| format!("open {r:.1}/s")),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(", "),
                format!("{:.1}", p.throughput_rps),
                format!("{:.2}", p.throughput_mb_s),
                format!("{:.2}", p.mean_ms),
                format!("{:.2}", p.p99_ms),
                p.hits.to_string(),
                p.misses.to_string(),
                p.prediction_accuracy
                    .map(|a| format!("{:.1}%", 100.0 * a))
                    .unwrap_or_default(),
                p.device_read_mb
                    .map(|m| format!("{m:.0}"))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    out.push_str(&util::table(&header, &rows));
    out.push_str(&experiment::summary(&outcome.points));
    out.push_str(&experiment::open_loop_summary(&outcome.points));
    out.push_str(&format!("wrote {} and {}\n", csv.display(), json.display()));
    for svg in &svgs {
        out.push_str(&format!("wrote {}\n", svg.display()));
    }
    util::emit(&out)
}
