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
    // The pages Dust reads first fill CLOCK-Pro's hot set (its warm-up, as LIRS fills its
    // LIR set) and stay while the later ones cycle through the cold share: survivors
    // follow frequency, and Dust names LFU.
    ("clockpro", "lfu", &[Frequency]),
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

/// Figure 2.12c: for 2Q, the long-term step puts a region in Am, gives its stripes their
/// recency and frequency there and evicts half of it from Am: the five least recent
/// stripes go (recency ranks 0-4: stripes 0, 5, 1, 6, 2), as LRU would choose (on the
/// pool one more, its batched eviction taking a few extra pages). With the
/// measured size it works on the simulator and on the pool; other verdicts skip the step.
#[test]
fn the_long_term_queue_of_2q_is_lru() {
    use dust::{target_from_spec, Target};
    for spec in [
        "sim:twoq:pages=1000",
        "sim:twoq:pages=20000",
        "pool:twoq:frames=1000",
    ] {
        let mut t: Box<dyn Target> = target_from_spec(spec, 3).unwrap();
        let cfg = DustConfig {
            iterations: if spec.contains("20000") { 10 } else { 40 },
            seed: 2,
            ..DustConfig::default()
        };
        let r = fingerprint(t.as_mut(), &cfg).unwrap();
        assert_eq!(r.verdict.verdict, "twoq", "{spec}");
        let lt = r.long_term.expect("2Q gets the long-term step");
        assert_eq!(lt.order, "lru", "{spec}: {:?}", lt.features);
        // stripes from least to most recent (the short-term step's recency ranks)
        let by_recency = [0, 5, 1, 6, 2, 7, 3, 8, 4, 9];
        let gone = by_recency
            .iter()
            .take_while(|&&s| lt.features.profile[s] < 0.5)
            .count();
        let kept = by_recency[gone..]
            .iter()
            .all(|&s| lt.features.profile[s] > 0.5);
        assert!(
            kept,
            "{spec}: not a recency prefix: {:?}",
            lt.features.profile
        );
        // half of the region on the simulator; the pool evicts in batches, one stripe more
        let expected = if spec.starts_with("pool") { 6 } else { 5 };
        assert_eq!(gone, expected, "{spec}: {:?}", lt.features.profile);
    }
    let mut lru = SimTarget::parse("sim:lru:pages=1000", 3).unwrap();
    let cfg = DustConfig {
        iterations: 10,
        ..DustConfig::default()
    };
    assert!(fingerprint(&mut lru, &cfg).unwrap().long_term.is_none());
}
