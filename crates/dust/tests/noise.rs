//! With the simulated latency model (hits 2-3 µs, misses uniform 1-10 ms, one hit in a
//! thousand delayed by up to 3 ms), Dust judges hits by a calibrated threshold: the size
//! estimate stays within 5% and the verdicts hold.

use dust::{fingerprint, DustConfig, Judge, SimTarget, Target};
use rayon::prelude::*;

#[test]
fn timing_noise_keeps_size_and_verdicts() {
    let policies = [
        "fifo", "lru", "lfu", "random", "sfifo", "clock", "twoq", "lruk",
    ];
    let jobs: Vec<(&str, u64)> = policies
        .iter()
        .flat_map(|&p| [(p, 1_000u64), (p, 6_000)])
        .collect();
    let failures: Vec<String> = jobs
        .par_iter()
        .filter_map(|&(p, pages)| {
            let mut t = SimTarget::parse(&format!("sim:{p}:pages={pages}:timing=on"), 21).unwrap();
            assert!(t.has_timing());
            let cfg = DustConfig {
                iterations: 60,
                seed: 8,
                ..DustConfig::default()
            };
            let r = fingerprint(&mut t, &cfg).unwrap();
            let Judge::Timing { threshold_ns } = r.judge else {
                return Some(format!("{p}: judged by {:?}, not timing", r.judge));
            };
            // The threshold falls between the hit and miss modes.
            if !(3_000..1_000_000).contains(&threshold_ns) {
                return Some(format!("{p}: threshold {threshold_ns} ns"));
            }
            let err = (r.size.pages as f64 - pages as f64).abs() / pages as f64;
            if err > 0.05 {
                return Some(format!("{p}@{pages}: size {} ({err:.3})", r.size.pages));
            }
            // Misjudged probes are rare: only delayed hits.
            if r.judge_agreement.unwrap() < 0.99 {
                return Some(format!("{p}: agreement {:?}", r.judge_agreement));
            }
            (r.verdict.verdict != p).then(|| {
                format!(
                    "{p}@{pages}: got {} ({:?})",
                    r.verdict.verdict, r.verdict.reasons
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn calibration_refuses_latencies_that_do_not_separate() {
    // A target whose hits and misses take the same time cannot be judged by timing.
    struct Flat(SimTarget);
    impl Target for Flat {
        fn describe(&self) -> String {
            "flat".into()
        }
        fn blocks(&self) -> u64 {
            self.0.blocks()
        }
        fn read(&mut self, b: u64) -> Result<dust::Read, dust::DustError> {
            let r = self.0.read(b)?;
            Ok(dust::Read {
                latency_ns: Some(5_000 + b % 7),
                resident: r.resident,
            })
        }
        fn reset(&mut self) -> Result<(), dust::DustError> {
            self.0.reset()
        }
        fn has_timing(&self) -> bool {
            true
        }
        fn has_oracle(&self) -> bool {
            true
        }
    }
    let mut t = Flat(SimTarget::parse("sim:lru:pages=500", 1).unwrap());
    let err = fingerprint(&mut t, &DustConfig::default()).unwrap_err();
    assert!(err.to_string().contains("not separated"), "{err}");
}
