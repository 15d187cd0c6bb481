//! Combining write nodes: the rules that make two writes one node (Figure 4.7 for two
//! versions of a page, and by dependency for writes after the same node), and the
//! reachability test that decides whether they may be.

use bufcache_core::FixedState;

use super::{NodeId, OrderState, Tag};

/// A set of node ids kept in an array while it is small (the common case: the few nodes
/// a reachability search passes between data and log nodes) and in a hash set past
/// that, so the write path does not allocate a hash table for two or three ids.
#[derive(Default)]
struct SmallIds {
    few: [NodeId; FEW],
    len: usize,
    many: hashbrown::HashSet<NodeId, FixedState>,
}

/// Ids kept in the array before the set takes over.
const FEW: usize = 8;

impl SmallIds {
    /// Add `id`; false if it was there.
    fn insert(&mut self, id: NodeId) -> bool {
        if self.len < FEW {
            if self.few[..self.len].contains(&id) {
                return false;
            }
            self.few[self.len] = id;
            self.len += 1;
            return true;
        }
        !self.few.contains(&id) && self.many.insert(id)
    }
}

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
        self.note_dependent_of(after);
        Some(self.new_name_of(x))
    }

    /// A graph write after `deps` whose first page is `frame`, where the frame carries a
    /// pending version of node `x` that already follows every live write the new one
    /// must follow (`deps` and the last barrier's marker), joins `x`: a fresh id that
    /// names it. This is Figure 4.7's combining done before a node exists: issuing a node
    /// for the write and merging it into `x` at once (what `order_write` would do, since
    /// no path can lead either way between `x` and a node issued after it whose
    /// dependencies `x` has already) allocated a node, searched the graph both ways and
    /// moved the node, all under the ordering lock while the writer held the page's
    /// latch. For a log record it is every time (a record after the page's pending
    /// records, with no dependency), and the other threads' log writers queued on that
    /// latch meanwhile (`docs/experiments/burnett-ordering.md`).
    pub(super) fn join_pending(&mut self, frame: u32, deps: &[NodeId]) -> Option<NodeId> {
        let Some(Tag::Pending { node, .. }) = self.tags.get(frame).copied() else {
            return None;
        };
        let x = self.find(node);
        let held = &self.live.get(&x)?.deps;
        // Two passes over the few dependencies rather than a vector of the live ones: this
        // runs under the ordering lock for every log record, with its page latched.
        if !self
            .live_deps(deps)
            .all(|d| held.iter().any(|&h| self.find(h) == d))
        {
            return None;
        }
        for d in deps.iter().copied().chain(self.floor) {
            if self.is_live(d) {
                self.note_dependent_of(d);
            }
        }
        Some(self.new_name_of(x))
    }

    /// A fresh id naming live node `x`, for a graph write under way that joins it.
    fn new_name_of(&mut self, x: NodeId) -> NodeId {
        self.last += 1;
        let id = self.last;
        self.merged.insert(id, x);
        let node = self.live.get_mut(&x).expect("joining a live node");
        node.aliases.push(id);
        node.open += 1;
        id
    }

    /// Whether `target` is reachable from the dependencies of live node `from`: whether
    /// `from` must follow `target`.
    ///
    /// Asked twice for every write onto a page that carries another node's version, under
    /// the ordering lock: a node with no live dependency (a log page's) answers without
    /// allocating, and the set of nodes seen is built only past the first few.
    pub(super) fn follows(&self, from: NodeId, target: NodeId) -> bool {
        let target = self.find(target);
        let Some(start) = self.live.get(&self.find(from)) else {
            return false;
        };
        if start.deps.is_empty() {
            return false;
        }
        let mut stack: Vec<NodeId> = start.deps.iter().map(|&d| self.find(d)).collect();
        let mut seen = SmallIds::default();
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
        target.followed |= moved.followed;
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
