//! Criterion benchmarks of the pool's miss path, on memory storage so that the device's
//! time does not hide the pool's own: a random 4 KiB read over a file twice the pool, so
//! about half the reads miss and each miss evicts.
//!
//! - `demand`: one `read` at a time (each miss is claim, evict, load, insert);
//! - `prefetch_16`: batches of 16 pages through `prefetch` then `read` (the misses of a
//!   batch are claimed together and loaded with one `read_batch`).
//!
//! Both report time per page read by the application. Next to `bufcache bench pool
//! --bench random-evict`, which measures the same shapes against a real device, this is
//! the CPU the pool spends per miss: what has to stay small next to a device read.

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use pool::{BufferPool, FileHandle, Lookup, MemStorage};

const POOL_PAGES: usize = 4096;
const FILE_PAGES: u64 = 2 * POOL_PAGES as u64;
const PAGE_BYTES: usize = 4096;
const BATCH: usize = 16;

/// A pool of [`POOL_PAGES`] frames over a clean file of twice that many pages.
fn evicting_pool(lookup: Lookup) -> (BufferPool, FileHandle) {
    let storage = MemStorage::new();
    {
        let writer = BufferPool::builder()
            .capacity_frames(POOL_PAGES)
            .build_with_storage(storage.clone())
            .expect("pool builds");
        let f = writer.create("/bench").expect("file is created");
        let page = vec![3u8; PAGE_BYTES];
        for p in 0..FILE_PAGES {
            writer
                .write(f, p * PAGE_BYTES as u64, &page)
                .expect("write");
        }
        writer.close(f).expect("close");
    }
    let pool = BufferPool::builder()
        .capacity_frames(POOL_PAGES)
        .lookup(lookup)
        .read_ahead(0)
        .build_with_storage(storage)
        .expect("pool builds");
    let f = pool.open("/bench").expect("file opens");
    (pool, f)
}

/// xorshift64 from a fixed seed: the same pages for every run and lookup.
struct Pages(u64);

impl Pages {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % FILE_PAGES
    }
}

fn misses(c: &mut Criterion) {
    let mut group = c.benchmark_group("random_read_twice_the_pool");
    for lookup in [Lookup::Mapped, Lookup::Hashed] {
        let name = match lookup {
            Lookup::Mapped => "mapped",
            Lookup::Hashed => "hashed",
        };
        let (pool, f) = evicting_pool(lookup);
        let mut buf = [0u8; PAGE_BYTES];
        let mut pages = Pages(42);
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("demand/{name}"), |b| {
            b.iter(|| {
                let p = pages.next();
                pool.read(f, p * PAGE_BYTES as u64, &mut buf).expect("read");
                black_box(&buf);
            })
        });
        let mut batch = [0u64; BATCH];
        group.throughput(Throughput::Elements(BATCH as u64));
        group.bench_function(format!("prefetch_{BATCH}/{name}"), |b| {
            b.iter(|| {
                batch.iter_mut().for_each(|p| *p = pages.next());
                pool.prefetch(f, &batch).expect("prefetch");
                for &p in &batch {
                    pool.read(f, p * PAGE_BYTES as u64, &mut buf).expect("read");
                    black_box(&buf);
                }
            })
        });
        let s = pool.stats();
        assert!(s.evictions > 0 && s.prefetched_pages > 0, "{s:?}");
    }
    group.finish();
}

criterion_group!(benches, misses);
criterion_main!(benches);
