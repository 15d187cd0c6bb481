//! Criterion benchmarks: whole replays of a small seeded trace for each registered policy
//! among a handful, and the hit path of `Cache<Lru>`.
//!
//! The trace is generated here from a fixed seed (a skewed key distribution, 200k requests
//! over 20k keys) so that the benchmark needs no file and no other crate's generator.

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use policy::{Access, Cache, Lru, PolicySpec};
use sim::{CacheSize, CompactTrace, ReplayOptions};
use trace::Request;

fn skewed(n: usize, keys: u64, seed: u64) -> CompactTrace {
    let mut x = seed | 1;
    let reqs: Vec<Request> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            Request {
                key: (u * u * u * keys as f64) as u64,
                size: 1,
                ..Request::default()
            }
        })
        .collect();
    CompactTrace::from_requests(&reqs)
}

fn replay_policies(c: &mut Criterion) {
    let trace = skewed(200_000, 20_000, 11);
    let mut group = c.benchmark_group("replay_200k");
    group.throughput(Throughput::Elements(trace.len() as u64));
    group.sample_size(20);
    for name in ["lru", "fifo", "clock", "sieve", "s3fifo", "arc"] {
        if !policy::POLICIES.iter().any(|p| p.name == name) {
            continue;
        }
        let spec = PolicySpec::parse(name).unwrap();
        group.bench_function(name, |b| {
            // One run at a time on this thread: rayon has a single job.
            b.iter(|| {
                sim::replay(
                    &trace,
                    std::slice::from_ref(&spec),
                    &[CacheSize::units(2_000)],
                    ReplayOptions {
                        ignore_size: true,
                        seed: 1,
                    },
                    &|_| {},
                )
                .unwrap()
            })
        });
    }
    group.finish();
}

fn lru_hit_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache_lru");
    group.throughput(Throughput::Elements(1024));
    group.bench_function("hit_1024", |b| {
        b.iter_batched_ref(
            || {
                let mut cache = Cache::new(Lru::new(1024), 1024);
                for k in 0..1024 {
                    cache.access(&Access::unit(k, k));
                }
                cache
            },
            |cache| {
                for k in 0..1024u64 {
                    black_box(cache.access(&Access::unit(black_box(k), k)));
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = replay_policies, lru_hit_path
}
criterion_main!(benches);
