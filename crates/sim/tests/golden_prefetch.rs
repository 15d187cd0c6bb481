//! Prefetchers against libCacheSim's OBL on the committed CloudPhysics slice.
//!
//! The expected miss counts are libCacheSim's `cachesim` (commit aa0fc409, built as
//! `tests/data/README.md` says), run from an empty directory on
//! `tests/data/cloudPhysicsIO.20k.oracleGeneral.bin`:
//!
//! ```text
//! cachesim SLICE oracleGeneral ALGO 100,1000,5000 --ignore-obj-size 1 --num-thread 1 \
//!   --prefetch OBL --prefetch-params "block-size=1,sequential-confidence-k=K"
//!                                                      # ALGO in lru fifo, K in 1 4
//! ```
//!
//! `block-size=1` makes libCacheSim's prefetched objects one unit, as every object is in
//! unit mode. Both tools look at the last K requests, prefetch key + 1 after a hit or a
//! miss, insert it without admission, and evict as an insertion does, so the counts must
//! be equal. Without prefetching, LRU misses 16,599 / 15,529 / 15,354 at these sizes.

use std::path::PathBuf;

use policy::{AdmissionSpec, PolicySpec, PrefetchSpec};
use sim::replay::Grid;
use sim::{replay_scheduled, CacheSize, CompactTrace, ReplayOptions, RunResult, Schedule};
use trace::{read_all, ReadOptions};

fn slice() -> CompactTrace {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/cloudPhysicsIO.20k.oracleGeneral.bin");
    CompactTrace::from_requests(&read_all(&path, None, &ReadOptions::default()).unwrap())
}

fn runs(trace: &CompactTrace, policy: &str, prefetch: &str, sizes: &[u64]) -> Vec<RunResult> {
    let sizes: Vec<CacheSize> = sizes.iter().map(|&s| CacheSize::units(s)).collect();
    let prefetch = PrefetchSpec::parse(prefetch).unwrap();
    let grid = Grid {
        policies: &[PolicySpec::parse(policy).unwrap()],
        sizes: &sizes,
        admission: &AdmissionSpec::parse("always").unwrap(),
        prefetch: Some(&prefetch),
        options: ReplayOptions {
            ignore_size: true,
            seed: 42,
        },
        schedule: Schedule::default(),
    };
    replay_scheduled(trace, &grid, &|_| {}).unwrap()
}

#[test]
fn obl_equals_libcachesim_obl() {
    let trace = slice();
    let sizes = [100, 1_000, 5_000];
    for (policy, k, expected) in [
        ("lru", 1, [16_047, 14_973, 14_797]),
        ("lru", 4, [16_312, 15_242, 15_067]),
        ("fifo", 1, [16_402, 15_129, 14_817]),
        ("fifo", 4, [16_671, 15_398, 15_087]),
    ] {
        let got: Vec<u64> = runs(&trace, policy, &format!("obl:k={k}"), &sizes)
            .iter()
            .map(RunResult::misses)
            .collect();
        assert_eq!(got, expected, "{policy} with obl:k={k}");
    }
}

#[test]
fn prefetch_hits_are_counted_apart_from_requests() {
    let trace = slice();
    let r = &runs(&trace, "lru", "obl", &[1_000])[0];
    assert_eq!(r.counts.requests, 20_000, "prefetches are not requests");
    assert!(r.prefetch.issued > 0);
    assert!(r.prefetch.used <= r.prefetch.issued);
    // Every hit gained over plain LRU (15,529 misses) is a prefetched object being used,
    // though a prefetch may also push out something that would have hit.
    assert!(r.prefetch.used >= 15_529 - r.misses());
}

#[test]
fn deeper_readahead_issues_more() {
    let trace = slice();
    let shallow = &runs(&trace, "lru", "readahead:depth=1", &[1_000])[0];
    let obl = &runs(&trace, "lru", "obl", &[1_000])[0];
    assert_eq!(shallow.counts, obl.counts, "readahead:depth=1 is obl");
    let deep = &runs(&trace, "lru", "readahead:depth=8", &[1_000])[0];
    assert!(deep.prefetch.issued > obl.prefetch.issued);
}

/// The probability graph against libCacheSim's `PG`, LRU at 200 / 1,000 / 5,000 objects:
///
/// ```text
/// cachesim SLICE oracleGeneral lru 200,1000,5000 --ignore-obj-size 1 --num-thread 2 \
///   -p PG --prefetch-params "max-metadata-size=100000"
/// ```
///
/// gives 15,950 / 15,519 / 15,350 misses. Its default metadata bound (a tenth of the cache
/// size in bytes, 32 bytes an entry) records a handful of arcs for a cache counted in
/// objects, so prefetching never starts there; `max-metadata-size=100000` lifts it, as
/// `entries` (default 1,000,000) does here. The counting rules are the same; the order
/// of the prefetches is not: libCacheSim pops them from a heap it does not reorder when a
/// weight grows, this module sorts them by weight (`policy::prefetch::graph`). The counts
/// differ by 3, 2 and 1 misses; our own are pinned exactly so that a change shows.
#[test]
fn pg_is_within_three_misses_of_libcachesim_pg() {
    let trace = slice();
    let sizes = [200, 1_000, 5_000];
    let libcachesim = [15_950u64, 15_519, 15_350];
    let got: Vec<u64> = runs(&trace, "lru", "pg", &sizes)
        .iter()
        .map(RunResult::misses)
        .collect();
    assert_eq!(got, [15_953, 15_517, 15_349]);
    for (ours, theirs) in got.iter().zip(libcachesim) {
        assert!(
            ours.abs_diff(theirs) <= 3,
            "{ours} against libCacheSim's {theirs}"
        );
    }
    // It helps plain LRU (15,529 and 15,354 misses at 1,000 and 5,000 objects).
    assert!(got[1] < 15_529 && got[2] < 15_354);
}
