//! The bookkeeping of ordered writes, with no I/O and no latches: write nodes and their
//! dependencies, which frame carries which node's data, the duplicates, and the rules of
//! Burnett's Figures 4.7 and 4.9 (combine two versions of a page when nothing must be
//! written between them, keep them apart otherwise).
//!
//! Barriers are expressed in the same graph, so one flusher serves both: `barrier()`
//! creates a *marker* node that follows every write issued so far (it has no pages of its
//! own and is durable once they are) and a new *epoch* node after it, which plain writes
//! join until the next barrier. Graph writes issued after a barrier follow its marker.
//!
//! A node is live while it has versions not yet durable (`pending`) or dependencies not
//! yet durable; it dies (leaves `live`) when both reach zero, and a write id is durable
//! exactly when its node is dead. Node ids are issued in increasing order, and a
//! dependency must name an id already issued, so the graph the application describes
//! cannot have a cycle; combining never creates one (two nodes are combined only when
//! there is no path between them, and a write that would need a path both ways gets a
//! fresh node after both, see [`OrderState::order_write`]).

use std::collections::BTreeSet;

use bufcache_core::{FixedHashMap, FixedState};

mod combine;
mod frame_table;
mod names;
mod needs;
mod release;
pub use release::OrderingFault;
pub(crate) use release::{Confirm, ReleasedPage, ToConfirm};

/// A write node's id: the value a [`super::WriteId`] carries. 0 is never issued.
pub(crate) type NodeId = u64;

/// Maps keyed by frame id: looked up several times per ordered write, under the ordering
/// lock, so a slot per frame rather than a hash map (`graph/frame_table.rs`).
type FrameMap<V> = frame_table::FrameTable<V>;

/// What a frame's dirty data is, for the ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tag {
    /// Data of `node` not yet written; `gen` changes with every ordered write to the frame.
    Pending { node: NodeId, gen: u64 },
    /// This version of `node` was written to storage and waits for its level's sync; the
    /// frame stays dirty until then (a read after an eviction would see storage).
    InFlight { node: NodeId, gen: u64 },
}

/// What a write to a frame requires of the caller, decided by [`OrderState::order_write`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Write into the frame; nothing else to do.
    Join,
    /// Copy the frame's bytes into a duplicate for `node` first (the old version is
    /// written as it was, Figure 4.9 and the barrier's rule).
    Duplicate { node: NodeId },
}

/// An old version of a page kept apart for its node (its bytes are owned by the caller's
/// duplicate store, indexed the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DupInfo {
    pub node: NodeId,
    /// The page's file (its owner word) and page number.
    pub owner: u64,
    pub page: u64,
    /// Written, waiting for its level's sync.
    pub in_flight: bool,
}

#[derive(Clone, Debug, Default)]
struct Node {
    /// Versions (tagged frames and duplicates) of this node not yet durable.
    pending: u32,
    /// Nodes that must be durable first (raw ids: resolve with `find`).
    deps: Vec<NodeId>,
    /// Ids combined into this node (they name it until it dies).
    aliases: Vec<NodeId>,
    /// Graph writes under way that name this node (their versions may not all be tagged
    /// yet, so it must not die); combined nodes add theirs up.
    open: u32,
    /// The last write or sync error of one of its versions, until a retry succeeds.
    error: Option<String>,
    /// A `graph_write`'s node (or a fresh node split from one), not a barrier's marker or
    /// epoch: only these may be released as plain pages (barriers are left as they are).
    graph: bool,
    /// Versions released as plain dirty pages ([`OrderState::release_leaves`]), not yet
    /// known to be on storage behind a sync of their file: the node is not durable
    /// before this is empty. A set: nodes combined from many transactions' data writes
    /// hold thousands, and a write that takes one back looks it up.
    unconfirmed: hashbrown::HashSet<ReleasedPage, FixedState>,
    /// Some node was ever made to follow it (under any of its names): only then can it
    /// have a live dependent, and `has_live_dependent` look through its names (a node
    /// combined from thousands of data writes has thousands, and nothing follows it).
    followed: bool,
}

/// Whether a write id is durable, and if not, why not yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Durable,
    Pending,
    /// A version of the write or of one it follows failed: the message of that error.
    Failed(String),
}

/// A write id that this pool never issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unknown(pub NodeId);

/// The ordering state of one pool.
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderState {
    /// The last id issued.
    last: NodeId,
    live: FixedHashMap<Node>,
    /// Combined nodes: id -> the node it was combined into (until that node dies); a
    /// window over recent ids rather than a hash map (`graph/names.rs`).
    merged: names::Names,
    /// Frames carrying ordered data.
    tags: FrameMap<Tag>,
    /// What the bytes of frames' pending versions need (`graph/needs.rs`); a frame with
    /// no record here needs what its node needs. Records of frames no longer pending are
    /// never read (every new pending version sets its frame's).
    needs: FrameMap<needs::Needs>,
    gen: u64,
    /// Duplicates by slot (`None`: free slot).
    dups: Vec<Option<DupInfo>>,
    dup_count: usize,
    /// The node plain writes join once a barrier has been issued.
    open_epoch: Option<NodeId>,
    /// The marker of the last barrier: graph writes issued since follow it.
    floor: Option<NodeId>,
    /// Reverse edges: for a node id (as it was named when the edge was made, possibly an
    /// alias now), the nodes that depend on it. When a node dies, the dependents of all
    /// its names become candidates.
    dependents: FixedHashMap<Vec<NodeId>>,
    /// Nodes that may have become durable since the last sweep: new nodes, nodes whose
    /// last pending version became durable or whose write finished, and the dependents of
    /// nodes that died. [`OrderState::sweep`] looks at these only, not at every live node.
    candidates: Vec<NodeId>,
    /// Duplicates made so far (for the stats).
    pub duplicates_made: u64,
    /// Frames carrying a released version not yet confirmed: frame -> its node (raw id)
    /// and the version (the frame's last released one).
    released_frames: FrameMap<(NodeId, ReleasedPage)>,
    /// Nodes with released versions not yet confirmed (raw ids as released).
    released_nodes: BTreeSet<NodeId>,
    /// Released nodes that gained a dependent (raw ids): a level confirms these, forced,
    /// without looking at every released node.
    released_needed: BTreeSet<NodeId>,
    /// For a live node, the last graph node issued to follow it alone (by the node's name
    /// then): later graph writes after it alone join that node while they can
    /// ([`OrderState::join_follower`]).
    followers: FixedHashMap<NodeId>,
    /// Graph nodes with versions to write that the last sweeps saw change (their write
    /// finished, a dependency died): the only ones `release_leaves` looks at, so that a
    /// level does not walk every live node for leaves.
    /// (Repeats allowed: `release_leaves` sorts them out once per level.)
    release_candidates: Vec<NodeId>,
    /// Versions released as plain dirty pages so far (for the stats).
    pub versions_released: u64,
    /// A deliberately broken rule, for the crash enumeration's self-test.
    pub fault: Option<OrderingFault>,
}

impl OrderState {
    fn issue(&mut self, deps: Vec<NodeId>) -> NodeId {
        self.last += 1;
        let id = self.last;
        for &d in &deps {
            if self.is_live(d) {
                self.dependents.entry(d).or_default().push(id);
                self.note_dependent_of(d);
            }
        }
        self.candidates.push(id);
        self.live.insert(
            id,
            Node {
                deps,
                aliases: vec![id],
                ..Node::default()
            },
        );
        id
    }

    /// The last id issued.
    pub fn last_issued(&self) -> NodeId {
        self.last
    }

    /// The node an id names now (following combinations).
    pub fn find(&self, mut n: NodeId) -> NodeId {
        while let Some(m) = self.merged.get(n) {
            n = m;
        }
        n
    }

    fn is_live(&self, n: NodeId) -> bool {
        self.live.contains_key(&self.find(n))
    }

    /// Check that `id` was issued here; `Some(node)` when it is not durable yet.
    pub fn resolve(&self, id: NodeId) -> Result<Option<NodeId>, Unknown> {
        if id == 0 || id > self.last {
            return Err(Unknown(id));
        }
        let n = self.find(id);
        Ok(self.live.contains_key(&n).then_some(n))
    }

    /// A new node for a graph write after `deps` (ids already checked by `resolve`), and
    /// after the last barrier's marker.
    pub fn graph_node(&mut self, deps: &[NodeId]) -> NodeId {
        // The one live node the write follows, if there is exactly one: found before
        // anything is allocated, since most such writes join a node
        // (`join_follower`) and need no list of dependencies.
        let mut single = None;
        for d in self.live_deps(deps) {
            match single {
                None => single = Some(Some(d)),
                Some(Some(s)) if s == d => {}
                Some(_) => {
                    single = Some(None);
                    break;
                }
            }
        }
        let single = single.flatten();
        if let Some(id) = single.and_then(|after| self.join_follower(after)) {
            return id;
        }
        let mut live: Vec<NodeId> = self.live_deps(deps).collect();
        live.sort_unstable();
        live.dedup();
        let n = self.issue(live);
        let node = self.live.get_mut(&n).expect("just issued");
        node.graph = true;
        node.open = 1;
        if let Some(after) = single {
            self.followers.insert(after, n);
        }
        n
    }

    /// The live nodes a graph write after `deps` must follow (by their current names;
    /// repeats possible): those of `deps` not yet durable, and the last barrier's marker.
    fn live_deps<'a>(&'a self, deps: &'a [NodeId]) -> impl Iterator<Item = NodeId> + 'a {
        deps.iter()
            .chain(self.floor.iter())
            .map(|&d| self.find(d))
            .filter(|d| self.live.contains_key(d))
    }

    /// The node of a graph write after `deps` whose first page is `frame` (the caller
    /// holds its latch): the node of the frame's pending version when that one already
    /// follows everything the write must ([`OrderState::join_pending`]), else
    /// [`OrderState::graph_node`]'s.
    pub fn graph_node_at(&mut self, frame: u32, deps: &[NodeId]) -> NodeId {
        self.join_pending(frame, deps)
            .unwrap_or_else(|| self.graph_node(deps))
    }

    /// The graph write of node `n` (the id it returns) is done: its versions are all
    /// tagged or copied.
    pub fn write_done(&mut self, n: NodeId) {
        let n = self.find(n);
        if let Some(node) = self.live.get_mut(&n) {
            debug_assert!(node.open > 0, "a graph write finished twice");
            node.open = node.open.saturating_sub(1);
        }
        self.candidates.push(n);
    }

    /// The open epoch, started (with no predecessor) if no barrier was issued yet: for the
    /// first barrier, which puts the dirty data already in the pool into it.
    pub fn current_epoch(&mut self) -> NodeId {
        if self.open_epoch.is_none() {
            self.open_epoch = Some(self.issue(Vec::new()));
        }
        self.plain_node().expect("an epoch is open")
    }

    /// `barrier()`: a marker after every live node, and a new open epoch after it.
    /// Returns the marker (durable once everything issued before is).
    pub fn barrier(&mut self) -> NodeId {
        // Everything issued before the last marker is behind that marker already: the new
        // one follows it and what was issued since (not every live node, which would make
        // a chain of epochs quadratic).
        let since = self.floor.map_or(0, |m| m + 1);
        let mut after_floor: Vec<NodeId> = self
            .live
            .keys()
            .copied()
            .filter(|&id| id >= since)
            .collect();
        after_floor.sort_unstable();
        let before: Vec<NodeId> = self
            .floor
            .filter(|&m| self.is_live(m))
            .into_iter()
            .chain(after_floor)
            .collect();
        let marker = self.issue(before);
        self.floor = Some(marker);
        self.open_epoch = Some(self.issue(vec![marker]));
        marker
    }

    /// The node a plain write joins: the open epoch once a barrier was issued (a fresh one
    /// after the last marker if the open one is already durable), none before.
    pub fn plain_node(&mut self) -> Option<NodeId> {
        let open = self.open_epoch?;
        if self.is_live(open) {
            return Some(self.find(open));
        }
        let marker: Vec<NodeId> = self
            .floor
            .filter(|&m| self.is_live(m))
            .into_iter()
            .collect();
        let fresh = self.issue(marker);
        self.open_epoch = Some(fresh);
        Some(fresh)
    }

    /// Replace the open epoch (a plain write's node was replaced by a fresh one after it).
    pub fn set_open_epoch(&mut self, node: NodeId) {
        if self.open_epoch.is_some() {
            self.open_epoch = Some(node);
        }
    }

    /// An ordered write of node `*node` is about to change frame `frame` (exclusively
    /// latched by the caller). Decides where the frame's current data goes, tags the frame
    /// for `*node` and returns what the caller must do before writing into it. `*node` may
    /// be replaced by a fresh node that follows both (when the frame's data belongs to a
    /// node that must follow this write, and so can be neither combined with it nor
    /// written after it): the caller continues with that node and returns its id.
    /// `graph_deps`: `Some(deps)` for a graph write under way after `deps` (its count of
    /// writes under way moves to the fresh node, and what its bytes follow is recorded for
    /// the frame, `graph/needs.rs`), `None` for a plain write.
    pub fn order_write(
        &mut self,
        frame: u32,
        node: &mut NodeId,
        graph_deps: Option<&[NodeId]>,
    ) -> Placement {
        let mut placement = Placement::Join;
        let open = graph_deps.is_some();
        let added = graph_deps.and_then(|deps| self.needs_of_write(deps));
        if let Some(Tag::Pending { node: old, .. }) = self.tags.get(frame).copied() {
            let (old, cur) = (self.find(old), self.find(*node));
            if old != cur {
                let old_after_cur = self.follows(old, cur);
                let cur_after_old = self.follows(cur, old);
                if !old_after_cur && !cur_after_old {
                    // Figure 4.7: nothing has to be written between the two versions.
                    // The frame's version is counted already (the merge moved it). The
                    // write keeps its id, which names the combined node now.
                    let both = self.merge(old, cur);
                    self.gen += 1;
                    let gen = self.gen;
                    self.tags.insert(frame, Tag::Pending { node: both, gen });
                    self.set_needs(frame, true, added);
                    return Placement::Join;
                }
                if old_after_cur {
                    // The old version must follow this write, and this write's version
                    // must follow the old one (it overwrites it): a fresh node after both.
                    let fresh = self.issue(vec![cur, old]);
                    let graph = self.live.get(&cur).is_some_and(|c| c.graph);
                    self.live.get_mut(&fresh).expect("just issued").graph = graph;
                    if open {
                        if let Some(c) = self.live.get_mut(&cur) {
                            c.open = c.open.saturating_sub(1);
                        }
                        self.live.get_mut(&fresh).expect("just issued").open = 1;
                        self.candidates.push(cur);
                    }
                    *node = fresh;
                }
                placement = Placement::Duplicate { node: old };
                self.tags.remove(frame);
            } else {
                self.bump_gen(frame);
                self.set_needs(frame, true, added);
                return Placement::Join;
            }
        }
        // Untagged (clean or plain dirty data, which now goes with this node) or in flight
        // (that version is already on its way; this one is a new version of `*node`).
        let cur = self.find(*node);
        self.tag(frame, cur);
        // Earlier bytes need nothing more (an untagged frame's or a version in flight
        // have their dependencies durable), except a duplicated version's: those stay in
        // the frame too and reach storage in the duplicate first, which only the node's
        // order (after the duplicate's node) guarantees.
        let duplicated = matches!(placement, Placement::Duplicate { .. });
        self.set_needs(frame, false, added.filter(|_| !duplicated));
        placement
    }

    /// A plain write (not ordered: no barrier issued yet) is about to change `frame`: the
    /// data joins whatever node the frame carries; a version already written is not
    /// touched (its level still counts it), the frame just stays dirty for the usual
    /// write-back.
    pub fn plain_write(&mut self, frame: u32) {
        match self.tags.get(frame).copied() {
            Some(Tag::Pending { .. }) => self.bump_gen(frame),
            Some(Tag::InFlight { .. }) => {
                self.tags.remove(frame);
            }
            None => {}
        }
    }

    fn bump_gen(&mut self, frame: u32) {
        self.gen += 1;
        let gen = self.gen;
        if let Some(Tag::Pending { gen: g, .. }) = self.tags.get_mut(frame) {
            *g = gen;
        }
    }

    /// Tag `frame` (untagged, or carrying a version already in flight) for `node`: one
    /// more version of `node`.
    fn tag(&mut self, frame: u32, node: NodeId) {
        self.gen += 1;
        let fresh = !matches!(self.tags.get(frame), Some(Tag::Pending { .. }));
        self.tags.insert(
            frame,
            Tag::Pending {
                node,
                gen: self.gen,
            },
        );
        if fresh {
            self.live
                .get_mut(&node)
                .expect("tagging a live node")
                .pending += 1;
        }
    }

    /// Record a duplicate of `node` for page `page` of file `owner`; returns its slot
    /// (the frame's count moves to the duplicate: the caller's `order_write` removed the
    /// frame's tag before counting its new version).
    pub fn add_dup(&mut self, node: NodeId, owner: u64, page: u64) -> usize {
        let info = DupInfo {
            node,
            owner,
            page,
            in_flight: false,
        };
        self.duplicates_made += 1;
        self.dup_count += 1;
        match self.dups.iter().position(Option::is_none) {
            Some(slot) => {
                self.dups[slot] = Some(info);
                slot
            }
            None => {
                self.dups.push(Some(info));
                self.dups.len() - 1
            }
        }
    }

    /// Duplicates held now.
    pub fn dup_count(&self) -> usize {
        self.dup_count
    }

    /// Frames carrying ordered data now.
    pub fn tagged_frames(&self) -> usize {
        self.tags.len()
    }

    /// The tag of a frame.
    pub fn tag_of(&self, frame: u32) -> Option<Tag> {
        self.tags.get(frame).copied()
    }

    /// Anything not yet durable.
    pub fn has_pending(&self) -> bool {
        !self.live.is_empty()
    }

    /// Live nodes whose dependencies are all durable and that have versions to write;
    /// with `wanted`, only those some node in `wanted` depends on (or is).
    fn ready(&self, wanted: Option<&[NodeId]>) -> BTreeSet<NodeId> {
        let scope = wanted.map(|w| self.closure(w));
        self.live
            .iter()
            .filter(|(id, node)| {
                node.pending > 0
                    && scope.as_ref().is_none_or(|s| s.contains(id))
                    && node.deps.iter().all(|&d| !self.is_live(d))
            })
            .map(|(&id, _)| id)
            .collect()
    }

    /// The live nodes `wanted` names and every live node they follow.
    fn closure(&self, wanted: &[NodeId]) -> BTreeSet<NodeId> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<NodeId> = wanted.iter().map(|&n| self.find(n)).collect();
        while let Some(n) = stack.pop() {
            if let Some(node) = self.live.get(&n) {
                if seen.insert(n) {
                    stack.extend(node.deps.iter().map(|&d| self.find(d)));
                }
            }
        }
        seen
    }

    /// The next level: the frames (with the tag seen) and duplicate slots whose nodes are
    /// ready, each list in a fixed order (frame id, slot).
    pub fn level(&self, wanted: Option<&[NodeId]>) -> (Vec<(u32, Tag)>, Vec<usize>) {
        let ready = self.ready(wanted);
        if ready.is_empty() {
            return (Vec::new(), Vec::new());
        }
        // Every tagged frame is looked at, under the ordering lock: each node id once.
        let mut in_ready = release::LeafOf::default();
        let frames: Vec<(u32, Tag)> = self
            .tags
            .iter()
            .filter(|&(_, &t)| match t {
                Tag::Pending { node, .. } => in_ready
                    .get(node, |raw| ready.contains(&self.find(raw)).then_some(0))
                    .is_some(),
                Tag::InFlight { .. } => false,
            })
            .map(|(f, &t)| (f, t))
            .collect();
        let dups = self
            .dups
            .iter()
            .enumerate()
            .filter_map(|(slot, d)| {
                d.filter(|d| !d.in_flight && ready.contains(&self.find(d.node)))
                    .map(|_| slot)
            })
            .collect();
        (frames, dups)
    }

    /// The duplicate in `slot`.
    pub fn dup(&self, slot: usize) -> Option<DupInfo> {
        self.dups.get(slot).copied().flatten()
    }

    /// Frame `frame`'s version `seen` was written: in flight until its level's sync.
    /// False if the frame's tag changed since the level was chosen (not written then).
    pub fn frame_written(&mut self, frame: u32, seen: Tag) -> bool {
        let Tag::Pending { node, gen } = seen else {
            return false;
        };
        if self.tags.get(frame) != Some(&seen) {
            return false;
        }
        self.tags.insert(frame, Tag::InFlight { node, gen });
        true
    }

    /// A duplicate was written: in flight until its level's sync.
    pub fn dup_written(&mut self, slot: usize) {
        if let Some(Some(d)) = self.dups.get_mut(slot) {
            d.in_flight = true;
        }
    }

    /// The level's sync succeeded for frame `frame`'s in-flight version `seen`: one
    /// version of its node is durable. True if the frame still carries exactly that
    /// version (the caller, holding a latch on it, may then mark it clean).
    pub fn frame_durable(&mut self, frame: u32, seen: Tag) -> bool {
        let Tag::Pending { node, gen } = seen else {
            return false;
        };
        self.version_durable(node);
        if self.tags.get(frame) == Some(&Tag::InFlight { node, gen }) {
            self.tags.remove(frame);
            return true;
        }
        false
    }

    /// The level's sync succeeded for the duplicate in `slot`: it is freed.
    pub fn dup_durable(&mut self, slot: usize) {
        if let Some(d) = self.dups.get_mut(slot).and_then(Option::take) {
            self.dup_count -= 1;
            self.version_durable(d.node);
        }
    }

    fn version_durable(&mut self, node: NodeId) {
        let n = self.find(node);
        if let Some(node) = self.live.get_mut(&n) {
            debug_assert!(node.pending > 0, "more versions durable than written");
            node.pending -= 1;
            if node.pending == 0 {
                node.error = None;
                self.candidates.push(n);
            }
        }
    }

    /// A version of `node` failed to reach storage (write or sync): remember why for its
    /// waiters. A frame's version that was in flight goes back to pending (it is still
    /// dirty), as does a duplicate; both are written again by the next level.
    pub fn failed(
        &mut self,
        node: NodeId,
        frame: Option<(u32, Tag)>,
        dup: Option<usize>,
        why: &str,
    ) {
        let n = self.find(node);
        if let Some(node) = self.live.get_mut(&n) {
            node.error = Some(why.to_string());
        }
        if let Some((frame, Tag::Pending { node, gen })) = frame {
            if self.tags.get(frame) == Some(&Tag::InFlight { node, gen }) {
                self.tags.insert(frame, Tag::Pending { node, gen });
            }
        }
        if let Some(Some(d)) = dup.and_then(|s| self.dups.get_mut(s)) {
            d.in_flight = false;
        }
    }

    /// The frame's data is gone (its page was truncated away or its file closed): its
    /// version will never be written, so it no longer holds its node back.
    pub fn frame_dropped(&mut self, frame: u32) {
        if let Some(Tag::Pending { node, .. }) = self.tags.remove(frame) {
            self.version_durable(node);
        }
    }

    /// Remove the nodes that are durable now (no versions left, every dependency durable),
    /// until none is left to remove; returns how many died.
    ///
    /// Only the candidates are looked at (see [`OrderState::candidates`]), and a death
    /// makes the dependents of the dead node candidates in turn, so a sweep costs what
    /// changed since the last one, not the size of the graph: the whole-graph sweep it
    /// replaces ran under the ordering lock on every level and every commit wait, and was
    /// the pool's largest own cost in a profile of the real-file experiment
    /// (`docs/experiments/burnett-ordering.md`). The result is the same: the nodes that
    /// can die form one fixed point, whatever order they are found in (the tests compare
    /// with the whole-graph sweep on random graphs).
    pub fn sweep(&mut self) -> usize {
        self.sweep_some(usize::MAX).0
    }

    /// [`OrderState::sweep`] in steps: looks at about `budget` candidates at most (so that
    /// a caller holding the ordering lock can let writers in between steps) and returns
    /// how many nodes died and whether the sweep is complete.
    ///
    /// Candidates are taken in rounds, each node once per round: a node combined from
    /// many writes is named by many of the dead nodes' dependents, and was looked at once
    /// per name.
    pub fn sweep_some(&mut self, budget: usize) -> (usize, bool) {
        let mut died = 0;
        let mut looked = 0;
        while !self.candidates.is_empty() {
            if looked >= budget {
                return (died, false);
            }
            let mut round = std::mem::take(&mut self.candidates);
            for c in &mut round {
                *c = self.find(*c);
            }
            round.sort_unstable();
            round.dedup();
            if round.len() > budget - looked {
                let rest = round.split_off(budget - looked);
                self.candidates.extend(rest);
            }
            looked += round.len();
            for id in round {
                died += usize::from(self.sweep_one(id));
            }
        }
        (died, true)
    }

    /// Look at candidate `id` (a node's current name): remove it if it is durable now
    /// (its dependents become candidates), or note it for `release_leaves`.
    fn sweep_one(&mut self, id: NodeId) -> bool {
        let Some(node) = self.live.get(&id) else {
            return false;
        };
        if node.deps.iter().any(|&d| !self.is_live(d)) {
            self.prune_deps(id);
        }
        let node = &self.live[&id];
        if node.pending != 0
            || !node.unconfirmed.is_empty()
            || node.open != 0
            || !node.deps.is_empty()
        {
            // A graph node with versions to write that changed: it may be a leaf ready
            // for release now (`release_leaves` looks at these only).
            if node.graph && node.pending > 0 {
                self.release_candidates.push(id);
            }
            return false;
        }
        let node = self.live.remove(&id).expect("looked up above");
        for &alias in &node.aliases {
            self.merged.remove(alias);
        }
        // Only a node something was made to follow (under any name) has names among the
        // followers' and dependents' keys (both are keyed by dependencies, which are
        // marked `followed` when the edge is made): a data node combined from thousands
        // of writes has thousands of names and none there.
        if node.followed {
            for alias in node.aliases {
                self.followers.remove(&alias);
                if let Some(waiting) = self.dependents.remove(&alias) {
                    self.candidates.extend(waiting);
                }
            }
        }
        true
    }

    /// Whether write `id` is durable, and if not, whether an error holds it back (its own
    /// or one of the writes it follows).
    pub fn status(&self, id: NodeId) -> Result<Status, Unknown> {
        let Some(n) = self.resolve(id)? else {
            return Ok(Status::Durable);
        };
        let mut stack = vec![n];
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if let Some(node) = self.live.get(&n) {
                if let Some(e) = &node.error {
                    return Ok(Status::Failed(e.clone()));
                }
                stack.extend(node.deps.iter().map(|&d| self.find(d)));
            }
        }
        Ok(Status::Pending)
    }
}

#[cfg(test)]
mod sweep_tests;

#[cfg(test)]
mod tests;
