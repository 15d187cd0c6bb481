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
    misses_seeded(trace_path, spec, sizes, ignore_size, 42)
}

/// As [`misses`], with the replay's root seed.
fn misses_seeded(
    trace_path: &Path,
    spec: &str,
    sizes: &[u64],
    ignore_size: bool,
    seed: u64,
) -> Vec<u64> {
    assert!(trace_path.exists(), "{} is missing", trace_path.display());
    let requests = read_all(trace_path, None, &ReadOptions::default()).unwrap();
    let trace = CompactTrace::from_requests(&requests);
    let sizes: Vec<CacheSize> = sizes.iter().map(|&s| CacheSize::units(s)).collect();
    let options = ReplayOptions { ignore_size, seed };
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

/// Checks `got` against libCacheSim's `want` within `tolerance` misses per size, `None`
/// where no comparison is made.
fn assert_within(spec: &str, got: &[u64], want: &[Option<u64>], tolerance: u64) {
    assert_eq!(got.len(), want.len());
    for (got, want) in got.iter().zip(want) {
        if let Some(want) = want {
            assert!(
                got.abs_diff(*want) <= tolerance,
                "{spec}: {got} vs libCacheSim {want} (tolerance {tolerance})"
            );
        }
    }
}

/// libCacheSim `fifo-merge` (n-exam 100, n-keep 50, frequency retention). Exact where the
/// cache holds at most 100 objects (it is FIFO there); above, both tools break ties with
/// their own random draws. Over seeds 1-10 bufcache's counts spread by up to 63 misses on
/// the slice (0.32% of its requests, at 10,000 objects) and 199 on the whole trace
/// (0.17%, at 10,000); libCacheSim's count lies inside that range at every size but one
/// (slice, 2,000 objects: 1 above). The tolerance is 0.4% of the requests; FIFO misses
/// 267 more than FIFO-merge on the slice at 500 objects and 1,584 more on the whole trace,
/// so the check still tells the two apart.
const FIFO_MERGE: ([u64; 7], [u64; 7]) = (
    [17_514, 16_958, 15_572, 15_486, 15_413, 14_959, 14_530],
    [101_495, 94_899, 94_346, 93_485, 89_569, 82_569, 68_782],
);

#[test]
fn fifo_merge_is_within_the_seed_spread_of_libcachesim_on_the_slice() {
    let got = misses(&slice(), "fifomerge", &SLICE_OBJECTS, true);
    assert_eq!(got[..2], FIFO_MERGE.0[..2], "FIFO below the window");
    assert_within(
        "fifomerge",
        &got,
        &FIFO_MERGE.0.map(Some),
        20_000 * 4 / 1000,
    );
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn fifo_merge_is_within_the_seed_spread_of_libcachesim_on_the_whole_trace() {
    let got = misses(&whole(), "fifomerge", &FULL_OBJECTS, true);
    assert_eq!(got[0], FIFO_MERGE.1[0], "FIFO below the window");
    assert_within(
        "fifomerge",
        &got,
        &FIFO_MERGE.1.map(Some),
        113_872 * 4 / 1000,
    );
}

/// libCacheSim `RandomLRU` (64 samples) against `sampled:samples=64`. libCacheSim draws a
/// sample by picking a random non-empty bucket of its hash table (4,096 buckets for this
/// policy) and taking the object at the head of its chain, so objects behind another in a
/// chain are never drawn; once the cache holds a good fraction of 4,096 objects its choice
/// is far from uniform (at 5,000 objects on the whole trace it misses 3,100 more than any
/// of our seeds, at 10,000 on the slice 700 more). Compared up to 1,000 objects (at most
/// one object per four buckets), where both are uniform samplers: over seeds 1-20 our
/// counts spread by up to 16 misses on the slice and 27 on the whole trace, libCacheSim's
/// lies within 10 of that range; the tolerance is 0.1% of the requests (20 and 113). FIFO
/// misses 261 more than LRU on the slice at 50 objects, so sampling that ignored recency
/// would fail.
const RANDOM_LRU: ([Option<u64>; 7], [Option<u64>; 7]) = (
    [
        Some(17_255),
        Some(16_600),
        Some(15_582),
        Some(15_529),
        None,
        None,
        None,
    ],
    [
        Some(100_219),
        Some(95_400),
        Some(94_827),
        None,
        None,
        None,
        None,
    ],
);

#[test]
fn sampled_lru_is_within_the_seed_spread_of_libcachesim_on_the_slice() {
    let got = misses(&slice(), "sampled:samples=64", &SLICE_OBJECTS, true);
    assert_within("sampled:samples=64", &got, &RANDOM_LRU.0, 20);
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn sampled_lru_is_within_the_seed_spread_of_libcachesim_on_the_whole_trace() {
    let got = misses(&whole(), "sampled:samples=64", &FULL_OBJECTS, true);
    assert_within("sampled:samples=64", &got, &RANDOM_LRU.1, 113);
}
