//! Every registered policy runs in every driver of the `Policy` trait with nothing but its
//! file and its registry line: the trace replay, the discrete-event simulator, the real
//! buffer pool and Dust's `pool:` target. No list of names is kept here or in any driver;
//! the policies come from the registry, so a policy added tomorrow is in this test the day
//! it is registered. (`hyperbolic` was added that way: its file, one registry line, and
//! the docs.)
//!
//! Offline policies (they need the future) run in the replay, which knows it, and every
//! other driver must refuse them with an error rather than run them wrongly.

use policy::{BuildContext, HitPath, Policy as _, PolicySpec, POLICIES};
use pool::{BufferPool, MemStorage};
use sim::compact::CompactTrace;
use sim::des::config::SystemConfig;
use sim::des::disk::ServiceTime;
use sim::des::ops::{FileSpec, Op, Script, Workload};
use sim::replay::{replay, ReplayOptions};
use sim::CacheSize;
use trace::synth::{generate, Workload as Synth};

/// Every registered policy with its defaults, and the parameter choices that change how a
/// policy takes its hits (so the pool's lock-free counter path runs each such policy too).
fn specs() -> Vec<String> {
    let mut out: Vec<String> = POLICIES.iter().map(|i| i.name.to_string()).collect();
    out.extend(["gclock:max=5", "hyperbolic:insertion_age=true"].map(String::from));
    out
}

fn hit_path(spec: &str) -> HitPath {
    PolicySpec::parse(spec)
        .unwrap()
        .build(&BuildContext::new(64, 0))
        .unwrap()
        .hit_path()
}

#[test]
fn hyperbolic_is_registered_and_takes_the_counter_path_when_asked() {
    assert!(POLICIES.iter().any(|i| i.name == "hyperbolic"));
    assert_eq!(
        hit_path("hyperbolic:insertion_age=true"),
        HitPath::Counter { cap: 255 }
    );
    assert_eq!(hit_path("hyperbolic"), HitPath::Ordered);
}

#[test]
fn every_policy_replays() {
    let w: Synth = "zipf(keys=2000,alpha=0.8)".parse().unwrap();
    let requests: Vec<_> = generate(&w, 30_000, 3).collect();
    let trace = CompactTrace::from_requests(&requests);
    let size: CacheSize = "200".parse().unwrap();
    let opts = ReplayOptions {
        ignore_size: true,
        seed: 1,
    };
    let run = |spec: &str| {
        let spec = PolicySpec::parse(spec).unwrap();
        let r = replay(&trace, &[spec], std::slice::from_ref(&size), opts, &|_| {}).unwrap();
        r[0].misses()
    };
    let opt = run("belady");
    for spec in specs() {
        let misses = run(&spec);
        // at least the optimum, and a 10% cache of a Zipf workload hits something
        assert!(
            (opt..30_000).contains(&misses),
            "{spec}: {misses} misses (OPT {opt})"
        );
    }
}

#[test]
fn every_online_policy_runs_in_the_simulator_and_offline_ones_are_refused() {
    // one process reading a 400-block file in a skewed order through 64 buffers
    let reads: Vec<Op> = (0..3000u64)
        .map(|i| {
            let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33;
            let block = (x % 400) * (x % 5) / 4;
            Op::Read {
                file: 0,
                offset: block * 1024,
                len: 1024,
            }
        })
        .collect();
    let workload = Workload {
        files: vec![FileSpec {
            initial_bytes: 400 * 1024,
            max_bytes: 400 * 1024,
        }],
        scripts: vec![Script {
            ops: reads,
            delays: vec![],
        }],
        counters: 0,
        deps: Vec::new(),
    };
    for spec in specs() {
        let mut s = SystemConfig::default();
        s.cache.block_bytes = 1024;
        s.cache.buffers = 64;
        s.cache.policy = spec.clone();
        s.disks.count = 1;
        s.disks.service = ServiceTime::Constant { ms: 5.0 };
        let result = sim::des::simulate(&s, &workload, 1);
        if hit_path(&spec) == HitPath::Offline {
            assert!(
                result.is_err(),
                "{spec}: the simulator ran an offline policy"
            );
            continue;
        }
        let r = result.unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(r.hits + r.misses, 3000, "{spec}");
        assert!(r.hits > 0 && r.disk_reads >= 64, "{spec}: {r:?}");
    }
}

#[test]
fn every_online_policy_runs_in_the_pool_and_keeps_every_byte() {
    for spec in specs() {
        let built = BufferPool::builder()
            .capacity_frames(16)
            .page_size(4096)
            .policy(&spec)
            .build_with_storage(MemStorage::new());
        if hit_path(&spec) == HitPath::Offline {
            assert!(
                built.is_err(),
                "{spec}: the pool accepted an offline policy"
            );
            continue;
        }
        let pool = built.unwrap_or_else(|e| panic!("{spec}: {e}"));
        let f = pool.create("/every-driver").unwrap();
        // 64 pages through 16 frames, then read back in a skewed order (hits and misses)
        for page in 0..64u64 {
            pool.write(f, page * 4096, &[page as u8; 4096]).unwrap();
        }
        let mut buf = [0u8; 4096];
        for i in 0..2000u64 {
            let page = (i * i + 7 * i) % 64 % (1 + i % 64);
            assert_eq!(pool.read(f, page * 4096, &mut buf).unwrap(), 4096);
            assert!(
                buf.iter().all(|&b| b == page as u8),
                "{spec}: page {page} came back wrong"
            );
        }
        let stats = pool.stats();
        assert!(stats.hits > 0 && stats.evictions > 0, "{spec}: {stats:?}");
    }
}

#[test]
fn every_online_policy_is_a_dust_pool_target() {
    const FRAMES: u64 = 300;
    for spec in specs() {
        let target = format!("pool:{spec}:frames={FRAMES}");
        let built = dust::target_from_spec(&target, 5);
        if hit_path(&spec) == HitPath::Offline {
            assert!(built.is_err(), "{target}: accepted an offline policy");
            continue;
        }
        let mut t = built.unwrap_or_else(|e| panic!("{target}: {e}"));
        let config = dust::DustConfig {
            iterations: 10,
            seed: 5,
            ..dust::DustConfig::default()
        };
        let report =
            dust::fingerprint(t.as_mut(), &config).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(
            (1..=FRAMES).contains(&report.size.pages),
            "{target}: measured {} pages",
            report.size.pages
        );
    }
}
