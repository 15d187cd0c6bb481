//! What a run of the memory simulator measured, and why a run could not start or finish.

use serde::Serialize;

use super::config::{MemoryConfig, MemoryConfigError};

/// Counts and times of one run. Traffic is in pages; [`MemReport::mb`] converts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemReport {
    /// The arbiter's short name.
    pub arbiter: String,
    /// Pages of memory.
    pub memory_pages: u32,
    /// Bytes per page.
    pub page_bytes: u32,
    /// False when the run hit the time limit (it thrashed).
    pub finished: bool,
    /// When the last foreground process finished.
    pub elapsed_s: f64,
    /// Time the server spent on transfers (some may complete after the end).
    pub server_busy_s: f64,
    /// Time the client CPU was busy.
    pub cpu_busy_s: f64,
    /// File blocks found in the cache.
    pub fs_hits: u64,
    /// File blocks not found.
    pub fs_misses: u64,
    /// File blocks read from the server.
    pub fs_reads: u64,
    /// File blocks written to the server (evicted dirty, or by the flusher).
    pub fs_writes: u64,
    /// File misses on blocks that were cached before (evicted since).
    pub fs_refaults: u64,
    /// Dirty blocks dropped because their file was deleted first.
    pub dirty_discarded: u64,
    /// Pages read from executables (first touch, or evicted clean with no swap copy).
    pub vm_loads: u64,
    /// Pages read from swap files.
    pub page_ins: u64,
    /// Pages written to swap files.
    pub page_outs: u64,
    /// Faults on pages that were resident before.
    pub vm_refaults: u64,
    /// Smallest file cache once it first reached its minimum, in pages.
    pub file_pages_min: u64,
    /// Largest file cache, in pages.
    pub file_pages_max: u64,
    #[serde(skip)]
    pub(super) reached_min: bool,
    /// Table 2: times the file system asked the VM for a page (no page free) ...
    pub fs_asks_vm: u64,
    /// ... and got one.
    pub fs_satisfied: u64,
    /// Times the VM asked the file system ...
    pub vm_asks_fs: u64,
    /// ... and got one.
    pub vm_satisfied: u64,
    /// Durations of the timed touches (interactive response), in order.
    pub responses_s: Vec<f64>,
    /// When each of them started.
    pub response_starts_s: Vec<f64>,
    /// Each process's name and when it finished.
    pub process_done_s: Vec<(String, f64)>,
    /// Events handled.
    pub events: u64,
}

impl MemReport {
    pub(super) fn new(config: &MemoryConfig) -> Self {
        MemReport {
            arbiter: config.arbiter.label(),
            memory_pages: config.memory_pages,
            page_bytes: config.page_bytes,
            finished: true,
            file_pages_min: u64::MAX,
            ..Default::default()
        }
    }

    /// `pages` pages in megabytes (2^20 bytes).
    pub fn mb(&self, pages: u64) -> f64 {
        pages as f64 * f64::from(self.page_bytes) / 1_048_576.0
    }

    /// File traffic in pages: reads and writes.
    pub fn fs_pages(&self) -> u64 {
        self.fs_reads + self.fs_writes
    }

    /// Virtual-memory traffic in pages: loads, page-ins and page-outs.
    pub fn vm_pages(&self) -> u64 {
        self.vm_loads + self.page_ins + self.page_outs
    }

    /// Server utilization over the run (at most 1).
    pub fn server_utilization(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            (self.server_busy_s / self.elapsed_s).min(1.0)
        } else {
            0.0
        }
    }

    /// When process `name` finished, if it did.
    pub fn done_s(&self, name: &str) -> Option<f64> {
        self.process_done_s
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, t)| t)
    }

    /// Summary of the responses that started in `[from_s, to_s)`; zeros when there were
    /// none.
    pub fn response_summary(&self, from_s: f64, to_s: f64) -> ResponseSummary {
        let mut r: Vec<f64> = self
            .responses_s
            .iter()
            .zip(&self.response_starts_s)
            .filter(|&(_, &start)| start >= from_s && start < to_s)
            .map(|(&d, _)| d)
            .collect();
        if r.is_empty() {
            return ResponseSummary::default();
        }
        r.sort_by(f64::total_cmp);
        let pct = |q: f64| r[((r.len() - 1) as f64 * q).round() as usize];
        ResponseSummary {
            count: r.len(),
            min_s: r[0],
            max_s: r[r.len() - 1],
            mean_s: r.iter().sum::<f64>() / r.len() as f64,
            p50_s: pct(0.5),
            p90_s: pct(0.9),
        }
    }
}

/// Interactive response times, summarised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ResponseSummary {
    /// Responses measured.
    pub count: usize,
    /// Shortest.
    pub min_s: f64,
    /// Longest.
    pub max_s: f64,
    /// Mean.
    pub mean_s: f64,
    /// Median.
    pub p50_s: f64,
    /// 90th percentile.
    pub p90_s: f64,
}

/// A run that cannot start or cannot go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemRunError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] MemoryConfigError),
    /// The workload cannot run.
    #[error("memory workload: {0}")]
    Workload(String),
    /// A page was needed and neither consumer could give one (all memory in flight or at
    /// the file cache's minimum).
    #[error("at {time_s:.3} s, a page was needed and no consumer could give one up; give the machine more memory")]
    NoVictim {
        /// Virtual time.
        time_s: f64,
    },
    /// Nothing left to happen while foreground processes remain.
    #[error("at {time_s:.3} s, foreground processes wait for nothing that will happen")]
    Stuck {
        /// Virtual time.
        time_s: f64,
    },
}
