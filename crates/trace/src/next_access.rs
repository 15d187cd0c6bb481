//! Next-access indices, the input of Belady's OPT.

use hashbrown::HashMap;

use crate::{Request, NEVER};

/// Sets each request's `next_access` to the index of the next request with the same key,
/// or [`NEVER`]. One backward pass with a map from key to the latest index seen: O(n)
/// time, O(distinct keys) memory.
pub fn fill_next_access(reqs: &mut [Request]) {
    let mut next: HashMap<u64, u64> = HashMap::new();
    for (i, r) in reqs.iter_mut().enumerate().rev() {
        r.next_access = next.insert(r.key, i as u64).unwrap_or(NEVER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn with_keys(keys: &[u64]) -> Vec<Request> {
        keys.iter()
            .map(|&key| Request {
                key,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn hand_worked() {
        let mut r = with_keys(&[1, 2, 1, 3, 2, 1]);
        fill_next_access(&mut r);
        let n: Vec<u64> = r.iter().map(|r| r.next_access).collect();
        assert_eq!(n, [2, 4, 5, NEVER, NEVER, NEVER]);
    }

    proptest! {
        /// Against the quadratic definition: the first later index with the same key.
        #[test]
        fn matches_naive(keys in proptest::collection::vec(0u64..8, 0..200)) {
            let mut r = with_keys(&keys);
            fill_next_access(&mut r);
            for i in 0..keys.len() {
                let want = (i + 1..keys.len()).find(|&j| keys[j] == keys[i]).map_or(NEVER, |j| j as u64);
                prop_assert_eq!(r[i].next_access, want);
            }
        }
    }
}
