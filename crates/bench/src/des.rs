//! Throughput of the discrete-event simulator: events per second on one thread over the
//! papers' workloads, and the wall time of the whole kotz-ellis experiment on all cores.
//!
//! Each case runs `runs` times and the fastest counts: the machine may be shared, and
//! interference only ever slows a run down. The simulator is deterministic, so every run
//! of a case handles the same events.

use std::time::Instant;

use serde::Serialize;
use sim::des::config::{Cleaner, SystemConfig, WritePolicy};
use sim::des::disk::Scheduler;
use sim::des::kotz::{KotzWorkload, Pattern};
use sim::des::ops::Workload;
use sim::des::tpcb::{Mechanism, TpcbWorkload};
use sim::des::xmf::XmfWorkload;
use sim::des::RunError;
use sim::experiments::{burnett_ordering, kotz_ellis, xmf_cleaning};

use crate::per_second;
use crate::replay::DEFAULT_SEED;

/// Throughput of the discrete-event simulator on one case.
#[derive(Clone, Debug, Serialize)]
pub struct DesBenchResult {
    /// The case's name.
    pub case: String,
    /// Events handled in one run.
    pub events: u64,
    /// Seconds of the fastest of the runs.
    pub seconds: f64,
    /// Events per second of the fastest run, one thread.
    pub events_per_s: f64,
}

/// The wall time of a whole experiment (every point, on all of rayon's threads).
/// Fields in the order the JSON has always had them.
#[derive(Clone, Debug, Serialize)]
pub struct ExperimentTiming {
    /// `experiment NAME`.
    pub case: String,
    /// Points the experiment computed.
    pub points: usize,
    /// Wall seconds.
    pub seconds: f64,
    /// Threads rayon ran the points on.
    pub threads: usize,
}

/// Everything `bufcache bench des` measures.
#[derive(Clone, Debug)]
pub struct DesBenchReport {
    /// One result per case of [`des_cases`], in its order.
    pub cases: Vec<DesBenchResult>,
    /// The kotz-ellis experiment, timed once.
    pub experiment: ExperimentTiming,
}

/// How much `bufcache bench des` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DesBenchOptions {
    /// Cases at their smallest size, one run each, and the experiment's quick grid.
    pub quick: bool,
    /// Runs per case when not quick (the fastest counts).
    pub runs: u32,
}

impl DesBenchOptions {
    /// `(scale, runs)`: the cases' size factor and the runs per case.
    pub fn scale_and_runs(self) -> (u64, u32) {
        if self.quick {
            (1, 1)
        } else {
            (10, self.runs)
        }
    }
}

/// One benchmark case: its name, the simulated system and the workload it runs.
pub type DesCase = (String, SystemConfig, Workload);

/// The simulator's benchmark cases, scaled by `scale` (1 = default size): Burnett's
/// TPC-B-like transactions with asynchronous graphs (the ordering machinery), Kotz & Ellis
/// `gw` with quarter-block records under WriteFull (many small writes, 20 processes, 20
/// disks), `lw1` under WriteBack (the scan cleaner at work), and the XMF temporary-file
/// workload with the clock daemon.
pub fn des_cases(scale: u64) -> Vec<DesCase> {
    let blocks = 40_000 * scale;
    let gw = KotzWorkload {
        pattern: Pattern::Gw,
        record_blocks: 0.25,
        total_blocks: blocks,
        ..Default::default()
    };
    let lw1 = KotzWorkload {
        pattern: Pattern::Lw1,
        total_blocks: blocks,
        ..Default::default()
    };
    let xmf = XmfWorkload {
        jobs: (20 * scale) as u32,
        ..Default::default()
    };
    let tpcb = TpcbWorkload {
        mechanism: Mechanism::Graph,
        transactions: 10_000 * scale as u32,
        ..Default::default()
    };
    vec![
        (
            format!(
                "burnett tpc-b graphs c-look, {} transactions",
                tpcb.transactions
            ),
            burnett_ordering::system(burnett_ordering::CACHE_PAGES, Scheduler::Clook, &tpcb),
            tpcb.build(),
        ),
        (
            format!("kotz gw writefull 1/4-block records, {blocks} blocks"),
            kotz_ellis::base_system(80, WritePolicy::WriteFull),
            gw.build(),
        ),
        (
            format!("kotz lw1 writeback, {blocks} blocks"),
            kotz_ellis::base_system(80, WritePolicy::WriteBack),
            lw1.build(),
        ),
        (
            format!(
                "xmf clock daemon, 768 buffers, {} jobs x 8 processes",
                xmf.jobs
            ),
            xmf_cleaning::system(768, "clock", Cleaner::Daemon),
            xmf.build(),
        ),
    ]
}

/// Run one simulator case `runs` times (at least once) and keep the fastest.
pub fn des_throughput(
    case: &str,
    system: &SystemConfig,
    workload: &Workload,
    runs: u32,
) -> Result<DesBenchResult, RunError> {
    let mut best = f64::INFINITY;
    let mut events = 0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let report = sim::des::simulate(system, workload, DEFAULT_SEED)?;
        best = best.min(start.elapsed().as_secs_f64());
        events = report.events;
    }
    Ok(DesBenchResult {
        case: case.to_string(),
        events,
        seconds: best,
        events_per_s: per_second(events, best),
    })
}

/// Every case of [`des_cases`], then the whole kotz-ellis experiment (seed 1).
pub fn run(options: DesBenchOptions) -> Result<DesBenchReport, RunError> {
    let (scale, runs) = options.scale_and_runs();
    let mut cases = Vec::new();
    for (case, system, workload) in des_cases(scale) {
        cases.push(des_throughput(&case, &system, &workload, runs)?);
    }
    let start = Instant::now();
    let points = kotz_ellis::run(kotz_ellis::Options {
        seed: 1,
        quick: options.quick,
    });
    let seconds = start.elapsed().as_secs_f64();
    Ok(DesBenchReport {
        cases,
        experiment: ExperimentTiming {
            case: "experiment kotz-ellis".to_string(),
            points: points.len(),
            seconds,
            threads: rayon::current_num_threads(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_is_the_smallest_scale_and_one_run() {
        let quick = DesBenchOptions {
            quick: true,
            runs: 5,
        };
        assert_eq!(quick.scale_and_runs(), (1, 1));
        let full = DesBenchOptions {
            quick: false,
            runs: 5,
        };
        assert_eq!(full.scale_and_runs(), (10, 5));
    }

    #[test]
    fn cases_are_named_by_their_scaled_sizes() {
        let names: Vec<String> = des_cases(2).into_iter().map(|(n, _, _)| n).collect();
        assert_eq!(
            names,
            [
                "burnett tpc-b graphs c-look, 20000 transactions",
                "kotz gw writefull 1/4-block records, 80000 blocks",
                "kotz lw1 writeback, 80000 blocks",
                "xmf clock daemon, 768 buffers, 40 jobs x 8 processes",
            ]
        );
    }

    #[test]
    fn a_case_reports_the_events_of_its_simulation() {
        // The smallest kotz case, once: the event count is the simulator's own.
        let (name, system, workload) = des_cases(1).swap_remove(2);
        let r = des_throughput(&name, &system, &workload, 0).unwrap();
        let report = sim::des::simulate(&system, &workload, DEFAULT_SEED).unwrap();
        assert_eq!(r.events, report.events);
        assert!(r.events > 10_000);
        assert_eq!(r.case, name);
    }

    #[test]
    fn experiment_timing_json_keeps_its_field_order() {
        let t = ExperimentTiming {
            case: "experiment kotz-ellis".into(),
            points: 3,
            seconds: 0.5,
            threads: 2,
        };
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"case":"experiment kotz-ellis","points":3,"seconds":0.5,"threads":2}"#
        );
    }
}
