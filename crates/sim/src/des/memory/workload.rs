//! What the processes of the memory simulator do: touch pages of their virtual-memory
//! image, read and write file blocks, compute, sleep, replace their image (`exec`), delete
//! files.

use serde::Serialize;

use super::super::time::Nanos;

/// A file, by number.
pub type FileNo = u32;

/// One step of a process's script.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum MemOp {
    /// Replace the process's image by a fresh one of `pages` pages (the old image's pages
    /// are freed; the new one's are read from the executable on first touch).
    Exec {
        /// Pages in the new image.
        pages: u32,
    },
    /// Touch `count` pages of the image from `first`, dirtying every `dirty_every`-th one
    /// (0: none), at `cpu_ns_per_page` of CPU each. With `timed`, the time from the start
    /// of the touch to its end is a *response time* (the IFS interactive program).
    Touch {
        /// First page.
        first: u32,
        /// Pages touched.
        count: u32,
        /// Every n-th page touched is written (0: read only).
        dirty_every: u32,
        /// CPU per page touched.
        cpu_ns_per_page: Nanos,
        /// Record the touch's duration as a response time.
        timed: bool,
    },
    /// `read` of `count` blocks of `file` from block `first`, copying each to the process.
    Read {
        /// The file.
        file: FileNo,
        /// First block.
        first: u32,
        /// Blocks.
        count: u32,
    },
    /// `write` of `count` whole blocks of `file` from block `first` (no read needed).
    Write {
        /// The file.
        file: FileNo,
        /// First block.
        first: u32,
        /// Blocks.
        count: u32,
    },
    /// Delete `file`: its cached blocks are dropped, dirty or not.
    Delete {
        /// The file.
        file: FileNo,
    },
    /// Use the CPU for this long.
    Compute(Nanos),
    /// Sleep (off the CPU) for this long.
    Sleep(Nanos),
}

/// A process: a name, its script, and whether it runs in the background (a background
/// process repeats its script from `repeat_from` until every foreground process has
/// finished, and the run does not wait for it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemProcess {
    /// Name for reports.
    pub name: String,
    /// Repeat until the foreground is done.
    pub background: bool,
    /// Where a background script starts again (ops before it run once: its `exec` and
    /// first touch).
    pub repeat_from: usize,
    /// The script (start with `Exec` to have an image).
    pub ops: Vec<MemOp>,
}

/// The processes of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemWorkload {
    /// Every process, all starting at time 0.
    pub processes: Vec<MemProcess>,
}

impl MemWorkload {
    /// Problems that make the workload unrunnable, described (empty when fine).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.processes.iter().any(|p| !p.background) {
            out.push("no foreground process: the run would never end".to_string());
        }
        for (i, p) in self.processes.iter().enumerate() {
            let mut image = None;
            let mut progress = false;
            if p.background && p.repeat_from >= p.ops.len() {
                out.push(format!(
                    "process {i} ({}): repeat_from {} is past the end of its {} ops",
                    p.name,
                    p.repeat_from,
                    p.ops.len()
                ));
            }
            for (j, op) in p.ops.iter().enumerate() {
                match *op {
                    MemOp::Exec { pages } => image = Some(pages),
                    MemOp::Touch { first, count, .. } => {
                        progress |= count > 0 && j >= p.repeat_from;
                        match image {
                            None => out.push(format!(
                                "process {i} ({}) op {j}: touch before any exec",
                                p.name
                            )),
                            Some(pages) if u64::from(first) + u64::from(count) > u64::from(pages) => {
                                out.push(format!(
                                    "process {i} ({}) op {j}: touch of pages {first}..{} outside its image of {pages} pages",
                                    p.name,
                                    u64::from(first) + u64::from(count)
                                ))
                            }
                            Some(_) => {}
                        }
                    }
                    MemOp::Compute(ns) | MemOp::Sleep(ns) => {
                        progress |= ns > 0 && j >= p.repeat_from
                    }
                    MemOp::Read { count, .. } | MemOp::Write { count, .. } => {
                        progress |= count > 0 && j >= p.repeat_from
                    }
                    MemOp::Delete { .. } => {}
                }
            }
            if p.background && !progress {
                out.push(format!(
                    "process {i} ({}): a background script must take time, or it loops forever at one instant",
                    p.name
                ));
            }
        }
        out
    }
}
