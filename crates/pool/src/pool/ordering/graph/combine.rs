//! Combining write nodes: the rules that make two writes one node (Figure 4.7 for two
//! versions of a page, and by dependency for writes after the same node), and the
//! reachability test that decides whether they may be.

use bufcache_core::FixedState;

use super::{NodeId, OrderState};

impl OrderState {
    /// A graph write that follows live node `after` alone joins the node of the last such
    /// write, if that node is a graph node that still follows `after` and nothing else
    /// live: a fresh id that names it. Combining two writes whose dependencies are the
    /// same keeps every order (each may reach storage only after `after`, and no path can
    /// lead from `after` to a node that follows it), as combining two versions of a page
    /// does (Figure 4.7); it only makes them durable together. Without it, a transaction's
    /// data writes made one node each, thousands per level, and the bookkeeping of those
    /// nodes (sweeps, releases, confirmations walking a map of nodes far larger than the
    /// caches) was the largest part of the ordering's cost on real files
    /// (`docs/experiments/burnett-ordering.md`).
    pub(super) fn join_follower(&mut self, after: NodeId) -> Option<NodeId> {
        let x = self.find(*self.followers.get(&after)?);
        let node = self.live.get(&x)?;
        let follows_after_alone = node.graph
            && node.deps.iter().any(|&d| self.find(d) == after)
            && node.deps.iter().all(|&d| {
                let r = self.find(d);
                r == after || !self.live.contains_key(&r)
            });
        if !follows_after_alone {
            return None;
        }
        self.last += 1;
        let id = self.last;
        self.merged.insert(id, x);
        let node = self.live.get_mut(&x).expect("looked up above");
        node.aliases.push(id);
        node.open += 1;
        self.note_dependent_of(after);
        Some(id)
    }

    /// Whether `target` is reachable from the dependencies of live node `from`: whether
    /// `from` must follow `target`.
    pub(super) fn follows(&self, from: NodeId, target: NodeId) -> bool {
        let target = self.find(target);
        let mut stack: Vec<NodeId> = self
            .live
            .get(&self.find(from))
            .map_or_else(Vec::new, |n| n.deps.iter().map(|&d| self.find(d)).collect());
        let mut seen: hashbrown::HashSet<NodeId, FixedState> = Default::default();
        while let Some(n) = stack.pop() {
            if n == target {
                return true;
            }
            if !seen.insert(n) {
                continue;
            }
            if let Some(node) = self.live.get(&n) {
                stack.extend(node.deps.iter().map(|&d| self.find(d)));
            }
        }
        false
    }

    /// Drop the dependencies of live node `n` that are durable (they hold nothing back),
    /// so that nodes combined from many transactions do not carry every transaction's
    /// long-durable log record along.
    pub(super) fn prune_deps(&mut self, n: NodeId) {
        let Some(node) = self.live.get_mut(&n) else {
            return;
        };
        let mut deps = std::mem::take(&mut node.deps);
        deps.retain(|&d| self.is_live(d));
        self.live.get_mut(&n).expect("looked up above").deps = deps;
    }

    /// Combine nodes `a` and `b` (no path between them): one node after both's
    /// dependencies, named by both's ids (Figure 4.7). Returns the node both name now:
    /// the one with more names and released pages, so that the smaller moves (a node
    /// combined from thousands of data writes is not copied at every write that joins it).
    pub(super) fn merge(&mut self, a: NodeId, b: NodeId) -> NodeId {
        let (a, b) = (self.find(a), self.find(b));
        debug_assert_ne!(a, b);
        let size = |n: NodeId| {
            self.live
                .get(&n)
                .map_or(0, |n| n.aliases.len() + n.unconfirmed.len())
        };
        let (from, into) = if size(a) > size(b) { (b, a) } else { (a, b) };
        let moved = self.live.remove(&from).expect("combining a live node");
        for &alias in &moved.aliases {
            self.merged.insert(alias, into);
        }
        self.prune_deps(into);
        let mut added = Vec::new();
        for d in moved.deps {
            let d = self.find(d);
            if self.is_live(d) && !added.contains(&d) && !self.live[&into].deps.contains(&d) {
                added.push(d);
            }
        }
        let target = self
            .live
            .get_mut(&into)
            .expect("combining into a live node");
        target.pending += moved.pending;
        target.open += moved.open;
        target.aliases.extend(moved.aliases);
        target.deps.extend_from_slice(&added);
        if target.error.is_none() {
            target.error = moved.error;
        }
        target.graph &= moved.graph;
        target.unconfirmed.extend(moved.unconfirmed);
        if !target.unconfirmed.is_empty() {
            self.released_nodes.insert(into);
        }
        for d in added {
            self.dependents.entry(d).or_default().push(into);
            self.note_dependent_of(d);
        }
        into
    }
}
