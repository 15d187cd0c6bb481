//! Segmented LRU and the greedy-dual policies (LFU-DA, GDSF) against O(n)-per-request
//! reference models written straight from the papers' rules.

use policy::testkit::evictions;
use policy::{Gdsf, Lfuda, Slru};
use proptest::prelude::*;

/// Reference segmented LRU: one `Vec` per segment, least recent first; every segment's
/// share is `capacity / segments`, newcomers enter segment 0 (or, with `fill_lowest`, the
/// lowest segment with room), a hit lifts one segment and overflow falls one segment.
fn slru_ref(capacity: usize, segments: usize, fill_lowest: bool, trace: &[u64]) -> Vec<Vec<u64>> {
    let share = capacity / segments;
    let mut segs: Vec<Vec<u64>> = vec![Vec::new(); segments];
    let mut out = Vec::new();
    for &k in trace {
        let mut evicted = Vec::new();
        if let Some(s) = segs.iter().position(|seg| seg.contains(&k)) {
            segs[s].retain(|&x| x != k);
            let up = (s + 1).min(segments - 1);
            segs[up].push(k);
            // overflow falls down one level at a time, from the top down
            for level in (1..segments).rev() {
                while segs[level].len() > share {
                    let tail = segs[level].remove(0);
                    segs[level - 1].push(tail);
                }
            }
        } else {
            if segs.iter().map(Vec::len).sum::<usize>() == capacity {
                let lowest = segs.iter_mut().find(|seg| !seg.is_empty()).unwrap();
                evicted.push(lowest.remove(0));
            }
            let target = if fill_lowest {
                (0..segments).find(|&s| segs[s].len() < share).unwrap_or(0)
            } else {
                0
            };
            segs[target].push(k);
        }
        out.push(evicted);
    }
    out
}

/// Reference greedy-dual with unit sizes: `(key, frequency, priority, set-at)` per
/// resident; evict the least (priority, set-at) and raise `L` to its priority.
fn lfuda_ref(capacity: usize, trace: &[u64]) -> Vec<Vec<u64>> {
    let mut resident: Vec<(u64, u64, u64, usize)> = Vec::new();
    let mut inflation = 0u64;
    let mut out = Vec::new();
    for (t, &k) in trace.iter().enumerate() {
        let mut evicted = Vec::new();
        if let Some(e) = resident.iter_mut().find(|e| e.0 == k) {
            e.1 += 1;
            e.2 = inflation + e.1;
            e.3 = t;
        } else {
            if resident.len() == capacity {
                let i = (0..resident.len())
                    .min_by_key(|&i| (resident[i].2, resident[i].3))
                    .unwrap();
                inflation = inflation.max(resident[i].2);
                evicted.push(resident.remove(i).0);
            }
            resident.push((k, 1, inflation + 1, t));
        }
        out.push(evicted);
    }
    out
}

fn trace() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(0u64..30, 0..400)
}

proptest! {
    #[test]
    fn slru_matches_reference(cap in 1usize..20, segments in 1usize..5, t in trace()) {
        let p: Slru = Slru::new(cap as u64, segments);
        prop_assert_eq!(evictions(p, cap as u64, &t), slru_ref(cap, segments, false, &t));
    }

    /// The reference's top-down overflow sweep equals the policy's recursive cascade
    /// only while at most one level overflows per hit, which holds for unit sizes.
    #[test]
    fn slru_libcachesim_placement_matches_reference(
        cap in 1usize..20,
        segments in 1usize..5,
        t in trace(),
    ) {
        let p: Slru = Slru::new(cap as u64, segments).with_libcachesim_placement(true);
        prop_assert_eq!(evictions(p, cap as u64, &t), slru_ref(cap, segments, true, &t));
    }

    #[test]
    fn lfuda_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(evictions(Lfuda::new(cap), cap as u64, &t), lfuda_ref(cap, &t));
    }

    /// With every size 1, GDSF's key is LFU-DA's times 1e6: the same choices.
    #[test]
    fn gdsf_with_unit_sizes_matches_reference(cap in 1usize..20, t in trace()) {
        prop_assert_eq!(evictions(Gdsf::new(cap), cap as u64, &t), lfuda_ref(cap, &t));
    }
}
