//! Admission filters against libCacheSim's admissioners on the committed CloudPhysics slice.
//!
//! The expected miss counts are libCacheSim's `cachesim` (commit aa0fc409, built as
//! `tests/data/README.md` says), run from an empty directory on
//! `tests/data/cloudPhysicsIO.20k.oracleGeneral.bin`:
//!
//! ```text
//! cachesim SLICE oracleGeneral ALGO 100,1000,5000 --ignore-obj-size 1 --num-thread 1 \
//!   -a bloomfilter                                     # ALGO in lru fifo arc
//! cachesim SLICE oracleGeneral lru 1048576,16777216 --num-thread 1 -a size \
//!   --admission-params size=S                          # S in 4096 8193
//! ```
//!
//! libCacheSim's `bloomfilter` keeps an exact set of the objects it has seen, so bufcache's
//! `secondhit` must give the same counts exactly; `size` admits sizes strictly below its
//! bound in both tools. `prob` is not compared: the two tools draw different random streams.

use std::path::PathBuf;

use policy::{AdmissionSpec, PolicySpec};
use sim::{replay_admitted, CacheSize, CompactTrace, ReplayOptions};
use trace::{read_all, ReadOptions};

fn slice() -> CompactTrace {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/cloudPhysicsIO.20k.oracleGeneral.bin");
    CompactTrace::from_requests(&read_all(&path, None, &ReadOptions::default()).unwrap())
}

fn misses(
    trace: &CompactTrace,
    policy: &str,
    admission: &str,
    sizes: &[u64],
    units: bool,
) -> Vec<u64> {
    let sizes: Vec<CacheSize> = sizes.iter().map(|&s| CacheSize::units(s)).collect();
    let options = ReplayOptions {
        ignore_size: units,
        seed: 42,
    };
    replay_admitted(
        trace,
        &[PolicySpec::parse(policy).unwrap()],
        &sizes,
        &AdmissionSpec::parse(admission).unwrap(),
        options,
        &|_| {},
    )
    .unwrap()
    .iter()
    .map(|r| r.misses())
    .collect()
}

#[test]
fn second_hit_equals_libcachesim_bloomfilter() {
    let trace = slice();
    let sizes = [100, 1_000, 5_000];
    for (policy, expected) in [
        ("lru", [16_352, 15_996, 15_986]),
        ("fifo", [16_601, 15_996, 15_986]),
        ("arc", [16_151, 15_986, 15_986]),
    ] {
        assert_eq!(
            misses(&trace, policy, "secondhit", &sizes, true),
            expected,
            "{policy}"
        );
    }
}

#[test]
fn size_threshold_equals_libcachesim_size() {
    let trace = slice();
    let sizes = [1 << 20, 16 << 20];
    assert_eq!(
        misses(&trace, "lru", "always", &sizes, false),
        [16_349, 15_599]
    );
    assert_eq!(
        misses(&trace, "lru", "size:below=4096", &sizes, false),
        [18_010, 18_010]
    );
    assert_eq!(
        misses(&trace, "lru", "size:below=8193", &sizes, false),
        [15_731, 15_453]
    );
}
