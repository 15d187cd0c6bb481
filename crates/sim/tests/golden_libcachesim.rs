//! Golden miss counts on the real CloudPhysics trace, every object one unit (and GDSF in
//! byte mode).
//!
//! The expected numbers are libCacheSim's (its `cachesim` at commit aa0fc409, run with
//! `--ignore-obj-size 1`; see `docs/policies.md` for the whole comparison), for example
//! `cachesim cloudPhysicsIO.oracleGeneral.bin oracleGeneral slru
//! 100,500,1000,2000,5000,10000,20000 --ignore-obj-size 1 -e n-seg=2`; the byte-mode
//! GDSF numbers come from the same command without `--ignore-obj-size` and with the byte
//! capacities of [`BYTE_SIZES`]. For these
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
    // libCacheSim `slru` (its default, four segments; the sizes are multiples of 4, see
    // slru.rs for why that matters)
    (
        "s4lru:variant=libcachesim",
        [98_316, 94_579, 94_084, 93_636, 89_800, 82_234, 60_636],
    ),
    // libCacheSim `slru -e n-seg=2`
    (
        "slru:variant=libcachesim",
        [98_408, 94_541, 93_999, 93_754, 89_869, 82_508, 64_875],
    ),
    // libCacheSim `gdsf`; with unit sizes it is the paper's LFU-DA (see lfuda.rs)
    (
        "gdsf",
        [98_977, 94_697, 94_176, 93_645, 91_290, 84_752, 70_479],
    ),
    (
        "lfuda",
        [98_977, 94_697, 94_176, 93_645, 91_290, 84_752, 70_479],
    ),
];

/// libCacheSim `lru-prob` (promotion probability 0.5). Randomized, with a different
/// generator: compared within [`LRUPROB_TOLERANCE`], not exactly.
const LRUPROB_LIBCACHESIM: [u64; 7] = [100_660, 95_660, 94_910, 94_239, 91_497, 79_177, 72_087];

/// 0.25% of the trace's 113,872 requests. Ours with seed 42 differs by at most 33 misses
/// at these sizes. At 100 objects a policy that never promoted (FIFO) would miss 835 more
/// than libCacheSim's LRU-prob and one that always did (LRU) 445 fewer, so the check
/// tells the rule from either of its ends (at the larger sizes the three are closer).
const LRUPROB_TOLERANCE: u64 = 285;

/// Byte mode (no `--ignore-obj-size`), capacities in bytes.
const BYTE_SIZES: [u64; 6] = [
    1_000_000,
    10_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
];

/// libCacheSim `gdsf` in byte mode at [`BYTE_SIZES`].
const GDSF_BYTES: [u64; 6] = [95_551, 93_742, 92_654, 90_278, 86_312, 72_864];

const S3FIFO_LIBCACHESIM: [u64; 7] = [96_893, 94_551, 94_017, 92_455, 85_382, 76_212, 70_417];

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn miss_counts_equal_libcachesim() {
    let trace = cloudphysics();
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
    specs.push(PolicySpec::parse("lruprob").unwrap());
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
    for (got, want) in misses("lruprob").iter().zip(LRUPROB_LIBCACHESIM) {
        assert!(
            got.abs_diff(want) <= LRUPROB_TOLERANCE,
            "lruprob: {got} vs libCacheSim {want}"
        );
    }
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn byte_mode_miss_counts_equal_libcachesim() {
    let trace = cloudphysics();
    let sizes: Vec<CacheSize> = BYTE_SIZES.iter().map(|&s| CacheSize::units(s)).collect();
    let options = ReplayOptions {
        ignore_size: false,
        seed: 42,
    };
    let specs = [PolicySpec::parse("gdsf").unwrap()];
    let results = replay(&trace, &specs, &sizes, options, &|_| {}).unwrap();
    let misses: Vec<u64> = results.iter().map(|r| r.misses()).collect();
    assert_eq!(misses, GDSF_BYTES);
}

/// The CloudPhysics trace, read from outside the repository.
fn cloudphysics() -> CompactTrace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/cloudPhysicsIO.oracleGeneral.bin");
    assert!(path.exists(), "{} is missing", path.display());
    let requests = read_all(&path, None, &ReadOptions::default()).unwrap();
    CompactTrace::from_requests(&requests)
}
