//! Which node a combined write id names: id -> the node it was combined into, until that
//! node dies.
//!
//! Every graph write that joins a node (a log record joining its page's node, a data
//! write joining the node of the writes after the same log record) gets a fresh id that
//! names the node, and every lookup of an id (`OrderState::find`, several per ordered
//! write under the ordering lock) goes through this table. As a hash map it cost a hash
//! and a probe per lookup, an insertion per write and a removal per id when its node died,
//! in a table of every combined id still live: on real files a combined data node lives
//! until the flusher confirms it (about a second, some hundred thousand ids), so the
//! probes missed the caches (`docs/experiments/burnett-ordering.md`, "The graph's
//! bookkeeping").
//!
//! Ids are issued in increasing order and nearly all recent ones are combined, so the
//! table is a *window*: a vector indexed by `id - base` over the ids from the oldest one
//! still combined to the newest, 0 for an id that names itself (never issued as 0). A
//! lookup is one load; an insertion at the end is a push. Ids older than the window (or
//! moved out of it because the window became sparse, see [`Names::insert`]) live in a
//! hash map, so the window's memory stays within twice the combined ids it holds (or a
//! small fixed size) whatever a long-lived node pins.

use std::collections::VecDeque;

use bufcache_core::FixedHashMap;

use super::NodeId;

/// Below this many slots the window is never spilled for being sparse (a few pages of
/// memory, whatever the ids).
const WINDOW_MIN: usize = 1 << 12;

/// Combined ids and the node each names (see the module docs).
#[derive(Clone, Default)]
pub(crate) struct Names {
    /// The id of `window[0]`.
    base: NodeId,
    /// For ids `base..base + window.len()`: the node, or 0 if the id is not combined.
    window: VecDeque<NodeId>,
    /// Non-zero slots of `window`.
    in_window: usize,
    /// Combined ids below `base`.
    older: FixedHashMap<NodeId>,
}

impl Names {
    /// The node `id` was combined into, if it was (and that node is live).
    #[inline]
    pub fn get(&self, id: NodeId) -> Option<NodeId> {
        if id >= self.base {
            let i = usize::try_from(id - self.base).ok()?;
            return self.window.get(i).copied().filter(|&m| m != 0);
        }
        if self.older.is_empty() {
            return None;
        }
        self.older.get(&id).copied()
    }

    /// Record that `id` names node `into` now.
    ///
    /// An id past the window's end extends it. If that would leave the window more than
    /// half empty (a long-lived combined id at its start, few combined ids since), the
    /// window's entries move to the hash map first and the window starts again at `id`:
    /// each entry moves at most once, and the window never holds more than twice the
    /// combined ids it had when it last grew (or [`WINDOW_MIN`] slots).
    pub fn insert(&mut self, id: NodeId, into: NodeId) {
        debug_assert!(id != 0 && into != 0, "0 is never issued");
        if self.window.is_empty() && id >= self.base {
            self.base = id;
        }
        if id < self.base {
            self.older.insert(id, into);
            return;
        }
        let Ok(mut i) = usize::try_from(id - self.base) else {
            self.older.insert(id, into);
            return;
        };
        if i >= self.window.len() {
            let len = i + 1;
            if len > WINDOW_MIN && len > 2 * (self.in_window + 1) {
                self.spill();
                self.base = id;
                i = 0;
            }
            while self.window.len() <= i {
                self.window.push_back(0);
            }
        }
        let slot = &mut self.window[i];
        if *slot == 0 {
            self.in_window += 1;
        }
        *slot = into;
    }

    /// Forget `id` (its node died); returns the node it named.
    pub fn remove(&mut self, id: NodeId) -> Option<NodeId> {
        if id < self.base {
            return self.older.remove(&id);
        }
        let i = usize::try_from(id - self.base).ok()?;
        let slot = self.window.get_mut(i)?;
        if *slot == 0 {
            return None;
        }
        let was = std::mem::replace(slot, 0);
        self.in_window -= 1;
        // Ids below the oldest combined one need no slot.
        while self.window.front() == Some(&0) {
            self.window.pop_front();
            self.base += 1;
        }
        Some(was)
    }

    /// Move every entry of the window to the hash map and empty the window.
    fn spill(&mut self) {
        let base = self.base;
        for (i, m) in self.window.drain(..).enumerate() {
            if m != 0 {
                self.older.insert(base + i as NodeId, m);
            }
        }
        self.in_window = 0;
    }

    /// Every combined id with its node, by id.
    pub fn pairs(&self) -> Vec<(NodeId, NodeId)> {
        let mut out: Vec<(NodeId, NodeId)> = self.older.iter().map(|(&a, &b)| (a, b)).collect();
        out.extend(
            self.window
                .iter()
                .enumerate()
                .filter(|&(_, &m)| m != 0)
                .map(|(i, &m)| (self.base + i as NodeId, m)),
        );
        out.sort_unstable();
        out
    }
}

/// Equal when they map the same ids to the same nodes, however stored.
impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        self.pairs() == other.pairs()
    }
}

impl Eq for Names {}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.pairs()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{Names, WINDOW_MIN};
    use bufcache_core::FixedHashMap;
    use testutil::Rng;

    /// Worked by hand: ids in the window, before it (into the map), removals that move
    /// the window's start, and an id that names itself.
    #[test]
    fn names_by_hand() {
        let mut n = Names::default();
        assert_eq!(n.get(5), None);
        n.insert(10, 3);
        n.insert(12, 3);
        n.insert(7, 3); // older than the window
        assert_eq!(
            (n.get(10), n.get(11), n.get(12), n.get(7)),
            (Some(3), None, Some(3), Some(3))
        );
        assert_eq!(n.remove(10), Some(3));
        assert_eq!(n.remove(10), None);
        assert_eq!(n.base, 12, "the window starts at the oldest combined id");
        assert_eq!(n.get(10), None);
        n.insert(12, 4); // re-pointed (its node was combined again)
        assert_eq!(n.pairs(), vec![(7, 3), (12, 4)]);
        assert_eq!(n.remove(7), Some(3));
        assert_eq!(n.remove(12), Some(4));
        assert_eq!(n.pairs(), vec![]);
        n.insert(20, 1);
        assert_eq!(n.get(20), Some(1));
    }

    /// A long-lived id at the window's start and few combined ids after it: the window
    /// moves to the map instead of growing with every id issued.
    #[test]
    fn a_sparse_window_spills_and_stays_small() {
        let mut n = Names::default();
        n.insert(1, 100);
        for k in 1..=10 * WINDOW_MIN as u64 {
            let id = 1 + 8 * k;
            n.insert(id, 200);
            n.remove(id);
        }
        assert!(
            n.window.len() <= WINDOW_MIN,
            "window of {} slots",
            n.window.len()
        );
        assert_eq!(n.get(1), Some(100));
        assert_eq!(n.pairs(), vec![(1, 100)]);
    }

    /// Random insertions (mostly at the newest id, some older), re-pointings and
    /// removals against a hash map: the same answer for every id, every step.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "draws a fresh seed from the clock, which Miri's isolation forbids"
    )]
    fn names_match_a_map() {
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            let mut n = Names::default();
            let mut reference: FixedHashMap<u64> = FixedHashMap::default();
            let mut last = 0u64;
            for step in 0..20_000 {
                match rng.gen_range(0..10) {
                    0..=4 => {
                        last += rng.gen_range(1..4);
                        let into = rng.gen_range(1..50);
                        n.insert(last, into);
                        reference.insert(last, into);
                    }
                    5 if last > 0 => {
                        let id = rng.gen_range(1..=last);
                        let into = rng.gen_range(1..50);
                        n.insert(id, into);
                        reference.insert(id, into);
                    }
                    _ if last > 0 => {
                        // Mostly old ids, as nodes die roughly in issue order.
                        let upto = rng.gen_range(1..=last);
                        let id = rng.gen_range(1..=upto);
                        assert_eq!(
                            n.remove(id),
                            reference.remove(&id),
                            "{seed}, step {step}: remove {id}"
                        );
                    }
                    _ => {}
                }
                if step % 1000 == 0 {
                    for id in 0..=last + 1 {
                        assert_eq!(
                            n.get(id),
                            reference.get(&id).copied(),
                            "{seed}, step {step}: id {id}"
                        );
                    }
                }
            }
            let mut pairs: Vec<(u64, u64)> = reference.into_iter().collect();
            pairs.sort_unstable();
            assert_eq!(n.pairs(), pairs, "{seed}");
        });
    }
}
