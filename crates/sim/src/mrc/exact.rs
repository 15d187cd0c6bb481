//! The exact LRU curve in one pass over a trace in memory.
//!
//! LRU has the inclusion property (Mattson et al. 1970): a cache of `c` objects holds
//! exactly the `c` most recently used keys, so a request hits in every cache larger than
//! its *stack distance* — the number of distinct keys touched since the same key's previous
//! request, itself included — and misses in every smaller one. One pass that computes every
//! request's stack distance therefore gives the misses at *every* size at once.
//!
//! The distance is computed in O(log n) with a Fenwick tree over request positions that
//! holds a 1 at the latest position of every key seen so far: the distance of a request at
//! `i` whose key was last seen at `p` is the number of 1s strictly between `p` and `i`, plus
//! one. The 1 then moves from `p` to `i`. Total O(n log n) time, O(n + keys) memory: the
//! whole trace is in memory. Streams larger than memory take SHARDS ([`super::shards`]),
//! whose stack ([`super::stack`]) is bounded by the keys it holds.
//!
//! Deletes are refused: deleting a key frees a slot in every cache, after which a small
//! cache holds fewer than its `c` most recent keys and the inclusion property no longer
//! holds.

use hashbrown::HashMap;

use super::{MrcError, MrcPoint};
use crate::compact::CompactTrace;

/// Fenwick (binary indexed) tree of counts over positions `0..n`.
struct Fenwick {
    tree: Vec<i32>,
}

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick {
            tree: vec![0; n + 1],
        }
    }

    fn add(&mut self, pos: usize, delta: i32) {
        let mut i = pos + 1;
        while i < self.tree.len() {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over positions `0..pos` (exclusive).
    fn prefix(&self, pos: usize) -> i64 {
        let mut i = pos;
        let mut s = 0i64;
        while i > 0 {
            s += i64::from(self.tree[i]);
            i &= i - 1;
        }
        s
    }
}

/// The LRU stack-distance histogram of a trace, in unit mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackDistances {
    /// `histogram[d]`: requests with stack distance `d` (index 0 unused).
    histogram: Vec<u64>,
    /// First accesses (infinite distance).
    cold: u64,
    /// All requests.
    requests: u64,
    /// `misses_above[c]`: requests with distance greater than `c`, cold ones excluded.
    misses_above: Vec<u64>,
}

impl StackDistances {
    /// One pass over `trace` (see the module docs). Refuses traces with deletes.
    pub fn compute(trace: &CompactTrace) -> Result<Self, MrcError> {
        if !trace.deletes().is_empty() {
            return Err(MrcError::Deletes(trace.deletes().len() as u64));
        }
        let items = trace.items();
        let mut tree = Fenwick::new(items.len());
        let mut last: HashMap<u64, usize> =
            HashMap::with_capacity(trace.summary().distinct_keys as usize);
        let mut histogram = vec![0u64; trace.summary().distinct_keys as usize + 1];
        let mut cold = 0;
        for (i, item) in items.iter().enumerate() {
            match last.insert(item.key, i) {
                Some(p) => {
                    let between = tree.prefix(i) - tree.prefix(p + 1);
                    let distance = between as usize + 1;
                    histogram[distance] += 1;
                    tree.add(p, -1);
                }
                None => cold += 1,
            }
            tree.add(i, 1);
        }
        let mut misses_above = vec![0u64; histogram.len()];
        let mut acc = 0;
        for c in (0..histogram.len()).rev() {
            misses_above[c] = acc;
            acc += histogram[c];
        }
        Ok(StackDistances {
            histogram,
            cold,
            requests: items.len() as u64,
            misses_above,
        })
    }

    /// Requests.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// First accesses: misses at every size.
    pub fn cold_misses(&self) -> u64 {
        self.cold
    }

    /// Requests with each finite distance (`histogram()[d]`, index 0 unused).
    pub fn histogram(&self) -> &[u64] {
        &self.histogram
    }

    /// LRU misses with a cache of `capacity` objects.
    pub fn misses_at(&self, capacity: u64) -> u64 {
        let c = (capacity as usize).min(self.misses_above.len() - 1);
        self.cold + self.misses_above[c]
    }

    /// The curve at the given capacities.
    pub fn curve(&self, capacities: &[u64]) -> Vec<MrcPoint> {
        capacities
            .iter()
            .map(|&capacity| MrcPoint {
                capacity,
                requests: self.requests,
                misses: self.misses_at(capacity),
            })
            .collect()
    }

    /// The `q`-quantile (0..=1) of the finite stack distances (reuses only), or `None`
    /// when no key is ever reused.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let reuses = self.requests - self.cold;
        if reuses == 0 {
            return None;
        }
        // The smallest d such that at least ceil(q * reuses) reuses have distance <= d.
        let rank = ((q.clamp(0.0, 1.0) * reuses as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (d, &n) in self.histogram.iter().enumerate() {
            acc += n;
            if acc >= rank {
                return Some(d as u64);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::{even_grid, sweep};
    use super::*;
    use crate::replay::ReplayOptions;
    use policy::PolicySpec;
    use proptest::prelude::*;
    use trace::Request;

    fn trace_of(keys: &[u64]) -> CompactTrace {
        let reqs: Vec<Request> = keys
            .iter()
            .map(|&key| Request {
                key,
                size: 1,
                ..Request::default()
            })
            .collect();
        CompactTrace::from_requests(&reqs)
    }

    #[test]
    fn hand_worked_distances() {
        // a b c a b d a c
        // a:cold b:cold c:cold a:3 (a,b,c... since a: b,c then a -> 3) b:3 (c,a,b)
        // d:cold a:3 (b,d,a) c:4 (a,b,d,... since c at 2: a,b,d,a -> distinct a,b,d + c = 4)
        let t = trace_of(&[1, 2, 3, 1, 2, 4, 1, 3]);
        let s = StackDistances::compute(&t).unwrap();
        assert_eq!(s.cold_misses(), 4);
        assert_eq!(s.histogram(), &[0, 0, 0, 3, 1]);
        assert_eq!(s.misses_at(1), 8);
        assert_eq!(s.misses_at(2), 8);
        assert_eq!(s.misses_at(3), 5);
        assert_eq!(s.misses_at(4), 4);
        assert_eq!(s.misses_at(100), 4);
        assert_eq!(s.quantile(0.5), Some(3));
        assert_eq!(s.quantile(0.9), Some(4));
        assert_eq!(s.quantile(0.0), Some(3));
    }

    #[test]
    fn deletes_are_refused() {
        let reqs = [
            Request::default(),
            Request {
                op: trace::Op::Delete,
                ..Request::default()
            },
        ];
        assert!(matches!(
            StackDistances::compute(&CompactTrace::from_requests(&reqs)),
            Err(MrcError::Deletes(1))
        ));
    }

    #[test]
    fn grid() {
        assert_eq!(even_grid(10, 5), vec![2, 4, 6, 8, 10]);
        assert_eq!(even_grid(3, 5), vec![1, 2, 3]);
        assert_eq!(even_grid(0, 2), vec![1]);
    }

    proptest! {
        #[test]
        fn one_pass_equals_replaying_lru_at_every_size(
            keys in proptest::collection::vec(0u64..40, 0..400)
        ) {
            let t = trace_of(&keys);
            let s = StackDistances::compute(&t).unwrap();
            let distinct = t.summary().distinct_keys.max(1);
            let caps: Vec<u64> = (1..=distinct + 1).collect();
            let lru = PolicySpec::parse("lru").unwrap();
            let opts = ReplayOptions { ignore_size: true, seed: 0 };
            let swept = sweep(&t, &lru, &caps, opts, &|_| {}).unwrap();
            prop_assert_eq!(s.curve(&caps), swept);
        }
    }
}
