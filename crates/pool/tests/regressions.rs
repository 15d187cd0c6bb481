//! One test per data-loss race, deadlock and wrong error an audit found in the pool's
//! length and lifecycle paths (`set_len`, `close`, `O_DIRECT` trims). Races are provoked by
//! repetition with an eager flusher and a churning second thread; hangs are caught by a
//! watchdog that fails the test within seconds. `tests/chaos/` is the broad net; these
//! pin down each finding.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use pool::{
    BufferPool, IoMode, Lookup, MemStorage, OpenMode, PoolError, Storage, StorageFile, WritePolicy,
};

const PS: usize = 4096;

/// A flusher that runs all the time and writes every dirty page at once.
fn eager() -> WritePolicy {
    WritePolicy::WriteBack {
        interval: Duration::from_micros(100),
        age: Duration::ZERO,
    }
}

fn pool(st: &MemStorage, frames: usize, io: IoMode, wp: WritePolicy) -> Arc<BufferPool> {
    Arc::new(
        BufferPool::builder()
            .capacity_frames(frames)
            .pin_limit(2)
            .read_ahead(0)
            .io_mode(io)
            .write_policy(wp)
            .build_with_storage(st.clone())
            .unwrap(),
    )
}

/// Memory storage whose writes and length changes take a while, so that the moments the
/// races below need (a write in flight while a truncation or a trim runs) last long enough
/// to be hit in every run.
#[derive(Clone, Default)]
struct Slow {
    mem: MemStorage,
    /// Before each write.
    write: Duration,
    /// Before each length change.
    set_len: Duration,
    /// Before each read.
    read: Duration,
}

struct SlowFile(Arc<dyn StorageFile>, Slow);

impl Storage for Slow {
    fn open(&self, path: &Path, mode: OpenMode) -> std::io::Result<Arc<dyn StorageFile>> {
        Ok(Arc::new(SlowFile(self.mem.open(path, mode)?, self.clone())))
    }
}

impl StorageFile for SlowFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        std::thread::sleep(self.1.read);
        self.0.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        std::thread::sleep(self.1.write);
        self.0.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.0.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.0.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        std::thread::sleep(self.1.set_len);
        self.0.set_len(len)
    }
}

fn slow_pool(st: &Slow, io: IoMode, wp: WritePolicy) -> Arc<BufferPool> {
    Arc::new(
        BufferPool::builder()
            .capacity_frames(16)
            .read_ahead(0)
            .io_mode(io)
            .write_policy(wp)
            .build_with_storage(st.clone())
            .unwrap(),
    )
}

/// A thread calling `sync_all` until `stop`: a second writer of every dirty page, which
/// waits on each page's latch and writes the moment it is free (the races below need a
/// write at exactly that moment).
fn syncer(p: &Arc<BufferPool>, stop: &Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let (p, stop) = (Arc::clone(p), Arc::clone(stop));
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let _ = p.sync_all();
        }
    })
}

/// Run `f` on a thread and fail the test if it has not finished within `secs` (a hang).
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(_) => panic!("{what}: still blocked after {secs} s (deadlock)"),
    }
}

/// Bytes cut off by `set_len` must never come back, even when the frame of a cut page is
/// evicted and reused by another file while `set_len` runs (it used to read the page
/// number of such a frame unlatched, miss the real last page, and leave its old bytes).
#[test]
fn truncated_bytes_never_come_back_while_other_files_churn() {
    let st = MemStorage::new();
    let p = pool(&st, 8, IoMode::Buffered, eager());
    let stop = Arc::new(AtomicBool::new(false));
    // Other files' page 1, over and over: a reused frame then carries the page number of
    // the cut page, which is what fooled the unlatched read.
    let churn = {
        let (p, stop) = (Arc::clone(&p), Arc::clone(&stop));
        std::thread::spawn(move || {
            let files: Vec<_> = (0..6)
                .map(|i| {
                    let g = p.create(format!("/churn{i}")).unwrap();
                    p.write(g, 0, &vec![9u8; 2 * PS]).unwrap();
                    g
                })
                .collect();
            let mut buf = [0u8; 16];
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                p.read(files[i % files.len()], PS as u64, &mut buf).unwrap();
                i += 1;
            }
        })
    };
    let f = p.create("/f").unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut rounds = 0;
    while Instant::now() < deadline {
        p.write(f, 0, &vec![0xAB; 3 * PS]).unwrap();
        // cut inside page 1, drop page 2, then grow again: bytes past the cut must be zero
        p.set_len(f, PS as u64 + 100).unwrap();
        p.set_len(f, 3 * PS as u64).unwrap();
        let mut back = vec![0u8; 3 * PS];
        assert_eq!(p.read(f, 0, &mut back).unwrap(), 3 * PS);
        let bad = back[PS + 100..].iter().position(|&b| b != 0);
        assert_eq!(
            bad, None,
            "round {rounds}: old bytes reappeared after the cut"
        );
        rounds += 1;
    }
    stop.store(true, Ordering::Relaxed);
    churn.join().unwrap();
    p.fsync(f).unwrap();
    let disk = st.contents(Path::new("/f")).unwrap();
    assert!(disk[PS + 100..].iter().all(|&b| b == 0));
}

/// A truncation must reach storage for good: the flusher used to write the dirty last page
/// with the old length after the storage file was cut, and `fsync` then left the old size.
#[test]
fn a_truncation_is_not_undone_by_a_flusher_write() {
    // The truncation is slow, and the syncer (the only writer) waits on the last page's
    // latch meanwhile, writing it the moment `set_len` lets go.
    let st = Slow {
        set_len: Duration::from_micros(300),
        ..Slow::default()
    };
    let p = slow_pool(&st, IoMode::Buffered, WritePolicy::write_back());
    let stop = Arc::new(AtomicBool::new(false));
    let sync = syncer(&p, &stop);
    // Misses on another file keep the policy lock busy, which `set_len` takes between
    // letting go of the last page and publishing the new length.
    let churn = {
        let (p, stop) = (Arc::clone(&p), Arc::clone(&stop));
        std::thread::spawn(move || {
            let g = p.create("/churn").unwrap();
            p.write(g, 0, &vec![9u8; 64 * PS]).unwrap();
            let mut buf = [0u8; 8];
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                p.read(g, (i % 64) * PS as u64, &mut buf).unwrap();
                i += 1;
            }
        })
    };
    let f = p.create("/f").unwrap();
    for round in 0..300 {
        p.write(f, 0, &vec![round as u8; 2 * PS]).unwrap();
        p.set_len(f, PS as u64 + 100).unwrap();
        p.fsync(f).unwrap();
        let disk = st.mem.contents(Path::new("/f")).unwrap();
        assert_eq!(
            disk.len(),
            PS + 100,
            "round {round}: storage length after fsync"
        );
        assert_eq!(p.len(f).unwrap(), PS as u64 + 100);
    }
    stop.store(true, Ordering::Relaxed);
    sync.join().unwrap();
    churn.join().unwrap();
    p.close(f).unwrap();
    let f = p.open("/f").unwrap();
    assert_eq!(p.len(f).unwrap(), PS as u64 + 100);
}

/// In `O_DIRECT` mode pages are written whole and the file trimmed back to its length by
/// `fsync` and `close`; a whole-page write of the last page landing after the trim (the
/// flusher's, racing `fsync`'s own write of the same page) used to leave it rounded up.
#[test]
fn direct_io_files_are_trimmed_exactly_by_fsync_and_close() {
    // Slow writes: the flusher's write of the last page may still be in flight when
    // `fsync`'s own write of it is done and the trim runs.
    let st = Slow {
        write: Duration::from_micros(300),
        ..Slow::default()
    };
    let p = slow_pool(&st, IoMode::Direct, eager());
    let stop = Arc::new(AtomicBool::new(false));
    let sync = syncer(&p, &stop);
    let mut f = p.create("/d").unwrap();
    for round in 0..300usize {
        let len = PS + 1 + round % (PS - 1);
        p.write(f, 0, &vec![(round % 251) as u8 + 1; len]).unwrap();
        p.set_len(f, len as u64).unwrap();
        if round % 10 == 9 {
            p.close(f).unwrap();
            assert_eq!(
                st.mem.contents(Path::new("/d")).unwrap().len(),
                len,
                "close, round {round}"
            );
            f = p.open("/d").unwrap();
        } else {
            p.fsync(f).unwrap();
            assert_eq!(
                st.mem.contents(Path::new("/d")).unwrap().len(),
                len,
                "fsync, round {round}"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    sync.join().unwrap();
}

/// A thread holding a pin of page 0 truncates the file (page 0 kept) while another thread
/// waits to write page 0. The writer used to wait for the pin while holding the file's
/// resize lock, and `set_len` waited for that lock: each waited for the other for ever.
#[test]
fn set_len_by_a_pin_holder_does_not_deadlock_with_a_waiting_writer() {
    within(10, "set_len with a writer queued on a pin", || {
        let st = MemStorage::new();
        let p = pool(&st, 16, IoMode::Buffered, WritePolicy::write_back());
        let f = p.create("/f").unwrap();
        p.write(f, 0, &vec![1u8; 4 * PS]).unwrap();
        let pin = p.pin(f, 0).unwrap();
        let writer = {
            let p = Arc::clone(&p);
            std::thread::spawn(move || p.write(f, 10, b"after the pin").unwrap())
        };
        // let the writer reach page 0 and wait there
        std::thread::sleep(Duration::from_millis(100));
        p.set_len(f, 2 * PS as u64).unwrap();
        drop(pin);
        writer.join().unwrap();
        let mut buf = [0u8; 13];
        p.read(f, 10, &mut buf).unwrap();
        assert_eq!(&buf, b"after the pin");
        assert_eq!(p.len(f).unwrap(), 2 * PS as u64);
    });
}

/// `close` of one file racing pins of it by a thread that opens and closes other files in
/// between: close used to hold the pool-wide open lock while it waited for a pin taken
/// after its check, and the pinner then waited for that lock to open a file.
#[test]
fn close_never_waits_for_a_pin_while_blocking_open() {
    within(20, "close racing pins and opens", || {
        let st = MemStorage::new();
        let p = pool(&st, 16, IoMode::Buffered, WritePolicy::write_back());
        let f = p.create("/a").unwrap();
        p.write(f, 0, &vec![1u8; PS]).unwrap();
        p.close(f).unwrap();
        let current = Arc::new(parking_lot::Mutex::new(p.open("/a").unwrap()));
        let stop = Arc::new(AtomicBool::new(false));
        let pinner = {
            let (p, current, stop) = (Arc::clone(&p), Arc::clone(&current), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let f = *current.lock();
                    if let Ok(g) = p.pin(f, 0) {
                        let other = p.create(format!("/o{}", n % 4)).unwrap();
                        p.close(other).unwrap();
                        drop(g);
                    }
                    n += 1;
                }
            })
        };
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            let f = *current.lock();
            match p.close(f) {
                Ok(()) => *current.lock() = p.open("/a").unwrap(),
                Err(PoolError::PagePinned { page: 0 }) => {}
                Err(e) => panic!("{e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        pinner.join().unwrap();
    });
}

/// A handle is only good in the pool that opened it.
#[test]
fn a_handle_from_another_pool_is_refused() {
    let (s1, s2) = (MemStorage::new(), MemStorage::new());
    let (p1, p2) = (
        pool(&s1, 16, IoMode::Buffered, WritePolicy::write_back()),
        pool(&s2, 16, IoMode::Buffered, WritePolicy::write_back()),
    );
    let f1 = p1.create("/x").unwrap();
    let f2 = p2.create("/y").unwrap();
    p2.write(f2, 0, b"p2's").unwrap();
    let mut buf = [0u8; 4];
    // same slot, same generation: only the pool tells them apart
    assert!(matches!(p2.read(f1, 0, &mut buf), Err(PoolError::Closed(h)) if h == f1));
    assert!(matches!(
        p2.write(f1, 0, b"nope"),
        Err(PoolError::Closed(_))
    ));
    assert!(matches!(p2.set_len(f1, 0), Err(PoolError::Closed(_))));
    assert!(matches!(p2.close(f1), Err(PoolError::Closed(_))));
    assert!(matches!(p2.pin(f1, 0), Err(PoolError::Closed(_))));
    p2.read(f2, 0, &mut buf).unwrap();
    assert_eq!(&buf, b"p2's");
}

/// Under `Lookup` of either kind and with pins of kept pages, `set_len` refuses only for a
/// pinned page it would change, and names that page of this file.
#[test]
fn set_len_refuses_only_for_its_own_pinned_pages() {
    for lookup in [Lookup::Mapped, Lookup::Hashed] {
        let st = MemStorage::new();
        let p = BufferPool::builder()
            .capacity_frames(16)
            .pin_limit(3)
            .lookup(lookup)
            .build_with_storage(st)
            .unwrap();
        let (a, b) = (p.create("/a").unwrap(), p.create("/b").unwrap());
        p.write(a, 0, &vec![1u8; 4 * PS]).unwrap();
        p.write(b, 0, &vec![2u8; 4 * PS]).unwrap();
        let _b3 = p.pin(b, 3).unwrap();
        let _a0 = p.pin(a, 0).unwrap();
        p.set_len(a, 2 * PS as u64).unwrap();
        let a1 = p.pin(a, 1).unwrap();
        assert!(matches!(
            p.set_len(a, PS as u64 + 1),
            Err(PoolError::PagePinned { page: 1 })
        ));
        drop(a1);
        p.set_len(a, PS as u64 + 1).unwrap();
        assert!(matches!(p.close(a), Err(PoolError::PagePinned { page: 0 })));
    }
}

/// Threads prefetching long page lists through a pool barely larger than their pins: a
/// prefetch used to hold the frames it had claimed while it waited for the next one, so
/// that concurrent prefetches starved each other until a miss gave up with `AllPinned`
/// although no page was pinned by anyone.
#[test]
fn concurrent_prefetches_never_starve_each_other_of_frames() {
    within(60, "concurrent prefetches", || {
        // Slow reads keep claimed frames claimed long enough for the others to run dry.
        let st = Slow {
            read: Duration::from_micros(200),
            ..Slow::default()
        };
        let p = Arc::new(
            BufferPool::builder()
                .capacity_frames(12)
                .pin_limit(4)
                .read_ahead(2)
                .build_with_storage(st)
                .unwrap(),
        );
        let files: Vec<_> = (0..8)
            .map(|i| {
                let f = p.create(format!("/p{i}")).unwrap();
                p.write(f, 0, &vec![i as u8 + 1; 64 * PS]).unwrap();
                p.fsync(f).unwrap();
                f
            })
            .collect();
        let threads: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(t, &f)| {
                let p = Arc::clone(&p);
                std::thread::spawn(move || {
                    let mut buf = [0u8; 8];
                    for round in 0..100u64 {
                        let pages: Vec<u64> = (0..16).map(|k| (round * 7 + k * 5) % 64).collect();
                        p.prefetch(f, &pages).unwrap();
                        p.read(f, pages[3] * PS as u64, &mut buf).unwrap();
                        assert_eq!(buf, [t as u8 + 1; 8], "thread {t}");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    });
}
