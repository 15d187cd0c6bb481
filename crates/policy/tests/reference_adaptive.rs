//! MQ and LRFU against O(n)-per-request reference models written straight from the
//! papers' rules (issue 19, part C).

use policy::testkit::evictions;
use policy::{Lrfu, Mq};
use proptest::prelude::*;

/// Reference MQ (Zhou, Philbin, Li 2001, Figure 4): `m` queues as `Vec`s of
/// `(key, count, expire)`, least recent first; `Qout` a `Vec` of `(key, count)`, oldest
/// first, at most `out` long.
fn mq_ref(capacity: usize, m: usize, lifetime: u64, out: usize, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut queues: Vec<Vec<(u64, u32, u64)>> = vec![Vec::new(); m];
    let mut qout: Vec<(u64, u32)> = Vec::new();
    let mut result = Vec::new();
    for (now, &k) in trace.iter().enumerate() {
        let now = now as u64;
        let mut evicted = Vec::new();
        let found = queues
            .iter()
            .enumerate()
            .find_map(|(q, entries)| entries.iter().position(|e| e.0 == k).map(|i| (q, i)));
        let count = match found {
            Some((q, i)) => queues[q].remove(i).1 + 1,
            None => {
                if queues.iter().map(Vec::len).sum::<usize>() == capacity {
                    let lowest = queues.iter_mut().find(|q| !q.is_empty()).unwrap();
                    let (victim, c, _) = lowest.remove(0);
                    evicted.push(victim);
                    if out > 0 {
                        if qout.len() == out {
                            qout.remove(0);
                        }
                        qout.push((victim, c));
                    }
                }
                match qout.iter().position(|e| e.0 == k) {
                    Some(i) => qout.remove(i).1 + 1,
                    None => 1,
                }
            }
        };
        let level = ((31 - count.leading_zeros()) as usize).min(m - 1);
        queues[level].push((k, count, now + lifetime));
        for level in 1..m {
            if let Some(&(key, c, expire)) = queues[level].first() {
                if expire < now {
                    queues[level].remove(0);
                    queues[level - 1].push((key, c, now + lifetime));
                }
            }
        }
        result.push(evicted);
    }
    result
}

/// Reference LRFU (Lee et al. 2001) with `F(x) = (1/2)^(lambda x)`: every resident's CRF
/// recomputed from its whole reference history at each eviction; the least CRF goes, the
/// least recently referenced first among equals.
fn lrfu_ref(capacity: usize, lambda: f64, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut resident: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut result = Vec::new();
    for (now, &k) in trace.iter().enumerate() {
        let now = now as u64;
        let mut evicted = Vec::new();
        if let Some(e) = resident.iter_mut().find(|e| e.0 == k) {
            e.1.push(now);
        } else {
            if resident.len() == capacity {
                let crf = |refs: &[u64]| -> f64 {
                    refs.iter()
                        .map(|&t| 0.5f64.powf(lambda * (now - t) as f64))
                        .sum()
                };
                let i = (0..resident.len())
                    .min_by(|&a, &b| {
                        let (ca, cb) = (crf(&resident[a].1), crf(&resident[b].1));
                        ca.partial_cmp(&cb)
                            .unwrap()
                            .then_with(|| resident[a].1.last().cmp(&resident[b].1.last()))
                    })
                    .unwrap();
                evicted.push(resident.remove(i).0);
            }
            resident.push((k, vec![now]));
        }
        result.push(evicted);
    }
    result
}

fn trace() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(0u64..30, 0..400)
}

proptest! {
    #[test]
    fn mq_matches_reference(
        cap in 1usize..16,
        m in 1usize..5,
        lifetime in 1u64..40,
        out in 0usize..40,
        t in trace(),
    ) {
        let p = Mq::new(cap, m, lifetime, out);
        prop_assert_eq!(evictions(p, cap as u64, &t), mq_ref(cap, m, lifetime, out, &t));
    }
}

proptest! {
    /// Lambdas spread over the paper's range; the reference sums powers where the policy
    /// keeps logarithms, so exact ties between different histories (none arise from these
    /// values but equal counts at 0, which both break by recency) would be the only way
    /// for rounding to split them.
    #[test]
    fn lrfu_matches_reference(
        cap in 1usize..16,
        lambda in prop::sample::select(vec![0.0, 0.001, 0.05, 0.3, 0.5, 0.9, 1.0]),
        t in trace(),
    ) {
        let p = Lrfu::new(cap, lambda);
        prop_assert_eq!(evictions(p, cap as u64, &t), lrfu_ref(cap, lambda, &t));
    }
}
