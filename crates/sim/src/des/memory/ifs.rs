//! Nelson's IFS benchmark (interactive plus file system, Section 3): an interactive
//! program that sleeps and then touches all of its memory, dirtying half, while an
//! external merge sort of a 1-Mbyte file runs beside it.
//!
//! From the paper: a diskless Sun-3/75 with 8 MB, 1.3 MB of it for the kernel, leaving
//! 6.7 MB for user processes (1715 pages of 4 KB); the interactive program uses 5.7 MB
//! (1459 pages) and dirties half of the pages it touches; sleep intervals of 1, 5, 10 and
//! 30 s; `sort` of a 1 MB file with temporary files, 60 s standalone.
//!
//! Our choices (the paper does not give them): `sort` reads its input in 16 runs of 64 KB,
//! sorts each (2.5 s of CPU) into its own temporary file, then merges the 16 files a block
//! from each at a time (60 ms of CPU per block) into a 1 MB output, and deletes the
//! temporaries; its own image is 32 pages (code and buffer). The interactive program
//! spends 20 µs of CPU per page it touches. It starts first and faults its image in; the
//! sort starts 20 s later, once that is done, and the sort time is measured from there.

use super::super::time::Nanos;
use super::workload::{MemOp, MemProcess, MemWorkload};

/// Input file of the sort.
pub const INPUT: u32 = 0;
/// Output file.
pub const OUTPUT: u32 = 1;
/// First temporary file (one per run).
pub const FIRST_TEMP: u32 = 2;

/// The IFS benchmark's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct IfsWorkload {
    /// Seconds the interactive program sleeps between touches of all its memory.
    pub sleep_s: f64,
    /// Run the interactive program (false: the sort standalone).
    pub interactive: bool,
    /// The interactive program's image, in pages.
    pub interactive_pages: u32,
    /// CPU per page the interactive program touches.
    pub touch_us_per_page: f64,
    /// Input size in blocks.
    pub input_blocks: u32,
    /// Blocks per run (the sort's in-memory buffer).
    pub run_blocks: u32,
    /// CPU to sort one run.
    pub sort_s_per_run: f64,
    /// CPU per block merged.
    pub merge_ms_per_block: f64,
    /// The sort's own image, in pages.
    pub sort_pages: u32,
    /// When the sort starts.
    pub sort_start_s: f64,
}

impl Default for IfsWorkload {
    fn default() -> Self {
        IfsWorkload {
            sleep_s: 1.0,
            interactive: true,
            interactive_pages: 1459,
            touch_us_per_page: 20.0,
            input_blocks: 256,
            run_blocks: 16,
            sort_s_per_run: 2.5,
            merge_ms_per_block: 60.0,
            sort_pages: 200,
            sort_start_s: 20.0,
        }
    }
}

fn ns(seconds: f64) -> Nanos {
    (seconds * 1e9).round() as Nanos
}

impl IfsWorkload {
    /// The processes: the interactive program (background) and the sort (foreground).
    pub fn build(&self) -> MemWorkload {
        let mut processes = Vec::new();
        if self.interactive {
            let touch = |timed| MemOp::Touch {
                first: 0,
                count: self.interactive_pages,
                dirty_every: 2,
                cpu_ns_per_page: ns(self.touch_us_per_page * 1e-6),
                timed,
            };
            processes.push(MemProcess {
                name: "interactive".into(),
                background: true,
                repeat_from: 2,
                ops: vec![
                    MemOp::Exec {
                        pages: self.interactive_pages,
                    },
                    touch(false),
                    MemOp::Sleep(ns(self.sleep_s)),
                    touch(true),
                ],
            });
        }
        processes.push(MemProcess {
            name: "sort".into(),
            background: false,
            repeat_from: 0,
            ops: self.sort_ops(),
        });
        MemWorkload { processes }
    }

    fn runs(&self) -> u32 {
        self.input_blocks.div_ceil(self.run_blocks.max(1))
    }

    fn sort_ops(&self) -> Vec<MemOp> {
        let run = self.run_blocks.max(1);
        let runs = self.runs();
        let buffer = MemOp::Touch {
            first: 0,
            count: self.sort_pages,
            dirty_every: 2,
            cpu_ns_per_page: 0,
            timed: false,
        };
        let mut ops = vec![
            MemOp::Sleep(ns(self.sort_start_s)),
            MemOp::Exec {
                pages: self.sort_pages,
            },
        ];
        for r in 0..runs {
            let count = run.min(self.input_blocks - r * run);
            ops.push(MemOp::Read {
                file: INPUT,
                first: r * run,
                count,
            });
            ops.push(buffer.clone());
            ops.push(MemOp::Compute(ns(self.sort_s_per_run)));
            ops.push(MemOp::Write {
                file: FIRST_TEMP + r,
                first: 0,
                count,
            });
        }
        // Merge: one block from every run, then write as many output blocks.
        for j in 0..run {
            let mut merged = 0;
            for r in 0..runs {
                if r * run + j < self.input_blocks {
                    ops.push(MemOp::Read {
                        file: FIRST_TEMP + r,
                        first: j,
                        count: 1,
                    });
                    merged += 1;
                }
            }
            ops.push(buffer.clone());
            ops.push(MemOp::Compute(ns(self.merge_ms_per_block
                * 1e-3
                * f64::from(merged))));
            ops.push(MemOp::Write {
                file: OUTPUT,
                first: j * runs,
                count: merged,
            });
        }
        for r in 0..runs {
            ops.push(MemOp::Delete {
                file: FIRST_TEMP + r,
            });
        }
        ops
    }
}
