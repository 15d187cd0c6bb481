//! Write ordering (Burnett 2006, ch.4): file-system barriers, asynchronous graphs, and the
//! checker that proves a run kept its promises.
//!
//! The engine owns the buffers; this module owns the bookkeeping it consults:
//!
//! * [`Epochs`] — `barrier()` closes the open epoch. A dirty buffer belongs to the epoch in
//!   which it was dirtied; the *safe epoch* is the oldest epoch that still has dirty or
//!   in-flight buffers, and only its buffers may be written. A buffer written again after
//!   a barrier is duplicated by the engine: the old version stays in its epoch.
//! * [`Graph`] — `graphwrite()` nodes: each holds the buffers it dirtied and the nodes it
//!   must follow. The *write map* takes the application's write ids to nodes (several ids
//!   name one node once nodes are combined). A node dies when its last buffer reaches the
//!   disk; its ids then leave the map, which is how later writes know a dependency is
//!   satisfied.
//! * [`Checker`] — independent of both, and shared with the pool's crash enumeration (it
//!   lives in `bufcache_core::ordering` so that both use one piece of code): it records
//!   every logical write and checks each disk write against it.

use std::collections::BTreeMap;

pub use bufcache_core::ordering::Checker;
use bufcache_core::FixedHashMap;

const NONE: u32 = u32::MAX;

/// Per-epoch accounting of buffers that are dirty or being written.
#[derive(Debug, Default)]
pub struct Epochs {
    open: u64,
    pending: BTreeMap<u64, EpochSet>,
    /// Write every epoch up to and including this one as soon as it is safe.
    flush_through: Option<u64>,
}

#[derive(Debug, Default)]
struct EpochSet {
    count: u32,
    /// Buffers that joined the epoch (some may have moved on; the engine re-checks).
    frames: Vec<u32>,
}

impl Epochs {
    /// The epoch new writes join.
    pub fn open(&self) -> u64 {
        self.open
    }

    /// The oldest epoch with dirty or in-flight buffers (the open epoch when none).
    pub fn safe(&self) -> u64 {
        self.pending.keys().next().copied().unwrap_or(self.open)
    }

    /// `barrier()`: later writes go to a new epoch.
    pub fn barrier(&mut self) {
        self.open += 1;
    }

    /// A buffer became dirty in `epoch`.
    pub fn join(&mut self, epoch: u64, frame: u32) {
        let set = self.pending.entry(epoch).or_default();
        set.count += 1;
        set.frames.push(frame);
    }

    /// A duplicate took over a buffer's place (and count) in `epoch`.
    pub fn adopt(&mut self, epoch: u64, frame: u32) {
        self.pending
            .get_mut(&epoch)
            .expect("buffer's epoch is pending")
            .frames
            .push(frame);
    }

    /// A buffer of `epoch` reached the disk or was dropped; true if the safe epoch moved.
    pub fn leave(&mut self, epoch: u64) -> bool {
        let set = self
            .pending
            .get_mut(&epoch)
            .expect("buffer's epoch is pending");
        set.count -= 1;
        if set.count == 0 {
            let was_safe = self.safe() == epoch;
            self.pending.remove(&epoch);
            return was_safe;
        }
        false
    }

    /// Ask for every epoch up to `epoch` to be written as soon as it becomes safe.
    pub fn request_flush(&mut self, epoch: u64) {
        self.flush_through = Some(self.flush_through.map_or(epoch, |e| e.max(epoch)));
    }

    /// The buffers of the safe epoch, if a flush covers it and it is closed (the open
    /// epoch follows no barrier, so nothing waits on writing it in order).
    pub fn flushable(&self) -> Option<&[u32]> {
        let safe = self.safe();
        match self.flush_through {
            Some(limit) if safe <= limit && safe < self.open => {
                self.pending.get(&safe).map(|s| s.frames.as_slice())
            }
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
struct Node {
    /// Buffers of this node that are dirty or being written.
    pending: u32,
    /// Nodes that must reach the disk first (resolved through `merged_into` when read).
    deps: Vec<u32>,
    /// Set when this node was combined into another.
    merged_into: u32,
    /// Application write ids that name this node.
    aliases: Vec<u32>,
    /// Buffers that joined this node (some may have moved on).
    frames: Vec<u32>,
}

/// Asynchronous graphs: write nodes and the write map.
#[derive(Debug, Default)]
pub struct Graph {
    nodes: Vec<Node>,
    map: FixedHashMap<u32>,
}

impl Graph {
    /// The node a (possibly merged) node now is.
    pub fn find(&self, mut n: u32) -> u32 {
        while self.nodes[n as usize].merged_into != NONE {
            n = self.nodes[n as usize].merged_into;
        }
        n
    }

    fn live(&self, n: u32) -> bool {
        self.nodes[self.find(n) as usize].pending > 0
    }

    /// Live nodes among the application's dependency ids (written ones are dropped).
    pub fn resolve(&self, ids: &[u32]) -> Vec<u32> {
        let mut out: Vec<u32> = ids
            .iter()
            .filter_map(|&id| self.map.get(&u64::from(id)).map(|&n| self.find(n)))
            .filter(|&n| self.live(n))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// A new node for write id `id`, after `deps` (live, resolved).
    pub fn create(&mut self, id: u32, deps: Vec<u32>) -> u32 {
        let n = self.nodes.len() as u32;
        self.nodes.push(Node {
            pending: 0,
            deps,
            merged_into: NONE,
            aliases: vec![id],
            frames: Vec::new(),
        });
        self.map.insert(u64::from(id), n);
        n
    }

    /// Whether `target` lies in the graph reachable from `roots` (roots included).
    pub fn reachable(&self, roots: &[u32], target: u32) -> bool {
        let target = self.find(target);
        let mut stack: Vec<u32> = roots.iter().map(|&r| self.find(r)).collect();
        let mut seen: Vec<u32> = Vec::new();
        while let Some(n) = stack.pop() {
            if n == target {
                return true;
            }
            if seen.contains(&n) || !self.live(n) {
                continue;
            }
            seen.push(n);
            stack.extend(self.nodes[n as usize].deps.iter().map(|&d| self.find(d)));
        }
        false
    }

    /// Combine node `from` into `into`: one node, after the union of their dependencies,
    /// named by both nodes' ids. Only valid when there is no path between them.
    pub fn merge(&mut self, from: u32, into: u32) {
        let (from, into) = (self.find(from), self.find(into));
        if from == into {
            return;
        }
        let moved = std::mem::take(&mut self.nodes[from as usize]);
        self.nodes[from as usize].merged_into = into;
        let target = &mut self.nodes[into as usize];
        target.pending += moved.pending;
        for d in moved.deps {
            if d != into && !target.deps.contains(&d) {
                target.deps.push(d);
            }
        }
        target.frames.extend(moved.frames);
        for &id in &moved.aliases {
            self.map.insert(u64::from(id), into);
        }
        self.nodes[into as usize].aliases.extend(moved.aliases);
    }

    /// A buffer joined node `n`.
    pub fn join(&mut self, n: u32, frame: u32) {
        let n = self.find(n);
        let node = &mut self.nodes[n as usize];
        node.pending += 1;
        node.frames.push(frame);
    }

    /// A duplicate took over a buffer's place (and count) in node `n`.
    pub fn adopt(&mut self, n: u32, frame: u32) {
        let n = self.find(n);
        self.nodes[n as usize].frames.push(frame);
    }

    /// A buffer of node `n` reached the disk (or was dropped); true if the node died.
    pub fn leave(&mut self, n: u32) -> bool {
        let n = self.find(n);
        let node = &mut self.nodes[n as usize];
        node.pending -= 1;
        if node.pending > 0 {
            return false;
        }
        let aliases = std::mem::take(&mut node.aliases);
        node.deps = Vec::new();
        node.frames = Vec::new();
        for id in aliases {
            self.map.remove(&u64::from(id));
        }
        true
    }

    /// True when every node `n` depends on has reached the disk.
    pub fn satisfied(&self, n: u32) -> bool {
        let n = self.find(n);
        self.nodes[n as usize].deps.iter().all(|&d| !self.live(d))
    }

    /// Live dependencies of `n` (for `fsync` of a constrained buffer).
    pub fn deps(&self, n: u32) -> Vec<u32> {
        let n = self.find(n);
        self.nodes[n as usize]
            .deps
            .iter()
            .map(|&d| self.find(d))
            .filter(|&d| self.live(d))
            .collect()
    }

    /// Buffers that joined node `n` (the engine checks they still belong to it).
    pub fn frames(&self, n: u32) -> &[u32] {
        &self.nodes[self.find(n) as usize].frames
    }

    /// Nodes ever created (merged and dead ones included).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True before the first `graphwrite`.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_safe_epoch_is_the_oldest_with_pending_buffers() {
        let mut e = Epochs::default();
        e.join(0, 1);
        e.barrier();
        e.join(1, 2);
        e.join(1, 3);
        assert_eq!((e.safe(), e.open()), (0, 1));
        assert!(e.flushable().is_none());
        e.request_flush(1);
        assert_eq!(e.flushable(), Some(&[1][..]));
        assert!(e.leave(0));
        assert_eq!(e.safe(), 1);
        // Epoch 1 is the open epoch: no barrier after it, nothing to flush in order.
        assert_eq!(e.flushable(), None);
        e.barrier();
        assert_eq!(e.flushable(), Some(&[2, 3][..]));
        assert!(!e.leave(1));
        assert!(e.leave(1));
        // Nothing pending: the safe epoch is the open one.
        assert_eq!(e.safe(), 2);
    }

    #[test]
    fn nodes_merge_alias_and_die() {
        let mut g = Graph::default();
        let log = g.create(10, vec![]);
        g.join(log, 100);
        let data = g.create(11, g.resolve(&[10]));
        g.join(data, 200);
        assert!(!g.satisfied(data));
        assert!(g.reachable(&g.resolve(&[10]), log));
        // A second log write to the same buffer: not reachable from its (empty) deps, so
        // the nodes combine and both ids name one node.
        let log2 = g.create(12, vec![]);
        assert!(!g.reachable(&[], log));
        g.merge(log, log2);
        assert_eq!(g.resolve(&[10]), g.resolve(&[12]));
        assert!(g.leave(log2));
        assert!(g.satisfied(data));
        assert!(g.resolve(&[10, 12]).is_empty());
    }
}
