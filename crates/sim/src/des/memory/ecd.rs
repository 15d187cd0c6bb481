//! Nelson's edit-compile-debug benchmark (ECD, Table 1): four programs run one after the
//! other, twice, beside a resident window-system environment.
//!
//! From Table 1 (file I/O and largest VM image per phase): edit 70 KB / 560 KB, compile
//! 800 KB / 1 MB, link 8 MB / 3 MB, debug 4 MB / 8.5 MB; the environment (X11, typescript
//! windows, tools) takes 5 MB. Memory from 10 to 16 MB; two loops.
//!
//! Our choices (the paper gives totals only): pages of 4 KB; the kernel keeps 1.3 MB of
//! the client's memory (as in the IFS machine). Each phase is a fresh image ([`MemOp::Exec`])
//! that runs in rounds of one second of CPU (edit 20 s, compile 40 s, link 30 s, debug
//! 30 s): every round touches the first half of the image, every fourth round all of it,
//! dirtying every other page touched; the phase's reads and then its writes are spread
//! evenly over the rounds. The files: edit reads and rewrites `vm.c` (9 blocks each way);
//! compile reads `vm.c` and 141 blocks of headers and writes `vm.o` (50 blocks); link reads
//! the other objects (1486 blocks) and `vm.o` and writes the kernel (512 blocks); debug
//! reads the kernel and 512 blocks of sources and symbols. So data written by one phase is
//! read by the next, and the second loop rereads what the first read. The environment
//! touches a quarter of its image every second and all of it every ten seconds.

use super::super::time::Nanos;
use super::workload::{FileNo, MemOp, MemProcess, MemWorkload};

/// One phase of the loop.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Name (Table 1).
    pub name: &'static str,
    /// VM image in pages.
    pub image_pages: u32,
    /// Files read: (file, blocks from 0).
    pub reads: Vec<(FileNo, u32)>,
    /// Files written whole: (file, blocks).
    pub writes: Vec<(FileNo, u32)>,
    /// CPU seconds, one round per second.
    pub cpu_s: u32,
}

/// The ECD benchmark's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct EcdWorkload {
    /// Times through edit-compile-link-debug.
    pub loops: u32,
    /// The phases, in order.
    pub phases: Vec<Phase>,
    /// The environment's image, in pages.
    pub environment_pages: u32,
    /// Pages the environment touches every second.
    pub environment_active_pages: u32,
    /// CPU per page touched.
    pub touch_us_per_page: f64,
}

const VM_C: FileNo = 0;
const HEADERS: FileNo = 1;
const VM_O: FileNo = 2;
const OBJECTS: FileNo = 3;
const KERNEL: FileNo = 4;
const SOURCES: FileNo = 5;

impl Default for EcdWorkload {
    fn default() -> Self {
        let phase = |name, image_pages, reads, writes, cpu_s| Phase {
            name,
            image_pages,
            reads,
            writes,
            cpu_s,
        };
        EcdWorkload {
            loops: 2,
            phases: vec![
                phase("edit", 140, vec![(VM_C, 9)], vec![(VM_C, 9)], 20),
                phase(
                    "compile",
                    256,
                    vec![(VM_C, 9), (HEADERS, 141)],
                    vec![(VM_O, 50)],
                    40,
                ),
                phase(
                    "link",
                    768,
                    vec![(OBJECTS, 1486), (VM_O, 50)],
                    vec![(KERNEL, 512)],
                    30,
                ),
                phase(
                    "debug",
                    2176,
                    vec![(KERNEL, 512), (SOURCES, 512)],
                    vec![],
                    30,
                ),
            ],
            environment_pages: 1280,
            environment_active_pages: 320,
            touch_us_per_page: 20.0,
        }
    }
}

/// The client's memory for user pages: `total_mb` less the kernel's 1.3 MB, in 4 KB pages.
pub fn user_pages(total_mb: f64) -> u32 {
    ((total_mb - 1.3) * 256.0).floor() as u32
}

impl EcdWorkload {
    /// The processes: the benchmark (foreground) and the environment (background).
    pub fn build(&self) -> MemWorkload {
        let touch_ns = (self.touch_us_per_page * 1e3).round() as Nanos;
        let touch = |count| MemOp::Touch {
            first: 0,
            count,
            dirty_every: 2,
            cpu_ns_per_page: touch_ns,
            timed: false,
        };
        let mut env = vec![
            MemOp::Exec {
                pages: self.environment_pages,
            },
            touch(self.environment_pages),
        ];
        for _ in 0..9 {
            env.push(MemOp::Sleep(1_000_000_000));
            env.push(touch(self.environment_active_pages));
        }
        env.push(MemOp::Sleep(1_000_000_000));
        env.push(touch(self.environment_pages));
        let mut bench = Vec::new();
        for _ in 0..self.loops {
            for phase in &self.phases {
                bench.extend(phase_ops(phase, touch_ns));
            }
        }
        MemWorkload {
            processes: vec![
                MemProcess {
                    name: "environment".into(),
                    background: true,
                    repeat_from: 2,
                    ops: env,
                },
                MemProcess {
                    name: "ecd".into(),
                    background: false,
                    repeat_from: 0,
                    ops: bench,
                },
            ],
        }
    }
}

/// One phase: a fresh image, then rounds of touching, file I/O and one second of CPU.
fn phase_ops(phase: &Phase, touch_ns: Nanos) -> Vec<MemOp> {
    let rounds = phase.cpu_s.max(1);
    let mut ops = vec![MemOp::Exec {
        pages: phase.image_pages,
    }];
    // Every block to read, then every block to write, dealt out over the rounds.
    let io: Vec<(bool, FileNo, u32)> = phase
        .reads
        .iter()
        .flat_map(|&(f, n)| (0..n).map(move |b| (false, f, b)))
        .chain(
            phase
                .writes
                .iter()
                .flat_map(|&(f, n)| (0..n).map(move |b| (true, f, b))),
        )
        .collect();
    let per_round = io.len().div_ceil(rounds as usize).max(1);
    let mut chunks = io.chunks(per_round);
    for r in 0..rounds {
        let count = if r.is_multiple_of(4) {
            phase.image_pages
        } else {
            phase.image_pages / 2
        };
        ops.push(MemOp::Touch {
            first: 0,
            count,
            dirty_every: 2,
            cpu_ns_per_page: touch_ns,
            timed: false,
        });
        for &(write, file, block) in chunks.next().unwrap_or(&[]) {
            // Consecutive blocks of one file in one op would be nicer to read, but one
            // op per block keeps the interleaving exact and costs nothing at run time.
            let (first, count) = (block, 1);
            ops.push(if write {
                MemOp::Write { file, first, count }
            } else {
                MemOp::Read { file, first, count }
            });
        }
        ops.push(MemOp::Compute(1_000_000_000));
    }
    ops
}
