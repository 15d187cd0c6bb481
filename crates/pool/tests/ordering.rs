//! Ordered writes through the public API, with the order reaching storage observed on a
//! `RecordingStorage`: levels and their syncs, group commit, duplicates and their bound,
//! a tiny pool where every dirty page is constrained, and the typed errors.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pool::{
    BufferPool, FaultKind, FaultOp, FileHandle, PoolError, RecordingStorage, StorageEvent, WriteId,
    WritePolicy,
};

const PS: usize = 4096;

/// A pool whose flusher never runs on its own (levels happen only when asked for).
fn quiet_pool(frames: usize, st: &RecordingStorage) -> BufferPool {
    BufferPool::builder()
        .capacity_frames(frames)
        .pin_limit(1)
        .read_ahead(0)
        .policy("fifo")
        .write_policy(WritePolicy::WriteBack {
            interval: Duration::from_secs(3600),
            age: Duration::from_secs(3600),
        })
        .build_with_storage(st.clone())
        .unwrap()
}

/// The writes and syncs after log position `from`, as (path, offset) and ("sync", path).
fn trace(st: &RecordingStorage, from: usize) -> Vec<(String, Option<u64>)> {
    st.log()[from..]
        .iter()
        .filter_map(|e| match e {
            StorageEvent::Write { path, offset, .. } => Some((show(path), Some(*offset))),
            StorageEvent::Sync { path } => Some((show(path), None)),
            StorageEvent::SetLen { .. } => None,
        })
        .collect()
}

fn show(p: &Path) -> String {
    p.display().to_string()
}

fn w(p: &str, off: u64) -> (String, Option<u64>) {
    (p.to_string(), Some(off))
}

fn sync(p: &str) -> (String, Option<u64>) {
    (p.to_string(), None)
}

/// Two transactions, log records on one page, data on two pages: waiting for the second
/// commit writes one level (the log page, both records combined) and syncs the log; the
/// data pages follow in the next level, only when asked for. Both data writes follow the
/// one combined log node and nothing else, so they are one node too (combined by
/// dependency): waiting for the second makes both durable, in one level.
#[test]
fn a_commit_writes_its_log_level_and_syncs_it_then_the_data_follows() {
    let st = RecordingStorage::new();
    let pool = quiet_pool(16, &st);
    let log = pool.create("/log").unwrap();
    let data = pool.create("/data").unwrap();
    let l1 = pool.graph_write(log, 0, &[1; 100], &[]).unwrap();
    pool.graph_write(data, 0, &[1; 10], &[l1]).unwrap();
    let l2 = pool.graph_write(log, 100, &[2; 100], &[]).unwrap();
    let d2 = pool.graph_write(data, PS as u64, &[2; 10], &[l2]).unwrap();
    let from = st.log_len();
    pool.wait_durable(l2).unwrap();
    assert_eq!(trace(&st, from), [w("/log", 0), sync("/log")]);
    let s = pool.ordering_stats();
    assert_eq!((s.levels, s.syncs, s.pages_written), (1, 1, 1));
    let from = st.log_len();
    pool.wait_durable(d2).unwrap();
    // what d2 needs: its node's pages, d1's with its own, and one sync
    assert_eq!(
        trace(&st, from),
        [w("/data", 0), w("/data", PS as u64), sync("/data")]
    );
    assert_eq!(pool.ordering_stats().levels, 2);
    let from = st.log_len();
    pool.sync_all().unwrap();
    // nothing ordered is left: sync_all only syncs each file
    assert_eq!(trace(&st, from), [sync("/log"), sync("/data")]);
    assert_eq!(pool.ordering_stats().tagged_frames, 0);
}

/// Barriers: a page written before and after a barrier is duplicated; the old version is
/// written and synced before the new one.
#[test]
fn a_page_rewritten_after_a_barrier_is_written_twice_in_order() {
    let st = RecordingStorage::new();
    let pool = quiet_pool(8, &st);
    let f = pool.create("/f").unwrap();
    pool.write(f, 0, &[1; 10]).unwrap();
    let b = pool.barrier().unwrap();
    pool.write(f, 0, &[2; 10]).unwrap();
    pool.barrier().unwrap();
    assert_eq!(pool.ordering_stats().duplicates_held, 1);
    let from = st.log_len();
    pool.sync_all().unwrap();
    let log = st.log()[from..].to_vec();
    let versions: Vec<u8> = log
        .iter()
        .filter_map(|e| match e {
            StorageEvent::Write { data, .. } => Some(data[0]),
            _ => None,
        })
        .collect();
    assert_eq!(versions, [1, 2], "old version first");
    assert_eq!(
        trace(&st, from),
        [w("/f", 0), sync("/f"), w("/f", 0), sync("/f"), sync("/f")]
    );
    pool.wait_durable(b).unwrap();
    let s = pool.ordering_stats();
    assert_eq!((s.duplicates_made, s.duplicates_held), (1, 0));
}

/// Four frames, every one dirty with data that must follow a log record on another page:
/// a miss cannot evict a clean page, so it writes a level itself (the log first) instead
/// of waiting forever; the data pages, leaves then, leave as plain dirty pages.
#[test]
fn a_tiny_pool_whose_dirty_pages_are_all_constrained_writes_the_dependencies_first() {
    let st = RecordingStorage::new();
    let pool = quiet_pool(4, &st);
    let log = pool.create("/log").unwrap();
    let data = pool.create("/data").unwrap();
    let l = pool.graph_write(log, 0, &[9; 64], &[]).unwrap();
    for p in 0..3u64 {
        pool.graph_write(data, p * PS as u64, &[p as u8 + 1; PS], &[l])
            .unwrap();
    }
    assert_eq!(pool.ordering_stats().tagged_frames, 4);
    let from = st.log_len();
    // a fifth page: needs a frame
    pool.write(data, 3 * PS as u64, &[4; PS]).unwrap();
    // one level: the log page, synced; now clean, it is the frame the miss takes
    assert_eq!(trace(&st, from), [w("/log", 0), sync("/log")]);
    assert!(!pool.is_resident(log, 0).unwrap());
    // more pages: the data pages followed only the log record, now durable, and nothing
    // follows them, so that level released them as plain dirty pages: the misses write
    // them as dirty victims, with no sync of the data file
    let from = st.log_len();
    for p in 4..8u64 {
        pool.graph_write(data, p * PS as u64, &[p as u8 + 1; PS], &[l])
            .unwrap();
    }
    let t = trace(&st, from);
    assert!(
        t.contains(&w("/data", 0)) && !t.contains(&sync("/data")),
        "{t:?}"
    );
    assert!(pool.ordering_stats().versions_released >= 3);
    pool.sync_all().unwrap();
    let mut back = vec![0u8; 8 * PS];
    pool.read(data, 0, &mut back).unwrap();
    for p in 0..8 {
        assert!(back[p * PS..(p + 1) * PS].iter().all(|&b| b == p as u8 + 1));
    }
}

/// Duplicates are bounded by a quarter of the frames: with 8 frames, the third barrier
/// duplicate makes the writer write levels first.
#[test]
fn duplicates_stay_within_their_bound() {
    let st = RecordingStorage::new();
    let pool = quiet_pool(8, &st);
    let f = pool.create("/f").unwrap();
    for round in 0..10u8 {
        pool.write(f, 0, &[round; 10]).unwrap();
        pool.barrier().unwrap();
        assert!(pool.ordering_stats().duplicates_held <= 2, "round {round}");
    }
    assert!(pool.ordering_stats().duplicates_made >= 8);
    pool.sync_all().unwrap();
    assert_eq!(st.contents(Path::new("/f")).unwrap(), [9; 10]);
}

#[test]
fn unknown_and_foreign_write_ids_are_refused() {
    let st = RecordingStorage::new();
    let a = quiet_pool(8, &st);
    let b = quiet_pool(8, &st);
    let fa = a.create("/a").unwrap();
    let fb = b.create("/b").unwrap();
    let ida = a.graph_write(fa, 0, b"x", &[]).unwrap();
    assert!(matches!(
        b.graph_write(fb, 0, b"y", &[ida]),
        Err(PoolError::UnknownWrite { .. })
    ));
    assert!(matches!(
        b.wait_durable(ida),
        Err(PoolError::UnknownWrite { .. })
    ));
    // durable dependencies are satisfied, not refused
    a.wait_durable(ida).unwrap();
    a.graph_write(fa, 1, b"z", &[ida]).unwrap();
}

#[test]
fn a_barrier_inside_a_pin_mut_is_refused() {
    let st = RecordingStorage::new();
    let pool = quiet_pool(8, &st);
    let f = pool.create("/p").unwrap();
    pool.write(f, 0, &[0; PS]).unwrap();
    let g = pool.pin_mut(f, 0).unwrap();
    assert!(matches!(
        pool.barrier(),
        Err(PoolError::BarrierInsidePin { pinned: 1 })
    ));
    drop(g);
    pool.barrier().unwrap();
}

/// An I/O error in the middle of a level reaches the waiter; the pool keeps the data and
/// the next wait writes it.
#[test]
fn a_write_error_in_a_level_reaches_the_waiter_and_is_retried() {
    let st = RecordingStorage::new();
    let pool = quiet_pool(8, &st);
    let log = pool.create("/log").unwrap();
    let data = pool.create("/data").unwrap();
    let l = pool.graph_write(log, 0, &[7; 50], &[]).unwrap();
    let d = pool.graph_write(data, 0, &[8; 50], &[l]).unwrap();
    st.inject_path("/log", FaultOp::Write, FaultKind::Eio, 0, 1);
    match pool.wait_durable(d) {
        Err(PoolError::OrderedWriteFailed { id, message }) => {
            assert_eq!(id, d.get());
            assert!(message.contains("write /log"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        !st.log().iter().any(
            |e| matches!(e, StorageEvent::Write { path, .. } if path == &PathBuf::from("/data"))
        ),
        "the data did not go before its log"
    );
    pool.wait_durable(d).unwrap();
    assert_eq!(st.contents(Path::new("/data")).unwrap(), [8; 50]);
    // a sync error too: the written version is not durable until a later sync succeeds
    let l2 = pool.graph_write(log, 50, &[9; 50], &[]).unwrap();
    st.inject_path("/log", FaultOp::Sync, FaultKind::Eio, 0, 1);
    assert!(matches!(
        pool.wait_durable(l2),
        Err(PoolError::OrderedWriteFailed { .. })
    ));
    pool.wait_durable(l2).unwrap();
}

/// Group commit under contention: four threads each commit transactions and wait. Every
/// commit is durable when acknowledged and the log holds every record at the end; at most
/// one log sync per commit (levels batch the records of the transactions waiting at once;
/// how many depends on the scheduling, so the count is printed, not asserted).
#[test]
fn concurrent_commits_share_levels() {
    let st = RecordingStorage::new();
    let pool = quiet_pool(64, &st);
    let log = pool.create("/log").unwrap();
    let data = pool.create("/data").unwrap();
    let next = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (pool, next) = (&pool, &next);
            s.spawn(move || {
                for i in 0..50u64 {
                    let at = next.fetch_add(64, std::sync::atomic::Ordering::Relaxed);
                    let l = pool.graph_write(log, at, &[t as u8; 64], &[]).unwrap();
                    pool.graph_write(data, (t * 50 + i) * 8, &[1; 8], &[l])
                        .unwrap();
                    pool.wait_durable(l).unwrap();
                }
            });
        }
    });
    let syncs = st
        .log()
        .iter()
        .filter(|e| matches!(e, StorageEvent::Sync { path } if path == &PathBuf::from("/log")))
        .count();
    eprintln!("200 commits, {syncs} log syncs");
    assert!(syncs <= 200);
    pool.sync_all().unwrap();
    assert_eq!(pool.ordering_stats().tagged_frames, 0);
    let on_disk = st.contents(Path::new("/log")).unwrap();
    assert_eq!(on_disk.len(), 200 * 64);
    for t in 0..4u8 {
        let records = on_disk
            .chunks(64)
            .filter(|r| r.iter().all(|&b| b == t))
            .count();
        assert_eq!(records, 50, "thread {t}");
    }
}

/// Ordered writes on frames a resize added: each frame's "carries ordered data" bit lives
/// with its chunk, so grown frames have one (the first merge of resizing and ordering
/// indexed a bitmap sized at build time and panicked here).
#[test]
fn ordered_writes_land_on_frames_added_by_a_resize() {
    let st = RecordingStorage::new();
    let pool = quiet_pool(8, &st);
    pool.resize(200).unwrap();
    let log = pool.create("/log").unwrap();
    let data = pool.create("/data").unwrap();
    let mut last = None;
    // 150 data pages: most land on frames beyond the 64 one bitmap word of 8 frames held.
    for page in 0..150u64 {
        let l = pool
            .graph_write(log, page * 16, &[page as u8; 16], &[])
            .unwrap();
        last = Some(
            pool.graph_write(data, page * PS as u64, &[page as u8; 8], &[l])
                .unwrap(),
        );
    }
    // Frames that carried ordered data: those that still do, and the data leaves the
    // flusher may have released already (it writes a level once half the frames are
    // tagged); each data page is written once, so no frame counts twice.
    let o = pool.ordering_stats();
    assert!(o.tagged_frames as u64 + o.versions_released > 64, "{o:?}");
    pool.wait_durable(last.unwrap()).unwrap();
    pool.sync_all().unwrap();
    assert_eq!(pool.ordering_stats().tagged_frames, 0);
    // Every data page reached storage after the log write it depends on.
    let log_events = st.log();
    let last_log_sync = log_events
        .iter()
        .position(|e| matches!(e, StorageEvent::Sync { path } if show(path) == "/log"))
        .unwrap();
    let first_data_write = log_events
        .iter()
        .position(|e| matches!(e, StorageEvent::Write { path, .. } if show(path) == "/data"))
        .unwrap();
    assert!(
        last_log_sync < first_data_write,
        "the log is durable before any data"
    );
}

/// A quiet pool of 16 frames over `st` with a log record `l` (7s at /log offset 0) and a
/// data write `d` (8s at /data offset 0) that follows it: once `l` is durable, `d` is a
/// leaf that may leave as a plain dirty page. Returns the pool, the two files, `l`, `d`.
fn log_and_leaf(st: &RecordingStorage) -> (BufferPool, FileHandle, FileHandle, WriteId, WriteId) {
    let pool = quiet_pool(16, st);
    let log = pool.create("/log").unwrap();
    let data = pool.create("/data").unwrap();
    let l = pool.graph_write(log, 0, &[7; 50], &[]).unwrap();
    let d = pool.graph_write(data, 0, &[8; 50], &[l]).unwrap();
    (pool, log, data, l, d)
}

/// A data write that only follows its log record is a leaf: once the log is durable it
/// leaves as a plain dirty page (no level, no sync of the data file), and is counted
/// durable only after a later sync of its file, which a wait for it forces.
#[test]
fn a_released_leaf_is_durable_only_after_a_later_sync_of_its_file() {
    let st = RecordingStorage::new();
    let (pool, _log, _data, l, d) = log_and_leaf(&st);
    let from = st.log_len();
    pool.wait_durable(l).unwrap();
    assert_eq!(trace(&st, from), [w("/log", 0), sync("/log")]);
    let s = pool.ordering_stats();
    assert_eq!(
        (s.versions_released, s.released_unconfirmed, s.tagged_frames),
        (1, 1, 0),
        "the data page is a plain dirty page now"
    );
    let from = st.log_len();
    pool.wait_durable(d).unwrap();
    assert_eq!(trace(&st, from), [w("/data", 0), sync("/data")]);
    assert_eq!(pool.ordering_stats().released_unconfirmed, 0);
    assert_eq!(st.contents(Path::new("/data")).unwrap(), [8; 50]);
}

/// A write that names a released leaf as its dependency after the release: the leaf is
/// written and its file synced first, then the new write, in the next level.
#[test]
fn a_dependent_of_a_released_leaf_waits_for_the_leafs_sync() {
    let st = RecordingStorage::new();
    let (pool, _log, data, l, d) = log_and_leaf(&st);
    pool.wait_durable(l).unwrap();
    assert_eq!(pool.ordering_stats().released_unconfirmed, 1);
    let e = pool.graph_write(data, PS as u64, &[9; 50], &[d]).unwrap();
    let from = st.log_len();
    pool.wait_durable(e).unwrap();
    assert_eq!(
        trace(&st, from),
        [
            w("/data", 0),
            sync("/data"),
            w("/data", PS as u64),
            sync("/data")
        ]
    );
}

/// A released page written again by an ordered write: the released version is taken
/// back and combines with the new one (nothing must come between them), so one level
/// writes the page with both.
#[test]
fn a_released_page_written_again_combines_with_the_new_version() {
    let st = RecordingStorage::new();
    let (pool, log, data, l, d) = log_and_leaf(&st);
    pool.wait_durable(l).unwrap();
    let l2 = pool.graph_write(log, 50, &[5; 50], &[]).unwrap();
    let d2 = pool.graph_write(data, 50, &[6; 50], &[l2]).unwrap();
    let s = pool.ordering_stats();
    assert_eq!(
        (s.released_unconfirmed, s.tagged_frames),
        (0, 2),
        "taken back"
    );
    let from = st.log_len();
    pool.wait_durable(d).unwrap();
    assert_eq!(
        trace(&st, from),
        [w("/log", 0), sync("/log"), w("/data", 0), sync("/data")]
    );
    pool.wait_durable(d2).unwrap();
    let mut want = vec![8; 50];
    want.extend([6; 50]);
    assert_eq!(st.contents(Path::new("/data")).unwrap(), want);
}

/// The write of a released leaf fails: its waiter gets the error, the page stays dirty,
/// and the next wait writes and syncs it.
#[test]
fn a_failed_write_of_a_released_leaf_reaches_its_waiter() {
    let st = RecordingStorage::new();
    let (pool, _log, _data, l, d) = log_and_leaf(&st);
    pool.wait_durable(l).unwrap();
    st.inject_path("/data", FaultOp::Write, FaultKind::Eio, 0, 1);
    match pool.wait_durable(d) {
        Err(PoolError::OrderedWriteFailed { id, message }) => {
            assert_eq!(id, d.get());
            assert!(message.contains("write /data"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pool.ordering_stats().released_unconfirmed, 1);
    st.inject_path("/data", FaultOp::Sync, FaultKind::Eio, 0, 1);
    assert!(matches!(
        pool.wait_durable(d),
        Err(PoolError::OrderedWriteFailed { .. })
    ));
    pool.wait_durable(d).unwrap();
    assert_eq!(st.contents(Path::new("/data")).unwrap(), [8; 50]);
}
