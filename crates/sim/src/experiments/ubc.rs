//! Silvers 2000 (UBC), Table 1's `dd` series on the split and unified cache models of
//! [`crate::ubc`]: write a file much larger than memory, overwrite it, read it back, then
//! read its first part — small enough to fit in memory — five times. One step beyond the
//! paper maps that first part after reading it, to count double caching.
//!
//! The machine: the paper's 64 MB Pentium II. Our choices: the caches are counted in
//! 64 KB blocks (`dd bs=64k`; the counts are in those units, 16 pages of 4 KB each); file data may use
//! 56 MB (the rest for the kernel and `dd`); the split design's buffer cache is 10% of
//! memory (6.4 MB; NetBSD sized it at boot, and any size below 50 MB gives the same
//! result); the device moves 1 GB in 72.8 s (the raw-device row, 14.1 MB/s); a memory copy
//! of 50 MB takes 0.8 s (UBC's resident rows, 62.5 MB/s).

use report::{Axis, Figure, FigureFile, Series};
use serde::Serialize;

use crate::ubc::{Layout, StepCounts, UbcCache, UbcMachine};

/// Blocks of the model per MB (64 KB blocks).
pub const BLOCKS_PER_MB: u32 = 16;

/// The machine of Table 1.
pub const MACHINE: UbcMachine = UbcMachine {
    memory_pages: 56 * BLOCKS_PER_MB as u64,
    page_bytes: 65_536,
    device_mb_s: 1024.0 / 72.8,
    copy_mb_s: 50.0 / 0.8,
};

/// The split design's buffer cache: 102 blocks, 6.375 MB (10% of 64 MB, rounded down).
pub const SPLIT_BUFFER_PAGES: u64 = 102;

/// What a step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// Read the raw device (no cache).
    Raw,
    /// Write the file (new or overwrite).
    Write,
    /// Read the file.
    Read,
    /// Map the file and touch its pages.
    Map,
}

/// One row of Table 1 (or ours).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Step {
    /// Table 1's input column.
    pub input: &'static str,
    /// Its output column.
    pub output: &'static str,
    /// What the model does.
    pub kind: StepKind,
    /// MB moved.
    pub size_mb: u32,
    /// The paper's run time on NetBSD 1.4.2 (split) and NetBSD with UBC, s; none for ours.
    pub paper_s: Option<(f64, f64)>,
}

const fn step(
    input: &'static str,
    output: &'static str,
    kind: StepKind,
    size_mb: u32,
    paper: (f64, f64),
) -> Step {
    Step {
        input,
        output,
        kind,
        size_mb,
        paper_s: Some(paper),
    }
}

/// Table 1's rows, in order, then ours.
pub const STEPS: [Step; 10] = [
    step("raw device", "/dev/null", StepKind::Raw, 1024, (72.8, 72.7)),
    step(
        "/dev/zero",
        "new file",
        StepKind::Write,
        1024,
        (83.8, 193.0),
    ),
    step(
        "/dev/zero",
        "overwrite file",
        StepKind::Write,
        1024,
        (79.4, 186.6),
    ),
    step(
        "non-resident file",
        "/dev/null",
        StepKind::Read,
        1024,
        (72.7, 86.7),
    ),
    step(
        "non-resident file",
        "/dev/null",
        StepKind::Read,
        50,
        (3.6, 4.3),
    ),
    step("resident file", "/dev/null", StepKind::Read, 50, (3.6, 0.8)),
    step("repeat above", "/dev/null", StepKind::Read, 50, (3.6, 0.8)),
    step("repeat above", "/dev/null", StepKind::Read, 50, (3.6, 0.8)),
    step("repeat above", "/dev/null", StepKind::Read, 50, (3.6, 0.8)),
    Step {
        input: "resident file (mmap)",
        output: "memory",
        kind: StepKind::Map,
        size_mb: 50,
        paper_s: None,
    },
];

/// One step under one design.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UbcPoint {
    /// Row number, from 1.
    pub row: usize,
    /// Input.
    pub input: &'static str,
    /// Output.
    pub output: &'static str,
    /// MB.
    pub size_mb: u32,
    /// `split` or `unified`.
    pub layout: &'static str,
    /// Blocks (64 KB) read from the device.
    pub device_reads: u64,
    /// Blocks written to it.
    pub device_writes: u64,
    /// Blocks copied in memory.
    pub copies: u64,
    /// File data held at the end, MB.
    pub held_mb: f64,
    /// Of which held in both caches, MB.
    pub held_twice_mb: f64,
    /// Modelled time, s.
    pub time_s: f64,
    /// The paper's time for this design (NetBSD 1.4.2 for split, UBC for unified), s.
    pub paper_s: Option<f64>,
}

/// Every step under both designs: split rows first.
pub fn run() -> Vec<UbcPoint> {
    let designs = [
        (
            "split",
            Layout::Split {
                buffer_pages: SPLIT_BUFFER_PAGES,
            },
        ),
        ("unified", Layout::Unified),
    ];
    let mut out = Vec::new();
    for (name, layout) in designs {
        let mut cache = UbcCache::new(layout, MACHINE);
        for (i, s) in STEPS.iter().enumerate() {
            let pages = s.size_mb * BLOCKS_PER_MB;
            match s.kind {
                StepKind::Raw => cache.raw_read(pages),
                StepKind::Write => cache.write(0, 0, pages),
                StepKind::Read => cache.read(0, 0, pages),
                StepKind::Map => cache.touch_mapped(0, 0, pages),
            }
            let c: StepCounts = cache.end_step();
            let mb = |p: u64| p as f64 / f64::from(BLOCKS_PER_MB);
            out.push(UbcPoint {
                row: i + 1,
                input: s.input,
                output: s.output,
                size_mb: s.size_mb,
                layout: name,
                device_reads: c.device_reads,
                device_writes: c.device_writes,
                copies: c.copies,
                held_mb: mb(c.held_pages),
                held_twice_mb: mb(c.held_twice),
                time_s: c.time_s,
                paper_s: s
                    .paper_s
                    .map(|(split, unified)| if name == "split" { split } else { unified }),
            });
        }
    }
    out
}

/// `ubc-time.svg`: run time against Table 1's row for each design, the model's solid and
/// the paper's NetBSD measurements dashed.
pub fn figures(points: &[UbcPoint]) -> Vec<FigureFile> {
    let line = |layout: &str, paper: bool| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter(|p| p.layout == layout)
            .filter_map(|p| {
                let y = if paper { p.paper_s? } else { p.time_s };
                Some((p.row as f64, y))
            })
            .collect()
    };
    let figure = Figure::new(
        "UBC Table 1: dd run times, split vs unified (model) and NetBSD 1.4.2 vs UBC (paper)",
        Axis::new("Table 1 row"),
        Axis::from_zero("run time (s)"),
    )
    .with_series(Series::marked_line("split (model)", line("split", false)))
    .with_series(Series::marked_line(
        "unified (model)",
        line("unified", false),
    ))
    .with_series(Series::reference(
        "NetBSD 1.4.2 (paper)",
        line("split", true),
    ))
    .with_series(Series::reference(
        "NetBSD with UBC (paper)",
        line("unified", true),
    ));
    vec![FigureFile::new("ubc-time.svg", figure)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repeated_reads_run_at_memory_speed_only_when_unified() {
        let points = run();
        let (split, unified) = points.split_at(STEPS.len());
        // Rows 6-9 (the resident 50 MB reads): split reads the device every time, as
        // NetBSD 1.4.2 did; unified reads nothing and only copies.
        for row in 5..9 {
            assert_eq!(split[row].device_reads, 50 * 16, "split row {}", row + 1);
            assert_eq!(unified[row].device_reads, 0, "unified row {}", row + 1);
            assert!(unified[row].time_s < split[row].time_s / 3.0);
        }
        // Row 5: right after the 1 GB read the first 50 MB is not resident in either.
        assert_eq!(unified[4].device_reads, 50 * 16);
        // Mapping what was just read: split copies it into page-cache pages, and all of the
        // buffer cache's 6.375 MB is then held twice; unified maps the same pages.
        assert_eq!(split[9].held_twice_mb, 6.375);
        assert_eq!(split[9].held_mb, 56.0);
        assert!(split[9].copies > 0 && unified[9].copies == 0);
        assert_eq!(unified[9].held_twice_mb, 0.0);
        // Writes: each page of 1 GB reaches the device once per pass in both designs.
        assert_eq!(split[1].device_writes, 1024 * 16);
        assert_eq!(unified[2].device_writes, 1024 * 16);
    }
}
