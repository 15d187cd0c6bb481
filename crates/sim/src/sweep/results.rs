//! The results file: CSV rows, one per cell, that survive a crash at any moment.
//!
//! The file only ever grows by whole batches written with one `write` and made durable
//! with `fsync` before the sweep counts them as done. A crash can therefore leave at most
//! one partially written last line (a prefix of the last batch): [`ResultsFile::open`]
//! finds it (the file does not end in a newline), cuts it off and fsyncs, and the cells of
//! that batch that were cut are simply computed again. Every complete line is a complete
//! cell, because results are deterministic: a line written before the crash is exactly
//! what the rerun would write.
//!
//! When a sweep ends, [`ResultsFile::canonicalize`] rewrites the file in the spec's order
//! (trace, policy, size) through a temporary file, fsync and rename, so that a sweep that
//! was killed and resumed leaves the same bytes as one that never stopped. An exclusive
//! lock on the file keeps a second sweep from writing it at the same time.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cell::CellKey;
use super::SweepError;

/// One cell's result, as a CSV line. Only numbers that are the same on every run are
/// here: wall-clock times go to the sweep's summary, never into rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The trace's path as the sweep found it (informative: cells are keyed by digest).
    pub trace: String,
    /// XXH3-128 of the trace file's bytes.
    pub trace_digest: String,
    /// bufcache version.
    pub version: String,
    /// `units` or `bytes`.
    pub mode: String,
    /// Page size block traces were split into.
    pub page_size: u32,
    /// Warm-up as written (`0` for none).
    pub warmup: String,
    /// Root seed.
    pub seed: u64,
    /// The policy in canonical form.
    pub policy: String,
    /// The size as written.
    pub size: String,
    /// The capacity it resolved to (objects in unit mode, bytes in byte mode).
    pub capacity: u64,
    /// Requests counted (after the warm-up).
    pub requests: u64,
    /// Of which hits.
    pub hits: u64,
    /// Of which misses.
    pub misses: u64,
    /// misses / requests.
    pub miss_ratio: f64,
    /// Bytes requested.
    pub bytes_requested: u64,
    /// Bytes of the requests that missed.
    pub bytes_missed: u64,
    /// bytes_missed / bytes_requested.
    pub byte_miss_ratio: f64,
}

/// The header line, in [`Row`]'s field order.
pub const HEADER: &[&str] = &[
    "trace",
    "trace_digest",
    "version",
    "mode",
    "page_size",
    "warmup",
    "seed",
    "policy",
    "size",
    "capacity",
    "requests",
    "hits",
    "misses",
    "miss_ratio",
    "bytes_requested",
    "bytes_missed",
    "byte_miss_ratio",
];

impl Row {
    /// The cell this row is the result of.
    pub fn key(&self) -> CellKey {
        CellKey {
            trace_digest: self.trace_digest.clone(),
            mode: self.mode.clone(),
            page_size: self.page_size,
            warmup: self.warmup.clone(),
            policy: self.policy.clone(),
            size: self.size.clone(),
            seed: self.seed,
            version: self.version.clone(),
        }
    }
}

/// Rows as CSV lines (no header).
pub fn to_csv(rows: &[Row]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// Rows from CSV lines without a header (what [`to_csv`] wrote): how rows computed by a
/// task elsewhere travel back to the driver that appends them.
pub fn from_csv(bytes: &[u8]) -> Result<Vec<Row>, csv::Error> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes)
        .deserialize()
        .collect()
}

fn header_line() -> Vec<u8> {
    let mut line = HEADER.join(",").into_bytes();
    line.push(b'\n');
    line
}

/// Where a row goes in the canonical order: (trace, policy, size) positions in the plan.
pub type RowPosition = (usize, usize, usize);

/// An open, locked results file and the cells it holds.
#[derive(Debug)]
pub struct ResultsFile {
    path: PathBuf,
    file: File,
    done: HashSet<CellKey>,
    dropped_bytes: u64,
}

impl ResultsFile {
    /// Open (or create) the results file at `path`, lock it, cut off a partial last line
    /// and read the cells it holds. A file whose header is not [`HEADER`], or with a line
    /// that is not a row, is refused rather than appended to.
    pub fn open(path: &Path) -> Result<Self, SweepError> {
        let io = |source| SweepError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        file.try_lock().map_err(|_| SweepError::Locked {
            path: path.to_path_buf(),
        })?;
        let len = file.metadata().map_err(io)?.len();
        let keep = complete_prefix_len(&mut file, len).map_err(io)?;
        if keep < len {
            file.set_len(keep).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        if keep == 0 {
            file.write_all(&header_line()).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        let done = read_rows(path, &mut file)?
            .into_iter()
            .map(|r| r.key())
            .collect();
        Ok(ResultsFile {
            path: path.to_path_buf(),
            file,
            done,
            dropped_bytes: len - keep,
        })
    }

    /// Whether `key`'s row is in the file.
    pub fn contains(&self, key: &CellKey) -> bool {
        self.done.contains(key)
    }

    /// Cells in the file.
    pub fn len(&self) -> usize {
        self.done.len()
    }

    /// Whether the file holds no row.
    pub fn is_empty(&self) -> bool {
        self.done.is_empty()
    }

    /// Bytes of a partial last line that [`open`](Self::open) cut off (0 after a clean end).
    pub fn dropped_bytes(&self) -> u64 {
        self.dropped_bytes
    }

    /// Append `rows` with one write, then fsync: when this returns they are durable.
    pub fn append(&mut self, rows: &[Row]) -> Result<(), SweepError> {
        if rows.is_empty() {
            return Ok(());
        }
        let bytes = to_csv(rows).map_err(|e| self.csv_error(e))?;
        let io = |source| SweepError::Io {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(&bytes).map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.done.extend(rows.iter().map(Row::key));
        Ok(())
    }

    /// Append the rows of `rows` whose cells are not in the file yet (a trace run twice,
    /// by a retried task or by two drivers' overlap, adds nothing twice); returns how many.
    pub fn append_missing(&mut self, rows: Vec<Row>) -> Result<usize, SweepError> {
        let missing: Vec<Row> = rows
            .into_iter()
            .filter(|r| !self.contains(&r.key()))
            .collect();
        self.append(&missing)?;
        Ok(missing.len())
    }

    /// Rewrite the file with its rows sorted by `order` (rows it gives `None` keep their
    /// relative order after the others) and duplicates dropped, through a temporary file
    /// that is fsynced and renamed over it. Returns whether anything changed.
    pub fn canonicalize(
        &mut self,
        order: impl Fn(&Row) -> Option<RowPosition>,
    ) -> Result<bool, SweepError> {
        let io = |source| SweepError::Io {
            path: self.path.clone(),
            source,
        };
        let rows = read_rows(&self.path, &mut self.file)?;
        let mut seen = HashSet::new();
        let mut sorted: Vec<(Option<RowPosition>, usize, Row)> = rows
            .into_iter()
            .enumerate()
            .filter(|(_, r)| seen.insert(r.key()))
            .map(|(i, r)| (order(&r), i, r))
            .collect();
        // `None` sorts first in `Option`'s order; put the unknown rows last instead.
        sorted.sort_by_key(|(o, i, _)| (o.is_none(), *o, *i));
        let rows: Vec<Row> = sorted.into_iter().map(|(_, _, r)| r).collect();
        let mut bytes = header_line();
        bytes.extend(to_csv(&rows).map_err(|e| self.csv_error(e))?);
        let mut current = Vec::new();
        self.file.seek(SeekFrom::Start(0)).map_err(io)?;
        self.file.read_to_end(&mut current).map_err(io)?;
        if current == bytes {
            return Ok(false);
        }
        // The shared atomic write (temporary file, fsync, rename; its temporary file is
        // removed on Ctrl-C), then the directory's fsync makes the rename durable.
        trace::write_output(&self.path, &bytes).map_err(io)?;
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty());
        File::open(dir.unwrap_or(Path::new(".")))
            .and_then(|d| d.sync_all())
            .map_err(io)?;
        // Keep holding a lock, now on the renamed file.
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        file.try_lock().map_err(|_| SweepError::Locked {
            path: self.path.clone(),
        })?;
        self.file = file;
        Ok(true)
    }

    fn csv_error(&self, e: csv::Error) -> SweepError {
        SweepError::Results {
            path: self.path.clone(),
            line: e.position().map_or(0, |p| p.line()),
            reason: e.to_string(),
        }
    }
}

/// The length of the file up to and including its last newline (0 if it has none).
fn complete_prefix_len(file: &mut File, len: u64) -> std::io::Result<u64> {
    const STEP: u64 = 64 << 10;
    let mut end = len;
    let mut buf = vec![0u8; STEP as usize];
    while end > 0 {
        let start = end.saturating_sub(STEP);
        let piece = &mut buf[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(piece)?;
        if let Some(i) = piece.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// Every row of the file, checking the header and every line.
fn read_rows(path: &Path, file: &mut File) -> Result<Vec<Row>, SweepError> {
    let bad = |line: u64, reason: String| SweepError::Results {
        path: path.to_path_buf(),
        line,
        reason,
    };
    file.seek(SeekFrom::Start(0))
        .map_err(|source| SweepError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let mut reader = csv::Reader::from_reader(BufReader::new(&mut *file));
    let header = reader.headers().map_err(|e| bad(1, e.to_string()))?;
    if header.iter().ne(HEADER.iter().copied()) {
        return Err(bad(
            1,
            format!(
                "the header is not a sweep's ({}): write the results to another file",
                HEADER.join(",")
            ),
        ));
    }
    let mut rows = Vec::new();
    for record in reader.deserialize::<Row>() {
        rows.push(record.map_err(|e| bad(e.position().map_or(0, |p| p.line()), e.to_string()))?);
    }
    Ok(rows)
}
