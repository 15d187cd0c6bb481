//! `bufcache experiment cache-aware-server`: Burnett's Figures 2.20 and 2.21 on this
//! machine, the same for a SURGE-like workload, and an open-loop sweep of arrival rates.
//!
//! For each workload the file set is written once; then every *run* ([`runner`]) starts
//! with the set dropped from the page cache (`POSIX_FADV_DONTNEED`), starts `bufcache
//! serve` as a child process inside a memory cgroup limited so that the page cache holds
//! about 40% of the set (the thesis: 80 MB of cache, 200 MB of files), warms up with the
//! workload, measures, records the device's reads, and kills the server.
//!
//! Two sweeps:
//!
//! * **By size estimate** (the default; closed loop, as the thesis): `fifo`; `mirror`
//!   (Clock, as the thesis' Linux 2.2 was) at size estimates from 1/8 to 4 times the
//!   cache's nominal size; the adaptive mirror from the two worst estimates; `nowait`;
//!   `cachestat`; and the pool (`O_DIRECT`, capacity the same 40%).
//! * **By arrival rate** ([`Sweep::OpenLoop`]): fifo's saturated throughput is measured
//!   first (closed loop); then `fifo`, `mirror` at the right size, `nowait`, `cachestat`
//!   and the pool each take an open loop at fractions of it, from light load to beyond
//!   saturation. In a closed loop the mean response time is the connection count over
//!   the throughput (Little's law), so serving short jobs first can only show in the
//!   response time of an open loop, where the queue's length is the server's business.
//!
//! Where no memory cgroup can be made the experiment says so and runs the pool lines
//! only. With `disk_mb_s` the server's reads are throttled to a slow disk's bandwidth
//! (the pool's too: it runs in a cgroup of its own that leaves room for its frames).

mod figures;
mod observed;
mod point;
mod runner;

pub use figures::figures;
pub use observed::{FALLBACK_POLICY, OBSERVED_POLICY};
pub use point::{open_loop_summary, summary, Point};
pub use runner::{CONNECTIONS, OPEN_CONNECTIONS, SERVER_ALLOWANCE_BYTES};

use std::path::PathBuf;

use serde::Serialize;

use crate::load::fileset::{make_files, FileSetSpec};
use crate::ServeError;
use linux::MemoryCgroup;
use runner::Run;

/// Which sweep to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Closed loop, the mirror's size estimate from far too small to far too large
    /// (Figures 2.20-2.21), on both workloads.
    ByEstimate,
    /// Open loop, arrival rates from light load to beyond saturation, on the uniform
    /// workload.
    OpenLoop,
}

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
    /// Which sweep.
    pub sweep: Sweep,
    /// The mirror's policy (`clock`, as the thesis' Linux 2.2; `linux` models today's
    /// active and inactive lists).
    pub mirror_policy: String,
    /// The (plain) mirror lines are banks of this many phases of the policy's timer,
    /// judged by a span of at most this many µs (`--mirror-phases`, `--mirror-judge-us`).
    pub mirror_phases: Option<(u64, u64)>,
    /// The plain mirror lines' servers tell the mirror when the kernel flushes their
    /// cgroup's statistics (`--mirror-flush-events`, [`crate::flush_watch`]; a bank of
    /// phases only logs them).
    pub mirror_flush_events: bool,
    /// The mirror lines run the observed-flush mirror where the kernel's flushes can be
    /// watched, the fresh `linux` one elsewhere (`--observed-flushes`; [`observed`]);
    /// replaces `mirror_policy` and `mirror_flush_events` when the experiment runs.
    pub observed_flushes: bool,
    /// By estimate: the mirror's size estimates as multiples of the nominal cache
    /// (`None`: 1/8 to 4, with the adaptive mirror from 1/8 and 4; given, only these
    /// and no adaptive lines, for a closer look around one estimate).
    pub mirror_ratios: Option<Vec<f64>>,
    /// By estimate: which file sets to run (both unless asked).
    pub workloads: Workloads,
    /// Only the lines of these schedulers (names as in [`Line::name`]); `None`: all.
    pub lines: Option<Vec<String>>,
    /// Open loop: the offered loads as multiples of fifo's capacity (`None`:
    /// [`OPEN_LOOP_LOADS`]).
    pub open_loads: Option<Vec<f64>>,
    /// Open loop: how many rounds of every load and line, one after another (at least
    /// 1), so that a noisy comparison can be stated as a median with its spread.
    pub rounds: usize,
    /// Open loop: take this as fifo's capacity (requests/s) instead of measuring it, so
    /// that separate sweeps (say, of two mirror policies) offer the same rates.
    pub capacity_rps: Option<f64>,
    /// Every page-cache line's server reads its cgroup's page cache this way
    /// (`--cgroup-poll`; [`crate::cgroup_poll`]); `None`: no server polls.
    pub cgroup_poll: Option<crate::cgroup_poll::CgroupPoll>,
    /// The (plain) mirror lines take their size from those readings (`--mirror-track`).
    pub mirror_track: bool,
    /// Every mirror line's server writes its request log here (`--trace`), one file per
    /// run, so that the run can be replayed offline through other mirror models.
    pub trace_dir: Option<PathBuf>,
}

/// The by-estimate sweep's file sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workloads {
    /// The thesis' first: 200 files of 1 MiB, uniform popularity.
    pub uniform: bool,
    /// SURGE-like: 12,000 files, Zipf popularity, heavy-tailed sizes.
    pub surge: bool,
}

impl Workloads {
    /// Both sets.
    pub const BOTH: Workloads = Workloads {
        uniform: true,
        surge: true,
    };

    /// From a comma-separated list of `uniform` and `surge`.
    pub fn parse(list: &str) -> Result<Self, ServeError> {
        let mut w = Workloads {
            uniform: false,
            surge: false,
        };
        for name in list.split(',').map(str::trim) {
            match name {
                "uniform" => w.uniform = true,
                "surge" => w.surge = true,
                other => {
                    return Err(ServeError::config(
                        "workloads",
                        format!("unknown workload {other:?}: expected uniform and/or surge"),
                    ))
                }
            }
        }
        Ok(w)
    }
}

impl ExperimentConfig {
    /// Refuse estimates that are no size, loads that are no rate, unknown lines.
    pub fn validate(&self) -> Result<(), ServeError> {
        if let Some(bad) = self
            .open_loads
            .iter()
            .flatten()
            .find(|l| !(l.is_finite() && **l > 0.0))
        {
            return Err(ServeError::config(
                "loads",
                format!("{bad} is not a positive multiple of the capacity"),
            ));
        }
        if self.open_loads.as_ref().is_some_and(Vec::is_empty) {
            return Err(ServeError::config("loads", "give at least one load"));
        }
        if let Some(bad) = self
            .lines
            .iter()
            .flatten()
            .find(|name| !Line::NAMES.contains(&name.as_str()))
        {
            return Err(ServeError::config(
                "lines",
                format!(
                    "unknown line {bad:?}: expected some of {}",
                    Line::NAMES.join(", ")
                ),
            ));
        }
        if self.mirror_track && self.mirror_phases.is_some() {
            return Err(ServeError::config(
                "mirror-track",
                "a bank of phases keeps the given size; track or bank, not both",
            ));
        }
        if self.mirror_track && self.cgroup_poll.is_none() {
            return Err(ServeError::config(
                "mirror-track",
                "needs --cgroup-poll: the readings to follow",
            ));
        }
        if self.observed_flushes && (self.mirror_phases.is_some() || self.mirror_track) {
            return Err(ServeError::config(
                "observed-flushes",
                "runs one mirror told of the kernel's flushes: not with a bank of phases or size tracking",
            ));
        }
        let flushes_told = self.mirror_flush_events || self.observed_flushes;
        if flushes_told && self.lines.iter().flatten().any(|l| l == "mirror-adaptive") {
            return Err(ServeError::config(
                "lines",
                "the adaptive mirror cannot be told of the kernel's flushes: leave out mirror-adaptive",
            ));
        }
        if self.rounds == 0 {
            return Err(ServeError::config("rounds", "must be at least 1"));
        }
        if let Some(bad) = self.capacity_rps.filter(|c| !(c.is_finite() && *c > 0.0)) {
            return Err(ServeError::config(
                "capacity",
                format!("{bad} is not a positive rate"),
            ));
        }
        if let Some(ratios) = &self.mirror_ratios {
            if ratios.is_empty() {
                return Err(ServeError::config(
                    "mirror-ratios",
                    "give at least one estimate",
                ));
            }
            if let Some(bad) = ratios.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
                return Err(ServeError::config(
                    "mirror-ratios",
                    format!("{bad} is not a positive multiple of the cache size"),
                ));
            }
        }
        Ok(())
    }
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
    /// Every line's name.
    pub const NAMES: &'static [&'static str] = &[
        "fifo",
        "mirror",
        "mirror-adaptive",
        "nowait",
        "cachestat",
        "pool",
    ];

    /// The scheduler's name in points, tables and figures.
    pub fn name(&self) -> &'static str {
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

/// How a run is measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measure {
    /// A closed loop of [`CONNECTIONS`] connections.
    Closed,
    /// An open loop at `rate_per_s` for `seconds`, from [`OPEN_CONNECTIONS`] connections.
    Open {
        /// Requests per second offered.
        rate_per_s: f64,
        /// Length of the measured run.
        seconds: f64,
    },
}

/// One planned run.
#[derive(Clone, Debug, PartialEq)]
pub enum Planned {
    /// A closed loop. The workload's first closed run is its capacity: the open loops
    /// offer fractions of its throughput.
    Closed(Line),
    /// An open loop offering `load` times the capacity.
    Open {
        /// The scheduler.
        line: Line,
        /// Offered rate / capacity.
        load: f64,
        /// Which round of the sweep (0 for the first).
        round: usize,
    },
}

/// The scale of one workload's runs.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadPlan {
    /// The file set.
    pub spec: FileSetSpec,
    /// Runs, in order.
    pub runs: Vec<Planned>,
    /// Requests before measuring.
    pub warmup_requests: u64,
    /// Requests measured (closed loop).
    pub requests: u64,
    /// Length of each measured open loop.
    pub open_seconds: f64,
}

impl ExperimentConfig {
    /// Whether `line` is among the lines asked for.
    fn wants(&self, line: &Line) -> bool {
        self.lines
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == line.name()))
    }
}

/// Fraction of a file set the cgroup's page cache is sized to hold.
pub const CACHE_FRACTION: f64 = 0.4;
/// Requests in service at once.
pub const IN_SERVICE: usize = 4;
/// The open loop's offered loads, as fractions of fifo's saturated throughput: light,
/// moderate, heavy, at saturation and beyond it.
pub const OPEN_LOOP_LOADS: &[f64] = &[0.3, 0.6, 0.8, 0.95, 1.2];
/// The schedulers of the open loop: the cache-oblivious one, the mirror at the right
/// size, and every rival.
pub const OPEN_LOOP_LINES: &[Line] = &[
    Line::Fifo,
    Line::Mirror { ratio: 1.0 },
    Line::NoWait,
    Line::Cachestat,
    Line::Pool,
];

/// Files in a set.
fn file_count(spec: &FileSetSpec) -> usize {
    match spec {
        FileSetSpec::Uniform { files, .. } | FileSetSpec::Surge { files } => *files,
    }
}

/// The runs. By estimate: every line on both sets (the pool only where the set fits its
/// open-file limit). Open loop: the uniform set, the capacity run, then every load with
/// every scheduler in turn (so that the lines compared at one load ran close in time).
/// Without cgroups only the pool can run, and it is its own capacity.
pub fn plan(config: &ExperimentConfig, cgroups: bool) -> Vec<WorkloadPlan> {
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
    let pool_fits = |spec: &FileSetSpec| file_count(spec) <= crate::backend::POOL_MAX_FILES;
    let open_seconds = if config.quick { 2.0 } else { 8.0 };
    match config.sweep {
        Sweep::ByEstimate => {
            let (ratios, adaptive): (&[f64], &[f64]) = match &config.mirror_ratios {
                Some(asked) => (asked, &[]),
                None if config.quick => (&[0.25, 1.0, 4.0], &[4.0]),
                None => (&[0.125, 0.25, 0.5, 1.0, 2.0, 4.0], &[0.125, 4.0]),
            };
            // Told of flushes, the policy's statistics would never refresh in an adaptive
            // mirror (`bufcache serve` gives it no flushes): those lines are left out.
            let adaptive = if config.mirror_flush_events {
                &[]
            } else {
                adaptive
            };
            let runs = |spec: &FileSetSpec| {
                let mut v = Vec::new();
                if cgroups {
                    v.push(Line::Fifo);
                    v.extend(ratios.iter().map(|&ratio| Line::Mirror { ratio }));
                    v.extend(adaptive.iter().map(|&ratio| Line::AdaptiveMirror { ratio }));
                    v.push(Line::NoWait);
                    v.push(Line::Cachestat);
                }
                if pool_fits(spec) {
                    v.push(Line::Pool);
                }
                v.into_iter()
                    .filter(|l| config.wants(l))
                    .map(Planned::Closed)
                    .collect::<Vec<_>>()
            };
            let surge_requests = |n: u64| if config.quick { n } else { 4 * n };
            let wanted = config.workloads;
            vec![
                WorkloadPlan {
                    runs: if wanted.uniform {
                        runs(&uniform)
                    } else {
                        Vec::new()
                    },
                    spec: uniform,
                    warmup_requests: warmup,
                    requests,
                    open_seconds,
                },
                WorkloadPlan {
                    runs: if wanted.surge {
                        runs(&surge)
                    } else {
                        Vec::new()
                    },
                    spec: surge,
                    warmup_requests: surge_requests(warmup),
                    requests: surge_requests(requests),
                    open_seconds,
                },
            ]
            .into_iter()
            .filter(|w| !w.runs.is_empty())
            .collect()
        }
        Sweep::OpenLoop => {
            let loads: &[f64] = match &config.open_loads {
                Some(asked) => asked,
                None if config.quick => &[0.5, 1.2],
                None => OPEN_LOOP_LOADS,
            };
            let lines: Vec<Line> = OPEN_LOOP_LINES
                .iter()
                .filter(|l| cgroups || **l == Line::Pool)
                .filter(|l| config.wants(l))
                .cloned()
                .collect();
            // The capacity is fifo's (the pool's without cgroups), asked for or not;
            // measured unless given.
            let capacity = if cgroups { Line::Fifo } else { Line::Pool };
            let mut runs = Vec::new();
            if config.capacity_rps.is_none() {
                runs.push(Planned::Closed(capacity));
            }
            for round in 0..config.rounds {
                for &load in loads {
                    runs.extend(lines.iter().map(|line| Planned::Open {
                        line: line.clone(),
                        load,
                        round,
                    }));
                }
            }
            vec![WorkloadPlan {
                spec: uniform,
                runs,
                // Half the closed sweep's: the warm-up only fills the cache.
                warmup_requests: warmup / 2,
                requests,
                open_seconds,
            }]
        }
    }
}

/// What the experiment produced.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// Every run.
    pub points: Vec<Point>,
    /// Why the cgroup half did not run, if it did not.
    pub cgroup_note: Option<String>,
    /// With `observed_flushes`: which mirror the mirror lines ran, and why.
    pub mirror_note: Option<String>,
}

/// Run every planned run; `progress` is told about each as it starts.
pub async fn run(
    config: &ExperimentConfig,
    mut progress: impl FnMut(&str),
) -> Result<Outcome, ServeError> {
    config.validate()?;
    let available = if config.observed_flushes {
        linux::memcg_flushes::available().map_err(|e| e.to_string())
    } else {
        Ok(())
    };
    let (resolved, mirror_note) = observed::resolve(config, available);
    let config = &resolved;
    if let Some(note) = &mirror_note {
        progress(note);
    }
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
    let cgroups = cgroup_note.is_none();
    let mut points = Vec::new();
    for w in plan(config, cgroups) {
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
        let run = Run {
            config,
            plan: &w,
            dir: &dir,
            manifest: &manifest,
            cache_bytes: (manifest.total_bytes() as f64 * CACHE_FRACTION) as u64,
            cgroups,
        };
        let mut capacity_rps = config.capacity_rps;
        for planned in &w.runs {
            let point = match planned {
                Planned::Closed(line) => {
                    progress(&format!("{} {line:?}", manifest.workload));
                    let p = runner::run_line(&run, line, Measure::Closed).await?;
                    capacity_rps.get_or_insert(p.throughput_rps);
                    p
                }
                Planned::Open { line, load, round } => {
                    let capacity = capacity_rps.filter(|c| *c > 0.0).ok_or_else(|| {
                        ServeError::config("open loop", "the capacity run served nothing")
                    })?;
                    let rate_per_s = capacity * load;
                    progress(&format!(
                        "{} {line:?} open loop at {rate_per_s:.1}/s ({load} x capacity), round {}",
                        manifest.workload,
                        round + 1
                    ));
                    let measure = Measure::Open {
                        rate_per_s,
                        seconds: w.open_seconds,
                    };
                    let mut p = runner::run_line(&run, line, measure).await?;
                    p.load = Some(*load);
                    p.round = Some(*round);
                    p
                }
            };
            points.push(point);
        }
    }
    Ok(Outcome {
        points,
        cgroup_note,
        mirror_note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(in crate::experiment) fn config(quick: bool, sweep: Sweep) -> ExperimentConfig {
        ExperimentConfig {
            server_bin: "bufcache".into(),
            scratch: "/nonexistent".into(),
            quick,
            seed: 1,
            no_cgroup: false,
            disk_mb_s: 0,
            sweep,
            mirror_policy: "clock".into(),
            mirror_ratios: None,
            workloads: Workloads::BOTH,
            lines: None,
            open_loads: None,
            rounds: 1,
            capacity_rps: None,
            cgroup_poll: None,
            mirror_track: false,
            trace_dir: None,
            mirror_phases: None,
            mirror_flush_events: false,
            observed_flushes: false,
        }
    }

    #[test]
    fn asked_estimates_and_workloads_replace_the_default_sweep() {
        let mut c = config(false, Sweep::ByEstimate);
        c.mirror_ratios = Some(vec![0.75, 1.0]);
        c.workloads = Workloads::parse("uniform").unwrap();
        c.validate().unwrap();
        let p = plan(&c, true);
        assert_eq!(p.len(), 1, "uniform only");
        assert_eq!(
            lines(&p[0]),
            vec![
                Line::Fifo,
                Line::Mirror { ratio: 0.75 },
                Line::Mirror { ratio: 1.0 },
                Line::NoWait,
                Line::Cachestat,
                Line::Pool,
            ]
        );
        assert!(Workloads::parse("uniform,bogus").is_err());
        assert_eq!(Workloads::parse("surge, uniform").unwrap(), Workloads::BOTH);
        for bad in [vec![], vec![1.0, 0.0], vec![f64::NAN]] {
            c.mirror_ratios = Some(bad.clone());
            assert!(c.validate().is_err(), "{bad:?}");
        }
    }

    fn lines(w: &WorkloadPlan) -> Vec<Line> {
        w.runs
            .iter()
            .map(|r| match r {
                Planned::Closed(l) => l.clone(),
                Planned::Open { .. } => panic!("an open loop in the estimate sweep"),
            })
            .collect()
    }

    #[test]
    fn the_estimate_sweep_has_every_line_on_both_sets() {
        let full = plan(&config(false, Sweep::ByEstimate), true);
        assert_eq!(full.len(), 2);
        // fifo, six mirror sizes, two adaptive mirrors, nowait, cachestat, pool.
        let uniform = lines(&full[0]);
        assert_eq!(uniform.len(), 12);
        assert_eq!(uniform[0], Line::Fifo);
        assert_eq!(uniform[4], Line::Mirror { ratio: 1.0 });
        // 12,000 files fit the pool's hashed lookup: SURGE has its pool line too.
        assert_eq!(lines(&full[1]), uniform);
        // Without cgroups: the pool line only.
        let pool_only = plan(&config(false, Sweep::ByEstimate), false);
        assert_eq!(pool_only.len(), 2);
        assert_eq!(lines(&pool_only[0]), [Line::Pool]);
        assert_eq!(plan(&config(true, Sweep::ByEstimate), false).len(), 2);
    }

    /// Asked-for loads, lines and rounds: fifo's capacity first (even when fifo is not
    /// among the lines), then round after round of every load and line.
    #[test]
    fn asked_loads_lines_and_rounds_shape_the_open_loop() {
        let mut c = config(false, Sweep::OpenLoop);
        c.open_loads = Some(vec![1.2]);
        c.lines = Some(vec!["mirror".into(), "cachestat".into()]);
        c.rounds = 2;
        c.validate().unwrap();
        let runs = &plan(&c, true)[0].runs;
        let open = |line, round| Planned::Open {
            line,
            load: 1.2,
            round,
        };
        assert_eq!(
            runs,
            &vec![
                Planned::Closed(Line::Fifo),
                open(Line::Mirror { ratio: 1.0 }, 0),
                open(Line::Cachestat, 0),
                open(Line::Mirror { ratio: 1.0 }, 1),
                open(Line::Cachestat, 1),
            ]
        );
        // A given capacity replaces the capacity run.
        c.capacity_rps = Some(83.0);
        assert_eq!(plan(&c, true)[0].runs[..], runs[1..]);
        c.capacity_rps = Some(-1.0);
        assert!(c.validate().is_err());
        c.capacity_rps = None;
        // The estimate sweep keeps only the asked lines too.
        let mut e = config(false, Sweep::ByEstimate);
        e.lines = Some(vec!["fifo".into(), "pool".into()]);
        assert_eq!(lines(&plan(&e, true)[0]), [Line::Fifo, Line::Pool]);
        for (what, bad) in [
            ("lines", {
                let mut b = c.clone();
                b.lines = Some(vec!["mirrorr".into()]);
                b
            }),
            ("loads", {
                let mut b = c.clone();
                b.open_loads = Some(vec![0.0]);
                b
            }),
            ("loads", {
                let mut b = c.clone();
                b.open_loads = Some(vec![]);
                b
            }),
            ("rounds", {
                let mut b = c.clone();
                b.rounds = 0;
                b
            }),
            ("track or bank", {
                let mut b = c.clone();
                b.mirror_track = true;
                b.mirror_phases = Some((8, 5000));
                b
            }),
            ("not with a bank", {
                let mut b = c.clone();
                b.observed_flushes = true;
                b.mirror_phases = Some((8, 5000));
                b
            }),
            ("leave out mirror-adaptive", {
                let mut b = c.clone();
                b.mirror_flush_events = true;
                b.lines = Some(vec!["fifo".into(), "mirror-adaptive".into()]);
                b
            }),
            ("leave out mirror-adaptive", {
                let mut b = c.clone();
                b.observed_flushes = true;
                b.lines = Some(vec!["mirror-adaptive".into()]);
                b
            }),
        ] {
            let err = bad.validate().unwrap_err().to_string();
            assert!(err.contains(what), "{err}");
        }
    }

    /// The capacity run first, then each load with every scheduler in turn.
    #[test]
    fn the_open_loop_measures_capacity_then_every_load_in_turn() {
        let open = plan(&config(false, Sweep::OpenLoop), true);
        assert_eq!(open.len(), 1, "the uniform set only");
        let runs = &open[0].runs;
        assert_eq!(runs[0], Planned::Closed(Line::Fifo));
        assert_eq!(
            runs.len(),
            1 + OPEN_LOOP_LOADS.len() * OPEN_LOOP_LINES.len()
        );
        assert_eq!(
            runs[1..=5].to_vec(),
            OPEN_LOOP_LINES
                .iter()
                .map(|l| Planned::Open {
                    line: l.clone(),
                    load: 0.3,
                    round: 0,
                })
                .collect::<Vec<_>>()
        );
        assert_eq!(
            runs.last(),
            Some(&Planned::Open {
                line: Line::Pool,
                load: 1.2,
                round: 0,
            })
        );
        // Without cgroups the pool is its own capacity.
        let pool = plan(&config(true, Sweep::OpenLoop), false);
        assert_eq!(pool[0].runs[0], Planned::Closed(Line::Pool));
        assert_eq!(pool[0].runs.len(), 3);
    }
}
