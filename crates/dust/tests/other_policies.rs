//! What Dust reports for policies the thesis did not cover. These pin the current
//! fingerprints so that a change to Dust or to a policy that alters them is noticed;
//! `docs/dust.md` explains each one (what Dust can and cannot tell apart).
//!
//! Measured size (no hint), 30 iterations, at 1,000 and 20,000 pages.

use dust::{fingerprint, Attribute, DustConfig, SimTarget};
use rayon::prelude::*;

use Attribute::*;

/// (policy, verdict, attributes) — the same at both sizes.
const EXPECTED: [(&str, &str, &[Attribute]); 8] = [
    // Recency order throughout; scan resistance never shows because Dust's eviction
    // scans are re-read (frequency 9 and 7), which ARC's T2 and LIRS's LIR set reward.
    ("arc", "lru", &[Recency]),
    ("lirs", "lru", &[Recency]),
    // Small FIFO + main FIFO with a ghost queue: FIFO order and history, like 2Q.
    ("s3fifo", "twoq", &[InitialAccess, Recency, History]),
    // Visited bits: FIFO when uniform, broken by half-set bits, like Clock.
    ("sieve", "clock", &[Recency, UseBits]),
    // Admission by a frequency sketch: the test region is never evicted in favour of the
    // eviction scan's pages in the short-term step.
    ("wtinylfu", "unknown", &[UseBits]),
    ("clockpro", "unknown", &[History, UseBits]),
    ("car", "clock", &[Recency, UseBits]),
    ("linux", "lru", &[Recency]),
];

#[test]
fn fingerprints_of_policies_outside_the_thesis() {
    let jobs: Vec<(usize, u64)> = (0..EXPECTED.len())
        .flat_map(|i| [(i, 1_000u64), (i, 20_000)])
        .collect();
    let got: Vec<String> = jobs
        .par_iter()
        .filter_map(|&(i, pages)| {
            let (policy, verdict, attrs) = EXPECTED[i];
            let mut t = SimTarget::parse(&format!("sim:{policy}:pages={pages}"), 17).unwrap();
            let cfg = DustConfig {
                iterations: 30,
                seed: 4,
                ..DustConfig::default()
            };
            let r = fingerprint(&mut t, &cfg).unwrap();
            let ok = r.verdict.verdict == verdict && r.verdict.attributes == attrs;
            (!ok).then(|| {
                format!(
                    "{policy}@{pages} (size {}): {} {:?} — {:?}",
                    r.size.pages, r.verdict.verdict, r.verdict.attributes, r.verdict.reasons
                )
            })
        })
        .collect();
    assert!(got.is_empty(), "{got:#?}");
}
