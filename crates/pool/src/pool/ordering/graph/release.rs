//! Leaves leave as plain dirty pages: the bookkeeping of released versions.
//!
//! A level ends in a sync of every file it wrote, and until that sync its versions keep
//! their frames (dirty, not evictable). For a version nobody waits for and nothing
//! follows (a *leaf*: a transaction's data page after its log record), that sync buys
//! nothing but cost: on real files it held graphs at 0.2-0.75 of no ordering's
//! throughput (`docs/experiments/burnett-ordering.md`). So once a leaf's dependencies are
//! durable, its frames are *released*: untagged, they are ordinary dirty pages that the
//! flusher and eviction write like any other, with no sync of their own.
//!
//! A released node is not durable yet. It is *confirmed* (and may die) only after a sync
//! of its file that began after each of its pages was written: a page the frame no
//! longer holds, or holds clean, was written; a dirty one is written first when the
//! confirmation is *forced*. Confirmation is forced when someone needs the node: a
//! waiter (`wait_durable` on it or on a write after it), a node that names it as a
//! dependency after it was released (that node is not ready before the confirmation, so
//! the dependency is on storage before the dependent is written), and `fsync`-like calls
//! that make everything durable. The flusher confirms the rest, without forcing, once per
//! interval (one sync per file), page by page: the pages written by then.
//!
//! A new ordered write to a frame that carries a released version takes that version
//! back first ([`OrderState::unrelease`]): it is pending again, and the usual rules
//! (combine or duplicate, Figures 4.7 and 4.9) apply to it. Barriers are not released:
//! their epochs and markers are followed by the next epoch, so they are never leaves
//! long enough to matter, and leaving them alone keeps their proof as it was.

use std::collections::BTreeSet;

use super::needs::Needs;
use super::{NodeId, OrderState, Tag};

/// One released version: frame `frame` held page `page` of file `owner` (its owner word),
/// loaded for the `incarnation`-th time, when it was released. The incarnation tells a
/// frame that still holds that load of the page from one that was evicted (which writes
/// a dirty page first) and loaded with the same page again: by owner and page alone the
/// two look the same, and the second would pass for the released version not yet
/// written, forever if an ordered write that follows this node made it dirty again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReleasedPage {
    pub frame: u32,
    pub owner: u64,
    pub page: u64,
    pub incarnation: u32,
}

/// Hashed by frame and load alone, as one `u64` (one step of the pool's fixed hash rather
/// than four fields folded in, two of them byte by byte): a frame's load holds one page
/// of one file, so the two already tell versions apart, and equality still compares every
/// field. A node's released pages are a set of these, and every released page is
/// inserted once and removed once (confirmed, or taken back by a write).
impl std::hash::Hash for ReleasedPage {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64((u64::from(self.frame) << 32) | u64::from(self.incarnation));
    }
}

/// A deliberately broken release rule, for the crash enumeration's self-test (the checker
/// must catch each); never set outside tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderingFault {
    /// Release a leaf before its dependencies are durable.
    ReleaseBeforeDependencies,
    /// Count a released leaf durable at once, without a sync of its file.
    ConfirmWithoutSync,
    /// Record a frame's needs as the last write's only, forgetting what the bytes it
    /// wrote over need (`graph/needs.rs`).
    FrameNeedsOfLastWriteOnly,
}

/// The last answer about each of a few node ids (direct-mapped by id): tags of one node
/// carry few distinct ids (the node's name when each frame was tagged), so a walk over
/// thousands of tags looks each id up once or a few times, not once per frame.
pub(super) struct LeafOf {
    slots: [(NodeId, Option<usize>); LEAF_OF_SLOTS],
}

/// Ids remembered by [`LeafOf`].
const LEAF_OF_SLOTS: usize = 64;

impl Default for LeafOf {
    fn default() -> Self {
        // Id 0 is never issued, so an empty slot never matches.
        LeafOf {
            slots: [(0, None); LEAF_OF_SLOTS],
        }
    }
}

impl LeafOf {
    /// `look(raw)`'s answer for `raw`, remembered.
    pub(super) fn get(
        &mut self,
        raw: NodeId,
        look: impl FnOnce(NodeId) -> Option<usize>,
    ) -> Option<usize> {
        let slot = &mut self.slots[(raw % LEAF_OF_SLOTS as u64) as usize];
        if slot.0 != raw {
            *slot = (raw, look(raw));
        }
        slot.1
    }
}

/// Which released nodes a level confirms besides those someone needs (always forced).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Confirm {
    /// Only the needed ones.
    Needed,
    /// Also the already written pages of every other one (the flusher's share: the
    /// level confirms those pages, and the node's dirty ones wait for a later sync).
    AlsoWritten,
    /// Every one, writing its dirty pages first (`fsync`, `sync_all`, `close`).
    Every,
}

/// A released node a level should confirm, and whether to write its dirty pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ToConfirm {
    pub node: NodeId,
    pub force: bool,
    pub pages: Vec<ReleasedPage>,
}

impl OrderState {
    /// Whether some live node other than `id` follows `id` (under any of its names).
    pub(super) fn has_live_dependent(&self, id: NodeId) -> bool {
        let Some(node) = self.live.get(&id).filter(|n| n.followed) else {
            return false;
        };
        node.aliases.iter().any(|a| {
            self.dependents.get(a).is_some_and(|ds| {
                ds.iter().any(|&d| {
                    let d = self.find(d);
                    d != id && self.live.contains_key(&d)
                })
            })
        })
    }

    /// Release every leaf that is ready: a graph node that nothing follows and nobody in
    /// `waiting` waits for, whose write is done and whose pending versions are all frames
    /// not yet written (no duplicate, nothing in flight). If its dependencies are durable,
    /// all its frames go; if not, those whose bytes need only durable writes
    /// (`graph/needs.rs`), and the node keeps the rest. Released frames are untagged;
    /// `page_of(frame)` gives what each frame holds. Returns the frames released, in id
    /// order (the caller clears their tag bits).
    pub fn release_leaves(
        &mut self,
        waiting: &[NodeId],
        page_of: impl Fn(u32) -> ReleasedPage,
    ) -> Vec<u32> {
        let mut candidates = std::mem::take(&mut self.release_candidates);
        for c in &mut candidates {
            *c = self.find(*c);
        }
        candidates.sort_unstable();
        candidates.dedup();
        let waited: BTreeSet<NodeId> = waiting.iter().map(|&w| self.find(w)).collect();
        let early = self.fault == Some(OrderingFault::ReleaseBeforeDependencies);
        // Candidates that fail now are dropped: they come back through the sweep when
        // what held them changes (a dependency dies, their write finishes).
        // The leaves, by id, with whether all their frames may go (their dependencies are
        // durable).
        let mut leaves: Vec<(NodeId, bool)> = candidates
            .into_iter()
            .filter(|id| {
                self.live.get(id).is_some_and(|node| {
                    node.graph && node.pending > 0 && node.open == 0 && !waited.contains(id)
                })
            })
            .filter(|&id| !self.has_live_dependent(id))
            .map(|id| {
                let deps = &self.live[&id].deps;
                (id, early || deps.iter().all(|&d| !self.is_live(d)))
            })
            .collect();
        if leaves.is_empty() {
            return Vec::new();
        }
        leaves.sort_unstable();
        // Only leaves whose every pending version is a frame not yet written (no
        // duplicate, nothing in flight): one pass over the tags finds their frames and
        // counts them. The pass runs under the ordering lock over every tagged frame (up to
        // the whole pool), so the leaf a tag's node id names is remembered for the next
        // frames that carry the same id (`LeafOf`), not looked up in the maps again.
        let mut frames: Vec<(u32, usize)> = Vec::new();
        let mut counts = vec![0u32; leaves.len()];
        let mut leaf_of = LeafOf::default();
        for (f, &t) in self.tags.iter() {
            if let Tag::Pending { node, .. } = t {
                let Some(i) = leaf_of.get(node, |raw| {
                    let n = self.find(raw);
                    leaves.binary_search_by_key(&n, |&(id, _)| id).ok()
                }) else {
                    continue;
                };
                counts[i] += 1;
                if leaves[i].1 || self.needs_met(f) {
                    frames.push((f, i));
                }
            }
        }
        let whole: Vec<bool> = leaves
            .iter()
            .zip(&counts)
            .map(|(&(n, _), &c)| c == self.live[&n].pending)
            .collect();
        frames.retain(|&(_, i)| whole[i]);
        if frames.is_empty() {
            return Vec::new();
        }
        let confirm_at_once = self.fault == Some(OrderingFault::ConfirmWithoutSync);
        // Per leaf: how many frames leave, and the pages they hold.
        let mut released: Vec<(u32, Vec<ReleasedPage>)> = vec![(0, Vec::new()); leaves.len()];
        for &(frame, i) in &frames {
            self.tags.remove(frame);
            let held = page_of(frame);
            debug_assert_eq!(held.frame, frame, "page_of answers for the frame asked");
            released[i].0 += 1;
            if !confirm_at_once {
                released[i].1.push(held);
                self.released_frames.insert(frame, (leaves[i].0, held));
            }
        }
        for (&(n, _), (count, pages)) in leaves.iter().zip(released) {
            if count == 0 {
                continue;
            }
            let node = self.live.get_mut(&n).expect("a leaf is live");
            node.pending -= count;
            self.versions_released += u64::from(count);
            if !pages.is_empty() {
                node.unconfirmed.extend(pages);
                self.released_nodes.insert(n);
            }
        }
        self.candidates.extend(
            leaves
                .iter()
                .zip(&whole)
                .filter(|(_, &w)| w)
                .map(|(&(n, _), _)| n),
        );
        frames.into_iter().map(|(f, _)| f).collect()
    }

    /// An ordered write is about to change the frame of `held` (what it holds now): if the
    /// frame carries a released version of that page, from the same load, not yet
    /// confirmed, it is pending again (tagged for its node), so the write combines with it
    /// or duplicates it as with any pending version.
    pub fn unrelease(&mut self, held: ReleasedPage) {
        let frame = held.frame;
        let Some((raw, last)) = self.released_frames.remove(frame) else {
            return;
        };
        // The record names the frame's last released version, and a version in a node's
        // set always has its frame's record (a release sets both; a confirmation and this
        // take both away; a frame is released again only after this ran for it). So a
        // record of another page, or of another load of this one (written when its frame
        // was evicted), means nothing to take back: no node lookup, no probe of a set of
        // thousands of pages (nearly half of all ordered writes on real files).
        if last != held || self.tags.contains_key(frame) {
            return;
        }
        let n = self.find(raw);
        let Some(node) = self.live.get_mut(&n) else {
            return;
        };
        if !node.unconfirmed.remove(&held) {
            // The frame holds another page, or another load of it: that version was
            // written when its frame was evicted.
            return;
        }
        node.pending += 1;
        self.gen += 1;
        let gen = self.gen;
        self.tags.insert(frame, Tag::Pending { node: n, gen });
        // Released only once its node's dependencies were durable: its bytes need nothing.
        self.set_needs(frame, false, Some(Needs::NOTHING));
    }

    /// Node `d` gained a dependent: if it has released versions, a level must confirm it.
    pub(super) fn note_dependent_of(&mut self, d: NodeId) {
        let n = self.find(d);
        if let Some(node) = self.live.get_mut(&n) {
            node.followed = true;
        }
        if self.awaits_sync(n) {
            self.released_needed.insert(n);
        }
    }

    /// Whether `n` is live with released versions not yet confirmed.
    fn awaits_sync(&self, n: NodeId) -> bool {
        self.live
            .get(&n)
            .is_some_and(|node| !node.unconfirmed.is_empty())
    }

    /// The released nodes a level should confirm: those needed (a node issued after the
    /// release follows them, or they are in the closure of `wanted`), forced; and the
    /// others as `rest` says. The needed ones are found without walking every released
    /// node (there are thousands when the write-back holds pages for seconds); only the
    /// flusher's and `fsync`'s calls walk them all.
    pub fn confirmations(&mut self, wanted: Option<&[NodeId]>, rest: Confirm) -> Vec<ToConfirm> {
        let mut needed: BTreeSet<NodeId> = BTreeSet::new();
        let raws: Vec<NodeId> = self.released_needed.iter().copied().collect();
        for raw in raws {
            let n = self.find(raw);
            if self.awaits_sync(n) {
                needed.insert(n);
            } else {
                self.released_needed.remove(&raw);
            }
        }
        if let Some(w) = wanted {
            let scope = self.closure(w);
            needed.extend(scope.into_iter().filter(|&n| self.awaits_sync(n)));
        }
        let mut others: BTreeSet<NodeId> = BTreeSet::new();
        if rest != Confirm::Needed {
            let raws: Vec<NodeId> = self.released_nodes.iter().copied().collect();
            for raw in raws {
                let n = self.find(raw);
                if !self.awaits_sync(n) {
                    self.released_nodes.remove(&raw);
                } else if !needed.contains(&n) {
                    others.insert(n);
                }
            }
        }
        let force_others = rest == Confirm::Every;
        // Pages in no particular order (the caller sorts them after the lock is released:
        // the flusher's share can be tens of thousands).
        let entry = |n: NodeId, force: bool| {
            let pages: Vec<ReleasedPage> = self.live[&n].unconfirmed.iter().copied().collect();
            ToConfirm {
                node: n,
                force,
                pages,
            }
        };
        needed
            .iter()
            .map(|&n| entry(n, true))
            .chain(others.iter().map(|&n| entry(n, force_others)))
            .collect()
    }

    /// A sync of their files followed the writes of `pages` of node `node`: they are on
    /// storage. The node may die once none is left (and nothing else holds it).
    pub fn confirm(&mut self, node: NodeId, pages: &[ReleasedPage]) {
        let n = self.find(node);
        let Some(live) = self.live.get_mut(&n) else {
            return;
        };
        for p in pages {
            live.unconfirmed.remove(p);
        }
        if live.unconfirmed.is_empty() {
            if live.pending == 0 {
                live.error = None;
            }
            self.candidates.push(n);
        }
        // A frame's record names its last released version: it goes with that version
        // (an older one of the same frame, released before an eviction and a new load,
        // can no longer be taken back: the frame holds another load). Checking the
        // version rather than looking for other versions of the node at the frame keeps
        // this in proportion to `pages`, so a large node can be confirmed in steps.
        for p in pages {
            let last = self
                .released_frames
                .get(p.frame)
                .is_some_and(|&(r, q)| q == *p && self.find(r) == n);
            if last {
                self.released_frames.remove(p.frame);
            }
        }
    }

    /// Released versions not yet confirmed, now.
    pub fn released_unconfirmed(&self) -> usize {
        let nodes: BTreeSet<NodeId> = self.released_nodes.iter().map(|&r| self.find(r)).collect();
        nodes
            .iter()
            .filter_map(|n| self.live.get(n))
            .map(|node| node.unconfirmed.len())
            .sum()
    }
}
