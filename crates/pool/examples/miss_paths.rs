//! Rough numbers for the pool's miss paths on this machine (the full comparison is
//! `bufcache bench pool`): pin hits per thread with 1 and 2 threads (do hits scale, or
//! do they share a lock?), random 4 KiB reads with the working set twice the pool, from
//! the OS page cache (buffered) and from the device (`O_DIRECT`, next to plain `O_DIRECT`
//! `pread` of the same file), and sequential scans with and without read-ahead.
//!
//! `cargo run -p bufcache-pool --release --example miss_paths [DIR] [FILE_MIB]`
//! (default: the system temp dir, 64 MiB). Seeded; prints one line per measurement.

use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pool::{BufferPool, IoMode, Lookup};
use rand::{Rng, SeedableRng};

const PS: usize = 4096;
const RUN: Duration = Duration::from_secs(2);

fn random_reads(pool: &Arc<BufferPool>, f: pool::FileHandle, pages: u64, threads: usize) -> f64 {
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let pool = Arc::clone(pool);
            std::thread::spawn(move || {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(t as u64);
                let mut buf = vec![0u8; PS];
                let mut n = 0u64;
                while start.elapsed() < RUN {
                    for _ in 0..64 {
                        let page = rng.gen_range(0..pages);
                        pool.read(f, page * PS as u64, &mut buf).unwrap();
                    }
                    n += 64;
                }
                n
            })
        })
        .collect();
    let n: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    n as f64 / start.elapsed().as_secs_f64()
}

fn raw_direct_reads(path: &std::path::Path, pages: u64, threads: usize) -> f64 {
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let path = path.to_path_buf();
            std::thread::spawn(move || {
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
                    .open(&path)
                    .unwrap();
                // an aligned buffer without unsafe: a pool frame would do, but a
                // Vec<u64> of 4 KiB is 8-aligned only; over-allocate and pick an aligned
                // window
                let mut raw = vec![0u8; 2 * PS];
                let off = raw.as_ptr().align_offset(PS);
                let buf = &mut raw[off..off + PS];
                let mut rng = rand::rngs::SmallRng::seed_from_u64(100 + t as u64);
                let mut n = 0u64;
                while start.elapsed() < RUN {
                    for _ in 0..64 {
                        let page = rng.gen_range(0..pages);
                        file.read_exact_at(buf, page * PS as u64).unwrap();
                    }
                    n += 64;
                }
                n
            })
        })
        .collect();
    let n: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    n as f64 / start.elapsed().as_secs_f64()
}

/// Pin + unpin of random resident pages from `threads` threads; returns hits/s per thread.
fn pin_hits(pool: &Arc<BufferPool>, f: pool::FileHandle, pages: u64, threads: usize) -> f64 {
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let pool = Arc::clone(pool);
            std::thread::spawn(move || {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(7 + t as u64);
                let mut n = 0u64;
                while start.elapsed() < RUN / 2 {
                    for _ in 0..1024 {
                        let page = pool.pin(f, rng.gen_range(0..pages)).unwrap();
                        std::hint::black_box(page.as_ptr());
                    }
                    n += 1024;
                }
                n
            })
        })
        .collect();
    let n: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    n as f64 / start.elapsed().as_secs_f64() / threads as f64
}

fn scan(pool: &BufferPool, f: pool::FileHandle, bytes: u64) -> f64 {
    let start = Instant::now();
    let mut buf = vec![0u8; 64 << 10];
    let mut off = 0;
    while off < bytes {
        off += pool.read(f, off, &mut buf).unwrap() as u64;
    }
    bytes as f64 / start.elapsed().as_secs_f64() / (1 << 20) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .map(Into::into)
        .unwrap_or_else(std::env::temp_dir);
    let mib: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
    let dir = tempfile::tempdir_in(dir).unwrap();
    let path = dir.path().join("data");
    let bytes = mib << 20;
    let pages = bytes / PS as u64;
    {
        let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, data).unwrap();
    }
    let frames = (pages / 2) as usize;
    for lookup in [Lookup::Mapped, Lookup::Hashed] {
        let pool = Arc::new(
            BufferPool::builder()
                .capacity_frames(frames)
                .lookup(lookup)
                .build()
                .unwrap(),
        );
        let f = pool.open(&path).unwrap();
        // a resident working set of a quarter of the file
        let hot = pages / 4;
        let mut buf = vec![0u8; PS];
        for p in 0..hot {
            pool.read(f, p * PS as u64, &mut buf).unwrap();
        }
        for threads in [1, 2] {
            let per_thread = pin_hits(&pool, f, hot, threads);
            println!(
                "pin-hit {lookup:?} threads={threads}: {:.1} M/s per thread",
                per_thread / 1e6
            );
        }
    }
    for io in [IoMode::Buffered, IoMode::Direct] {
        for threads in [1, 2] {
            let pool = Arc::new(
                BufferPool::builder()
                    .capacity_frames(frames)
                    .lookup(Lookup::Mapped)
                    .io_mode(io)
                    .read_ahead(0)
                    .build()
                    .unwrap(),
            );
            let f = pool.open(&path).unwrap();
            let rate = random_reads(&pool, f, pages, threads);
            let s = pool.stats();
            let hit = s.hits as f64 / (s.hits + s.misses) as f64;
            let raw = if io == IoMode::Direct {
                format!(
                    ", raw O_DIRECT pread {:.0}/s",
                    raw_direct_reads(&path, pages, threads)
                )
            } else {
                String::new()
            };
            println!(
                "random-4k {io:?} threads={threads}: {rate:.0} reads/s (hit ratio {hit:.2}, {} evictions){raw}",
                s.evictions
            );
        }
    }
    for io in [IoMode::Buffered, IoMode::Direct] {
        for ra in [0usize, 32] {
            let pool = BufferPool::builder()
                .capacity_frames(frames)
                .io_mode(io)
                .read_ahead(ra)
                .build()
                .unwrap();
            let f = pool.open(&path).unwrap();
            let mbps = scan(&pool, f, bytes);
            println!(
                "scan {io:?} read_ahead={ra}: {mbps:.0} MiB/s ({} read calls)",
                pool.stats().read_calls
            );
        }
    }
}
