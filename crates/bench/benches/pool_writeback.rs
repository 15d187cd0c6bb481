//! Criterion benchmark of write-back: 32 MiB written sequentially through a pool of 8 MiB
//! (2 048 frames of 4 KiB) over a real file, buffered and `O_DIRECT`. Three quarters of
//! the pages are written back while the loop runs, by misses that find only dirty
//! victims and by the flusher's refill; the rest stay dirty (the timed part ends before
//! any `fsync`, whose disk flush would swamp the difference). Adjacent dirty pages of a
//! file go to storage in one vectored write, so the count of write calls is printed
//! beside the time (`PoolStats`, once per I/O mode).
//!
//! ```text
//! cargo bench -p bufcache-bench --bench pool_writeback
//! ```

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use pool::{BufferPool, FileStorage, IoMode};
use std::time::{Duration, Instant};

const FRAMES: usize = 2048;
const FILE_BYTES: usize = 32 << 20;
const CHUNK_BYTES: usize = 64 << 10;

/// Build a pool over a fresh file in `dir`, or `None` when the file system refuses the
/// mode (`O_DIRECT` on tmpfs).
fn pool_over(dir: &std::path::Path, mode: IoMode) -> Option<(BufferPool, pool::FileHandle)> {
    let pool = BufferPool::builder()
        .capacity_frames(FRAMES)
        .policy("lru")
        .read_ahead(0)
        .io_mode(mode)
        .build_with_storage(FileStorage)
        .expect("pool builds");
    let f = pool.create(dir.join("data")).ok()?;
    Some((pool, f))
}

fn write_through_a_small_pool(c: &mut Criterion) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let chunk = vec![7u8; CHUNK_BYTES];
    let mut group = c.benchmark_group("pool_writeback_32mib_through_8mib");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(5));
    for (name, mode) in [("buffered", IoMode::Buffered), ("direct", IoMode::Direct)] {
        if pool_over(dir.path(), mode).is_none() {
            eprintln!("{name}: the file system refuses this mode, skipped");
            continue;
        }
        let mut last_stats = None;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (pool, f) = pool_over(dir.path(), mode).expect("pool over the file");
                    let start = Instant::now();
                    for i in 0..FILE_BYTES / CHUNK_BYTES {
                        pool.write(f, (i * CHUNK_BYTES) as u64, &chunk)
                            .expect("write");
                    }
                    total += start.elapsed();
                    last_stats = Some(pool.stats());
                }
                total
            })
        });
        eprintln!("{name}: stats of the last run: {last_stats:?}");
    }
    group.finish();
}

criterion_group!(benches, write_through_a_small_pool);
criterion_main!(benches);
