//! Criterion benchmarks: what a sweep costs over a plain replay of the same grid.
//!
//! One seeded text trace (200k requests over 20k keys, skewed) in a temporary directory,
//! 4 policies x 4 sizes in unit mode:
//!
//! * `replay` — what `bufcache replay --csv` does: load the file, replay the grid.
//! * `sweep_new_file` — `sim::sweep::run_local` into a file that does not exist yet: the
//!   digest pass, the same load and replay, one append with fsync, the canonical rewrite.
//! * `sweep_complete_file` — the same sweep rerun over its complete results: only the
//!   digest and the file's rows are read.
//!
//! The ratio `sweep_new_file / replay` is the sweep's overhead (docs/performance.md).

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::io::Write;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use sim::sweep::{self, LocalOptions, SweepSpec};

fn write_trace(path: &Path, n: usize, keys: u64, seed: u64) {
    let mut x = seed | 1;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        writeln!(out, "{}", (u * u * u * keys as f64) as u64).unwrap();
    }
}

fn sweep_overhead(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    write_trace(&trace, 200_000, 20_000, 11);
    let spec = SweepSpec {
        traces: vec!["t.txt".into()],
        policies: ["lru", "fifo", "s3fifo", "arc"].map(String::from).to_vec(),
        sizes: ["0.01", "0.05", "0.1", "0.3"].map(String::from).to_vec(),
        seed: 1,
        ignore_size: true,
        page_size: 4096,
        ..SweepSpec::default()
    };
    let plan = spec.resolve(dir.path()).unwrap();
    let options = LocalOptions {
        traces_at_once: 1,
        memory_budget_bytes: u64::MAX,
    };
    let mut group = c.benchmark_group("sweep_200k_16_cells");
    group.sample_size(10);
    group.bench_function("replay", |b| {
        b.iter(|| {
            let loaded = sweep::load_trace(&plan, &trace).unwrap();
            let s = loaded.trace.summary();
            let always = policy::AdmissionSpec::parse("always").unwrap();
            let grid = plan.grid(&always, s.requests + s.deletes).unwrap();
            sim::replay_scheduled(&loaded.trace, &grid, &|_| {}).unwrap()
        })
    });
    let out = dir.path().join("r.csv");
    group.bench_function("sweep_new_file", |b| {
        b.iter(|| {
            let _ = std::fs::remove_file(&out);
            sweep::run_local(&plan, &out, options, &|_| {}).unwrap()
        })
    });
    group.bench_function("sweep_complete_file", |b| {
        b.iter(|| sweep::run_local(&plan, &out, options, &|_| {}).unwrap())
    });
    group.finish();
}

criterion_group!(benches, sweep_overhead);
criterion_main!(benches);
