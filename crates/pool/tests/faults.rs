//! Fault injection: every storage error reaches the caller of the operation that needed
//! the write (or read), the page stays dirty, and a retry succeeds once the fault clears.

use std::path::Path;
use std::time::Duration;

use pool::{
    BufferPool, FaultKind, FaultOp, Lookup, PoolError, RecordingStorage, StorageEvent, WritePolicy,
};

const PS: usize = 4096;
const EIO: i32 = 5;
const ENOSPC: i32 = 28;

fn quiet_write_back() -> WritePolicy {
    WritePolicy::WriteBack {
        interval: Duration::from_secs(3600),
        age: Duration::from_secs(3600),
    }
}

fn pool(st: &RecordingStorage, wp: WritePolicy, lk: Lookup) -> BufferPool {
    BufferPool::builder()
        .capacity_frames(16)
        .read_ahead(0)
        .lookup(lk)
        .write_policy(wp)
        .build_with_storage(st.clone())
        .unwrap()
}

fn os_error(e: &PoolError) -> Option<i32> {
    e.io_error().and_then(|io| io.raw_os_error())
}

fn file(st: &RecordingStorage) -> Vec<u8> {
    st.contents(Path::new("/f")).unwrap()
}

#[test]
fn fsync_reports_eio_keeps_page_dirty_and_retries() {
    for lk in [Lookup::Mapped, Lookup::Hashed] {
        let st = RecordingStorage::new();
        let p = pool(&st, quiet_write_back(), lk);
        let f = p.create("/f").unwrap();
        p.write(f, 0, &vec![1u8; 2 * PS]).unwrap();
        st.inject(FaultOp::Write, FaultKind::Eio, 0, 1);
        let e = p.fsync(f).unwrap_err();
        assert_eq!(os_error(&e), Some(EIO), "{e}");
        assert!(e.to_string().contains("/f"), "path in error: {e}");
        // the two adjacent pages went in one call, which failed: both stay dirty, each
        // counted as a failed page write; nothing synced
        let s = p.stats();
        assert_eq!((s.write_calls, s.pages_written), (1, 0));
        assert_eq!(s.dirty_pages, 2);
        assert_eq!(s.write_errors, 2);
        assert!(!st
            .log()
            .iter()
            .any(|e| matches!(e, StorageEvent::Sync { .. })));
        // the fault is gone: the retry writes both pages (one call) and syncs
        p.fsync(f).unwrap();
        assert_eq!(p.stats().dirty_pages, 0);
        assert_eq!(file(&st), vec![1u8; 2 * PS]);
        assert!(matches!(st.log().last(), Some(StorageEvent::Sync { .. })));
    }
}

#[test]
fn short_write_and_enospc_are_errors_not_silent_losses() {
    let st = RecordingStorage::new();
    let p = pool(&st, quiet_write_back(), Lookup::Mapped);
    let f = p.create("/f").unwrap();
    p.write(f, 0, &vec![2u8; PS]).unwrap();
    st.inject(FaultOp::Write, FaultKind::ShortWrite, 0, 1);
    let e = p.fsync(f).unwrap_err();
    assert_eq!(
        e.io_error().map(|io| io.kind()),
        Some(std::io::ErrorKind::WriteZero),
        "{e}"
    );
    assert_eq!(p.stats().dirty_pages, 1);
    // half the page reached the file, but the page is still dirty and is rewritten whole
    assert_eq!(file(&st).len(), PS / 2);
    st.inject(FaultOp::Write, FaultKind::NoSpace, 0, 2);
    assert_eq!(os_error(&p.fsync(f).unwrap_err()), Some(ENOSPC));
    assert_eq!(os_error(&p.fsync(f).unwrap_err()), Some(ENOSPC));
    p.fsync(f).unwrap();
    assert_eq!(file(&st), vec![2u8; PS]);
}

#[test]
fn sync_failure_is_reported_and_retried() {
    let st = RecordingStorage::new();
    let p = pool(&st, quiet_write_back(), Lookup::Mapped);
    let f = p.create("/f").unwrap();
    p.write(f, 0, b"abc").unwrap();
    st.inject(FaultOp::Sync, FaultKind::Eio, 0, 1);
    assert_eq!(os_error(&p.fsync(f).unwrap_err()), Some(EIO));
    p.fsync(f).unwrap();
    let syncs = st
        .log()
        .iter()
        .filter(|e| matches!(e, StorageEvent::Sync { .. }))
        .count();
    assert_eq!(syncs, 1);
}

#[test]
fn write_through_write_returns_the_error_and_keeps_the_page() {
    let st = RecordingStorage::new();
    let p = pool(&st, WritePolicy::WriteThrough, Lookup::Hashed);
    let f = p.create("/f").unwrap();
    st.inject(FaultOp::Write, FaultKind::NoSpace, 0, 1);
    let e = p.write(f, 10, b"payload").unwrap_err();
    assert_eq!(os_error(&e), Some(ENOSPC));
    // the pool still has the bytes (readers see them) and the page is dirty
    let mut buf = [0u8; 7];
    assert_eq!(p.read(f, 10, &mut buf).unwrap(), 7);
    assert_eq!(&buf, b"payload");
    assert_eq!(p.stats().dirty_pages, 1);
    assert_eq!(file(&st).len(), 0);
    p.fsync(f).unwrap();
    assert_eq!(&file(&st)[10..], b"payload");
    // the next write-through write goes straight through
    p.write(f, 0, b"ok").unwrap();
    assert_eq!(&file(&st)[..2], b"ok");
}

#[test]
fn sync_all_reports_the_first_error_and_flushes_the_rest() {
    let st = RecordingStorage::new();
    let p = pool(&st, quiet_write_back(), Lookup::Mapped);
    let a = p.create("/a").unwrap();
    let b = p.create("/b").unwrap();
    p.write(a, 0, b"aaaa").unwrap();
    p.write(b, 0, b"bbbb").unwrap();
    st.inject(FaultOp::Write, FaultKind::Eio, 0, 1);
    assert_eq!(os_error(&p.sync_all().unwrap_err()), Some(EIO));
    assert_eq!(p.stats().dirty_pages, 1);
    p.sync_all().unwrap();
    assert_eq!(st.contents(Path::new("/a")).unwrap(), b"aaaa");
    assert_eq!(st.contents(Path::new("/b")).unwrap(), b"bbbb");
}

#[test]
fn failed_close_returns_the_error_and_keeps_the_file_open() {
    let st = RecordingStorage::new();
    let p = pool(&st, quiet_write_back(), Lookup::Mapped);
    let f = p.create("/f").unwrap();
    p.write(f, 0, b"precious").unwrap();
    st.inject(FaultOp::Write, FaultKind::Eio, 0, 1);
    assert_eq!(os_error(&p.close(f).unwrap_err()), Some(EIO));
    // still open and still holding the data
    let mut buf = [0u8; 8];
    assert_eq!(p.read(f, 0, &mut buf).unwrap(), 8);
    assert_eq!(&buf, b"precious");
    p.close(f).unwrap();
    assert_eq!(file(&st), b"precious");
    assert!(matches!(p.len(f), Err(PoolError::Closed(_))));
}

#[test]
fn eviction_that_must_write_reports_the_error_to_the_reader() {
    // 16 frames all dirty, storage refusing writes: a miss cannot get a frame and says why
    let st = RecordingStorage::new();
    let p = pool(&st, quiet_write_back(), Lookup::Mapped);
    let f = p.create("/f").unwrap();
    p.write(f, 0, &vec![3u8; 16 * PS]).unwrap();
    st.inject(FaultOp::Write, FaultKind::Eio, 0, usize::MAX);
    let e = p.write(f, 16 * PS as u64, b"more").unwrap_err();
    assert!(matches!(e, PoolError::WriteBackStalled { .. }), "{e:?}");
    assert_eq!(os_error(&e), Some(EIO));
    assert_eq!(p.stats().dirty_pages, 16);
    st.clear_faults();
    p.write(f, 16 * PS as u64, b"more").unwrap();
    p.fsync(f).unwrap();
    let disk = file(&st);
    assert!(disk[..16 * PS].iter().all(|&b| b == 3));
    assert_eq!(&disk[16 * PS..], b"more");
}

#[test]
fn read_errors_reach_the_reader_and_leave_nothing_cached() {
    let st = RecordingStorage::new();
    {
        let p = pool(&st, quiet_write_back(), Lookup::Hashed);
        let f = p.create("/f").unwrap();
        p.write(f, 0, &vec![4u8; PS]).unwrap();
        p.close(f).unwrap();
    }
    let p = pool(&st, quiet_write_back(), Lookup::Hashed);
    let f = p.open("/f").unwrap();
    st.inject(FaultOp::Read, FaultKind::Eio, 0, 1);
    let mut buf = [0u8; 4];
    assert_eq!(os_error(&p.read(f, 0, &mut buf).unwrap_err()), Some(EIO));
    assert_eq!(p.resident(f).unwrap().count(), 0);
    assert_eq!(p.read(f, 0, &mut buf).unwrap(), 4);
    assert_eq!(buf, [4; 4]);
}

#[test]
fn dropping_the_pool_flushes_and_syncs() {
    let st = RecordingStorage::new();
    {
        let p = pool(&st, quiet_write_back(), Lookup::Mapped);
        let f = p.create("/f").unwrap();
        p.write(f, 5, b"on drop").unwrap();
    }
    assert_eq!(&file(&st)[5..], b"on drop");
    assert!(matches!(st.log().last(), Some(StorageEvent::Sync { .. })));
}

#[test]
fn open_of_a_missing_file_is_an_io_error_with_the_path() {
    let st = RecordingStorage::new();
    let p = pool(&st, quiet_write_back(), Lookup::Mapped);
    let e = p.open("/missing").unwrap_err();
    assert!(matches!(&e, PoolError::Io { op: "open", path, .. } if path == Path::new("/missing")));
}

#[test]
fn a_failed_prefetch_read_is_returned_and_only_that_page_is_left_out() {
    let st = RecordingStorage::new();
    {
        let p = pool(&st, quiet_write_back(), Lookup::Mapped);
        let f = p.create("/f").unwrap();
        for page in 0..6u8 {
            p.write(f, u64::from(page) * PS as u64, &[page; PS])
                .unwrap();
        }
        p.close(f).unwrap();
    }
    let p = pool(&st, quiet_write_back(), Lookup::Mapped);
    let f = p.open("/f").unwrap();
    // the second read of the batch fails (memory storage reads in list order)
    st.inject(FaultOp::Read, FaultKind::Eio, 1, 1);
    let e = p.prefetch(f, &[0, 2, 4]).unwrap_err();
    assert_eq!(os_error(&e), Some(EIO));
    assert_eq!(
        p.resident(f).unwrap().iter().collect::<Vec<_>>(),
        vec![0, 4]
    );
    assert_eq!(p.stats().prefetched_pages, 2);
    // the page left out loads on demand, with the right bytes
    let mut b = [9u8; 3];
    assert_eq!(p.read(f, 2 * PS as u64, &mut b).unwrap(), 3);
    assert_eq!(b, [2; 3]);
    assert_eq!(p.pin(f, 4).unwrap()[0], 4);
}

/// One file on a full disk: its dirty pages stay dirty and its own `fsync` reports the
/// error, while misses on another file go on, evicting around the stuck pages.
#[test]
fn one_files_failing_writes_do_not_fail_another_files_misses() {
    let st = RecordingStorage::new();
    let p = pool(&st, quiet_write_back(), Lookup::Hashed);
    let (a, b) = (p.create("/a").unwrap(), p.create("/b").unwrap());
    p.write(a, 0, &vec![1u8; 64 * PS]).unwrap();
    p.fsync(a).unwrap();
    // 8 of 16 frames dirty with pages of /b, whose writes now fail
    p.write(b, 0, &vec![2u8; 8 * PS]).unwrap();
    st.inject_path("/b", FaultOp::Write, FaultKind::NoSpace, 0, usize::MAX);
    // reads and writes of /a keep missing, through every frame not held by /b
    let mut buf = vec![0u8; PS];
    for round in 0..3u8 {
        for page in 0..64u64 {
            assert_eq!(
                p.read(a, page * PS as u64, &mut buf).unwrap(),
                PS,
                "page {page}"
            );
            assert!(buf.iter().all(|&x| x == 1 || x == 10 + round - 1));
            p.write(a, page * PS as u64, &[10 + round]).unwrap();
        }
    }
    assert_eq!(
        p.stats().dirty_pages,
        8 + 8,
        "/b's 8 stay; 8 of /a's written last"
    );
    let e = p.fsync(b).unwrap_err();
    assert_eq!(os_error(&e), Some(ENOSPC));
    assert!(e.to_string().contains("/b"), "{e}");
    p.fsync(a).unwrap();
    st.clear_faults();
    p.fsync(b).unwrap();
    assert_eq!(st.contents(Path::new("/b")).unwrap(), vec![2u8; 8 * PS]);
    assert_eq!(p.stats().dirty_pages, 0);
}

/// When the only pages that could make room belong to a file whose writes fail, the miss
/// on another file says so, naming that file, instead of posing as its own I/O error.
#[test]
fn a_miss_stalled_by_another_files_writes_names_that_file() {
    let st = RecordingStorage::new();
    let p = pool(&st, quiet_write_back(), Lookup::Mapped);
    let (a, b) = (p.create("/a").unwrap(), p.create("/b").unwrap());
    p.write(a, 0, &[1u8; PS]).unwrap();
    p.fsync(a).unwrap();
    p.close(a).unwrap();
    p.write(b, 0, &vec![2u8; 16 * PS]).unwrap();
    st.inject_path("/b", FaultOp::Write, FaultKind::NoSpace, 0, usize::MAX);
    let a = p.open("/a").unwrap();
    let mut buf = [0u8; 8];
    match p.read(a, 0, &mut buf).unwrap_err() {
        PoolError::WriteBackStalled { source } => {
            assert!(source.to_string().contains("/b"), "{source}");
            assert_eq!(
                source.io_error().and_then(|e| e.raw_os_error()),
                Some(ENOSPC)
            );
        }
        e => panic!("{e:?}"),
    }
    st.clear_faults();
    assert_eq!(p.read(a, 0, &mut buf).unwrap(), 8);
    assert_eq!(buf, [1u8; 8]);
}
