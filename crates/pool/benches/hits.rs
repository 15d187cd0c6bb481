//! Criterion benchmarks of the pool's hit paths: pin + unpin of a resident page, and
//! copying reads of cached data (the XMF micro-benchmark's shape), for both lookups.
//! Random pages come from a seeded generator; the working set fits in the pool.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pool::{BufferPool, FileHandle, Lookup, MemStorage};
use rand::{Rng, SeedableRng};

const PAGES: u64 = 4096;
const PS: u64 = 4096;

fn setup(lookup: Lookup, policy: &str) -> (BufferPool, FileHandle, Vec<u64>) {
    let pool = BufferPool::builder()
        .capacity_frames(PAGES as usize + 64)
        .lookup(lookup)
        .policy(policy)
        .read_ahead(0)
        .build_with_storage(MemStorage::new())
        .unwrap();
    let f = pool.create("/bench").unwrap();
    pool.write(f, 0, &vec![1u8; (PAGES * PS) as usize]).unwrap();
    pool.fsync(f).unwrap();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(42);
    let pages = (0..1 << 16).map(|_| rng.gen_range(0..PAGES)).collect();
    (pool, f, pages)
}

fn pin_hit(c: &mut Criterion) {
    let mut g = c.benchmark_group("pin_hit");
    g.throughput(Throughput::Elements(1));
    // clock: hits bump a saturating counter; lru: hits are queued (BP-Wrapper)
    for (name, lookup, policy) in [
        ("mapped", Lookup::Mapped, "clock"),
        ("hashed", Lookup::Hashed, "clock"),
        ("mapped_lru", Lookup::Mapped, "lru"),
    ] {
        let (pool, f, pages) = setup(lookup, policy);
        let mut i = 0usize;
        g.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) & (pages.len() - 1);
                // the pin and unpin only: touching the page's bytes would add a cache miss
                // on a random 16 MiB working set, which is not the pool's cost
                let page = pool.pin(f, pages[i]).unwrap();
                black_box(page.as_ptr());
            })
        });
    }
    g.finish();
}

fn read_hit(c: &mut Criterion) {
    for size in [4usize, 64, 1024, 4096] {
        let mut g = c.benchmark_group(format!("read_hit_{size}B"));
        g.throughput(Throughput::Bytes(size as u64));
        for (name, lookup) in [("mapped", Lookup::Mapped), ("hashed", Lookup::Hashed)] {
            let (pool, f, pages) = setup(lookup, "clock");
            let mut buf = vec![0u8; size];
            let mut i = 0usize;
            g.bench_function(name, |b| {
                b.iter(|| {
                    i = (i + 1) & (pages.len() - 1);
                    let n = pool.read(f, pages[i] * PS, &mut buf).unwrap();
                    black_box((n, buf[0]));
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, pin_hit, read_hit);
criterion_main!(benches);
