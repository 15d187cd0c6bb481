//! Running a sweep: one trace's whole grid ([`run_trace`], the unit a cluster task runs),
//! its memory estimate, and the local driver ([`run_local`]) that runs every trace on this
//! machine into a results file, resuming where an earlier run stopped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use policy::{AdmissionSpec, Policy};

use super::cell::{canonical_policy, file_digest, mode_name, CellKey, VERSION};
use super::results::{ResultsFile, Row, RowPosition};
use super::spec::SweepPlan;
use super::SweepError;
use crate::compact::{CompactTrace, Item, Summary};
use crate::replay::{replay_scheduled, RunResult};

/// A trace read for a sweep: its content digest and its requests.
pub struct LoadedTrace {
    /// The path it was read from.
    pub path: PathBuf,
    /// [`file_digest`] of the file.
    pub digest: String,
    /// The requests.
    pub trace: CompactTrace,
}

/// Read `path` as `plan` says (digest first, then the requests).
pub fn load_trace(plan: &SweepPlan, path: &Path) -> Result<LoadedTrace, SweepError> {
    load_trace_digested(plan, path, file_digest(path)?)
}

/// [`load_trace`] of a file whose digest is known.
pub(super) fn load_trace_digested(
    plan: &SweepPlan,
    path: &Path,
    digest: String,
) -> Result<LoadedTrace, SweepError> {
    let trace_error = |error| SweepError::TraceFile {
        path: path.to_path_buf(),
        error,
    };
    let mut reader = trace::open(path, plan.format, &plan.read_options()).map_err(trace_error)?;
    let trace = CompactTrace::from_reader(reader.as_mut()).map_err(trace_error)?;
    Ok(LoadedTrace {
        path: path.to_path_buf(),
        digest,
        trace,
    })
}

/// The cell keys of `digest`'s grid, in row order (policy-major, then size).
pub fn cell_keys(plan: &SweepPlan, digest: &str) -> Vec<CellKey> {
    let mut keys = Vec::with_capacity(plan.cells_per_trace());
    for p in &plan.policies {
        let policy = canonical_policy(p);
        for s in &plan.sizes {
            keys.push(CellKey {
                trace_digest: digest.to_string(),
                mode: mode_name(plan.ignore_size).to_string(),
                page_size: plan.page_size,
                warmup: plan.warmup_text.clone(),
                policy: policy.clone(),
                size: s.text.clone(),
                seed: plan.seed,
                version: VERSION.to_string(),
            });
        }
    }
    keys
}

/// Run the whole grid of `plan` over one loaded trace: one row per (policy, size), in
/// that order. The runs go to rayon's pool, as `bufcache replay`'s do; the numbers are
/// those `bufcache replay` gives on the same inputs.
pub fn run_loaded(
    plan: &SweepPlan,
    loaded: &LoadedTrace,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Row>, SweepError> {
    let trace = &loaded.trace;
    let summary = trace.summary();
    if summary.requests == 0 {
        return Err(SweepError::EmptyTrace {
            path: loaded.path.clone(),
        });
    }
    let always = AdmissionSpec::parse("always").expect("`always` parses");
    let grid = plan.grid(&always, summary.requests + summary.deletes)?;
    let results = replay_scheduled(trace, &grid, progress).map_err(|error| SweepError::Replay {
        path: loaded.path.clone(),
        error,
    })?;
    let keys = cell_keys(plan, &loaded.digest);
    let label = loaded.path.display().to_string();
    Ok(keys
        .into_iter()
        .zip(&results)
        .map(|(key, r)| row(&label, key, r))
        .collect())
}

/// [`load_trace`] and [`run_loaded`]: what one task of a distributed sweep runs.
pub fn run_trace(plan: &SweepPlan, path: &Path) -> Result<Vec<Row>, SweepError> {
    run_loaded(plan, &load_trace(plan, path)?, &|_| {})
}

fn row(trace: &str, key: CellKey, r: &RunResult) -> Row {
    Row {
        trace: trace.to_string(),
        trace_digest: key.trace_digest,
        version: key.version,
        mode: key.mode,
        page_size: key.page_size,
        warmup: key.warmup,
        seed: key.seed,
        policy: key.policy,
        size: key.size,
        capacity: r.capacity,
        requests: r.counts.requests,
        hits: r.counts.hits,
        misses: r.misses(),
        miss_ratio: r.miss_ratio(),
        bytes_requested: r.counts.bytes_requested,
        bytes_missed: r.counts.bytes_missed,
        byte_miss_ratio: r.byte_miss_ratio(),
    }
}

/// Bytes a run keeps per distinct object of its trace, whatever its capacity: the driver's
/// dense key index (8) and a policy's per-object arrays and ghosts, which the registry's
/// policies keep under 48 bytes per cached entry (`tests/no_alloc.rs`), rounded up for
/// ghost histories and admission state.
pub const RUN_BYTES_PER_OBJECT: u64 = 8 + 64;

/// An upper estimate of the memory one trace's task needs, from the trace's counts: the
/// loaded trace (16 bytes per operation, 8 per distinct key for the original keys), the
/// next-access times if an offline policy is in the grid (8 per operation), and every run
/// of the grid sized for the whole working set ([`RUN_BYTES_PER_OBJECT`]). A cluster task
/// declares it so that a node never takes more traces than fit; the local driver uses it
/// to decide how many traces to hold at once.
pub fn memory_estimate_bytes(plan: &SweepPlan, operations: u64, objects: u64) -> u64 {
    let item = std::mem::size_of::<Item>() as u64;
    let offline = plan.policies.iter().any(|p| {
        p.build(&policy::BuildContext::new(64, plan.seed))
            .is_ok_and(|b| b.needs_future())
    });
    let future = if offline { 8 * operations } else { 0 };
    let runs = plan.cells_per_trace() as u64 * objects * RUN_BYTES_PER_OBJECT;
    operations * item + objects * 8 + future + runs
}

/// [`memory_estimate_bytes`] of a trace's summary.
pub fn summary_estimate_bytes(plan: &SweepPlan, s: &Summary) -> u64 {
    memory_estimate_bytes(plan, s.requests + s.deletes, s.distinct_keys)
}

/// How the local driver runs.
#[derive(Clone, Copy, Debug)]
pub struct LocalOptions {
    /// Traces worked on at once (each one's runs share rayon's pool).
    pub traces_at_once: usize,
    /// Estimated bytes of loaded traces and their runs held at once
    /// ([`memory_estimate_bytes`]); one trace always runs, however large.
    pub memory_budget_bytes: u64,
}

impl LocalOptions {
    /// The defaults of `bufcache sweep` and of Python's `bufcache.sweep`: as many traces
    /// at once as rayon has threads, and half of the machine's memory as the budget
    /// (unbounded where the total is unknown), each overridable.
    pub fn for_machine(traces_at_once: Option<usize>, memory_budget_bytes: Option<u64>) -> Self {
        LocalOptions {
            traces_at_once: traces_at_once.unwrap_or_else(rayon::current_num_threads),
            memory_budget_bytes: memory_budget_bytes
                .unwrap_or_else(|| memory_total_bytes().map_or(u64::MAX, |b| b / 2)),
        }
    }
}

/// The machine's memory from `/proc/meminfo` (`None` where there is none, as off Linux).
pub fn memory_total_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// What happened to one trace (for a progress display).
#[derive(Clone, Debug)]
pub enum TraceEvent {
    /// Every cell was already in the results file: not even loaded.
    Skipped {
        /// The trace.
        path: PathBuf,
    },
    /// Its missing rows were written.
    Done {
        /// The trace.
        path: PathBuf,
        /// Rows written.
        rows: usize,
    },
    /// Requests served by its runs since the last event (for a finer progress bar).
    Served(u64),
}

/// What a local sweep did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepSummary {
    /// Traces in the plan.
    pub traces: usize,
    /// Traces skipped because every cell was in the file already.
    pub traces_skipped: usize,
    /// Rows written by this run.
    pub rows_written: usize,
    /// Rows in the file at the end.
    pub rows_total: usize,
    /// Bytes of a partial last line cut off when the file was opened.
    pub dropped_bytes: u64,
    /// Wall-clock seconds.
    pub wall_s: f64,
}

/// A lock whose holder's panic does not poison it for the others (a panicking worker
/// ends the sweep through `thread::scope` anyway).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reserves estimated bytes against a budget; a reservation waits until it fits, except
/// that one always goes ahead when nothing is reserved (a trace larger than the budget
/// still runs, alone).
struct Budget {
    limit: u64,
    used: Mutex<u64>,
    freed: Condvar,
}

impl Budget {
    fn reserve(&self, bytes: u64) {
        let mut used = lock(&self.used);
        while *used > 0 && *used + bytes > self.limit {
            used = self.freed.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        *used += bytes;
    }

    fn release(&self, bytes: u64) {
        let mut used = lock(&self.used);
        *used -= bytes;
        self.freed.notify_all();
    }
}

/// Run every trace of `plan` whose cells are not all in the results file at `output`,
/// append each trace's missing rows as soon as it finishes, and end with the file in
/// canonical order (see [`super::results`]). Traces are taken by `traces_at_once` worker
/// threads; a trace is loaded one at a time and then waits until its estimate fits in the
/// memory budget, so at most the budget plus one trace is held. The first error stops the
/// sweep (rows already written stay).
pub fn run_local(
    plan: &SweepPlan,
    output: &Path,
    options: LocalOptions,
    progress: &(dyn Fn(TraceEvent) + Sync),
) -> Result<SweepSummary, SweepError> {
    let start = Instant::now();
    let store = ResultsFile::open(output)?;
    let dropped_bytes = store.dropped_bytes();
    let store = Mutex::new(store);
    let budget = Budget {
        limit: options.memory_budget_bytes,
        used: Mutex::new(0),
        freed: Condvar::new(),
    };
    let loading = Mutex::new(());
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<SweepError>> = Mutex::new(None);
    let skipped = AtomicUsize::new(0);
    let written = AtomicUsize::new(0);
    let digests: Mutex<Vec<Option<String>>> = Mutex::new(vec![None; plan.traces.len()]);
    let one_trace = |i: usize| -> Result<(), SweepError> {
        let path = plan.traces[i].as_path();
        let digest = file_digest(path)?;
        lock(&digests)[i] = Some(digest.clone());
        let keys = cell_keys(plan, &digest);
        if keys.iter().all(|k| lock(&store).contains(k)) {
            skipped.fetch_add(1, Ordering::Relaxed);
            progress(TraceEvent::Skipped {
                path: path.to_path_buf(),
            });
            return Ok(());
        }
        let (loaded, reserved) = {
            let _one_at_a_time = lock(&loading);
            let loaded = load_trace_digested(plan, path, digest)?;
            let reserved = summary_estimate_bytes(plan, loaded.trace.summary());
            budget.reserve(reserved);
            (loaded, reserved)
        };
        let rows = run_loaded(plan, &loaded, &|n| progress(TraceEvent::Served(n)));
        drop(loaded);
        budget.release(reserved);
        let rows = rows?;
        let appended = lock(&store).append_missing(rows)?;
        written.fetch_add(appended, Ordering::Relaxed);
        progress(TraceEvent::Done {
            path: path.to_path_buf(),
            rows: appended,
        });
        Ok(())
    };
    let workers = options.traces_at_once.clamp(1, plan.traces.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= plan.traces.len() || failed.load(Ordering::Relaxed) {
                    return;
                }
                if let Err(e) = one_trace(i) {
                    failed.store(true, Ordering::Relaxed);
                    lock(&first_error).get_or_insert(e);
                    return;
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let mut store = store.into_inner().unwrap_or_else(|e| e.into_inner());
    let digests = digests.into_inner().unwrap_or_else(|e| e.into_inner());
    finish(
        plan,
        &mut store,
        &digests,
        SweepSummary {
            traces: plan.traces.len(),
            traces_skipped: skipped.into_inner(),
            rows_written: written.into_inner(),
            rows_total: 0,
            dropped_bytes,
            wall_s: 0.0,
        },
        start,
    )
}

/// The end of every sweep, local or driven from outside: the file rewritten in the spec's
/// order (so that how the rows arrived leaves no trace in it) and the summary completed.
pub(super) fn finish(
    plan: &SweepPlan,
    store: &mut ResultsFile,
    digests: &[Option<String>],
    summary: SweepSummary,
    start: Instant,
) -> Result<SweepSummary, SweepError> {
    store.canonicalize(row_order(plan, digests))?;
    Ok(SweepSummary {
        rows_total: store.len(),
        wall_s: start.elapsed().as_secs_f64(),
        ..summary
    })
}

/// The spec's order of rows: (trace, policy, size) by position in the plan, known by the
/// cell keys of each trace's digest; rows of other sweeps sort after (`None`).
fn row_order(plan: &SweepPlan, digests: &[Option<String>]) -> impl Fn(&Row) -> Option<RowPosition> {
    let mut position = std::collections::HashMap::new();
    let n = plan.sizes.len();
    for (t, digest) in digests.iter().enumerate() {
        let Some(digest) = digest else { continue };
        for (c, key) in cell_keys(plan, digest).into_iter().enumerate() {
            position.entry(key).or_insert((t, c / n, c % n));
        }
    }
    move |r: &Row| position.get(&r.key()).copied()
}
