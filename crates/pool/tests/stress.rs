//! Many threads, overlapping ranges, a pool far smaller than the file (eviction on most
//! misses), checked against models. Bounded: a few seconds in `--release`.
//!
//! The randomized tests explore: each run draws a fresh seed unless `BUFCACHE_SEED` is set,
//! and prints it (see `docs/TESTING.md`). A replay gives the same operation streams; the
//! threads' interleaving still differs from run to run.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use pool::{BufferPool, FileHandle, Lookup, MemStorage, PageHint, PoolError, WritePolicy};
use testutil::{Rng, Seed};

const PS: usize = 4096;
const THREADS: usize = 6;

fn pool(lookup: Lookup, policy: &str, frames: usize, st: &MemStorage) -> Arc<BufferPool> {
    Arc::new(
        BufferPool::builder()
            .capacity_frames(frames)
            .pin_limit(THREADS)
            .read_ahead(2)
            .lookup(lookup)
            .policy(policy)
            // an eager flusher, so its writes race with everything else
            .write_policy(WritePolicy::WriteBack {
                interval: Duration::from_millis(1),
                age: Duration::from_millis(1),
            })
            .build_with_storage(st.clone())
            .unwrap(),
    )
}

/// A thread's page hints for one file, one per page, made on first use: the hinted path
/// of the readers below.
#[derive(Default)]
struct Hints(Vec<PageHint>);

impl Hints {
    /// The hint for `page` of `f`.
    fn of(&mut self, p: &BufferPool, f: FileHandle, page: u64) -> Result<&mut PageHint, PoolError> {
        let i = page as usize;
        while self.0.len() <= i {
            let next = self.0.len() as u64;
            self.0.push(p.hint(f, next)?);
        }
        Ok(&mut self.0[i])
    }

    /// `read` at `offset`, through the hint of its page.
    fn read(
        &mut self,
        p: &BufferPool,
        f: FileHandle,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, PoolError> {
        let (page, in_page) = (offset / PS as u64, (offset % PS as u64) as usize);
        p.read_hinted(self.of(p, f, page)?, in_page, buf)
    }
}

/// Byte regions that straddle page boundaries (3000 bytes each, so most pages are shared
/// by two or three regions). Each region has a lock and a model; an operation locks one
/// region and checks its result exactly, while operations on other regions of the same
/// pages, eviction and the flusher run concurrently.
fn region_locked_run(lookup: Lookup, policy: &str, seed: Seed) {
    const REGION: usize = 3000;
    const REGIONS: usize = 40; // 120 000 bytes: 30 pages through a 12-frame pool
    let st = MemStorage::new();
    let p = pool(lookup, policy, 12, &st);
    let f = p.create("/f").unwrap();
    p.write(f, 0, &vec![0u8; REGION * REGIONS]).unwrap();
    let models: Arc<Vec<Mutex<Vec<u8>>>> = Arc::new(
        (0..REGIONS)
            .map(|_| Mutex::new(vec![0u8; REGION]))
            .collect(),
    );
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let p = Arc::clone(&p);
            let models = Arc::clone(&models);
            std::thread::spawn(move || {
                let mut rng = seed.stream(t as u64);
                let mut hints = Hints::default();
                for op in 0..20000u32 {
                    let r = rng.gen_range(0..REGIONS);
                    let a = rng.gen_range(0..REGION);
                    let b = rng.gen_range(a + 1..=REGION);
                    let base = (r * REGION) as u64;
                    let mut model = models[r].lock();
                    match rng.gen_range(0..10) {
                        0..=3 => {
                            let v = (t as u8) << 5 | (op % 31) as u8;
                            p.write(f, base + a as u64, &vec![v; b - a]).unwrap();
                            model[a..b].fill(v);
                        }
                        4 => {
                            // a zero-copy check of a region fully inside one page
                            let (start, end) = (base + a as u64, base + b as u64);
                            let page = start / PS as u64;
                            if (end - 1) / PS as u64 == page {
                                let g = if op % 2 == 0 {
                                    p.pin(f, page).unwrap()
                                } else {
                                    p.pin_hinted(hints.of(&p, f, page).unwrap()).unwrap()
                                };
                                let off = (start % PS as u64) as usize;
                                assert_eq!(&g[off..off + (b - a)], &model[a..b]);
                            }
                        }
                        5 if op % 50 == 0 => p.fsync(f).unwrap(),
                        _ => {
                            // readers take every path: pinned, optimistic and hinted
                            let mut buf = vec![0u8; b - a];
                            let n = match op % 3 {
                                0 => p.read(f, base + a as u64, &mut buf),
                                1 => p.read_optimistic(f, base + a as u64, &mut buf),
                                _ => hints.read(&p, f, base + a as u64, &mut buf),
                            };
                            assert_eq!(n.unwrap(), b - a);
                            assert_eq!(buf, model[a..b], "thread {t} op {op} region {r}");
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let expect: Vec<u8> = models.iter().flat_map(|m| m.lock().clone()).collect();
    let mut all = vec![0u8; expect.len()];
    p.read(f, 0, &mut all).unwrap();
    assert_eq!(all, expect);
    p.fsync(f).unwrap();
    assert_eq!(st.contents("/f".as_ref()).unwrap(), expect);
    let s = p.stats();
    assert!(
        s.evictions > 100,
        "too little eviction to mean anything: {s:?}"
    );
}

#[test]
fn region_locked_threads_clock_both_lookups() {
    testutil::explore(|seed| {
        for (i, lk) in [Lookup::Mapped, Lookup::Hashed].into_iter().enumerate() {
            region_locked_run(lk, "clock", seed.derive(i as u64));
        }
    });
}

#[test]
fn region_locked_threads_other_policies() {
    testutil::explore(|seed| {
        for (i, policy) in ["sieve", "s3fifo", "random", "gclock"]
            .into_iter()
            .enumerate()
        {
            let lk = if i % 2 == 0 {
                Lookup::Mapped
            } else {
                Lookup::Hashed
            };
            region_locked_run(lk, policy, seed.derive(i as u64));
        }
    });
}

/// Unsynchronized overlapping writes of stamped 8-byte words, `(thread, seq)`. Word
/// writes inside one page are atomic (the page's exclusive latch), so every word read
/// must be a stamp some write put there (or zero), never a mix; at the end each word must
/// hold the *last* stamp of some thread that covered it (each thread's later writes
/// replace its earlier ones).
fn stamped_run(lookup: Lookup, seed: Seed) {
    const WORDS: usize = 20 * PS / 8;
    let st = MemStorage::new();
    let p = pool(lookup, "clock", 9, &st);
    let f = p.create("/f").unwrap();
    p.set_len(f, (WORDS * 8) as u64).unwrap();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let p = Arc::clone(&p);
            std::thread::spawn(move || {
                let mut rng = seed.stream(t as u64);
                let mut hints = Hints::default();
                // last stamp this thread wrote to each word
                let mut last = vec![0u64; WORDS];
                for seq in 1..=6000u64 {
                    let a = rng.gen_range(0..WORDS);
                    let n = rng.gen_range(1..=(WORDS - a).min(700));
                    if rng.gen_bool(0.5) {
                        let stamp = ((t as u64 + 1) << 32) | seq;
                        let bytes: Vec<u8> = (0..n).flat_map(|_| stamp.to_le_bytes()).collect();
                        p.write(f, (a * 8) as u64, &bytes).unwrap();
                        last[a..a + n].fill(stamp);
                    } else {
                        let mut buf = vec![0u8; n * 8];
                        match seq % 4 {
                            0 | 1 => p.read(f, (a * 8) as u64, &mut buf).unwrap(),
                            2 => p.read_optimistic(f, (a * 8) as u64, &mut buf).unwrap(),
                            _ => hints.read(&p, f, (a * 8) as u64, &mut buf).unwrap(),
                        };
                        for (i, c) in buf.chunks_exact(8).enumerate() {
                            let v = u64::from_le_bytes(c.try_into().unwrap());
                            let (th, sq) = (v >> 32, v & 0xffff_ffff);
                            assert!(
                                v == 0
                                    || ((1..=THREADS as u64).contains(&th)
                                        && (1..=6000).contains(&sq)),
                                "word {} holds garbage {v:#x}",
                                a + i
                            );
                            // our own writes are never undone by ourselves: a word we wrote
                            // shows our last stamp or someone else's, never an older own one
                            if th == t as u64 + 1 {
                                assert_eq!(v, last[a + i], "thread {t} sees its own stale stamp");
                            }
                        }
                    }
                }
                last
            })
        })
        .collect();
    let lasts: Vec<Vec<u64>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut all = vec![0u8; WORDS * 8];
    p.read(f, 0, &mut all).unwrap();
    for (w, c) in all.chunks_exact(8).enumerate() {
        let v = u64::from_le_bytes(c.try_into().unwrap());
        let candidates: Vec<u64> = lasts.iter().map(|l| l[w]).filter(|&s| s != 0).collect();
        if candidates.is_empty() {
            assert_eq!(v, 0, "word {w} never written");
        } else {
            assert!(
                candidates.contains(&v),
                "word {w} = {v:#x}, last writes {candidates:x?}"
            );
        }
    }
    p.fsync(f).unwrap();
    assert_eq!(st.contents("/f".as_ref()).unwrap(), all);
}

#[test]
fn stamped_overlapping_writers_both_lookups() {
    testutil::explore(|seed| {
        stamped_run(Lookup::Mapped, seed.derive(0));
        stamped_run(Lookup::Hashed, seed.derive(1));
    });
}

/// Truncations racing with readers must never bring truncated bytes back: one thread
/// repeatedly fills the file's tail with a new value, cuts it off and extends it again,
/// while readers keep loading pages everywhere. After the last cut-and-extend the tail
/// must read as zeros, in the pool and on storage.
#[test]
fn truncation_racing_readers_never_resurrects_old_bytes() {
    testutil::explore(|seed| {
        for (i, lk) in [Lookup::Mapped, Lookup::Hashed].into_iter().enumerate() {
            let st = MemStorage::new();
            let p = pool(lk, "clock", 12, &st);
            let f = p.create("/f").unwrap();
            let len = 16 * PS as u64;
            let cut = 5 * PS as u64 + 100;
            p.write(f, 0, &vec![1u8; len as usize]).unwrap();
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let readers: Vec<_> = (0..4)
                .map(|t| {
                    let p = Arc::clone(&p);
                    let stop = Arc::clone(&stop);
                    std::thread::spawn(move || {
                        let mut rng = seed.derive(i as u64).stream(t);
                        let mut buf = vec![0u8; 3000];
                        let mut hints = Hints::default();
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            let off = rng.gen_range(0..len);
                            // short reads, so that most lie in one page (optimistic, hinted)
                            let _ = match t {
                                0 => p.read(f, off, &mut buf),
                                1 => p.read_optimistic(f, off, &mut buf[..64]),
                                _ => hints.read(&p, f, off, &mut buf[..64]),
                            }
                            .unwrap();
                        }
                    })
                })
                .collect();
            let mut hints = Hints::default();
            for round in 2..200u32 {
                p.write(f, cut, &vec![round as u8; (len - cut) as usize])
                    .unwrap();
                // hints of the tail's pages taken while they hold this round's bytes
                let mut word = [0u8; 8];
                for off in (cut..len).step_by(PS) {
                    hints.read(&p, f, off, &mut word).unwrap();
                }
                p.set_len(f, cut).unwrap();
                p.set_len(f, len).unwrap();
                let mut tail = vec![9u8; (len - cut) as usize];
                assert_eq!(p.read(f, cut, &mut tail).unwrap(), tail.len());
                assert!(
                    tail.iter().all(|&b| b == 0),
                    "round {round}: truncated bytes came back"
                );
                for off in (cut..len).step_by(PS) {
                    assert_eq!(hints.read(&p, f, off, &mut word).unwrap(), 8);
                    assert_eq!(word, [0; 8], "round {round}: a hint brought back {off}");
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            for r in readers {
                r.join().unwrap();
            }
            p.fsync(f).unwrap();
            let disk = st.contents("/f".as_ref()).unwrap();
            assert_eq!(disk.len() as u64, len);
            assert!(disk[..cut as usize].iter().all(|&b| b == 1));
            assert!(disk[cut as usize..].iter().all(|&b| b == 0));
        }
    });
}

/// A storage whose reads are slow and counted, to widen the window in which several
/// threads miss on the same page.
struct SlowCountingStorage {
    inner: MemStorage,
    reads: Arc<std::sync::atomic::AtomicU64>,
}

struct SlowFile {
    inner: Arc<dyn pool::StorageFile>,
    reads: Arc<std::sync::atomic::AtomicU64>,
}

impl pool::Storage for SlowCountingStorage {
    fn open(
        &self,
        path: &std::path::Path,
        mode: pool::OpenMode,
    ) -> std::io::Result<Arc<dyn pool::StorageFile>> {
        Ok(Arc::new(SlowFile {
            inner: self.inner.open(path, mode)?,
            reads: Arc::clone(&self.reads),
        }))
    }
}

impl pool::StorageFile for SlowFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(30));
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.inner.set_len(len)
    }
}

#[test]
fn concurrent_misses_on_one_page_load_it_once() {
    for lk in [Lookup::Mapped, Lookup::Hashed] {
        let mem = MemStorage::new();
        {
            use pool::Storage;
            let f = mem
                .open(
                    "/f".as_ref(),
                    pool::OpenMode {
                        create: true,
                        direct: false,
                    },
                )
                .unwrap();
            f.write_at(&vec![5u8; 4 * PS], 0).unwrap();
        }
        let reads = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let p = Arc::new(
            BufferPool::builder()
                .capacity_frames(16)
                .read_ahead(0)
                .lookup(lk)
                .build_with_storage(SlowCountingStorage {
                    inner: mem,
                    reads: Arc::clone(&reads),
                })
                .unwrap(),
        );
        let f = p.open("/f").unwrap();
        let barrier = Arc::new(std::sync::Barrier::new(THREADS));
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let (p, barrier) = (Arc::clone(&p), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    if t % 2 == 0 {
                        let mut buf = [0u8; 100];
                        assert_eq!(p.read(f, 2 * PS as u64 + 7, &mut buf).unwrap(), 100);
                        assert_eq!(buf, [5u8; 100]);
                    } else {
                        let g = p.pin(f, 2).unwrap();
                        assert!(g.iter().all(|&b| b == 5));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1, "{lk:?}");
        let s = p.stats();
        assert_eq!((s.misses, s.hits), (1, THREADS as u64 - 1), "{s:?}");
        assert_eq!(p.resident(f).unwrap().iter().collect::<Vec<_>>(), vec![2]);
    }
}
