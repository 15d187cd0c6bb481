//! What the bytes of a frame's pending version must wait for: the writes that must be
//! durable before *this frame* may reach storage, which can be far fewer than its node's.
//!
//! A node combined from many transactions' data writes (Figure 4.7: a write to a page
//! that carries another pending version joins its node) follows every log record any of
//! them followed. On real files such a node never became a releasable leaf: each level's
//! sync took about a millisecond, a data write during it hit one of the node's thousands
//! of pages, and the combined node then followed a log record issued after the level
//! began, so the next level found it held back again, and the next. Its frames stayed
//! tagged (unevictable) until half the pool, then all of it, was tagged and misses waited
//! for levels (`docs/experiments/burnett-ordering.md`). A page only one of those writes
//! touched waits for nothing but that write's log record, though: with what each frame's
//! bytes need recorded, a level releases the frames whose needs are durable
//! ([`super::OrderState::release_leaves`]) and leaves only the few pages written again
//! since in the node.
//!
//! The record is conservative: a frame without one needs everything its node needs, and
//! one whose bytes would need more than [`SLOTS`] writes has none.

use super::{NodeId, OrderState};

/// At most this many writes per frame (a page written again during a level's sync needs
/// two log records, one in flight and one new; more are rare).
const SLOTS: usize = 3;

/// The writes (current node ids, 0 for an empty slot: never issued, so never live) that
/// must be durable before a frame's bytes may reach storage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Needs([NodeId; SLOTS]);

impl Needs {
    /// Nothing (the bytes of a version whose node's dependencies were durable).
    pub const NOTHING: Needs = Needs([0; SLOTS]);
}

impl OrderState {
    /// What a graph write after `deps` adds to a frame's needs: those of `deps` not yet
    /// durable, and the last barrier's marker (the write's own, not its node's: a write
    /// that joins a combined node follows one log record, the node dozens). `None` when
    /// they do not fit.
    pub(super) fn needs_of_write(&self, deps: &[NodeId]) -> Option<Needs> {
        self.gather(deps.iter().chain(self.floor.iter()).copied())
    }

    /// The live ones of `ids` (by their current names, once each), if they fit.
    fn gather(&self, ids: impl Iterator<Item = NodeId>) -> Option<Needs> {
        let mut out = Needs::NOTHING;
        let mut k = 0;
        for id in ids {
            let r = self.find(id);
            if !self.live.contains_key(&r) || out.0[..k].contains(&r) {
                continue;
            }
            *out.0.get_mut(k)? = r;
            k += 1;
        }
        Some(out)
    }

    /// Record that `frame`'s pending version now holds its earlier bytes (`keep`: with
    /// their needs as recorded) and a write that adds `added`; `None` forgets the record
    /// (the frame needs what its node needs).
    pub(super) fn set_needs(&mut self, frame: u32, keep: bool, added: Option<Needs>) {
        let keep = keep && self.fault != Some(super::OrderingFault::FrameNeedsOfLastWriteOnly);
        let both = if !keep {
            added
        } else if added == Some(Needs::NOTHING) {
            // A write that follows nothing (a log record) leaves the record as it is.
            return;
        } else {
            self.needs
                .get(frame)
                .copied()
                .zip(added)
                .and_then(|(a, b)| self.gather(a.0.into_iter().chain(b.0).filter(|&x| x != 0)))
        };
        match both {
            Some(n) => {
                self.needs.insert(frame, n);
            }
            None => {
                self.needs.remove(frame);
            }
        }
    }

    /// Whether `frame`'s pending version has a record and every write in it is durable.
    pub(super) fn needs_met(&self, frame: u32) -> bool {
        self.needs.get(frame).is_some_and(|n| {
            n.0.iter()
                .all(|&x| x == 0 || !self.live.contains_key(&self.find(x)))
        })
    }
}
