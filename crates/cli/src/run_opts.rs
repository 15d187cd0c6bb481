//! What a `cachesim` user expects of a replay run: a warm-up, intervals, a thread count,
//! streaming for traces larger than memory, and checks that fail before a long load.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use policy::{BuildContext, ConfigError, PolicySpec};
use sim::trace_time::{Interval, TimeMarks, Warmup};
use sim::{CompactTrace, Intervals, RunResult, Schedule, Summary};

use crate::input::{self, ReadArgs};

/// Run options of `bufcache replay`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Requests served before counting starts: a count (100000), a fraction of the trace
    /// (0.1) or a span of trace time (30m, 1h, 86400s, 2d). Deletes count as positions.
    #[arg(long, value_name = "N|F|SPAN", value_parser = Warmup::parse)]
    pub warmup: Option<Warmup>,
    /// Another trace served first to warm the caches up; nothing of it is counted (it adds
    /// to the working set that fractional sizes are taken of). Not with --stream.
    #[arg(long, value_name = "FILE")]
    pub warmup_trace: Option<PathBuf>,
    /// Also report the miss ratio of every N requests (positions in the trace, warm-up
    /// included) or of every span of trace time (1h, 30m, 86400s): rows with `interval` in
    /// --json and --csv, a table otherwise, a figure with --plot.
    #[arg(long, value_name = "N|SPAN", value_parser = Interval::parse)]
    pub interval: Option<Interval>,
    /// Trace time units per second, for spans of --warmup and --interval (1: the trace's
    /// timestamps are seconds, as in oracleGeneral and CloudPhysics; MSR: 10000000).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub ticks_per_second: u64,
    /// Worker threads for the runs (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Stream the trace instead of loading it: two passes over the file, memory in
    /// proportion to the distinct objects, not the requests. Refuses offline policies.
    #[arg(long)]
    pub stream: bool,
}

impl RunArgs {
    /// What to watch in the timestamps while the trace is read (nothing unless a span of
    /// trace time is asked for).
    pub fn time_marks(&self) -> TimeMarks {
        let warmup = match self.warmup {
            Some(Warmup::Seconds(s)) => Some(s.saturating_mul(self.ticks_per_second)),
            _ => None,
        };
        let interval = match self.interval {
            Some(Interval::Seconds(s)) => Some(s.saturating_mul(self.ticks_per_second)),
            _ => None,
        };
        TimeMarks::new(warmup, interval)
    }

    /// The schedule over `prefix` positions of --warmup-trace followed by a trace of `ops`
    /// positions (deletes included), with the spans `marks` found in its timestamps.
    pub fn schedule(&self, prefix: u64, ops: u64, marks: &TimeMarks) -> Result<Schedule> {
        let warmup = prefix
            + match self.warmup {
                None => 0,
                Some(w) => match w.positions(ops) {
                    Some(n) => n,
                    // a span of trace time: where it ends, found while the trace was read
                    None => marks.warmup().context("--warmup")? - prefix,
                },
            };
        if warmup >= prefix + ops && ops > 0 {
            bail!(
                "--warmup {} leaves nothing to count: the trace has {ops} operations",
                warmup - prefix
            );
        }
        let interval = match self.interval {
            None => Intervals::None,
            Some(Interval::Requests(n)) => Intervals::Every(n),
            Some(Interval::Seconds(_)) => marks.intervals().context("--interval")?,
        };
        Ok(Schedule { warmup, interval })
    }

    /// Sizes rayon's pool as asked (once, before any parallel work).
    pub fn apply_threads(&self) -> Result<()> {
        if let Some(n) = self.threads {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n as usize)
                .build_global()
                .context("setting up --threads")?;
        }
        Ok(())
    }
}

/// Builds each policy once at a small capacity, so that an unknown name, parameter or
/// value fails before a trace is read. Capacity errors wait for the real sizes.
pub fn check_policies(policies: &[PolicySpec], seed: u64) -> Result<()> {
    for p in policies {
        match p.build(&BuildContext::new(64, seed)) {
            Ok(_) | Err(ConfigError::Capacity { .. }) => {}
            Err(e) => return Err(e).with_context(|| format!("bad policy `{}`", p.label())),
        }
    }
    Ok(())
}

/// An empty trace gives no miss ratio: say so instead of printing zeros.
pub fn refuse_empty(label: &str, summary: &Summary) -> Result<()> {
    if summary.requests == 0 {
        bail!("trace {label} holds no requests (nothing to replay)");
    }
    Ok(())
}

/// Streams `path` through the runs ([`sim::stream`]); also returns the schedule it
/// counted on and the spans of trace time it found.
pub fn replay_streamed(
    path: &Path,
    read: &ReadArgs,
    grid: &sim::replay::Grid<'_>,
    run: &RunArgs,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Summary, Vec<RunResult>, Schedule, TimeMarks)> {
    if path.as_os_str() == "-" {
        bail!("--stream reads the trace twice, which standard input cannot do: give a file");
    }
    if run.warmup_trace.is_some() {
        bail!("--warmup-trace needs the trace in memory: drop --stream");
    }
    anyhow::ensure!(read.page_size > 0, "--page-size must be at least 1 byte");
    let open = || input::reader(path, read);
    let mut reader = open().with_context(|| format!("cannot open trace {}", path.display()))?;
    let mut marks = run.time_marks();
    let first = sim::stream::number_keys_watching(&mut reader, &mut |position, time| {
        marks.observe(position, time);
    })
    .with_context(|| format!("cannot read trace {}", path.display()))?;
    let summary = first.summary();
    refuse_empty(&input::describe(path), &summary)?;
    let schedule = run.schedule(0, summary.requests + summary.deletes, &marks)?;
    let mut reader = open().with_context(|| format!("cannot open trace {}", path.display()))?;
    let results = sim::stream::replay_numbered(
        &first,
        &mut reader,
        &sim::replay::Grid {
            schedule: schedule.clone(),
            ..grid.clone()
        },
        progress,
    )
    .context("cannot replay")?;
    Ok((summary, results, schedule, marks))
}

/// The capacity in bytes and in objects. One of them is the run's own unit; the other is
/// converted at the working set's mean object size (footprint / distinct objects).
pub fn capacity_both(capacity: u64, ignore_size: bool, s: &Summary) -> (u64, u64) {
    let mean = if s.distinct_keys == 0 {
        1.0
    } else {
        s.footprint_bytes as f64 / s.distinct_keys as f64
    };
    if ignore_size {
        ((capacity as f64 * mean) as u64, capacity)
    } else {
        (capacity, (capacity as f64 / mean.max(1.0)) as u64)
    }
}

/// In-memory replay on `schedule`.
pub fn replay_loaded(
    trace: &CompactTrace,
    grid: &sim::replay::Grid<'_>,
    schedule: Schedule,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RunResult>> {
    sim::replay_scheduled(
        trace,
        &sim::replay::Grid {
            schedule,
            ..grid.clone()
        },
        progress,
    )
    .context("cannot replay")
}
