//! Golden miss counts of the coverage policies of issue 19 (part D) against libCacheSim,
//! on the committed slice `tests/data/cloudPhysicsIO.20k.oracleGeneral.bin` (20,000
//! requests, 13,778 objects; runs on every clone) and on the whole CloudPhysics trace
//! (`#[ignore]`d: it lives outside the repository).
//!
//! The expected numbers are libCacheSim's `cachesim` at commit aa0fc409, the build described
//! in `tests/data/README.md` (it prints exact miss counts; no algorithm touched). Unit mode
//! is `--ignore-obj-size 1` at 50,100,500,1000,2000,5000,10000 objects (the whole trace:
//! 100,...,20000); byte mode drops that flag and gives sizes in bytes. For example:
//!
//! ```text
//! cachesim tests/data/cloudPhysicsIO.20k.oracleGeneral.bin oracleGeneral size \
//!   50,100,500,1000,2000,5000,10000 --ignore-obj-size 1 --num-thread 1
//! cachesim tests/data/cloudPhysicsIO.20k.oracleGeneral.bin oracleGeneral size \
//!   100000,1000000,10000000,50000000,100000000 --num-thread 1
//! ```
//!
//! Deterministic policies must match exactly. Randomized ones (libCacheSim draws from its
//! own generator and samples hash-table buckets, not residents) are compared within a
//! tolerance justified beside each by the spread over seeds of both tools.

use std::path::Path;

use policy::PolicySpec;
use sim::{replay, CacheSize, CompactTrace, ReplayOptions};
use trace::{read_all, ReadOptions};

/// Unit-mode sizes of the slice and of the whole trace.
const SLICE_OBJECTS: [u64; 7] = [50, 100, 500, 1_000, 2_000, 5_000, 10_000];
const FULL_OBJECTS: [u64; 7] = [100, 500, 1_000, 2_000, 5_000, 10_000, 20_000];
/// Byte-mode sizes of the slice (its footprint is 744,672,256 bytes).
const SLICE_BYTES: [u64; 5] = [100_000, 1_000_000, 10_000_000, 50_000_000, 100_000_000];

/// Misses of `spec` on `trace_path` at `sizes`, in unit mode (`ignore_size`) or bytes.
fn misses(trace_path: &Path, spec: &str, sizes: &[u64], ignore_size: bool) -> Vec<u64> {
    assert!(trace_path.exists(), "{} is missing", trace_path.display());
    let requests = read_all(trace_path, None, &ReadOptions::default()).unwrap();
    let trace = CompactTrace::from_requests(&requests);
    let sizes: Vec<CacheSize> = sizes.iter().map(|&s| CacheSize::units(s)).collect();
    let options = ReplayOptions {
        ignore_size,
        seed: 42,
    };
    let specs = [PolicySpec::parse(spec).unwrap()];
    let results = replay(&trace, &specs, &sizes, options, &|_| {}).unwrap();
    results.iter().map(|r| r.misses()).collect()
}

fn slice() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/cloudPhysicsIO.20k.oracleGeneral.bin")
}

fn whole() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/cloudPhysicsIO.oracleGeneral.bin")
}

/// Whole-trace byte-mode sizes (decimal MB, as the GDSF byte-mode golden).
const FULL_BYTES: [u64; 6] = [
    1_000_000,
    10_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
];

/// libCacheSim `size`: the same binary heap, so the same choice among equal sizes too.
#[test]
fn size_equals_libcachesim_on_the_slice() {
    let units = misses(&slice(), "size", &SLICE_OBJECTS, true);
    assert_eq!(
        units,
        [17_201, 16_635, 15_961, 15_833, 15_539, 14_190, 13_814]
    );
    let bytes = misses(&slice(), "size", &SLICE_BYTES, false);
    assert_eq!(bytes, [18_299, 16_406, 15_282, 15_145, 14_787]);
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn size_equals_libcachesim_on_the_whole_trace() {
    let units = misses(&whole(), "size", &FULL_OBJECTS, true);
    assert_eq!(
        units,
        [100_351, 97_759, 97_207, 96_727, 92_836, 84_818, 62_075]
    );
    let bytes = misses(&whole(), "size", &FULL_BYTES, false);
    assert_eq!(bytes, [104_673, 94_306, 87_732, 81_395, 78_602, 69_670]);
}

/// libCacheSim `qdlp` (its defaults: `fifo-size-ratio=0.1`, `ghost-size-ratio=0.9`,
/// `main-cache=Clock2`, `move-to-main-threshold=1`), which is bufcache's `qdlp` defaults.
#[test]
fn qdlp_equals_libcachesim_on_the_slice() {
    let units = misses(&slice(), "qdlp", &SLICE_OBJECTS, true);
    assert_eq!(
        units,
        [16_527, 16_012, 15_504, 15_438, 15_414, 15_303, 15_268]
    );
    let bytes = misses(&slice(), "qdlp", &SLICE_BYTES[1..], false);
    assert_eq!(bytes, [15_639, 15_474, 15_417, 15_411]);
}

/// On the whole trace the counts are equal at every size but the smallest, where
/// bufcache misses 14 more (97,441 against 97,427, 0.012% of the requests): with 100
/// objects a ghost hit often finds the main clock full, and libCacheSim then evicts once
/// more than the newcomer needs (see `qdlp.rs`, "Deviations"). The bound is 20 there and 0
/// elsewhere.
#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn qdlp_equals_libcachesim_on_the_whole_trace() {
    const LIBCACHESIM: [u64; 7] = [97_427, 94_330, 93_919, 92_340, 84_738, 76_053, 64_426];
    const TOLERANCE: [u64; 7] = [20, 0, 0, 0, 0, 0, 0];
    let units = misses(&whole(), "qdlp", &FULL_OBJECTS, true);
    for ((got, want), tolerance) in units.iter().zip(LIBCACHESIM).zip(TOLERANCE) {
        assert!(
            got.abs_diff(want) <= tolerance,
            "qdlp: {units:?} vs {LIBCACHESIM:?}"
        );
    }
}
