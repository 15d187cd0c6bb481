//! The request log behind `bufcache serve --trace FILE`: one JSON line per GET served,
//! saying what the scheduler knew when it chose the request (its place in the schedule,
//! the oracle's prediction) and what the kernel held when the request's service began
//! (`cachestat(2)`'s count of its cached pages, and whether a read in service covered
//! it), with the service's start and end.
//!
//! Why: the mirror's agreement with the kernel can only be improved by trying other
//! mirror models, and a real run per try is slow and noisy on a shared machine. One
//! logged run replays offline, deterministically, against any number of models
//! ([`crate::replay`]); the log holds the request order and timing the models need and
//! the ground truth they are scored against, and nothing the live mirror could not have
//! known is fed to the models as input.

use std::fs::File;
use std::io::{BufRead, BufReader, LineWriter, Write};
use std::path::Path;
use std::time::Instant;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::oracle::{Actual, Prediction};
use crate::ServeError;

/// One served GET.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Place in the schedule: 0 for the first request given a slot, then 1, 2, ...
    pub order: u64,
    /// The file's inode number.
    pub inode: u64,
    /// First page of the range read.
    pub first_page: u64,
    /// Pages read (4 KiB each).
    pub pages: u64,
    /// The oracle's word when the request was chosen.
    pub predicted: Prediction,
    /// Pages of the range the page cache held when service began (`None` where the
    /// kernel cannot say).
    pub cached_pages: Option<u64>,
    /// Pages of the range the cache held when the scheduler chose the request (the
    /// moment its prediction speaks of; service begins a little later, by as much as
    /// the server's threads wait for a core).
    #[serde(default)]
    pub cached_at_choice: Option<u64>,
    /// The ground truth, as `x-bufcache-actual` says it.
    pub actual: Option<Actual>,
    /// Microseconds from the server's start to the start of service (the slot granted,
    /// the ground truth taken, the read about to begin).
    pub start_us: u64,
    /// Microseconds from the server's start to the end of the read.
    pub end_us: u64,
}

/// A flush line of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct FlushLine {
    /// Microseconds from the server's start to the kernel's flush.
    flush_us: u64,
}

/// A log read back: the requests in schedule order, and the kernel's statistics
/// flushes (µs on the requests' clock, ascending; none unless the server watched them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestLog {
    /// The requests.
    pub records: Vec<TraceRecord>,
    /// The flushes.
    pub flushes_us: Vec<u64>,
}

/// The log: lines written as requests finish (not in schedule order; readers sort).
#[derive(Debug)]
pub struct TraceLog {
    epoch: Instant,
    /// `CLOCK_MONOTONIC` at `epoch`, ns (the kernel's trace clock, for flush lines).
    epoch_mono_ns: u64,
    out: Mutex<LineWriter<File>>,
}

impl TraceLog {
    /// Create (or truncate) the log at `path`.
    pub fn create(path: &Path) -> Result<Self, ServeError> {
        let file = File::create(path).map_err(ServeError::io("creating the trace", path))?;
        let epoch = Instant::now();
        Ok(TraceLog {
            epoch_mono_ns: linux::memcg_flushes::mono_now_ns()
                .saturating_sub(epoch.elapsed().as_nanos() as u64),
            epoch,
            out: Mutex::new(LineWriter::new(file)),
        })
    }

    /// Microseconds since the log was created.
    pub fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// Append one record. A failed write is logged and the log goes on: the trace is a
    /// diagnostic and must never stop the server from serving.
    pub fn write(&self, record: &TraceRecord) {
        self.write_line(record);
    }

    /// Append a flush of the kernel's statistics at `mono_ns` (`CLOCK_MONOTONIC`).
    pub fn write_flush(&self, mono_ns: u64) {
        let flush_us = mono_ns.saturating_sub(self.epoch_mono_ns) / 1000;
        self.write_line(&FlushLine { flush_us });
    }

    fn write_line(&self, record: &impl Serialize) {
        let line = match serde_json::to_string(record) {
            Ok(l) => l,
            Err(e) => return tracing::warn!("trace record: {e}"),
        };
        if let Err(e) = writeln!(self.out.lock(), "{line}") {
            tracing::warn!("writing the trace: {e}");
        }
    }
}

/// Read a log's requests, in schedule order ([`read_log`] without the flushes).
pub fn read_trace(path: &Path) -> Result<Vec<TraceRecord>, ServeError> {
    Ok(read_log(path)?.records)
}

/// Read a log: the requests in schedule order, the flushes in time order. Blank lines
/// are skipped; anything else that is neither a record nor a flush is an error naming
/// its line.
pub fn read_log(path: &Path) -> Result<RequestLog, ServeError> {
    let file = File::open(path).map_err(ServeError::io("opening the trace", path))?;
    let mut log = RequestLog::default();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(ServeError::io("reading the trace", path))?;
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(flush) = serde_json::from_str::<FlushLine>(&line) {
            log.flushes_us.push(flush.flush_us);
            continue;
        }
        let record: TraceRecord = serde_json::from_str(&line).map_err(|e| ServeError::Parse {
            path: path.to_path_buf(),
            why: format!("line {}: {e}", i + 1),
        })?;
        log.records.push(record);
    }
    log.records.sort_by_key(|r| r.order);
    log.flushes_us.sort_unstable();
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(order: u64, actual: Actual) -> TraceRecord {
        TraceRecord {
            order,
            inode: 7,
            first_page: 0,
            pages: 256,
            predicted: Prediction::Hit,
            cached_pages: Some(if actual == Actual::Hit { 256 } else { 3 }),
            cached_at_choice: None,
            actual: Some(actual),
            start_us: 10 * order,
            end_us: 10 * order + 5,
        }
    }

    #[test]
    fn a_log_reads_back_in_schedule_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let log = TraceLog::create(&path).unwrap();
        let (late, early) = (record(1, Actual::Joined), record(0, Actual::Hit));
        log.write(&late);
        log.write(&early);
        // A flush 2 ms after the log began, written between the records.
        log.write_flush(log.epoch_mono_ns + 2_000_000);
        drop(log);
        assert_eq!(
            read_trace(&path).unwrap(),
            vec![early.clone(), late.clone()]
        );
        let both = read_log(&path).unwrap();
        assert_eq!(
            (both.records, both.flushes_us),
            (vec![early, late], vec![2000])
        );
        std::fs::write(&path, "{\"order\":1}\n").unwrap();
        let err = read_trace(&path).unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
        assert!(read_trace(&dir.path().join("missing")).is_err());
    }
}
