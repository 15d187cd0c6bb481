//! A sweep driven from outside this process: a scheduler elsewhere (Python's Ray driver)
//! runs each trace's grid as a task wherever it likes, and this side keeps the results
//! file exactly as [`run_local`](super::run_local) does.
//!
//! The driver opens a [`SweepSession`] (the results file locked, a torn last line cut
//! off), asks for the [`TraceUnit`]s that still have missing cells, hands each unit's path
//! to a task that calls [`run_trace`](super::run_trace) on the plan of
//! [`SweepSpec::resolve_one`](super::SweepSpec::resolve_one), and appends each task's rows
//! with [`SweepSession::append`] as it returns — the same fsynced batch append the local
//! sweep makes, so a driver that dies loses only the traces in flight. [`finish`]
//! (SweepSession::finish) rewrites the file in the spec's order, which makes the bytes
//! independent of the order in which tasks returned: equal to a local sweep's.

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;

use super::cell::file_digest;
use super::results::{ResultsFile, Row};
use super::run::{cell_keys, finish, load_trace_digested, summary_estimate_bytes, SweepSummary};
use super::spec::SweepPlan;
use super::SweepError;

/// One trace of a sweep, as a scheduler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceUnit {
    /// Position of the trace in the plan (its rows' place in the file).
    pub index: usize,
    /// The path a task reads, as the plan resolved it (rows carry it as written).
    pub path: PathBuf,
    /// [`file_digest`] of the file when the unit was planned.
    pub digest: String,
    /// Cells of its grid.
    pub cells: usize,
    /// Of which not in the results file yet (0: nothing to run).
    pub missing: usize,
}

/// An open sweep whose traces run elsewhere: the plan, the locked results file, and what
/// has been done so far.
pub struct SweepSession {
    plan: SweepPlan,
    store: ResultsFile,
    digests: Vec<Option<String>>,
    summary: SweepSummary,
    start: Instant,
}

impl SweepSession {
    /// Open (or create) the results file at `output` for `plan`, as the local sweep does.
    pub fn open(plan: SweepPlan, output: &std::path::Path) -> Result<Self, SweepError> {
        let store = ResultsFile::open(output)?;
        let summary = SweepSummary {
            traces: plan.traces.len(),
            dropped_bytes: store.dropped_bytes(),
            ..SweepSummary::default()
        };
        Ok(SweepSession {
            digests: vec![None; plan.traces.len()],
            plan,
            store,
            summary,
            start: Instant::now(),
        })
    }

    /// The plan.
    pub fn plan(&self) -> &SweepPlan {
        &self.plan
    }

    /// Every trace of the plan with its digest and its count of missing cells, in plan
    /// order (the digests are computed on rayon's pool). Traces with nothing missing count
    /// as skipped in the summary.
    pub fn units(&mut self) -> Result<Vec<TraceUnit>, SweepError> {
        let digests = self
            .plan
            .traces
            .par_iter()
            .map(|path| file_digest(path))
            .collect::<Result<Vec<_>, _>>()?;
        let units: Vec<TraceUnit> = digests
            .iter()
            .enumerate()
            .map(|(index, digest)| {
                let keys = cell_keys(&self.plan, digest);
                TraceUnit {
                    index,
                    path: self.plan.traces[index].clone(),
                    digest: digest.clone(),
                    cells: keys.len(),
                    missing: keys.iter().filter(|k| !self.store.contains(k)).count(),
                }
            })
            .collect();
        self.summary.traces_skipped = units.iter().filter(|u| u.missing == 0).count();
        self.digests = digests.into_iter().map(Some).collect();
        Ok(units)
    }

    /// Append a task's rows (those not in the file yet), fsynced before this returns;
    /// returns how many were written.
    pub fn append(&mut self, rows: Vec<Row>) -> Result<usize, SweepError> {
        let written = self.store.append_missing(rows)?;
        self.summary.rows_written += written;
        Ok(written)
    }

    /// Rewrite the file in the spec's order and say what the sweep did.
    pub fn finish(mut self) -> Result<SweepSummary, SweepError> {
        finish(
            &self.plan,
            &mut self.store,
            &self.digests,
            self.summary.clone(),
            self.start,
        )
    }
}

/// An upper estimate of the memory a task running the grid of `plan` over the trace at
/// `path` needs ([`memory_estimate_bytes`](super::memory_estimate_bytes) of its counts).
/// It reads the trace to count its operations and objects, so a driver calls it for the
/// few traces about to be submitted, not for all at once.
pub fn trace_memory_estimate_bytes(
    plan: &SweepPlan,
    path: &std::path::Path,
) -> Result<u64, SweepError> {
    // The digest is not needed here: skip hashing the file.
    let loaded = load_trace_digested(plan, path, String::new())?;
    Ok(summary_estimate_bytes(plan, loaded.trace.summary()))
}
