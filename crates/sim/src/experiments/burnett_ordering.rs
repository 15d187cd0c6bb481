//! Burnett 2006 ch.4: no ordering, `fsync`, file-system barriers and asynchronous graphs
//! under FIFO and C-LOOK disk scheduling, on the TPC-B-like workload, varying one
//! parameter at a time over the ranges of Table 4.1 (thesis Figures 4.12-4.19).

use rayon::prelude::*;
use report::{Axis, Figure, FigureFile, Series, Table};
use serde::Serialize;

use crate::des::config::{Cleaner, SystemConfig, WritePolicy};
use crate::des::disk::{Scheduler, ServiceTime};
use crate::des::tpcb::{Mechanism, TpcbWorkload};
use crate::des::{simulate, Report};

/// Default cache: 20,000 pages of 16 KB (312 MB).
pub const CACHE_PAGES: u32 = 20_000;

/// The disk schedulers compared, in the order of the points and figures.
pub const SCHEDULERS: [Scheduler; 2] = [Scheduler::Fifo, Scheduler::Clook];

/// A parameter of the workload or the system that the experiment varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// Pages read per transaction.
    PagesRead,
    /// Pages written per transaction.
    PagesWritten,
    /// Bytes of log written per transaction.
    LogBytes,
    /// Transactions in the run.
    Transactions,
    /// Cache size in 16 KB pages.
    CachePages,
}

impl Param {
    /// Name in reports and in the `param` column (`pages_read`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Param::PagesRead => "pages_read",
            Param::PagesWritten => "pages_written",
            Param::LogBytes => "log_bytes",
            Param::Transactions => "transactions",
            Param::CachePages => "cache_pages",
        }
    }

    /// The x axis title of its figures.
    pub fn axis_label(self) -> &'static str {
        match self {
            Param::PagesRead => "pages read per transaction",
            Param::PagesWritten => "pages written per transaction",
            Param::LogBytes => "log write per transaction (bytes)",
            Param::Transactions => "transactions",
            Param::CachePages => "cache size (16 KB pages)",
        }
    }

    /// The parameter called `name`.
    pub fn from_name(name: &str) -> Option<Param> {
        [
            Param::PagesRead,
            Param::PagesWritten,
            Param::LogBytes,
            Param::Transactions,
            Param::CachePages,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

/// A parameter the experiment varies, with the values it takes.
#[derive(Clone, Copy, Debug)]
pub struct Sweep {
    /// The parameter.
    pub param: Param,
    /// The thesis figure of the execution time.
    pub figure: &'static str,
    /// Values (in the parameter's unit: pages, bytes, transactions, cache pages).
    pub values: &'static [u64],
}

/// Table 4.1's ranges, sampled: pages read 0-20, pages written 1-20, log writes 64 B - 16
/// KB, 5,000-50,000 transactions (the thesis goes to 1,000,000; the trend is linear),
/// cache 16-781 MB.
pub const SWEEPS: [Sweep; 5] = [
    Sweep {
        param: Param::PagesRead,
        figure: "4.12",
        values: &[0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20],
    },
    Sweep {
        param: Param::PagesWritten,
        figure: "4.14",
        values: &[1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 20],
    },
    Sweep {
        param: Param::LogBytes,
        figure: "4.16",
        values: &[
            64, 128, 256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384,
        ],
    },
    Sweep {
        param: Param::Transactions,
        figure: "4.17",
        values: &[5_000, 10_000, 20_000, 30_000, 40_000, 50_000],
    },
    Sweep {
        param: Param::CachePages,
        figure: "4.18",
        values: &[
            1024, 2048, 4096, 8192, 12288, 16384, 20000, 25088, 31360, 40000, 49984,
        ],
    },
];

/// Smaller sweeps for `--quick` and tests.
pub const QUICK_SWEEPS: [Sweep; 5] = [
    Sweep {
        param: Param::PagesRead,
        figure: "4.12",
        values: &[0, 20],
    },
    Sweep {
        param: Param::PagesWritten,
        figure: "4.14",
        values: &[1, 20],
    },
    Sweep {
        param: Param::LogBytes,
        figure: "4.16",
        values: &[128, 16384],
    },
    Sweep {
        param: Param::Transactions,
        figure: "4.17",
        values: &[5_000, 10_000],
    },
    Sweep {
        param: Param::CachePages,
        figure: "4.18",
        values: &[2048, 20000],
    },
];

/// The sweeps of a full or a quick run.
pub fn sweeps(quick: bool) -> &'static [Sweep] {
    if quick {
        &QUICK_SWEEPS
    } else {
        &SWEEPS
    }
}

/// One data point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OrderingPoint {
    /// The thesis figure of the execution time for this parameter.
    pub figure: &'static str,
    /// `none`, `fsync`, `barrier` or `graph`.
    pub mechanism: &'static str,
    /// `fifo` or `clook`.
    pub scheduler: &'static str,
    /// The varied parameter.
    pub param: &'static str,
    /// Its value.
    pub value: u64,
    /// Simulated execution time, to the end of the final `sync()`.
    pub time_s: f64,
    /// Disk reads.
    pub disk_reads: u64,
    /// Disk writes.
    pub disk_writes: u64,
    /// Writes started to make room (Figure 4.19).
    pub eviction_writes: u64,
    /// Buffers duplicated to keep versions apart.
    pub duplicates: u64,
    /// Ordering constraints broken (the checker; always 0).
    pub violations: u64,
}

/// The thesis's system: one disk, 1-10 ms linear in seek distance over both files, LRU,
/// delayed writes (flusher every 10 s, buffers dirty 30 s, skipping constrained ones),
/// eviction writing one unconstrained victim at a time, 2 µs per memory operation.
pub fn system(cache_pages: u32, scheduler: Scheduler, workload: &TpcbWorkload) -> SystemConfig {
    let mut s = SystemConfig::default();
    s.cache.block_bytes = workload.block_bytes as u32;
    s.cache.buffers = cache_pages;
    s.cache.policy = "lru".into();
    s.cache.write_policy = WritePolicy::Delayed;
    s.cache.flush_interval_s = 10.0;
    s.cache.flush_age_s = 30.0;
    s.cache.cleaner = Cleaner::Sync;
    s.cache.block_us = 2.0;
    s.cache.syscall_us = 0.0;
    s.disks.count = 1;
    s.disks.scheduler = scheduler;
    s.disks.service = ServiceTime::Linear {
        min_ms: 1.0,
        max_ms: 10.0,
        span_blocks: workload.disk_blocks(),
    };
    // The workload ends with its own sync().
    s.final_sync = false;
    s
}

/// Run one configuration: `param` (a [`Param`] name, or `default` for the thesis's
/// defaults) set to `value`.
///
/// # Panics
///
/// On a `param` that is neither (a programming error: the names are this module's).
pub fn run_point(
    mechanism: Mechanism,
    scheduler: Scheduler,
    param: &str,
    value: u64,
    seed: u64,
) -> Report {
    match Param::from_name(param) {
        Some(p) => run_at(mechanism, scheduler, Some((p, value)), seed),
        None if param == "default" => run_at(mechanism, scheduler, None, seed),
        None => panic!("unknown parameter {param}"),
    }
}

/// Run one configuration: the thesis's defaults with `set` (if any) changed.
pub fn run_at(
    mechanism: Mechanism,
    scheduler: Scheduler,
    set: Option<(Param, u64)>,
    seed: u64,
) -> Report {
    let mut w = TpcbWorkload {
        mechanism,
        seed,
        ..Default::default()
    };
    let mut cache = CACHE_PAGES;
    match set {
        Some((Param::PagesRead, value)) => w.pages_read = value as u32,
        Some((Param::PagesWritten, value)) => w.pages_written = value as u32,
        Some((Param::LogBytes, value)) => w.log_bytes = value,
        Some((Param::Transactions, value)) => w.transactions = value as u32,
        Some((Param::CachePages, value)) => cache = value as u32,
        None => {}
    }
    simulate(&system(cache, scheduler, &w), &w.build(), seed).expect("the thesis's system is valid")
}

/// Every point: sweeps × mechanisms × {FIFO, C-LOOK}, in a fixed order.
pub fn run(seed: u64, quick: bool) -> Vec<OrderingPoint> {
    let mut specs = Vec::new();
    for sweep in sweeps(quick) {
        for &value in sweep.values {
            for scheduler in SCHEDULERS {
                for mechanism in Mechanism::ALL {
                    specs.push((sweep, value, scheduler, mechanism));
                }
            }
        }
    }
    specs
        .par_iter()
        .map(|&(sweep, value, scheduler, mechanism)| {
            let r = run_at(mechanism, scheduler, Some((sweep.param, value)), seed);
            OrderingPoint {
                figure: sweep.figure,
                mechanism: mechanism.name(),
                scheduler: scheduler.name(),
                param: sweep.param.name(),
                value,
                time_s: r.time_s,
                disk_reads: r.disk_reads,
                disk_writes: r.disk_writes,
                eviction_writes: r.cleaner_writes,
                duplicates: r.duplicates,
                violations: r.violations,
            }
        })
        .collect()
}

/// A measured quantity of a point, as the y axis of a figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Execution time, seconds.
    Time,
    /// Disk reads.
    DiskReads,
    /// Disk writes.
    DiskWrites,
    /// Writes started to make room.
    EvictionWrites,
}

impl Metric {
    /// The axis title (also part of the traffic figures' titles and file names).
    pub fn label(self) -> &'static str {
        match self {
            Metric::Time => "execution time (s)",
            Metric::DiskReads => "disk reads",
            Metric::DiskWrites => "disk writes",
            Metric::EvictionWrites => "writes due to eviction",
        }
    }

    /// Its value at `p`.
    pub fn of(self, p: &OrderingPoint) -> f64 {
        match self {
            Metric::Time => p.time_s,
            Metric::DiskReads => p.disk_reads as f64,
            Metric::DiskWrites => p.disk_writes as f64,
            Metric::EvictionWrites => p.eviction_writes as f64,
        }
    }
}

/// Disk traffic (thesis Figures 4.13, 4.15) and writes due to eviction (4.19), all under
/// FIFO scheduling: (the parameter varied, the thesis figure, what is drawn).
pub const TRAFFIC_FIGURES: [(Param, &str, Metric); 5] = [
    (Param::PagesRead, "4.13", Metric::DiskWrites),
    (Param::PagesRead, "4.13", Metric::DiskReads),
    (Param::PagesWritten, "4.15", Metric::DiskWrites),
    (Param::PagesWritten, "4.15", Metric::DiskReads),
    (Param::CachePages, "4.19", Metric::EvictionWrites),
];

/// Every figure of a run: execution time per sweep under each scheduler, then the traffic
/// figures; one line per ordering mechanism.
pub fn figures(points: &[OrderingPoint], quick: bool) -> Vec<FigureFile> {
    let mut files = Vec::new();
    for sweep in sweeps(quick) {
        for scheduler in SCHEDULERS {
            let title = format!(
                "Figure {}: execution time, {} scheduling",
                sweep.figure,
                scheduler.name().to_uppercase()
            );
            let file_name = format!(
                "fig{}-{}-time-{}.svg",
                sweep.figure,
                sweep.param.name(),
                scheduler.name()
            );
            let figure = by_mechanism(points, title, sweep.param, scheduler, Metric::Time);
            files.push(FigureFile::new(file_name, figure));
        }
    }
    for (param, figure, metric) in TRAFFIC_FIGURES {
        let what = metric.label();
        let title = format!("Figure {figure}: {what}, FIFO scheduling");
        let file_name = format!(
            "fig{figure}-{}-{}.svg",
            param.name(),
            what.replace(' ', "-")
        );
        let figure = by_mechanism(points, title, param, Scheduler::Fifo, metric);
        files.push(FigureFile::new(file_name, figure));
    }
    files
}

/// `metric` against `param`'s values under `scheduler`, a line per mechanism.
fn by_mechanism(
    points: &[OrderingPoint],
    title: String,
    param: Param,
    scheduler: Scheduler,
    metric: Metric,
) -> Figure {
    let line = |mechanism: Mechanism| {
        let xy = points
            .iter()
            .filter(|p| {
                p.param == param.name()
                    && p.scheduler == scheduler.name()
                    && p.mechanism == mechanism.name()
            })
            .map(|p| (p.value as f64, metric.of(p)))
            .collect();
        Series::marked_line(mechanism.name(), xy)
    };
    Figure::new(
        title,
        Axis::new(param.axis_label()),
        Axis::from_zero(metric.label()),
    )
    .with_all_series(Mechanism::ALL.map(line))
}

/// What [`defaults_table`] shows.
pub const DEFAULTS_TABLE_TITLE: &str = "At the thesis's defaults (3 pages read, 3 written, 128 B log writes, 10,000 transactions, 20,000 pages):";

/// Every mechanism under each scheduler at the thesis's defaults: the transactions
/// sweep's point at its default count, and with `quick` also the cache sweep's point at
/// the default size, in the order of `points`.
pub fn defaults_table(points: &[OrderingPoint], quick: bool) -> Table {
    let transactions = u64::from(TpcbWorkload::default().transactions);
    let mut table = Table::new([
        "scheduler",
        "mechanism",
        "time_s",
        "disk_reads",
        "disk_writes",
        "duplicates",
        "violations",
    ]);
    let at_defaults = |p: &&OrderingPoint| {
        p.param == Param::Transactions.name() && p.value == transactions
            || quick && p.param == Param::CachePages.name() && p.value == u64::from(CACHE_PAGES)
    };
    for p in points.iter().filter(at_defaults) {
        table.push_row([
            p.scheduler.to_string(),
            p.mechanism.to_string(),
            format!("{:.1}", p.time_s),
            p.disk_reads.to_string(),
            p.disk_writes.to_string(),
            p.duplicates.to_string(),
            p.violations.to_string(),
        ]);
    }
    table
}
