//! The proof of ordered writes: record small TPC-B-like runs (a log record, then a data
//! record that must follow it, per transaction) through the pool with graph writes or with
//! barriers, rebuild every crash state of each run (`common/mod.rs`: every prefix of the
//! writes respecting the syncs, and reorderings of the writes after them), and feed each
//! state to the one ordering checker the simulator uses too (`bufcache_core::ordering`):
//!
//! * graphs: no data record is on disk without its transaction's log record;
//! * barriers: no write of epoch N+1 is on disk without every write of epoch N;
//! * both: a commit acknowledged by `wait_durable` survives every later crash.
//!
//! Which logical writes a disk write carries is read from its bytes (every record has a
//! value of its own): the records it shows, and the earlier records at the same place
//! that they overwrote (combined into the same page version). Nothing is taken from the
//! pool's own bookkeeping, so a bug in it cannot hide itself.
//!
//! Two broken variants must be caught: the same workload written without ordering, and
//! a correct run's log with its syncs removed (a disk that reorders everything).
//!
//! The runs explore: each test draws a fresh seed unless `BUFCACHE_SEED` is set, and prints
//! it (see `docs/TESTING.md`).

use crate::common;

use std::path::Path;
use std::time::Duration;

use bufcache_core::ordering::Checker;
use pool::{
    BufferPool, IoMode, Lookup, OrderingFault, RecordingStorage, StorageEvent, WriteId, WritePolicy,
};
use testutil::{Rng, Seed};

const PS: usize = 4096;
/// A log record: eight to a page, so records of several transactions share a page.
const LOG_RECORD: usize = 512;
/// A data record: four to a page, over three pages, so transactions update the same
/// record and the same page again.
const DATA_RECORD: usize = 1024;
const DATA_RECORDS: usize = 12;
const TRANSACTIONS: usize = 40;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `graph_write` the log record, then the data record after it.
    Graph,
    /// As `Graph`, and half the data records also follow an earlier transaction's data
    /// record (often released as a plain page by then: a leaf that gains a dependent),
    /// and some commits wait for the previous transaction's data record (a waiter on a
    /// leaf).
    GraphChained,
    /// Log record, `barrier()`, data record, `barrier()`.
    Barrier,
    /// Plain writes in the same order, no ordering (the broken variant).
    Unordered,
}

/// One logical write, as the test knows it.
#[derive(Clone, Debug)]
struct Logical {
    file: u32,
    offset: usize,
    len: usize,
    value: u8,
    epoch: u64,
    graph_id: Option<u32>,
    deps: Vec<u32>,
}

const FILES: [&str; 2] = ["/log", "/data"];

struct Recorded {
    log: Vec<StorageEvent>,
    writes: Vec<Logical>,
    /// (log length when `wait_durable` returned, the logical write acknowledged).
    acks: Vec<(usize, usize)>,
    /// Leaf versions the pool released as plain dirty pages.
    released: u64,
}

#[derive(Clone, Copy, Debug)]
struct Setup {
    mode: Mode,
    frames: usize,
    eager: bool,
    io: IoMode,
    lookup: Lookup,
    /// A deliberately broken release rule (the checker must catch it).
    fault: Option<OrderingFault>,
}

fn run(seed: Seed, s: Setup) -> Recorded {
    let st = RecordingStorage::new();
    let wp = if s.eager {
        WritePolicy::WriteBack {
            interval: Duration::from_micros(200),
            age: Duration::ZERO,
        }
    } else {
        WritePolicy::WriteBack {
            interval: Duration::from_secs(3600),
            age: Duration::from_secs(3600),
        }
    };
    let mut builder = BufferPool::builder();
    if let Some(f) = s.fault {
        builder = builder.ordering_fault(f);
    }
    let pool = builder
        .capacity_frames(s.frames)
        .pin_limit(1)
        .read_ahead(0)
        .policy("fifo")
        .lookup(s.lookup)
        .io_mode(s.io)
        .write_policy(wp)
        .build_with_storage(st.clone())
        .unwrap();
    let log = pool.create(FILES[0]).unwrap();
    let data = pool.create(FILES[1]).unwrap();
    pool.write(data, 0, &vec![0u8; DATA_RECORD * DATA_RECORDS])
        .unwrap();
    pool.sync_all().unwrap();
    let mut rng = seed.rng();
    let mut writes = Vec::new();
    let mut acks = Vec::new();
    let mut data_ids: Vec<WriteId> = Vec::new();
    for t in 0..TRANSACTIONS {
        let value = t as u8 + 1;
        let log_off = t * LOG_RECORD;
        let slot = rng.gen_range(0..DATA_RECORDS);
        let data_off = slot * DATA_RECORD;
        let (log_id, data_id) = (2 * t as u32, 2 * t as u32 + 1);
        // GraphChained: the earlier transaction this one's data record also follows.
        let after = (s.mode == Mode::GraphChained && t > 0 && rng.gen_range(0..2) == 0)
            .then(|| rng.gen_range(t.saturating_sub(4)..t));
        let epoch = if s.mode == Mode::Barrier {
            2 * t as u64
        } else {
            0
        };
        writes.push(Logical {
            file: 0,
            offset: log_off,
            len: LOG_RECORD,
            value,
            epoch,
            graph_id: Some(log_id),
            deps: vec![],
        });
        writes.push(Logical {
            file: 1,
            offset: data_off,
            len: DATA_RECORD,
            value,
            epoch: if s.mode == Mode::Barrier {
                epoch + 1
            } else {
                0
            },
            graph_id: Some(data_id),
            deps: std::iter::once(log_id)
                .chain(after.map(|a| 2 * a as u32 + 1))
                .collect(),
        });
        let commit: Option<WriteId> = match s.mode {
            Mode::Graph => {
                let l = pool
                    .graph_write(log, log_off as u64, &[value; LOG_RECORD], &[])
                    .unwrap();
                pool.graph_write(data, data_off as u64, &[value; DATA_RECORD], &[l])
                    .unwrap();
                Some(l)
            }
            Mode::GraphChained => {
                let l = pool
                    .graph_write(log, log_off as u64, &[value; LOG_RECORD], &[])
                    .unwrap();
                let deps: Vec<WriteId> = std::iter::once(l)
                    .chain(after.map(|a| data_ids[a]))
                    .collect();
                let d = pool
                    .graph_write(data, data_off as u64, &[value; DATA_RECORD], &deps)
                    .unwrap();
                data_ids.push(d);
                // a third of the commits wait for their log record (the test below);
                // another third for the previous transaction's data record, a leaf
                // often released as a plain page by now
                if t > 0 && rng.gen_range(0..3) == 0 {
                    pool.wait_durable(data_ids[t - 1]).unwrap();
                    acks.push((st.log_len(), writes.len() - 3));
                }
                Some(l)
            }
            Mode::Barrier => {
                pool.write(log, log_off as u64, &[value; LOG_RECORD])
                    .unwrap();
                let b = pool.barrier().unwrap();
                pool.write(data, data_off as u64, &[value; DATA_RECORD])
                    .unwrap();
                pool.barrier().unwrap();
                Some(b)
            }
            Mode::Unordered => {
                pool.write(log, log_off as u64, &[value; LOG_RECORD])
                    .unwrap();
                pool.write(data, data_off as u64, &[value; DATA_RECORD])
                    .unwrap();
                None
            }
        };
        if let Some(id) = commit.filter(|_| rng.gen_range(0..3) == 0) {
            pool.wait_durable(id).unwrap();
            acks.push((st.log_len(), writes.len() - 2));
        }
    }
    let released = pool.ordering_stats().versions_released;
    pool.sync_all().unwrap();
    // the final state holds every record
    let on_disk = st.contents(Path::new(FILES[0])).unwrap();
    assert_eq!(on_disk.len(), TRANSACTIONS * LOG_RECORD);
    for w in &writes {
        let bytes = st.contents(Path::new(FILES[w.file as usize])).unwrap();
        if w.file == 0 {
            assert!(bytes[w.offset..w.offset + w.len]
                .iter()
                .all(|&b| b == w.value));
        }
    }
    drop(pool);
    Recorded {
        log: st.log(),
        writes,
        acks,
        released,
    }
}

/// The logical writes a disk write carries: the records whose bytes it shows, and the
/// earlier records at the same place they overwrote.
fn carried(ev: &StorageEvent, writes: &[Logical]) -> Vec<u32> {
    let StorageEvent::Write { path, offset, data } = ev else {
        return Vec::new();
    };
    let file = FILES.iter().position(|f| Path::new(f) == path).unwrap() as u32;
    let (start, end) = (*offset as usize, *offset as usize + data.len());
    let mut out = Vec::new();
    for (i, w) in writes.iter().enumerate() {
        if w.file != file || w.offset < start || w.offset + w.len > end {
            continue;
        }
        let shown = &data[w.offset - start..w.offset - start + w.len];
        if shown.iter().all(|&b| b == w.value) {
            out.extend(
                writes[..=i]
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.file == file && e.offset == w.offset)
                    .map(|(j, _)| j as u32),
            );
        }
    }
    out
}

/// Check every crash state; returns (states, violations found).
fn check(r: &Recorded) -> (usize, u64) {
    let mine = |e: &StorageEvent| FILES.iter().any(|f| Path::new(f) == common::path_of(e));
    let carried_by: Vec<Vec<u32>> = r.log.iter().map(|e| carried(e, &r.writes)).collect();
    let mut violations = 0;
    let mut first = None;
    let states = common::for_each_crash_state(&r.log, mine, |c, order, _| {
        let mut checker = Checker::new(FILES.len());
        for w in &r.writes {
            checker.record(w.file, w.epoch, w.graph_id, &w.deps);
        }
        for &i in order {
            checker.reached_disk(&carried_by[i], i as u64, c as u64);
        }
        for &(at, logical) in &r.acks {
            if at <= c && !checker.is_durable(logical as u32) {
                violations += 1;
                first.get_or_insert_with(|| {
                    format!("crash point {c}: acknowledged commit {logical} not on disk")
                });
            }
        }
        if checker.violations() > 0 {
            violations += checker.violations();
            first.get_or_insert_with(|| {
                format!(
                    "crash point {c}, events {order:?}: {:?}",
                    checker.first_violation()
                )
            });
        }
    });
    if let Some(f) = first {
        eprintln!("first violation: {f}");
    }
    (states, violations)
}

fn setups(mode: Mode) -> Vec<Setup> {
    let mut out = Vec::new();
    for (frames, eager) in [(4, false), (4, true), (16, false), (16, true)] {
        for io in [IoMode::Buffered, IoMode::Direct] {
            out.push(Setup {
                mode,
                frames,
                eager,
                io,
                lookup: if frames == 4 {
                    Lookup::Mapped
                } else {
                    Lookup::Hashed
                },
                fault: None,
            });
        }
    }
    out
}

fn prove(mode: Mode) {
    testutil::explore(|root| {
        let (mut states, mut released) = (0, 0);
        for (i, setup) in setups(mode).into_iter().enumerate() {
            for k in 0..3 {
                let r = run(root.derive(10 * i as u64 + k), setup);
                let (n, violations) = check(&r);
                assert_eq!(violations, 0, "{setup:?}, run {k}");
                states += n;
                released += r.released;
            }
        }
        eprintln!("checked {states} crash states, {released} leaf versions released");
        // 48 runs: about 5,000 states for graphs, more for barriers (their levels are larger)
        assert!(states > 3_000, "only {states} crash states checked");
        if mode != Mode::Barrier {
            assert!(
                released > 100,
                "the runs released {released} leaves: path not covered"
            );
        }
    });
}

/// Violations found in runs of `mode` with a broken release rule, over every setup.
fn violations_with(mode: Mode, fault: OrderingFault, root: Seed) -> u64 {
    let mut violations = 0;
    for (i, setup) in setups(mode).into_iter().enumerate() {
        let setup = Setup {
            fault: Some(fault),
            ..setup
        };
        violations += check(&run(root.derive(i as u64), setup)).1;
    }
    violations
}

#[test]
#[cfg_attr(miri, ignore = "thousands of crash states: hours under Miri")]
fn graph_writes_never_put_data_before_its_log_in_any_crash_state() {
    prove(Mode::Graph);
}

/// Released leaves that gain dependents and waiters: the dependent is never on storage
/// before the released leaf, and a leaf acknowledged by `wait_durable` survives.
#[test]
#[cfg_attr(miri, ignore = "thousands of crash states: hours under Miri")]
fn released_leaves_that_gain_dependents_and_waiters_keep_the_order_in_any_crash_state() {
    prove(Mode::GraphChained);
}

/// Broken: leaves released before their dependencies are durable (a data page written as
/// a plain page before its log record is synced). The checker must object.
#[test]
#[cfg_attr(miri, ignore = "thousands of crash states: hours under Miri")]
fn the_checker_catches_leaves_released_before_their_dependencies() {
    testutil::explore(|root| {
        let v = violations_with(Mode::Graph, OrderingFault::ReleaseBeforeDependencies, root);
        assert!(v > 0, "a release before the log record went unnoticed");
    });
}

/// Broken: a page's needs recorded as its last write's only (a data page written again by
/// a transaction whose log record came after the first one's: released once the second
/// record is durable, with the first one's data in it, though the first record may not
/// be). The checker must object.
#[test]
#[cfg_attr(miri, ignore = "thousands of crash states: hours under Miri")]
fn the_checker_catches_pages_released_on_their_last_writes_needs_only() {
    testutil::explore(|root| {
        let v = violations_with(Mode::Graph, OrderingFault::FrameNeedsOfLastWriteOnly, root);
        assert!(
            v > 0,
            "a page released with an earlier write's log record pending went unnoticed"
        );
    });
}

/// Broken: a released leaf counted durable at once, before any sync of its file (its
/// dependents are then written before it is on storage, and its waiters are answered
/// too early). The checker must object.
#[test]
#[cfg_attr(miri, ignore = "thousands of crash states: hours under Miri")]
fn the_checker_catches_released_leaves_counted_durable_without_a_sync() {
    testutil::explore(|root| {
        let v = violations_with(Mode::GraphChained, OrderingFault::ConfirmWithoutSync, root);
        assert!(v > 0, "a leaf confirmed without a sync went unnoticed");
    });
}

#[test]
#[cfg_attr(miri, ignore = "thousands of crash states: hours under Miri")]
fn barriers_never_let_an_epoch_overtake_the_one_before_in_any_crash_state() {
    prove(Mode::Barrier);
}

/// The same workload without ordering: with a busy flusher and a tiny pool, the checker
/// must find a data record on disk without its log record.
#[test]
#[cfg_attr(miri, ignore = "thousands of crash states: hours under Miri")]
fn the_checker_catches_writes_without_ordering() {
    testutil::explore(|root| {
        let mut violations = 0;
        for (i, setup) in setups(Mode::Unordered).into_iter().enumerate() {
            violations += check(&run(root.derive(i as u64), setup)).1;
        }
        assert!(violations > 0, "no violation found without ordering");
    });
}

/// A correct graph run, replayed on a disk that ignores syncs (every sync but the last
/// removed from the log): the checker must object.
#[test]
#[cfg_attr(miri, ignore = "thousands of crash states: hours under Miri")]
fn the_checker_catches_a_disk_that_ignores_syncs() {
    testutil::explore(|root| {
        let setup = setups(Mode::Graph)[0];
        let mut r = run(root, setup);
        assert_eq!(check(&r).1, 0);
        let last_sync = r
            .log
            .iter()
            .rposition(|e| matches!(e, StorageEvent::Sync { .. }))
            .unwrap();
        let mut i = 0;
        r.log.retain(|e| {
            i += 1;
            i - 1 == last_sync || !matches!(e, StorageEvent::Sync { .. })
        });
        assert!(check(&r).1 > 0, "reordered writes went unnoticed");
    });
}

/// `carried` reads records from bytes: a page showing record 3 over record 1 carries both,
/// a page showing zeros carries nothing.
#[test]
fn carried_writes_are_read_from_the_bytes() {
    let w = |offset, value| Logical {
        file: 1,
        offset,
        len: DATA_RECORD,
        value,
        epoch: 0,
        graph_id: None,
        deps: vec![],
    };
    let writes = vec![w(0, 1), w(DATA_RECORD, 2), w(0, 3)];
    let mut page = vec![0u8; PS];
    page[..DATA_RECORD].fill(3);
    let ev = StorageEvent::Write {
        path: FILES[1].into(),
        offset: 0,
        data: page,
    };
    assert_eq!(carried(&ev, &writes), [0, 2]);
    let zeros = StorageEvent::Write {
        path: FILES[1].into(),
        offset: 0,
        data: vec![0; PS],
    };
    assert!(carried(&zeros, &writes).is_empty());
}
