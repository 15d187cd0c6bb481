//! `sim::sweep::SweepSession`, the side of a sweep whose traces run elsewhere (Python's
//! Ray driver): tasks returning in any order, their rows carried as CSV bytes, give the
//! file of a local sweep byte for byte; a session reopened after some traces sees exactly
//! the cells still missing; a task's plan from `resolve_one` writes the driver's rows.

use std::path::Path;

use sim::sweep::{self, LocalOptions, SweepSession, SweepSpec};

fn spec(traces: &[&str]) -> SweepSpec {
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    SweepSpec {
        traces: own(traces),
        policies: own(&["lru", "s3fifo", "random"]),
        sizes: own(&["0.25", "0.5", "3"]),
        warmup: Some("2".into()),
        seed: 9,
        ignore_size: true,
        format: None,
        page_size: 4096,
    }
}

/// Three small traces, distinct so that their digests differ.
fn traces(dir: &Path) {
    for (name, text) in [
        ("a.txt", "1\n2\n3\n1\n4\n1\n2\n5\n1\n"),
        ("b.txt", "7\n8\n7\n9\n7\n8\n10\n11\n7\n"),
        ("c.txt", "1\n1\n2\n2\n3\n3\n1\n2\n3\n4\n"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// What one task does: the spec as JSON (as the driver ships it), its plan over one
/// path, the rows as CSV bytes.
fn task(spec_json: &str, path: &Path) -> Vec<u8> {
    let spec = SweepSpec::from_text(spec_json, true).unwrap();
    let plan = spec.resolve_one(path.to_path_buf()).unwrap();
    sweep::to_csv(&sweep::run_trace(&plan, path).unwrap()).unwrap()
}

#[test]
fn tasks_in_any_order_give_the_local_sweeps_bytes() {
    let dir = tempfile::tempdir().unwrap();
    traces(dir.path());
    let s = spec(&["*.txt"]);
    let plan = s.resolve(dir.path()).unwrap();
    let local = dir.path().join("local.csv");
    let options = LocalOptions {
        traces_at_once: 2,
        memory_budget_bytes: u64::MAX,
    };
    sweep::run_local(&plan, &local, options, &|_| {}).unwrap();

    let out = dir.path().join("driven.csv");
    let json = serde_json::to_string(&s).unwrap();
    let mut session = SweepSession::open(plan.clone(), &out).unwrap();
    let units = session.units().unwrap();
    assert_eq!(units.len(), 3);
    assert!(units.iter().all(|u| u.cells == 9 && u.missing == 9));
    // The last trace first, and the first one twice (a retried task that had finished).
    for (i, expected) in [(2, 9), (0, 9), (1, 9), (0, 0)] {
        let rows = sweep::from_csv(&task(&json, &units[i].path)).unwrap();
        assert!(rows.iter().all(|r| r.trace_digest == units[i].digest));
        assert_eq!(session.append(rows).unwrap(), expected);
    }
    let summary = session.finish().unwrap();
    assert_eq!((summary.rows_written, summary.rows_total), (27, 27));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&local).unwrap());
}

#[test]
fn a_reopened_session_sees_only_the_missing_cells() {
    let dir = tempfile::tempdir().unwrap();
    traces(dir.path());
    let s = spec(&["a.txt", "b.txt", "c.txt"]);
    let plan = s.resolve(dir.path()).unwrap();
    let json = serde_json::to_string(&s).unwrap();
    let out = dir.path().join("out.csv");
    let mut session = SweepSession::open(plan.clone(), &out).unwrap();
    let units = session.units().unwrap();
    // b's rows, and only the first four of c's, then the driver dies (no finish).
    session
        .append(sweep::from_csv(&task(&json, &units[1].path)).unwrap())
        .unwrap();
    let mut c = sweep::from_csv(&task(&json, &units[2].path)).unwrap();
    c.truncate(4);
    session.append(c).unwrap();
    drop(session);

    let mut session = SweepSession::open(plan, &out).unwrap();
    let missing: Vec<usize> = session.units().unwrap().iter().map(|u| u.missing).collect();
    assert_eq!(missing, [9, 0, 5]);
    for unit in session.units().unwrap() {
        if unit.missing > 0 {
            let rows = sweep::from_csv(&task(&json, &unit.path)).unwrap();
            assert_eq!(session.append(rows).unwrap(), unit.missing);
        }
    }
    let summary = session.finish().unwrap();
    assert_eq!(
        (
            summary.traces_skipped,
            summary.rows_written,
            summary.rows_total
        ),
        (1, 14, 27)
    );
}

#[test]
fn the_memory_estimate_counts_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    traces(dir.path());
    let plan = spec(&["a.txt"]).resolve(dir.path()).unwrap();
    // a.txt: 9 operations over 5 distinct keys.
    assert_eq!(
        sweep::trace_memory_estimate_bytes(&plan, &dir.path().join("a.txt")).unwrap(),
        sweep::memory_estimate_bytes(&plan, 9, 5)
    );
}
