//! Kotz & Ellis 1992, "Caching and writeback policies in parallel file systems".
//!
//! Base system (§4.1): 20 processes, 20 disks with a constant 30 ms service time, file
//! blocks interleaved round-robin, 1 KB blocks and buffers, 4 MB written, an 80-buffer
//! toss-immediately cache. The testbed ran on a BBN GP1000 in real time, so its times
//! include the file system's own CPU cost; we charge a per-call and a per-cached-block CPU
//! time fitted to two entries of the paper's caching table (see [`base_system`]) and let
//! everything else follow from the model.

use rayon::prelude::*;
use report::{Axis, Figure, FigureFile, Series, Table};
use serde::Serialize;

use crate::des::config::{Cleaner, SystemConfig, WritePolicy};
use crate::des::disk::{Scheduler, ServiceTime};
use crate::des::kotz::{KotzWorkload, Pattern};
use crate::des::{simulate, Report};

/// Disk service time, ms.
pub const DISK_MS: f64 = 30.0;
/// Disks.
pub const DISKS: u16 = 20;
/// The write policies the paper compares.
pub const WRITE_POLICIES: [WritePolicy; 4] = [
    WritePolicy::WriteThru,
    WritePolicy::WriteBack,
    WritePolicy::WriteFree,
    WritePolicy::WriteFull,
];
/// Cache sizes of Figures 1-4.
pub const CACHE_SIZES: [u32; 10] = [20, 40, 60, 80, 100, 120, 140, 160, 180, 200];
/// Record sizes of Figure 5, in blocks: the integral sizes that divide 4000 (1, 2, 4, 5,
/// 8, 10) and non-integral sizes between them.
pub const RECORD_SIZES: [f64; 14] = [
    0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.5, 4.0, 5.0, 6.5, 8.0, 9.5, 10.0,
];

/// A figure of execution time against cache size (Figures 1-4): one workload, every
/// write policy, one-block records.
#[derive(Clone, Copy, Debug)]
pub struct SizeFigure {
    /// The `figure` column of its points.
    pub figure: &'static str,
    /// The access pattern.
    pub pattern: Pattern,
    /// With a compute delay after each record.
    pub compute: bool,
    /// The SVG's file name.
    pub file_name: &'static str,
    /// The SVG's title.
    pub title: &'static str,
}

impl SizeFigure {
    /// Whether `p` is one of this figure's points.
    fn holds(&self, p: &KotzPoint) -> bool {
        p.figure == self.figure && p.pattern == self.pattern.name() && p.compute == self.compute
    }
}

/// Figures 1-4, in the order their points are run and their files written.
pub const SIZE_FIGURES: [SizeFigure; 5] = [
    SizeFigure {
        figure: "fig1",
        pattern: Pattern::Gw,
        compute: false,
        file_name: "fig1-gw.svg",
        title: "Figure 1: gw, cache size",
    },
    SizeFigure {
        figure: "fig2",
        pattern: Pattern::Gw,
        compute: true,
        file_name: "fig2-gw-compute.svg",
        title: "Figure 2: gw with computation",
    },
    SizeFigure {
        figure: "fig3",
        pattern: Pattern::Lw1,
        compute: false,
        file_name: "fig3-lw1.svg",
        title: "Figure 3: lw1, cache size",
    },
    SizeFigure {
        figure: "fig3",
        pattern: Pattern::Lw1,
        compute: true,
        file_name: "fig3-lw1-compute.svg",
        title: "Figure 3: lw1 with computation",
    },
    SizeFigure {
        figure: "fig4",
        pattern: Pattern::Seg,
        compute: false,
        file_name: "fig4-seg.svg",
        title: "Figure 4: seg, cache size",
    },
];

/// The `figure` column of Figure 5's points (record size at 80 buffers).
pub const RECORD_FIGURE: &str = "fig5";
/// Figure 5's panels: (pattern, file name), in the order they are run and written.
pub const RECORD_PANELS: [(Pattern, &str); 3] = [
    (Pattern::Gw, "fig5a-gw.svg"),
    (Pattern::Lw1, "fig5b-lw1.svg"),
    (Pattern::Seg, "fig5c-seg.svg"),
];
/// The `figure` column of the caching table's points.
pub const CACHING: &str = "caching";

/// One data point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KotzPoint {
    /// `caching`, `fig1` .. `fig5`.
    pub figure: &'static str,
    /// `lw1`, `seg` or `gw`.
    pub pattern: &'static str,
    /// Compute delay after each record.
    pub compute: bool,
    /// `writethru`, `writeback`, `writefree`, `writefull`, or `none` without a cache.
    pub write_policy: &'static str,
    /// Buffers in the cache (0 without a cache).
    pub cache_buffers: u32,
    /// Record size in blocks.
    pub record_blocks: f64,
    /// Simulated execution time, including writing the last dirty buffers.
    pub time_s: f64,
    /// The ideal execution time of §4.2.1.
    pub ideal_s: f64,
    /// Disk writes.
    pub disk_writes: u64,
    /// Disk writes of a block already written once.
    pub rewrite_mistakes: u64,
}

/// The paper's system with `buffers` buffers (0: no cache) and `policy`.
///
/// CPU costs: without a cache, `lw1` with one-block records took 127.3 s for 4000 writes
/// of 30 ms each, so a file-system call costs about (127.3 − 120) / 4000 ≈ 1.8 ms. With
/// the cache it took 16.4 s and with quarter-block records 55.7 s — 3.5 to 4.1 ms per
/// request, all of it CPU since one process cannot wait on 20 disks at once; so each
/// cached block a call touches adds about 1.7 ms. These two constants are the only
/// fitted values.
pub fn base_system(buffers: u32, policy: WritePolicy) -> SystemConfig {
    let mut s = SystemConfig::default();
    s.cache.block_bytes = 1024;
    s.cache.buffers = buffers;
    s.cache.policy = "toss".into();
    s.cache.write_policy = policy;
    s.cache.cleaner = Cleaner::Scan;
    s.cache.syscall_us = 1800.0;
    s.cache.block_us = 1700.0;
    s.disks.count = DISKS;
    s.disks.scheduler = Scheduler::Fifo;
    s.disks.service = ServiceTime::Constant { ms: DISK_MS };
    s.final_sync = true;
    s
}

/// The paper's workload for a pattern.
pub fn workload(pattern: Pattern, compute: bool, record_blocks: f64, seed: u64) -> KotzWorkload {
    KotzWorkload {
        pattern,
        compute,
        record_blocks,
        seed,
        ..Default::default()
    }
}

#[derive(Clone, Copy)]
struct Spec {
    figure: &'static str,
    pattern: Pattern,
    compute: bool,
    policy: Option<WritePolicy>,
    buffers: u32,
    record_blocks: f64,
}

/// Run one point.
pub fn run_point(
    pattern: Pattern,
    compute: bool,
    policy: Option<WritePolicy>,
    buffers: u32,
    record_blocks: f64,
    seed: u64,
) -> (Report, f64) {
    let k = workload(pattern, compute, record_blocks, seed);
    let system = base_system(
        if policy.is_some() { buffers } else { 0 },
        policy.unwrap_or(WritePolicy::WriteBack),
    );
    let report = simulate(&system, &k.build(), seed)
        .expect("the base system has more buffers than processes");
    (report, k.ideal_s(DISKS, DISK_MS))
}

/// Which parts of the experiment to run.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Seed of the compute delays.
    pub seed: u64,
    /// Fewer cache and record sizes (for tests and quick looks).
    pub quick: bool,
}

/// Every point of the caching table and Figures 1-5, in a fixed order.
pub fn run(opts: Options) -> Vec<KotzPoint> {
    let mut specs = Vec::new();
    for pattern in [Pattern::Lw1, Pattern::Seg, Pattern::Gw] {
        for record_blocks in [1.0, 0.25] {
            for policy in [None, Some(WritePolicy::WriteBack)] {
                specs.push(Spec {
                    figure: CACHING,
                    pattern,
                    compute: false,
                    policy,
                    buffers: 80,
                    record_blocks,
                });
            }
        }
    }
    let sizes: &[u32] = if opts.quick {
        &[20, 80, 200]
    } else {
        &CACHE_SIZES
    };
    for f in SIZE_FIGURES {
        for &buffers in sizes {
            for policy in WRITE_POLICIES {
                specs.push(Spec {
                    figure: f.figure,
                    pattern: f.pattern,
                    compute: f.compute,
                    policy: Some(policy),
                    buffers,
                    record_blocks: 1.0,
                });
            }
        }
    }
    let records: &[f64] = if opts.quick {
        &[0.25, 1.0, 1.5, 2.0]
    } else {
        &RECORD_SIZES
    };
    for (pattern, _) in RECORD_PANELS {
        for &record_blocks in records {
            for policy in WRITE_POLICIES {
                specs.push(Spec {
                    figure: RECORD_FIGURE,
                    pattern,
                    compute: false,
                    policy: Some(policy),
                    buffers: 80,
                    record_blocks,
                });
            }
        }
    }
    specs
        .par_iter()
        .map(|s| {
            let (r, ideal_s) = run_point(
                s.pattern,
                s.compute,
                s.policy,
                s.buffers,
                s.record_blocks,
                opts.seed,
            );
            KotzPoint {
                figure: s.figure,
                pattern: s.pattern.name(),
                compute: s.compute,
                write_policy: s.policy.map_or("none", WritePolicy::name),
                cache_buffers: if s.policy.is_some() { s.buffers } else { 0 },
                record_blocks: s.record_blocks,
                time_s: r.time_s,
                ideal_s,
                disk_writes: r.disk_writes,
                rewrite_mistakes: r.rewrite_mistakes,
            }
        })
        .collect()
}

/// The paper's caching table (§4.3), seconds: (pattern, record blocks, no cache, cache).
pub const PAPER_CACHING_TABLE: [(&str, f64, f64, f64); 6] = [
    ("lw1", 1.0, 127.3, 16.4),
    ("seg", 1.0, 6.9, 7.2),
    ("gw", 1.0, 6.3, 6.1),
    ("lw1", 0.25, 853.1, 55.7),
    ("seg", 0.25, 63.3, 7.7),
    ("gw", 0.25, 103.0, 8.7),
];

/// Figures 1-5: execution time per write policy, with the ideal time dashed.
pub fn figures(points: &[KotzPoint]) -> Vec<FigureFile> {
    let mut files = Vec::new();
    for f in SIZE_FIGURES {
        let mine: Vec<&KotzPoint> = points.iter().filter(|p| f.holds(p)).collect();
        let figure = time_figure(f.title, "cache size (1 KB buffers)", &mine, |p| {
            f64::from(p.cache_buffers)
        });
        files.push(FigureFile::new(f.file_name, figure));
    }
    for (pattern, file_name) in RECORD_PANELS {
        let mine: Vec<&KotzPoint> = points
            .iter()
            .filter(|p| p.figure == RECORD_FIGURE && p.pattern == pattern.name())
            .collect();
        let title = format!("Figure 5: {}, record size (80 buffers)", pattern.name());
        let figure = time_figure(&title, "record size (blocks)", &mine, |p| p.record_blocks);
        files.push(FigureFile::new(file_name, figure));
    }
    files
}

/// Execution time per write policy against `x`, with the ideal time (the same for every
/// policy; taken from WriteFull's points) dashed.
fn time_figure(
    title: &str,
    x_label: &str,
    points: &[&KotzPoint],
    x: impl Fn(&KotzPoint) -> f64,
) -> Figure {
    let line = |wp: &WritePolicy| {
        let xy = points
            .iter()
            .filter(|p| p.write_policy == wp.name())
            .map(|p| (x(p), p.time_s))
            .collect();
        Series::marked_line(wp.name(), xy)
    };
    let mut ideal: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.write_policy == WritePolicy::WriteFull.name())
        .map(|p| (x(p), p.ideal_s))
        .collect();
    ideal.sort_by(|a, b| a.0.total_cmp(&b.0));
    Figure::new(
        title,
        Axis::new(x_label),
        Axis::from_zero("execution time (s)"),
    )
    .with_all_series(WRITE_POLICIES.iter().map(line))
    .with_series(Series::reference("ideal", ideal))
}

/// What [`caching_table`] shows.
pub const CACHING_TABLE_TITLE: &str =
    "Caching (§4.3): execution time in seconds, WriteBack cache of 80 buffers";

/// The paper's caching table beside ours: without a cache and with an 80-buffer WriteBack
/// cache, for each pattern and record size of [`PAPER_CACHING_TABLE`] (`NaN` where
/// `points` lacks the point).
pub fn caching_table(points: &[KotzPoint]) -> Table {
    let ours = |pattern: &str, record: f64, policy: &str| {
        points
            .iter()
            .find(|p| {
                p.figure == CACHING
                    && p.pattern == pattern
                    && p.record_blocks == record
                    && p.write_policy == policy
            })
            .map_or(f64::NAN, |p| p.time_s)
    };
    let mut table = Table::new([
        "pattern",
        "record",
        "no cache (paper)",
        "no cache (ours)",
        "cache (paper)",
        "cache (ours)",
    ]);
    for (pattern, record, none, cached) in PAPER_CACHING_TABLE {
        table.push_row([
            pattern.to_string(),
            if record == 1.0 {
                "1 block"
            } else {
                "1/4 block"
            }
            .to_string(),
            format!("{none:.1}"),
            format!("{:.1}", ours(pattern, record, "none")),
            format!("{cached:.1}"),
            format!(
                "{:.1}",
                ours(pattern, record, WritePolicy::WriteBack.name())
            ),
        ]);
    }
    table
}
