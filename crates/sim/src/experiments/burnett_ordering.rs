//! Burnett 2006 ch.4: no ordering, `fsync`, file-system barriers and asynchronous graphs
//! under FIFO and C-LOOK disk scheduling, on the TPC-B-like workload, varying one
//! parameter at a time over the ranges of Table 4.1 (thesis Figures 4.12-4.19).

use rayon::prelude::*;
use serde::Serialize;

use crate::des::config::{Cleaner, SystemConfig, WritePolicy};
use crate::des::disk::{Scheduler, ServiceTime};
use crate::des::tpcb::{Mechanism, TpcbWorkload};
use crate::des::{simulate, Report};

/// Default cache: 20,000 pages of 16 KB (312 MB).
pub const CACHE_PAGES: u32 = 20_000;

/// A parameter the experiment varies, with the values it takes.
#[derive(Clone, Copy, Debug)]
pub struct Sweep {
    /// Name in reports (`pages_read`, ...).
    pub param: &'static str,
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
        param: "pages_read",
        figure: "4.12",
        values: &[0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20],
    },
    Sweep {
        param: "pages_written",
        figure: "4.14",
        values: &[1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 20],
    },
    Sweep {
        param: "log_bytes",
        figure: "4.16",
        values: &[
            64, 128, 256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384,
        ],
    },
    Sweep {
        param: "transactions",
        figure: "4.17",
        values: &[5_000, 10_000, 20_000, 30_000, 40_000, 50_000],
    },
    Sweep {
        param: "cache_pages",
        figure: "4.18",
        values: &[
            1024, 2048, 4096, 8192, 12288, 16384, 20000, 25088, 31360, 40000, 49984,
        ],
    },
];

/// Smaller sweeps for `--quick` and tests.
pub const QUICK_SWEEPS: [Sweep; 5] = [
    Sweep {
        param: "pages_read",
        figure: "4.12",
        values: &[0, 20],
    },
    Sweep {
        param: "pages_written",
        figure: "4.14",
        values: &[1, 20],
    },
    Sweep {
        param: "log_bytes",
        figure: "4.16",
        values: &[128, 16384],
    },
    Sweep {
        param: "transactions",
        figure: "4.17",
        values: &[5_000, 10_000],
    },
    Sweep {
        param: "cache_pages",
        figure: "4.18",
        values: &[2048, 20000],
    },
];

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

/// Run one configuration.
pub fn run_point(
    mechanism: Mechanism,
    scheduler: Scheduler,
    param: &str,
    value: u64,
    seed: u64,
) -> Report {
    let mut w = TpcbWorkload {
        mechanism,
        seed,
        ..Default::default()
    };
    let mut cache = CACHE_PAGES;
    match param {
        "pages_read" => w.pages_read = value as u32,
        "pages_written" => w.pages_written = value as u32,
        "log_bytes" => w.log_bytes = value,
        "transactions" => w.transactions = value as u32,
        "cache_pages" => cache = value as u32,
        "default" => {}
        other => panic!("unknown parameter {other}"),
    }
    simulate(&system(cache, scheduler, &w), &w.build(), seed).expect("the thesis's system is valid")
}

/// Every point: sweeps × mechanisms × {FIFO, C-LOOK}, in a fixed order.
pub fn run(seed: u64, quick: bool) -> Vec<OrderingPoint> {
    let sweeps: &[Sweep] = if quick { &QUICK_SWEEPS } else { &SWEEPS };
    let mut specs = Vec::new();
    for sweep in sweeps {
        for &value in sweep.values {
            for scheduler in [Scheduler::Fifo, Scheduler::Clook] {
                for mechanism in Mechanism::ALL {
                    specs.push((sweep, value, scheduler, mechanism));
                }
            }
        }
    }
    specs
        .par_iter()
        .map(|&(sweep, value, scheduler, mechanism)| {
            let r = run_point(mechanism, scheduler, sweep.param, value, seed);
            OrderingPoint {
                figure: sweep.figure,
                mechanism: mechanism.name(),
                scheduler: scheduler.name(),
                param: sweep.param,
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
