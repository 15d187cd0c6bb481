//! Admission filters and prefetchers in the discrete-event simulator: run times worked out
//! by hand, and the same hits, misses, refusals and prefetches as `Cache` replay of the
//! same block stream when the disks are fast enough for timing not to matter.

use policy::{Access, AdmissionSpec, BuildContext, Cache, Outcome, PolicySpec, PrefetchSpec};
use sim::des::config::{SystemConfig, WritePolicy};
use sim::des::disk::ServiceTime;
use sim::des::ops::{FileSpec, Op, Script, Workload};
use sim::des::{simulate, Report, RunError};
use testutil::Rng;

const BLOCK: u64 = 1024;
const MS: u64 = 1_000_000;

/// LRU over `buffers` buffers, one disk of `disk_ms` per request, write-back, no CPU costs.
fn system(
    buffers: u32,
    disk_ms: f64,
    admission: Option<&str>,
    prefetch: Option<&str>,
) -> SystemConfig {
    let mut s = SystemConfig::default();
    s.cache.block_bytes = BLOCK as u32;
    s.cache.buffers = buffers;
    s.cache.write_policy = WritePolicy::WriteBack;
    s.cache.admission = admission.map(str::to_string);
    s.cache.prefetch = prefetch.map(str::to_string);
    s.disks.service = ServiceTime::Constant { ms: disk_ms };
    s
}

/// One process running `ops` over file 0, whose `blocks` blocks are all on disk.
fn workload(ops: Vec<Op>, blocks: u64) -> Workload {
    Workload {
        files: vec![FileSpec {
            initial_bytes: blocks * BLOCK,
            max_bytes: blocks * BLOCK,
        }],
        scripts: vec![Script {
            ops,
            delays: vec![],
        }],
        counters: 0,
        deps: Vec::new(),
    }
}

/// Whole-block reads of `blocks`, with `compute_ms` of computing between two of them.
fn reads(blocks: &[u64], compute_ms: u64) -> Vec<Op> {
    let mut ops = Vec::new();
    for (i, &b) in blocks.iter().enumerate() {
        if i > 0 && compute_ms > 0 {
            ops.push(Op::Compute(compute_ms * MS));
        }
        ops.push(Op::Read {
            file: 0,
            offset: b * BLOCK,
            len: BLOCK,
        });
    }
    ops
}

#[test]
fn a_refused_block_costs_its_disk_access_every_time_until_admitted() {
    // secondhit, 10 ms disk, block 0 read three times back to back. Read 1: a miss, refused,
    // read by uncached I/O (0–10 ms). Read 2: a miss again, admitted, read into a buffer
    // (10–20 ms). Read 3: a hit. Without a filter: one miss, two hits, 10 ms.
    let w = workload(reads(&[0, 0, 0], 0), 4);
    let r = simulate(&system(4, 10.0, Some("secondhit"), None), &w, 1).unwrap();
    assert_eq!((r.hits, r.misses, r.admission_refused), (1, 2, 1));
    assert_eq!((r.disk_reads, r.time_s), (2, 0.020));
    let r = simulate(&system(4, 10.0, None, None), &w, 1).unwrap();
    assert_eq!((r.hits, r.misses, r.admission_refused), (2, 1, 0));
    assert_eq!((r.disk_reads, r.time_s), (1, 0.010));
}

#[test]
fn a_refused_write_goes_straight_to_disk() {
    // prob:p=0 refuses everything. A whole-block write of block 0 is an uncached write
    // (0–10 ms, no read first); the read of block 0 that follows is an uncached read
    // (10–20 ms). Nothing is left dirty for the final sync.
    let write = Op::Write {
        file: 0,
        offset: 0,
        len: BLOCK,
    };
    let mut ops = vec![write];
    ops.extend(reads(&[0], 0));
    let r = simulate(
        &system(4, 10.0, Some("prob:p=0"), None),
        &workload(ops, 2),
        1,
    )
    .unwrap();
    assert_eq!((r.misses, r.admission_refused, r.hits), (2, 2, 0));
    assert_eq!((r.disk_writes, r.disk_reads, r.time_s), (1, 1, 0.020));
}

#[test]
fn a_prefetch_is_a_disk_read_that_overlaps_computing() {
    // OBL, 10 ms disk, blocks 0 1 2 3 read with 10 ms of computing between reads.
    //   0 ms   read 0: miss, disk 0–10; compute 10–20.
    //   20 ms  read 1: miss, disk 20–30; 1 follows 0, so 2 is prefetched: disk 30–40.
    //   40 ms  read 2: hit (its read ended at 40, and the disk's completion runs first, it
    //          was scheduled first); prefetch 3: disk 40–50.
    //   50 ms  read 3: hit; prefetch 4: disk 50–60, after the process ended at 50 ms.
    let w = workload(reads(&[0, 1, 2, 3], 10), 8);
    let r = simulate(&system(8, 10.0, None, Some("obl")), &w, 1).unwrap();
    assert_eq!((r.hits, r.misses), (2, 2));
    assert_eq!((r.prefetch_reads, r.prefetch_used, r.disk_reads), (3, 2, 5));
    assert_eq!((r.processes_done_s, r.time_s), (0.050, 0.060));
    // Without it every read waits for the disk: 4 × 10 ms + 3 × 10 ms.
    let r = simulate(&system(8, 10.0, None, None), &w, 1).unwrap();
    assert_eq!((r.misses, r.disk_reads, r.time_s), (4, 4, 0.070));
    assert_eq!(r.processes_done_s, 0.070);
}

#[test]
fn an_ordered_workload_refuses_a_filter_up_front() {
    let mut ops = reads(&[0], 0);
    ops.push(Op::Barrier);
    let err = simulate(
        &system(4, 1.0, Some("secondhit"), None),
        &workload(ops, 2),
        1,
    )
    .unwrap_err();
    match err {
        RunError::Config(p) => assert_eq!(p.key, "cache.admission"),
        other => panic!("{other}"),
    }
}

/// Running counts after each request: (hits, misses, refused, prefetches issued, used).
type Counts = (u64, u64, u64, u64, u64);

/// What `Cache` replay counts after each request of `keys` (LRU of `frames`).
fn replay_counts(
    keys: &[u64],
    frames: u64,
    admission: &str,
    prefetch: Option<&str>,
) -> Vec<Counts> {
    let ctx = BuildContext::new(frames, 1);
    let policy = PolicySpec::parse("lru").unwrap().build(&ctx).unwrap();
    let admitter = AdmissionSpec::parse(admission)
        .unwrap()
        .build(&ctx)
        .unwrap();
    let mut cache = Cache::new(policy, frames).with_admission(admitter);
    if let Some(p) = prefetch {
        cache = cache.with_prefetch(PrefetchSpec::parse(p).unwrap().build().unwrap());
    }
    let (mut hits, mut misses, mut refused) = (0, 0, 0);
    keys.iter()
        .enumerate()
        .map(|(t, &k)| {
            match cache.access(&Access::unit(k, t as u64)) {
                Outcome::Hit => hits += 1,
                Outcome::Miss { admitted, .. } => {
                    misses += 1;
                    refused += u64::from(!admitted);
                }
            }
            let p = cache.prefetch_stats();
            (hits, misses, refused, p.issued, p.used)
        })
        .collect()
}

fn des_counts(r: &Report) -> Counts {
    (
        r.hits,
        r.misses,
        r.admission_refused,
        r.prefetch_reads,
        r.prefetch_used,
    )
}

#[test]
fn the_des_counts_what_cache_replay_counts_when_timing_does_not_matter() {
    // 1 ms disk reads and 100 ms of computing between requests: every read, demand or
    // prefetch, is over before the next request, so only the policy, the filter and the
    // prefetcher decide. Each prefix of the stream is run, so the whole hit/miss sequence
    // is compared, not only its totals.
    testutil::explore(|seed| {
        let mut rng = seed.rng();
        let mut keys = vec![rng.gen_range(0..30u64)];
        while keys.len() < 80 {
            let last = *keys.last().unwrap();
            let next = if rng.gen_bool(0.5) && last < 29 {
                last + 1
            } else {
                rng.gen_range(0..30)
            };
            keys.push(next);
        }
        for (admission, prefetch) in [
            ("secondhit", Some("obl")),
            ("doorkeeper:window=8", Some("readahead:depth=3")),
            ("prob:p=0.5", None),
            ("always", Some("readahead:depth=2:k=2")),
        ] {
            let want = replay_counts(&keys, 8, admission, prefetch);
            // The stream exercises what it is meant to compare.
            let (_, _, refused, issued, used) = *want.last().unwrap();
            assert_eq!(refused > 0, admission != "always", "{keys:?}");
            assert_eq!(issued > 0 && used > 0, prefetch.is_some(), "{keys:?}");
            let filter = (admission != "always").then_some(admission);
            let s = system(8, 1.0, filter, prefetch);
            for n in 1..=keys.len() {
                let w = workload(reads(&keys[..n], 100), 40);
                let got = des_counts(&simulate(&s, &w, 1).unwrap());
                assert_eq!(
                    got,
                    want[n - 1],
                    "{admission} + {prefetch:?}, after request {n} of {keys:?}"
                );
            }
        }
    });
}
