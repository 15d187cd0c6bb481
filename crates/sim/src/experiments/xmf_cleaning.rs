//! XMF appendix I (Braunstein, Riley & Wilkes 1989): HP-UX's `getnewbuf` against XMF's
//! clock daemon, disk traffic against cache size (their Figure 21).
//!
//! `getnewbuf` walks the LRU list for a victim and starts a write on every dirty buffer
//! it passes until it finds a clean one; the written buffers stay where they are. XMF's
//! clock daemon keeps a small pool of clean free buffers and, when it runs low, reclaims
//! just enough (writing the dirty ones among them). Both systems use delayed writes
//! (a flusher every 5 s for buffers dirty 30 s), so a temporary file that is deleted soon
//! after it is written need never reach the disk — unless the cleaner writes it first.

use rayon::prelude::*;
use report::{Axis, Figure, FigureFile, Series, Table};
use serde::Serialize;

use crate::des::config::{Cleaner, SystemConfig, WritePolicy};
use crate::des::disk::{Scheduler, ServiceTime};
use crate::des::simulate;
use crate::des::xmf::XmfWorkload;

/// Cache sizes in 8 KB buffers (1 MB to 48 MB).
pub const CACHE_SIZES: [u32; 12] = [
    128, 192, 256, 384, 512, 640, 768, 896, 1024, 2048, 4096, 6144,
];

/// The two systems compared.
pub const CLEANERS: [(&str, &str, Cleaner); 2] = [
    ("getnewbuf", "lru", Cleaner::Scan),
    ("clock", "clock", Cleaner::Daemon),
];

/// One data point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct XmfPoint {
    /// `getnewbuf` (LRU with the eager scan) or `clock` (clock with the free-pool daemon).
    pub cleaner: &'static str,
    /// Buffers in the cache.
    pub cache_buffers: u32,
    /// Disk reads.
    pub disk_reads: u64,
    /// Disk writes.
    pub disk_writes: u64,
    /// Of which started by the cleaner.
    pub cleaner_writes: u64,
    /// Simulated run time.
    pub time_s: f64,
}

/// The system: one disk, 8 KB blocks, delayed writes.
pub fn system(buffers: u32, policy: &str, cleaner: Cleaner) -> SystemConfig {
    let mut s = SystemConfig::default();
    s.cache.block_bytes = 8192;
    s.cache.buffers = buffers;
    s.cache.policy = policy.into();
    s.cache.cleaner = cleaner;
    s.cache.write_policy = WritePolicy::Delayed;
    s.cache.flush_interval_s = 5.0;
    s.cache.flush_age_s = 30.0;
    s.cache.syscall_us = 50.0;
    s.cache.block_us = 20.0;
    s.disks.count = 1;
    s.disks.scheduler = Scheduler::Fifo;
    s.disks.service = ServiceTime::Constant { ms: 15.0 };
    // Dirty data left at the end is not counted: both systems would write it eventually,
    // and the figure is about the writes the cleaning policy causes.
    s.final_sync = false;
    s
}

/// Every point, in a fixed order (cleaner, then cache size).
pub fn run(seed: u64, quick: bool) -> Vec<XmfPoint> {
    let workload = XmfWorkload {
        seed,
        jobs: if quick { 20 } else { 60 },
        ..Default::default()
    }
    .build();
    let sizes: &[u32] = if quick {
        &[256, 768, 2048, 6144]
    } else {
        &CACHE_SIZES
    };
    let specs: Vec<_> = CLEANERS
        .iter()
        .flat_map(|&c| sizes.iter().map(move |&n| (c, n)))
        .collect();
    specs
        .par_iter()
        .map(|&((name, policy, cleaner), buffers)| {
            let r =
                simulate(&system(buffers, policy, cleaner), &workload, seed).expect("valid system");
            XmfPoint {
                cleaner: name,
                cache_buffers: buffers,
                disk_reads: r.disk_reads,
                disk_writes: r.disk_writes,
                cleaner_writes: r.cleaner_writes,
                time_s: r.time_s,
            }
        })
        .collect()
}

/// One panel of Figure 21.
struct Panel {
    file_name: &'static str,
    title: &'static str,
    /// The y axis title.
    what: &'static str,
    metric: fn(&XmfPoint) -> u64,
}

/// Figure 21's two panels.
const PANELS: [Panel; 2] = [
    Panel {
        file_name: "fig21-writes.svg",
        title: "Figure 21: disk writes against cache size",
        what: "disk writes",
        metric: |p| p.disk_writes,
    },
    Panel {
        file_name: "fig21-reads.svg",
        title: "Figure 21: disk reads against cache size",
        what: "disk reads",
        metric: |p| p.disk_reads,
    },
];

/// Figure 21, writes then reads against cache size in MB, a line per cleaner.
pub fn figures(points: &[XmfPoint]) -> Vec<FigureFile> {
    PANELS
        .iter()
        .map(|panel| {
            let line = |&(cleaner, _, _): &(&str, &str, Cleaner)| {
                let xy = points
                    .iter()
                    .filter(|p| p.cleaner == cleaner)
                    .map(|p| (megabytes(p.cache_buffers), (panel.metric)(p) as f64))
                    .collect();
                Series::marked_line(cleaner, xy)
            };
            let figure = Figure::new(
                panel.title,
                Axis::new("cache size (MB)"),
                Axis::from_zero(panel.what),
            )
            .with_all_series(CLEANERS.iter().map(line));
            FigureFile::new(panel.file_name, figure)
        })
        .collect()
}

/// A cache of `buffers` 8 KB buffers in MB.
fn megabytes(buffers: u32) -> f64 {
    f64::from(buffers) * 8.0 / 1024.0
}

/// The two cleaners side by side at every cache size `getnewbuf` ran at (a size the clock
/// daemon did not run at is left out).
pub fn table(points: &[XmfPoint]) -> Table {
    let (getnewbuf, clock) = (CLEANERS[0].0, CLEANERS[1].0);
    let mut table = Table::new([
        "buffers",
        "MB",
        "getnewbuf reads",
        "clock reads",
        "getnewbuf writes",
        "clock writes",
    ]);
    for g in points.iter().filter(|p| p.cleaner == getnewbuf) {
        let n = g.cache_buffers;
        let Some(c) = points
            .iter()
            .find(|p| p.cleaner == clock && p.cache_buffers == n)
        else {
            continue;
        };
        table.push_row([
            n.to_string(),
            format!("{}", n * 8 / 1024),
            g.disk_reads.to_string(),
            c.disk_reads.to_string(),
            g.disk_writes.to_string(),
            c.disk_writes.to_string(),
        ]);
    }
    table
}
