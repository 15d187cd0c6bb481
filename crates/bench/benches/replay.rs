//! Criterion benchmarks: whole replays of a small seeded trace for each registered policy
//! among a handful, the reference workload (20M requests, Zipf 1.0 over 1M keys,
//! cache 10% of the distinct keys) for the policies with throughput targets, the hit
//! path of `Cache<Lru>`, and the preparation every replay starts with: numbering a
//! trace's keys densely (`trace_preparation`, 2M requests of Zipf 1.0 over 1M keys, about
//! 900,000 distinct, so the key map does not fit in any cache, as on real traces).
//!
//! The small trace is generated here from a fixed seed (a skewed key distribution, 200k
//! requests over 20k keys). The large one takes a few minutes in all; run it alone with
//! `cargo bench -p bufcache-bench --bench replay -- zipf_20m`. `bufcache bench replay` measures the same
//! workload without criterion's statistics.

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

fn replay_zipf_20m(c: &mut Criterion) {
    let workload =
        trace::synth::Workload::from_params("zipf", &[("keys", "1000000"), ("alpha", "1")])
            .unwrap();
    let trace = CompactTrace::from_requests(
        &trace::synth::generate(&workload, 20_000_000, 42).collect::<Vec<_>>(),
    );
    let capacity = trace.summary().distinct_keys / 10;
    let mut group = c.benchmark_group("zipf_20m");
    group.throughput(Throughput::Elements(trace.len() as u64));
    group.sample_size(10);
    for name in [
        "fifo", "lru", "clock", "sieve", "s3fifo", "twoq", "arc", "lirs", "lruk", "wtinylfu",
    ] {
        let spec = PolicySpec::parse(name).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| {
                sim::replay(
                    &trace,
                    std::slice::from_ref(&spec),
                    &[CacheSize::units(capacity)],
                    ReplayOptions {
                        ignore_size: true,
                        seed: 42,
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

/// Numbering the keys of requests already in memory (what `bufcache replay` does while it
/// reads a trace file; reading itself is measured by `bufcache bench replay --trace`).
fn trace_preparation(c: &mut Criterion) {
    let workload =
        trace::synth::Workload::from_params("zipf", &[("keys", "1000000"), ("alpha", "1")])
            .unwrap();
    let requests: Vec<Request> = trace::synth::generate(&workload, 2_000_000, 20240601).collect();
    let mut group = c.benchmark_group("trace_preparation");
    group.throughput(Throughput::Elements(requests.len() as u64));
    group.sample_size(10);
    group.bench_function("number_keys_zipf_2m", |b| {
        b.iter(|| CompactTrace::from_requests(black_box(&requests)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = replay_policies, replay_zipf_20m, lru_hit_path, trace_preparation
}
criterion_main!(benches);
