//! Criterion benchmarks of the sampling step of the approximate miss-ratio curves: the
//! hash-and-filter decision alone, the same over requests decoded from oracleGeneral bytes
//! in memory (the sampling pass without the disk), and SHARDS fed the whole stream at
//! rate 0.01 (hash, filter, and the stack and histogram for the 1% kept), and the nested
//! levels of `--min-sampled 500` over 20 sizes from 5,000 to 5M objects (the raised sizes'
//! bounded stacks: what nesting adds to that pass).
//!
//! Inputs are 4M requests from a fixed seed. Throughput is in requests; the goal
//! for the hash-and-filter step is 100 million oracleGeneral requests per second on one
//! core. Run alone with `cargo bench -p bufcache-bench --bench mrc_sample`.

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::io::Cursor;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use sim::mrc::histogram::Buckets;
use sim::mrc::nested::NestedShards;
use sim::mrc::{key_hash, RatePlan, Sampling, Shards, SpatialFilter};
use trace::{OracleGeneralReader, OracleGeneralWriter, Request, TraceReader, NEVER};

const REQUESTS: usize = 4 << 20;

fn requests() -> Vec<Request> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..REQUESTS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            Request {
                key: (u * u * 10_000_000.0) as u64,
                size: 4096,
                // The oracleGeneral reader checks next-access positions; none is known.
                next_access: NEVER,
                ..Request::default()
            }
        })
        .collect()
}

fn oracle_bytes(reqs: &[Request]) -> Vec<u8> {
    let path = std::path::Path::new("mem.oracleGeneral.bin");
    let mut w = OracleGeneralWriter::new(Vec::new(), path);
    for r in reqs {
        w.write(r).unwrap();
    }
    w.finish().unwrap()
}

fn sampling(c: &mut Criterion) {
    let reqs = requests();
    let bytes = oracle_bytes(&reqs);
    let mut group = c.benchmark_group("mrc_sample");
    group.throughput(Throughput::Elements(REQUESTS as u64));
    group.sample_size(20);
    let filter = SpatialFilter::with_rate(0.01);
    group.bench_function("hash_filter", |b| {
        b.iter(|| {
            let mut kept = 0u64;
            for r in &reqs {
                kept += u64::from(filter.sample(r.key).is_some());
            }
            black_box(kept)
        })
    });
    group.bench_function("decode_oracle_hash_filter", |b| {
        let path = std::path::Path::new("mem.oracleGeneral.bin");
        let mut batch = vec![Request::default(); 1 << 16];
        b.iter(|| {
            let mut reader = OracleGeneralReader::new(Cursor::new(&bytes[..]), path);
            let mut kept = 0u64;
            loop {
                let n = reader.read_batch(&mut batch).unwrap();
                if n == 0 {
                    break;
                }
                for r in &batch[..n] {
                    kept += u64::from(filter.sample(r.key).is_some());
                }
            }
            black_box(kept)
        })
    });
    group.bench_function("shards_rate_0.01", |b| {
        b.iter(|| {
            let mut shards = Shards::new(Sampling::Rate(0.01), Buckets::LogLinear, false);
            for r in &reqs {
                shards.access(key_hash(r.key), r.size);
            }
            black_box(shards.sampled_requests())
        })
    });
    // 20 sizes spaced evenly in log from 5,000 to 5M objects: at 500 sampled objects the
    // seven smallest are raised (rates 0.1 down to 0.0125), much as on the 50M Zipf trace.
    let caps: Vec<u64> = (0..20)
        .map(|i| (5_000.0 * 1000f64.powf(f64::from(i) / 19.0)) as u64)
        .collect();
    let plan = RatePlan::new(&caps, 0.01, 500, 1.0);
    let raised = plan.only(&plan.raised(0.01));
    group.bench_function("nested_levels_500", |b| {
        b.iter(|| {
            let mut levels = NestedShards::new(&raised, false);
            for r in &reqs {
                levels.access(key_hash(r.key), r.size);
            }
            black_box(levels.requests_served())
        })
    });
    group.finish();
}

criterion_group!(benches, sampling);
criterion_main!(benches);
