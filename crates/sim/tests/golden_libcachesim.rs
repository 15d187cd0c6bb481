//! Golden miss counts on the real CloudPhysics trace, every object one unit.
//!
//! The expected numbers are libCacheSim's (its `cachesim` at commit aa0fc409, run with
//! `--ignore-obj-size 1`; see `docs/policies.md` for the whole comparison). For these
//! policies bufcache implements the same algorithm with the same defaults, so the counts
//! must be equal exactly, not approximately. `s3fifo:ghost=1.0` sizes the ghost queue as
//! libCacheSim does (0.9 of the cache = 1.0 of the main queue); it differs by at most 2
//! misses because libCacheSim also fills the main queue before its first eviction.
//!
//! The trace lives outside the repository (`../shared/traces/`), so the test is
//! `#[ignore]`d: `cargo test --release -- --ignored` runs it, and it fails if the trace is
//! missing.

use std::path::Path;

use policy::PolicySpec;
use sim::{replay, CacheSize, CompactTrace, ReplayOptions};
use trace::{read_all, ReadOptions};

const SIZES: [u64; 7] = [100, 500, 1_000, 2_000, 5_000, 10_000, 20_000];

const EXACT: &[(&str, [u64; 7])] = &[
    (
        "fifo",
        [101_495, 96_483, 95_520, 94_588, 91_581, 79_210, 72_229],
    ),
    (
        "lru",
        [100_215, 95_398, 94_823, 94_189, 91_527, 79_438, 72_053],
    ),
    (
        "belady",
        [94_010, 90_175, 87_025, 81_870, 71_311, 61_843, 51_843],
    ),
    (
        "mru",
        [110_826, 109_417, 108_363, 106_488, 100_554, 90_583, 74_333],
    ),
    (
        "lfu",
        [100_973, 96_651, 95_562, 93_707, 89_798, 81_059, 64_431],
    ),
    (
        "clock",
        [100_047, 95_293, 94_727, 94_081, 91_458, 84_750, 72_151],
    ),
    (
        "twoq",
        [97_458, 94_565, 94_117, 93_075, 87_879, 78_831, 72_103],
    ),
    (
        "arc",
        [97_330, 94_218, 94_027, 92_829, 87_770, 79_413, 64_422],
    ),
    (
        "sieve",
        [98_130, 94_379, 93_975, 93_411, 89_798, 81_059, 64_431],
    ),
];

const S3FIFO_LIBCACHESIM: [u64; 7] = [96_893, 94_551, 94_017, 92_455, 85_382, 76_212, 70_417];

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn miss_counts_equal_libcachesim() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/cloudPhysicsIO.oracleGeneral.bin");
    assert!(path.exists(), "{} is missing", path.display());
    let requests = read_all(&path, None, &ReadOptions::default()).unwrap();
    let trace = CompactTrace::from_requests(&requests);
    let sizes: Vec<CacheSize> = SIZES.iter().map(|&s| CacheSize::units(s)).collect();
    let options = ReplayOptions {
        ignore_size: true,
        seed: 42,
    };
    let mut specs: Vec<PolicySpec> = EXACT
        .iter()
        .map(|(name, _)| PolicySpec::parse(name).unwrap())
        .collect();
    specs.push(PolicySpec::parse("s3fifo:ghost=1.0").unwrap());
    let results = replay(&trace, &specs, &sizes, options, &|_| {}).unwrap();
    let misses = |label: &str| -> Vec<u64> {
        results
            .iter()
            .filter(|r| r.policy == label)
            .map(|r| r.misses())
            .collect()
    };
    for (name, expected) in EXACT {
        assert_eq!(misses(name), expected, "{name}");
    }
    for (got, want) in misses("s3fifo:ghost=1.0").iter().zip(S3FIFO_LIBCACHESIM) {
        assert!(
            got.abs_diff(want) <= 2,
            "s3fifo: {got} vs libCacheSim {want}"
        );
    }
}
