//! Scripts from a request trace: each request becomes a one-block read or write.
//!
//! Keys are numbered densely in order of first appearance and laid out as the blocks of
//! one file that is entirely on disk when the run starts. A request goes to process
//! `stream % processes`. With `timing = "timestamps"` each process computes for the gap
//! between its requests' timestamps (open loop per process, though a process that falls
//! behind does not skip its compute); with `"closed"` it issues its next request as soon
//! as the last one is served. Delete requests drop the block (a one-block truncate is not
//! expressible, so the block is only evicted from the cache's point of view: it is
//! ignored and counted).

use std::path::PathBuf;

use bufcache_core::FixedHashMap;
use serde::{Deserialize, Serialize};
use trace::{Format, ReadOptions, TraceError};

use super::ops::{FileSpec, Op, Script, Workload};

/// How request timestamps drive the processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Timing {
    /// Each process issues its next request as soon as the previous one is served.
    #[default]
    Closed,
    /// Each process waits out the gap between its requests' timestamps.
    Timestamps,
}

/// A trace as a workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceWorkload {
    /// The trace file (any format `bufcache trace` reads).
    pub path: PathBuf,
    /// Format name; detected from the file name when empty.
    pub format: String,
    /// Processes the requests are spread over (by stream id).
    pub processes: u32,
    /// Closed loop or timestamps.
    pub timing: Timing,
    /// Nanoseconds per unit of the trace's timestamps (1e9 for seconds).
    pub time_unit_ns: f64,
    /// Read at most this many requests (0: all).
    pub limit: u64,
    /// Bytes per block (must match the cache's block size; block traces are split into
    /// pages of this size).
    pub block_bytes: u64,
}

impl Default for TraceWorkload {
    fn default() -> Self {
        TraceWorkload {
            path: PathBuf::new(),
            format: String::new(),
            processes: 1,
            timing: Timing::Closed,
            time_unit_ns: 1e9,
            limit: 0,
            block_bytes: 4096,
        }
    }
}

impl TraceWorkload {
    /// Read the trace and build the scripts.
    pub fn build(&self) -> Result<Workload, TraceError> {
        let format = if self.format.is_empty() {
            None
        } else {
            Some(self.format.parse::<Format>()?)
        };
        let opts = ReadOptions {
            page_size: self.block_bytes as u32,
            ..Default::default()
        };
        let mut reader = trace::open(&self.path, format, &opts)?;
        let procs = self.processes.max(1) as usize;
        let mut scripts = vec![Script::default(); procs];
        let mut last_time: Vec<Option<u64>> = vec![None; procs];
        let mut ids: FixedHashMap<u64> = FixedHashMap::default();
        let mut req = trace::Request::default();
        let mut n = 0u64;
        while reader.read_into(&mut req)? {
            if self.limit > 0 && n == self.limit {
                break;
            }
            n += 1;
            let p = req.stream as usize % procs;
            let next_id = ids.len() as u64;
            let id = *ids.entry(req.key).or_insert(next_id);
            let ops = &mut scripts[p].ops;
            if self.timing == Timing::Timestamps {
                if let Some(prev) = last_time[p] {
                    let gap = req.time.saturating_sub(prev) as f64 * self.time_unit_ns;
                    if gap >= 1.0 {
                        ops.push(Op::Compute(gap as u64));
                    }
                }
                last_time[p] = Some(req.time);
            }
            let offset = id * self.block_bytes;
            match req.op {
                trace::Op::Read => ops.push(Op::Read {
                    file: 0,
                    offset,
                    len: self.block_bytes,
                }),
                trace::Op::Write => ops.push(Op::Write {
                    file: 0,
                    offset,
                    len: self.block_bytes,
                }),
                trace::Op::Delete => {}
            }
        }
        let bytes = ids.len() as u64 * self.block_bytes;
        Ok(Workload {
            files: vec![FileSpec {
                initial_bytes: bytes,
                max_bytes: bytes,
            }],
            scripts,
            counters: 0,
            deps: Vec::new(),
        })
    }
}
