//! A full Dust fingerprint of a simulated 20,000-page cache: size estimate, test-region
//! check, then 300 iterations of the short-term, use-bit and history steps, on one thread.
//! The target is under 5 s per fingerprint.
//!
//! `cargo bench -p bufcache-bench --bench dust_fingerprint [-- POLICY]`

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{criterion_group, criterion_main, Criterion};
use dust::{fingerprint, DustConfig, SimTarget};

fn full_fingerprint(c: &mut Criterion) {
    let mut group = c.benchmark_group("dust_20000_pages_300_iterations");
    group.sample_size(10);
    for policy in ["lru", "clock", "twoq", "lruk"] {
        group.bench_function(policy, |b| {
            b.iter(|| {
                let mut t = SimTarget::parse(&format!("sim:{policy}:pages=20000"), 1).unwrap();
                let r = fingerprint(&mut t, &DustConfig::default()).unwrap();
                assert_eq!(r.verdict.verdict, policy);
                r.probes.len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, full_fingerprint);
criterion_main!(benches);
