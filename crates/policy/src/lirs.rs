//! LIRS: Low Inter-reference Recency Set.
//!
//! Jiang & Zhang, "LIRS: An Efficient Low Inter-reference Recency Set Replacement Policy
//! to Improve Buffer Cache Performance", SIGMETRICS 2002.
//!
//! # Algorithm
//!
//! Blocks are ranked by *inter-reference recency* (IRR: how many distinct blocks were
//! touched between a block's last two accesses) instead of plain recency. Most of the cache
//! (`Llirs`) holds LIR blocks (low IRR); a small part (`Lhirs`) holds resident HIR blocks,
//! which are the eviction candidates. Two structures:
//!
//! * stack S, in recency order: LIR blocks, resident HIR blocks and *non-resident* HIR
//!   blocks (keys only) whose recency is still smaller than the oldest LIR block's. S is
//!   *pruned* so that its bottom is always an LIR block.
//! * list Q: the resident HIR blocks, in the order they will be evicted.
//!
//! A hit on an LIR block moves it to S's top (pruning if it was the bottom). A hit on a
//! resident HIR block that is in S proves a small IRR: it becomes LIR, and S's bottom LIR
//! block is demoted to HIR at Q's end; if it is not in S it moves to S's top and Q's end,
//! staying HIR. A miss evicts Q's front (which stays in S as non-resident if it was in S);
//! the newcomer becomes LIR if it was found non-resident in S (demoting S's bottom LIR),
//! otherwise resident HIR at S's top and Q's end. While the LIR set is not full,
//! newcomers become LIR directly.
//!
//! # Parameters
//!
//! * `hir` (0.01): `Lhirs` as a fraction of the capacity (at least one unit): the paper's
//!   1%. `Llirs = capacity - Lhirs`.
//! * `variant` (`paper`): `libcachesim` reproduces libCacheSim's `LIRS.c` (commit
//!   aa0fc409), which differs from the paper in two places:
//!   - it bounds the whole of S (LIR, resident HIR and non-resident entries together) at
//!     twice the capacity, checked after every request, by dropping the entries that became
//!     non-resident longest ago; the paper's version here bounds the non-resident entries
//!     alone (below);
//!   - a hit on a resident HIR block that is not in S, while the LIR set is full, demotes
//!     S's bottom LIR block to Q as a promotion would, and so evicts Q's front *on a hit*
//!     (the paper leaves the LIR set alone: the block only moves to S's top and Q's end).
//!     The cache is then one block short, and the next newcomer becomes LIR without an
//!     eviction. A [`Policy`] cannot evict during a hit (the driver owns the map), so the
//!     block libCacheSim drops is forgotten by the policy at once and handed to the driver
//!     at its next `evict`. The two differ only if that block is requested again before
//!     the next miss: libCacheSim misses it, here it hits (and re-enters as a non-resident
//!     block found in S would). With one unit of `Lhirs` (capacities under 200 at the
//!     default `hir`) libCacheSim's Q can hold only the block just hit; it then evicts it
//!     and keeps it in S as resident outside its own accounting. That is not reproduced
//!     (the variant then behaves as the paper's there); on the CloudPhysics trace the
//!     counts agree at 50 and 100 objects all the same (`golden_libcachesim_adaptive.rs`).
//!
//!   Sizes: the variant is exact for unit-sized objects; with sizes, demotions other than
//!   the one above follow the paper's order.
//!
//! # Deviations and choices
//!
//! * Non-resident entries in S are bounded to `2 * min(capacity, 2^24)` entries (the paper
//!   leaves S unbounded and discusses bounding it); beyond that, the entry that became
//!   non-resident longest ago is dropped from S. libCacheSim bounds S differently
//!   (`variant=libcachesim`, above), which matters only on traces with long scans.
//! * Sizes: `Llirs` and `Lhirs` are in units; on promotion, S's bottom LIR blocks are
//!   demoted until the LIR set fits `Llirs`.
//! * If Q has no evictable block (empty, or all pinned), the LIR block nearest S's bottom
//!   that may be evicted is evicted instead (as the paper does when Q is empty). Pinned
//!   blocks are skipped in place.
//!
//! # Cost
//!
//! O(1) amortized per access (pruning removes each entry once), plus one hash lookup on a
//! miss for the non-resident map. `victims` clones the policy. Memory per frame: 8 (Q
//! links) + 4 (frame's node) + 1 (status) + 4 (size) = 17 bytes; per S node (up to 3x the
//! frames): 8 (S links) + 8 (ghost-order links) + 8 (key) + 4 (frame) = 28 bytes, plus the
//! hash map of non-resident keys. Measured with `bufcache bench replay` (Zipf 1.0, 1M
//! keys, 20M requests, 10% cache, best of three on a shared machine): 8.8 M requests/s on
//! main, 10.0 M after dense key maps got presence bits; inlining `on_hit` and forgetting
//! pruned keys without reading their node (`KeyMap::forget`) then gave 10.8 against 9.1
//! in one round and 9.4 against 8.1 in another. The rest is cache misses on S's links
//! (S holds up to three nodes per frame, so a move to the top touches a 2 MB array).

use crate::keymap::KeyMap;

use crate::list::{Links, List, NIL};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

const LIR: u8 = 1;
const HIR: u8 = 2;

/// Whose LIRS: the paper's, or libCacheSim's (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LirsVariant {
    /// Jiang & Zhang's algorithm, non-resident entries bounded.
    Paper,
    /// libCacheSim's `LIRS.c`: S bounded as a whole, demotion on hits to HIR blocks not in
    /// S.
    LibCacheSim,
}

/// LIRS. S's head is its top (most recent); Q's tail is its front (next to evict).
#[derive(Clone, Debug)]
pub struct Lirs {
    // per frame
    q_links: Links,
    q: List,
    status: Vec<u8>,
    frame_node: Vec<u32>,
    sizes: Vec<u32>,
    // per S node
    s_links: Links,
    s: List,
    nonres_links: Links,
    nonres: List,
    node_key: Vec<u64>,
    node_frame: Vec<u32>,
    free_nodes: Vec<u32>,
    nonres_map: KeyMap,
    max_nonres: usize,
    lir_used: u64,
    llirs: u64,
    resident: usize,
    variant: LirsVariant,
    /// Sizes of S's entries (libCacheSim bounds their sum).
    node_size: Vec<u32>,
    /// Sum of `node_size` over S.
    s_units: u64,
    /// Sum of the sizes of Q's blocks.
    hir_used: u64,
    lhirs: u64,
    /// libCacheSim variant: S's bound in units (twice the capacity).
    s_units_max: u64,
    /// `hir`, kept to recompute `Lhirs` and `Llirs` on a resize.
    hir: f64,
    /// libCacheSim variant: blocks libCacheSim evicted during a hit, which the driver still
    /// holds; `evict` returns them first. Not in S as residents, not in Q.
    doomed: Vec<FrameId>,
}

impl Lirs {
    /// LIRS for `capacity` units with `Lhirs = max(1, capacity * hir)`.
    pub fn new(capacity: u64, hir: f64) -> Self {
        Self::with_variant(capacity, hir, LirsVariant::Paper)
    }

    /// As [`Lirs::new`], for either variant.
    pub fn with_variant(capacity: u64, hir: f64, variant: LirsVariant) -> Self {
        let frames = crate::prealloc_frames(capacity);
        let lhirs = Self::lhirs_of(capacity, hir);
        Lirs {
            q_links: Links::with_capacity(frames),
            q: List::new(),
            status: vec![0; frames],
            frame_node: vec![NIL; frames],
            sizes: vec![0; frames],
            s_links: Links::with_capacity(frames),
            s: List::new(),
            nonres_links: Links::with_capacity(frames),
            nonres: List::new(),
            node_key: Vec::with_capacity(frames),
            node_frame: Vec::with_capacity(frames),
            free_nodes: Vec::new(),
            nonres_map: KeyMap::hashed(2 * frames + 1),
            max_nonres: Self::max_nonres_of(frames, variant),
            hir,
            lir_used: 0,
            llirs: capacity.saturating_sub(lhirs),
            resident: 0,
            variant,
            node_size: Vec::with_capacity(frames),
            s_units: 0,
            hir_used: 0,
            lhirs,
            s_units_max: capacity.saturating_mul(2),
            doomed: Vec::new(),
        }
    }

    /// `Lhirs` for `capacity`: the fraction `hir` of it, at least one unit.
    fn lhirs_of(capacity: u64, hir: f64) -> u64 {
        ((capacity as f64 * hir) as u64).clamp(1, capacity.max(1))
    }

    /// The bound on S's non-resident entries for a policy of `frames` frames.
    fn max_nonres_of(frames: usize, variant: LirsVariant) -> usize {
        match variant {
            LirsVariant::Paper => 2 * frames.max(1),
            // bounded through S as a whole (`limit_stack`)
            LirsVariant::LibCacheSim => usize::MAX,
        }
    }

    /// S from top to bottom as (key, resident, LIR) triples, for tests.
    pub fn stack(&self) -> Vec<(u64, bool, bool)> {
        self.s_links
            .iter_from_head(&self.s)
            .map(|n| {
                let fr = self.node_frame[n.index()];
                let lir = fr != NIL && self.status[fr as usize] == LIR;
                (self.node_key[n.index()], fr != NIL, lir)
            })
            .collect()
    }

    fn alloc_node(&mut self, key: u64, frame: u32, size: u32) -> u32 {
        if let Some(n) = self.free_nodes.pop() {
            self.node_key[n as usize] = key;
            self.node_frame[n as usize] = frame;
            self.node_size[n as usize] = size;
            n
        } else {
            self.node_key.push(key);
            self.node_frame.push(frame);
            self.node_size.push(size);
            (self.node_key.len() - 1) as u32
        }
    }

    /// Put node `n` on S's top.
    #[inline]
    fn s_push(&mut self, n: u32) {
        self.s_links.push_front(&mut self.s, FrameId(n));
        self.s_units += u64::from(self.node_size[n as usize]);
    }

    /// Take node `n` off S.
    #[inline]
    fn s_unlink(&mut self, n: u32) {
        self.s_links.unlink(&mut self.s, FrameId(n));
        self.s_units -= u64::from(self.node_size[n as usize]);
    }

    /// Put resident HIR block `f` at Q's end (last to be evicted).
    #[inline]
    fn q_push(&mut self, f: FrameId) {
        self.q_links.push_front(&mut self.q, f);
        self.hir_used += u64::from(self.sizes[f.index()]);
    }

    /// Take resident HIR block `f` off Q.
    #[inline]
    fn q_unlink(&mut self, f: FrameId) {
        self.q_links.unlink(&mut self.q, f);
        self.hir_used -= u64::from(self.sizes[f.index()]);
    }

    /// Drop a node that is on no list (or only on S, which the caller unlinked).
    fn free_node(&mut self, n: u32) {
        self.node_frame[n as usize] = NIL;
        self.free_nodes.push(n);
    }

    #[inline]
    fn in_s(&self, n: u32) -> bool {
        // a node is on S exactly when it has a neighbour or is S's only member
        self.s_links.prev(FrameId(n)).is_some()
            || self.s_links.next(FrameId(n)).is_some()
            || self.s.head() == Some(FrameId(n))
    }

    /// Remove non-LIR entries from S's bottom.
    fn prune(&mut self) {
        while let Some(b) = self.s.tail() {
            let fr = self.node_frame[b.index()];
            if fr != NIL && self.status[fr as usize] == LIR {
                break;
            }
            self.s_unlink(b.0);
            if fr == NIL {
                self.nonres_links.unlink(&mut self.nonres, b);
                self.nonres_map.forget(self.node_key[b.index()]);
                self.free_node(b.0);
            }
            // a resident HIR block stays in Q with its node, now off S
        }
    }

    /// Demote S's bottom LIR blocks to HIR (Q's end) until the LIR set fits.
    fn fit_lir(&mut self) {
        let mut guard = self.s.len();
        while self.lir_used > self.llirs && guard > 0 {
            guard -= 1;
            // S's bottom is LIR after pruning (it may not be yet when the LIR set was
            // empty, e.g. with Llirs = 0)
            self.prune();
            let Some(b) = self.s.tail() else { break };
            let fr = self.node_frame[b.index()];
            debug_assert!(fr != NIL && self.status[fr as usize] == LIR);
            self.s_unlink(b.0);
            self.status[fr as usize] = HIR;
            self.lir_used -= u64::from(self.sizes[fr as usize]);
            self.q_push(FrameId(fr));
            self.prune();
        }
    }

    fn evict_frame(&mut self, f: FrameId) -> FrameId {
        let i = f.index();
        let n = self.frame_node[i];
        self.resident -= 1;
        if self.status[i] == HIR {
            self.q_unlink(f);
            if self.in_s(n) {
                self.node_frame[n as usize] = NIL;
                self.nonres_links.push_front(&mut self.nonres, FrameId(n));
                self.nonres_map.insert(self.node_key[n as usize], n);
                if self.nonres.len() > self.max_nonres {
                    let old = self.nonres.tail().expect("non-empty");
                    self.drop_nonresident(old);
                }
            } else {
                self.free_node(n);
            }
        } else {
            self.s_unlink(n);
            self.lir_used -= u64::from(self.sizes[i]);
            self.free_node(n);
            self.prune();
        }
        self.status[i] = 0;
        self.frame_node[i] = NIL;
        f
    }

    /// Forget non-resident entry `n`: off the non-resident list, S and the key map.
    fn drop_nonresident(&mut self, n: FrameId) {
        self.nonres_links.unlink(&mut self.nonres, n);
        self.s_unlink(n.0);
        self.nonres_map.forget(self.node_key[n.index()]);
        self.free_node(n.0);
    }

    /// libCacheSim's `limitStack`: while S holds more than twice the capacity, drop the
    /// entries that became non-resident longest ago.
    fn limit_stack(&mut self) {
        while self.s_units > self.s_units_max {
            let Some(old) = self.nonres.tail() else { break };
            self.drop_nonresident(old);
        }
    }

    /// libCacheSim's eviction during a hit: `f` leaves the policy's books now (as a
    /// block evicted from Q) and is handed to the driver at its next `evict`.
    fn doom(&mut self, f: FrameId) {
        self.evict_frame(f);
        self.resident += 1; // the driver still holds it until `evict` returns it
        self.doomed.push(f);
    }

    /// libCacheSim's `evictLIR` as a hit on a resident HIR block `hit` that is not in S
    /// runs it: S's bottom LIR block moves to Q's end, Q's front blocks are evicted
    /// (doomed) to make room for it, and S is pruned. `hit` is at Q's end already and
    /// never doomed.
    fn demote_on_hir_hit(&mut self, hit: FrameId) {
        self.prune();
        let Some(b) = self.s.tail() else { return };
        let fr = FrameId(self.node_frame[b.index()]);
        let size = u64::from(self.sizes[fr.index()]);
        if size > self.lhirs {
            return; // libCacheSim drops such a block; left to the paper's path here
        }
        // Q's front must not be the block just hit (only when Q holds nothing else: the
        // case with one unit of Lhirs that this variant does not reproduce).
        let mut room = self.hir_used + size <= self.lhirs;
        let mut guard = self.q.len();
        while !room && guard > 0 {
            guard -= 1;
            match self.q.tail() {
                Some(front) if front != hit => self.doom(front),
                _ => return,
            }
            room = self.hir_used + size <= self.lhirs;
        }
        if !room {
            return;
        }
        // as in `fit_lir`: the block keeps its node, now off S
        self.s_unlink(b.0);
        self.status[fr.index()] = HIR;
        self.lir_used -= size;
        self.q_push(fr);
        self.prune();
    }
}

impl Policy for Lirs {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.resident
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let i = frame.index();
        if self.status[i] == 0 {
            // a doomed block (libCacheSim variant) requested before the next miss: where
            // libCacheSim misses, it re-enters as a block found non-resident in S would
            let at = self.doomed.iter().position(|&f| f == frame);
            self.doomed.swap_remove(at.expect("a resident frame without status is doomed"));
            self.resident -= 1;
            self.on_insert(frame, access);
            return;
        }
        let n = FrameId(self.frame_node[i]);
        if self.status[i] == LIR {
            let was_bottom = self.s.tail() == Some(n);
            self.s_links.move_to_front(&mut self.s, n);
            if was_bottom {
                self.prune();
            }
        } else if self.in_s(n.0) {
            self.s_links.move_to_front(&mut self.s, n);
            self.q_unlink(frame);
            self.status[i] = LIR;
            self.lir_used += u64::from(self.sizes[i]);
            self.fit_lir();
        } else {
            self.q_links.move_to_front(&mut self.q, frame);
            if self.variant == LirsVariant::LibCacheSim
                && self.lir_used + u64::from(self.sizes[i]) > self.llirs
            {
                self.demote_on_hir_hit(frame);
            }
            self.s_push(n.0);
        }
        if self.variant == LirsVariant::LibCacheSim {
            self.limit_stack();
        }
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.status, frame, 0);
        ensure_slot(&mut self.frame_node, frame, NIL);
        ensure_slot(&mut self.sizes, frame, 0);
        let i = frame.index();
        self.sizes[i] = access.size;
        self.resident += 1;
        let s = u64::from(access.size);
        if let Some(n) = self.nonres_map.remove(access.key) {
            // non-resident HIR found in S: its IRR is small, it becomes LIR
            self.nonres_links.unlink(&mut self.nonres, FrameId(n));
            self.node_frame[n as usize] = frame.0;
            self.frame_node[i] = n;
            // S counts the entry at its new size
            self.s_units = self.s_units - u64::from(self.node_size[n as usize]) + s;
            self.node_size[n as usize] = access.size;
            self.s_links.move_to_front(&mut self.s, FrameId(n));
            self.status[i] = LIR;
            self.lir_used += s;
            self.fit_lir();
        } else {
            let n = self.alloc_node(access.key, frame.0, access.size);
            self.frame_node[i] = n;
            self.s_push(n);
            if self.lir_used + s <= self.llirs {
                self.status[i] = LIR;
                self.lir_used += s;
            } else {
                self.status[i] = HIR;
                self.q_push(frame);
            }
        }
        if self.variant == LirsVariant::LibCacheSim {
            self.limit_stack();
        }
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if let Some(at) = self.doomed.iter().position(|&f| evictable(f)) {
            self.resident -= 1;
            return Some(self.doomed.swap_remove(at));
        }
        let from_q = self.q_links.iter_from_tail(&self.q).find(|&f| evictable(f));
        let victim = from_q.or_else(|| {
            self.s_links.iter_from_tail(&self.s).find_map(|n| {
                let fr = self.node_frame[n.index()];
                (fr != NIL && self.status[fr as usize] == LIR && evictable(FrameId(fr)))
                    .then_some(FrameId(fr))
            })
        })?;
        Some(self.evict_frame(victim))
    }

    fn remove(&mut self, frame: FrameId) {
        let i = frame.index();
        let n = self.frame_node[i];
        if self.status[i] == 0 {
            // doomed (libCacheSim variant): already off the books but for the count
            let at = self.doomed.iter().position(|&f| f == frame);
            self.doomed.swap_remove(at.expect("a resident frame without status is doomed"));
            self.resident -= 1;
        } else if self.status[i] == HIR {
            self.q_unlink(frame);
            if self.in_s(n) {
                self.s_unlink(n);
            }
            self.free_node(n);
            self.resident -= 1;
            self.status[i] = 0;
            self.frame_node[i] = NIL;
        } else {
            self.evict_frame(frame);
        }
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }

    /// Exact where the paper defines the state by the capacity: `Lhirs` and `Llirs` are
    /// recomputed as at construction, and the bounds on non-resident entries with them.
    /// A shrink that leaves the LIR set over `Llirs` demotes S's bottom LIR blocks to HIR
    /// (the same step as after a hit, `fit_lir`); non-resident entries beyond the new
    /// bound go oldest first. A growth only raises the bounds.
    fn set_capacity(&mut self, capacity: u64) {
        self.lhirs = Self::lhirs_of(capacity, self.hir);
        self.llirs = capacity.saturating_sub(self.lhirs);
        self.max_nonres = Self::max_nonres_of(crate::prealloc_frames(capacity), self.variant);
        while self.nonres.len() > self.max_nonres {
            let Some(old) = self.nonres.tail() else { break };
            self.drop_nonresident(old);
        }
        self.s_units_max = capacity.saturating_mul(2);
        if self.variant == LirsVariant::LibCacheSim {
            self.limit_stack();
        }
        self.fit_lir();
    }
}

impl NamedPolicy for Lirs {
    const NAME: &'static str = "lirs";
    const SUMMARY: &'static str =
        "low inter-reference recency set: LIR/HIR with stack S and list Q (Jiang & Zhang 2002)";
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "hir",
            default: "0.01",
            help: "share of the capacity for resident HIR blocks (Lhirs), 0..=1, at least one unit",
        },
        ParamInfo {
            name: "variant",
            default: "paper",
            help: "paper (Jiang & Zhang) or libcachesim (its LIRS.c: S bounded at 2x the capacity, demotion on hits to HIR blocks not in S)",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let hir = params.fraction("hir", 0.0, 1.0)?;
        let variant = match params.choice("variant", &["paper", "libcachesim"], "paper or libcachesim")? {
            "paper" => LirsVariant::Paper,
            _ => LirsVariant::LibCacheSim,
        };
        let mut lirs = Lirs::with_variant(ctx.capacity, hir, variant);
        if ctx.key_space.is_some() {
            lirs.nonres_map = KeyMap::for_keys(ctx.key_space, 0);
        }
        Ok(lirs)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Cache, Lirs, LirsVariant};

    #[test]
    fn hand_worked_sequence() {
        // c = 3, Lhirs = 1, Llirs = 2. S top..bottom, n = non-resident; Q front first.
        // 1 2: LIR (S [2 1]). 3: LIR set full -> resident HIR: S [3 2 1], Q [3].
        // 1 (hit, LIR at the bottom): S [1 3 2]; bottom 2 is LIR, nothing pruned.
        // 4: evict Q's front 3 (in S -> non-resident): S [4 1 3n 2], Q [4].
        // 3: evict 4 (non-resident in S); 3 found in S -> LIR: S [3 4n 1 2]; LIR set is
        //    over Llirs -> bottom 2 demoted to Q [2]; S [3 4n 1].
        // 2 (hit, HIR not in S): S [2 3 4n 1], Q [2].
        // 4: evict 2 (-> non-resident); 4 in S -> LIR, bottom 1 demoted: Q [1],
        //    S [4 2n 3].
        // 1 (hit, HIR not in S): S [1 4 2n 3], Q [1].
        let trace = [1, 2, 3, 1, 4, 3, 2, 4, 1];
        assert_eq!(
            hits(Lirs::new(3, 0.01), 3, &trace),
            [false, false, false, true, false, false, true, false, true]
        );
        let ev = evictions(Lirs::new(3, 0.01), 3, &trace);
        let expected: [&[u64]; 9] = [&[], &[], &[], &[], &[3], &[4], &[], &[2], &[]];
        assert_eq!(ev, expected);
        let mut cache = Cache::new(Lirs::new(3, 0.01), 3);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        assert_eq!(
            cache.policy().stack(),
            [
                (1, true, false),
                (4, true, true),
                (2, false, false),
                (3, true, true)
            ]
        );
        // Q's front 1 first; then Q is empty: S's bottom LIR 3 (pruning drops 2n), then 4.
        assert_eq!(resident_after(Lirs::new(3, 0.01), 3, &trace), [1, 3, 4]);
    }

    #[test]
    fn libcachesim_variant_demotes_on_a_hit_to_an_hir_block_outside_s() {
        // c = 4, hir = 0.5: Lhirs = 2, Llirs = 2. S top..bottom, Q front first.
        // 1 2: LIR, S [2 1]. 3 4: HIR, S [4 3 2 1], Q [3 4].
        // 5: evict 3 (non-resident in S); S [5 4 3n 2 1], Q [4 5].
        // 1 (LIR hit): S [1 5 4 3n 2]. 2 (LIR hit at the bottom): S [2 1 5 4 3n], pruned to
        //    S [2 1]; 4 and 5 stay in Q, off S.
        // 4 (HIR hit, not in S). Paper: S [4 2 1], Q [5 4]. libCacheSim: Q [5 4], then the
        //    LIR set is full, so bottom LIR 1 is demoted to Q, whose front 5 is evicted to
        //    make room (doomed: the driver still holds it): Q [4 1], S [4 2].
        // 6: paper evicts Q's front 5, 6 enters as HIR: S [6 4 2 1], Q [4 6]. libCacheSim
        //    hands over the doomed 5, and 6 enters as LIR (the LIR set has room): S [6 4 2].
        // 7: both evict Q's front 4 (non-resident in S). Paper: S [7 6 4n 2 1], Q [6 7];
        //    libCacheSim: S [7 6 4n 2], Q [1 7].
        let trace = [1, 2, 3, 4, 5, 1, 2, 4, 6, 7];
        let paper = || Lirs::with_variant(4, 0.5, LirsVariant::Paper);
        let lcs = || Lirs::with_variant(4, 0.5, LirsVariant::LibCacheSim);
        let expected: [&[u64]; 10] = [&[], &[], &[], &[], &[3], &[], &[], &[], &[5], &[4]];
        assert_eq!(evictions(paper(), 4, &trace), expected);
        assert_eq!(evictions(lcs(), 4, &trace), expected);
        // Victims: Q's blocks front first, then LIR blocks from S's bottom.
        assert_eq!(resident_after(paper(), 4, &trace), [6, 7, 1, 2]);
        assert_eq!(resident_after(lcs(), 4, &trace), [1, 7, 2, 6]);
        let mut cache = Cache::new(lcs(), 4);
        for (t, &k) in trace.iter().enumerate() {
            cache.access(&Access::unit(k, t as u64));
        }
        assert_eq!(
            cache.policy().stack(),
            [(7, true, false), (6, true, true), (4, false, false), (2, true, true)]
        );
    }

    /// The registry's invariant tests build policies with their defaults; the variant's
    /// doomed blocks (held by the driver, forgotten by the policy) get the same checks
    /// here, with pins, removals and sizes. Explores: fresh steps each run unless
    /// `BUFCACHE_SEED` is set.
    #[test]
    fn libcachesim_variant_keeps_the_invariants() {
        use crate::testkit::{check_run, Step};
        use testutil::Rng;
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            for (capacity, max_size) in [(4, 1), (9, 1), (30, 1), (24, 4)] {
                let steps: Vec<Step> = (0..3000)
                    .map(|_| match rng.gen_range(0..16) {
                        0 => Step::Remove(rng.gen_range(0..60)),
                        1 => Step::Pin(rng.gen_range(0..60)),
                        2 => Step::Unpin(rng.gen_range(0..60)),
                        _ => Step::Access {
                            key: rng.gen_range(0..60),
                            size: rng.gen_range(1..=max_size),
                        },
                    })
                    .collect();
                let lirs = Lirs::with_variant(capacity, 0.25, LirsVariant::LibCacheSim);
                check_run(lirs, capacity, &steps);
            }
        });
    }

    #[test]
    fn libcachesim_variant_bounds_the_whole_stack() {
        // c = 2, hir = 0.5: Lhirs = 1, Llirs = 1; S may hold 4 entries. 1 is LIR; every
        // other key enters as HIR and leaves a non-resident entry in S when evicted.
        // After 1 2 3 4 5: S [5 4n 3n 2n 1] holds 5 entries, so the oldest non-resident
        // (2) is dropped: S [5 4n 3n 1]. The paper's bound (2 x frames = 4 non-resident
        // entries) keeps all of them.
        let trace = [1, 2, 3, 4, 5];
        let mut lcs = Cache::new(Lirs::with_variant(2, 0.5, LirsVariant::LibCacheSim), 2);
        let mut paper = Cache::new(Lirs::with_variant(2, 0.5, LirsVariant::Paper), 2);
        for (t, &k) in trace.iter().enumerate() {
            lcs.access(&Access::unit(k, t as u64));
            paper.access(&Access::unit(k, t as u64));
        }
        let keys = |s: Vec<(u64, bool, bool)>| s.into_iter().map(|e| e.0).collect::<Vec<_>>();
        assert_eq!(keys(lcs.policy().stack()), [5, 4, 3, 1]);
        assert_eq!(keys(paper.policy().stack()), [5, 4, 3, 2, 1]);
    }
}
