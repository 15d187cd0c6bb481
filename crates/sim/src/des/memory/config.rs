//! The simulated machine of the memory experiments: physical memory, the arbiter, the
//! file server, CPU costs. Plain data with one `validate()`.

use arbiter::ArbiterSpec;
use serde::Serialize;

use super::super::time::{check_time, Nanos};

/// A diskless client and its file server (Nelson's Sun-3/75 and Sun-3/180).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryConfig {
    /// Pages of physical memory for user processes and the file cache (the kernel's own
    /// memory is not modelled: subtract it first).
    pub memory_pages: u32,
    /// Bytes per page and per file block (one unit for both, so a page can move between
    /// the consumers).
    pub page_bytes: u32,
    /// Who gives up a page.
    pub arbiter: ArbiterSpec,
    /// The file cache never shrinks below this (Sprite's minimum cache size).
    pub min_file_pages: u32,
    /// Server time per page moved across the network, read or written, file or swap:
    /// one FIFO server (network plus server CPU; its own cache holds everything).
    pub server_ms_per_page: f64,
    /// Client CPU per page moved across the network (the fault or RPC path).
    pub cpu_us_per_transfer: f64,
    /// Client CPU per block copied by `read` or `write`.
    pub cpu_us_per_copy: f64,
    /// CPU time slice (round robin among runnable processes).
    pub quantum_ms: f64,
    /// The delayed-write flusher wakes this often ...
    pub flush_interval_s: f64,
    /// ... and writes file blocks dirty for this long (Sprite: 30 s).
    pub flush_age_s: f64,
    /// Stop a run that has not finished after this much virtual time (a thrashing
    /// configuration; Nelson did not run those either).
    pub time_limit_s: f64,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            memory_pages: 1715,
            page_bytes: 4096,
            arbiter: ArbiterSpec::SPRITE,
            min_file_pages: 16,
            server_ms_per_page: 6.0,
            cpu_us_per_transfer: 1000.0,
            cpu_us_per_copy: 250.0,
            quantum_ms: 10.0,
            flush_interval_s: 5.0,
            flush_age_s: 30.0,
            time_limit_s: 3600.0,
        }
    }
}

/// A configuration the simulator refuses, with the field at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryConfigError {
    /// A field is out of range.
    #[error("memory config: {field} {problem}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// The arbiter does not fit the memory.
    #[error("memory config: arbiter: {0}")]
    Arbiter(#[from] arbiter::ArbiterError),
}

/// The configuration's times in nanoseconds, checked.
#[derive(Clone, Copy, Debug)]
pub(super) struct Times {
    pub server_page: Nanos,
    pub transfer_cpu: Nanos,
    pub copy_cpu: Nanos,
    pub quantum: Nanos,
    pub flush_interval: Nanos,
    pub flush_age: Nanos,
    pub limit: Nanos,
}

impl MemoryConfig {
    /// Check every field; the times in nanoseconds.
    pub fn validate(&self) -> Result<(), MemoryConfigError> {
        self.times().map(|_| ())
    }

    pub(super) fn times(&self) -> Result<Times, MemoryConfigError> {
        let field = |field, problem: String| MemoryConfigError::Field { field, problem };
        if self.page_bytes == 0 {
            return Err(field("page_bytes", "must be more than 0".into()));
        }
        if self.memory_pages <= self.min_file_pages + 1 {
            return Err(field(
                "memory_pages",
                format!(
                    "must exceed min_file_pages ({}) by at least 2, got {}",
                    self.min_file_pages, self.memory_pages
                ),
            ));
        }
        self.arbiter.validate(u64::from(self.memory_pages))?;
        let t = |f, v, unit_ns, unit| check_time(v, unit_ns, unit).map_err(|p| field(f, p));
        let times = Times {
            server_page: t("server_ms_per_page", self.server_ms_per_page, 1e6, "ms")?,
            transfer_cpu: t("cpu_us_per_transfer", self.cpu_us_per_transfer, 1e3, "us")?,
            copy_cpu: t("cpu_us_per_copy", self.cpu_us_per_copy, 1e3, "us")?,
            quantum: t("quantum_ms", self.quantum_ms, 1e6, "ms")?,
            flush_interval: t("flush_interval_s", self.flush_interval_s, 1e9, "s")?,
            flush_age: t("flush_age_s", self.flush_age_s, 1e9, "s")?,
            limit: t("time_limit_s", self.time_limit_s, 1e9, "s")?,
        };
        if times.quantum == 0 {
            return Err(field("quantum_ms", "must be more than 0".into()));
        }
        if times.flush_interval == 0 {
            return Err(field("flush_interval_s", "must be more than 0".into()));
        }
        Ok(times)
    }
}
