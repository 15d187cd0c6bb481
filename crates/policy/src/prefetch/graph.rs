//! The probability graph (Griffioen and Appleton, "Reducing File System Latency using a
//! Predictive Approach", USENIX Summer 1994): a history-based prefetcher.
//!
//! Every object is a node; an arc `a -> b` counts how often `b` was requested within the
//! `lookahead` requests that followed a request for `a`. After a request for `a`, the
//! objects whose arc weight is a large enough share of `a`'s total are prefetched: unlike
//! sequential read-ahead, it learns any recurring order (a build reading the same headers,
//! a query touching the same index pages).
//!
//! Counting follows libCacheSim's `PG` module, so its parameters and defaults mean what
//! they mean there: when a request for `a` leaves the window of the last `lookahead`
//! requests, each of those `lookahead` requests adds one to its arc from `a` and to `a`'s
//! total (an object requested twice in the window counts twice), and `b` is prefetched
//! when `weight(a -> b) / total(a) > threshold`. Prefetches go in order of weight, the
//! heaviest first (ties by key). libCacheSim reads them from a heap that it does not
//! reorder when a weight grows (`pqueue_change_priority` after the increment takes the
//! "percolate down" branch), so it can stop before the heaviest arcs; this module keeps the
//! order exact, and the two differ there (the golden test says by how much).
//!
//! Memory: the graph records at most `entries` nodes and arcs (libCacheSim bounds it in
//! bytes, a tenth of the cache size by default, which for a cache counted in objects is a
//! handful of entries); once full, known arcs keep counting and new ones are not recorded.

use bufcache_core::FixedHashMap;
use std::collections::VecDeque;

/// One node: its total and its arcs' weights.
#[derive(Clone, Debug, Default)]
struct Node {
    total: u64,
    arcs: FixedHashMap<u64>,
}

/// Griffioen and Appleton's probability graph.
#[derive(Clone, Debug)]
pub(super) struct ProbabilityGraph {
    lookahead: usize,
    threshold: f64,
    max_entries: usize,
    /// The last `lookahead` requested keys, oldest first.
    window: VecDeque<u64>,
    nodes: FixedHashMap<Node>,
    /// Nodes and arcs recorded.
    entries: usize,
    /// Scratch list of (weight, key) for the prefetch order.
    heavy: Vec<(u64, u64)>,
}

impl ProbabilityGraph {
    pub(super) fn new(lookahead: usize, threshold: f64, max_entries: usize) -> Self {
        ProbabilityGraph {
            lookahead,
            threshold,
            max_entries,
            window: VecDeque::with_capacity(lookahead + 1),
            nodes: FixedHashMap::default(),
            entries: 0,
            heavy: Vec::new(),
        }
    }

    /// Record a request for `key` and push the keys to prefetch onto `out`.
    pub(super) fn after_request(&mut self, key: u64, out: &mut Vec<u64>) {
        self.window.push_back(key);
        if self.window.len() > self.lookahead {
            let from = self.window.pop_front().expect("the window is not empty");
            self.record(from);
        }
        self.predict(key, out);
    }

    /// `from` left the window: every request in it follows `from` once more.
    fn record(&mut self, from: u64) {
        let room = self.entries < self.max_entries;
        let node = match self.nodes.get_mut(&from) {
            Some(node) => node,
            None if room => {
                self.entries += 1;
                self.nodes.entry(from).or_default()
            }
            None => return,
        };
        node.total += self.window.len() as u64;
        for &to in &self.window {
            match node.arcs.get_mut(&to) {
                Some(weight) => *weight += 1,
                None if self.entries < self.max_entries => {
                    node.arcs.insert(to, 1);
                    self.entries += 1;
                }
                None => {}
            }
        }
    }

    /// The successors of `key` above the threshold, heaviest first.
    fn predict(&mut self, key: u64, out: &mut Vec<u64>) {
        let Some(node) = self.nodes.get(&key) else {
            return;
        };
        let total = node.total as f64;
        self.heavy.clear();
        self.heavy.extend(
            node.arcs
                .iter()
                .filter(|&(_, &w)| w as f64 / total > self.threshold)
                .map(|(&to, &w)| (w, to)),
        );
        self.heavy
            .sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        out.extend(self.heavy.iter().map(|&(_, to)| to));
    }
}

#[cfg(test)]
mod tests {
    use super::ProbabilityGraph;

    fn run(g: &mut ProbabilityGraph, keys: &[u64]) -> Vec<Vec<u64>> {
        keys.iter()
            .map(|&k| {
                let mut out = Vec::new();
                g.after_request(k, &mut out);
                out
            })
            .collect()
    }

    #[test]
    fn learns_what_follows_within_the_window() {
        // Lookahead 2, threshold 0.3. Requests 1 2 3 1 2 3 1 at t0..t6:
        // t2: 1 leaves the window, which holds 2 3: 1 -> 2, 1 -> 3, total(1) = 2.
        // t3: 2 leaves (3 1 follow it). Request 1 sees weights 1/2 each: both above 0.3,
        //     heaviest first, ties by key: [2, 3].
        // t4: 3 leaves (1 2). Request 2 predicts [1, 3].
        // t5: 1 leaves again (2 3): 1 -> 2 = 2, 1 -> 3 = 2, total 4. Request 3: [1, 2].
        // t6: request 1: [2, 3].
        let mut g = ProbabilityGraph::new(2, 0.3, usize::MAX);
        let got = run(&mut g, &[1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(
            got,
            vec![
                vec![],
                vec![],
                vec![],
                vec![2, 3],
                vec![1, 3],
                vec![1, 2],
                vec![2, 3],
            ]
        );
    }

    #[test]
    fn rare_successors_stay_below_the_threshold_and_heavier_go_first() {
        // Lookahead 1: 5 is followed by 6 three times and by 7 once (total 4).
        // Threshold 0.3: 6 (0.75) qualifies, 7 (0.25) does not.
        let mut g = ProbabilityGraph::new(1, 0.3, usize::MAX);
        run(&mut g, &[5, 6, 5, 6, 5, 7, 5, 6]);
        let mut out = Vec::new();
        g.after_request(5, &mut out);
        assert_eq!(out, vec![6]);
        // At 0.2 both qualify, the heavier first.
        let mut g = ProbabilityGraph::new(1, 0.2, usize::MAX);
        run(&mut g, &[5, 6, 5, 6, 5, 7, 5, 6]);
        out.clear();
        g.after_request(5, &mut out);
        assert_eq!(out, vec![6, 7]);
    }

    #[test]
    fn a_full_graph_keeps_counting_known_arcs_only() {
        // Room for one node and one arc: 1 -> 2 is recorded; 2 -> 3 and 1 -> 4 are not.
        let mut g = ProbabilityGraph::new(1, 0.1, 2);
        run(&mut g, &[1, 2, 3, 1, 4, 1, 2, 1]);
        assert_eq!(g.entries, 2);
        assert_eq!(g.nodes.len(), 1);
        let node = &g.nodes[&1];
        // 1 left the window three times (before 2, 4 and 2): total 3, weight(1 -> 2) 2.
        assert_eq!((node.total, node.arcs[&2]), (3, 2));
        assert!(!node.arcs.contains_key(&4));
    }
}
