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
//!
//! # Deviations and choices
//!
//! * Non-resident entries in S are bounded to `2 * min(capacity, 2^24)` entries (the paper
//!   leaves S unbounded and discusses bounding it); beyond that, the entry that became
//!   non-resident longest ago is dropped from S. libCacheSim's LIRS bounds S differently,
//!   which matters only on traces with long scans.
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
}

impl Lirs {
    /// LIRS for `capacity` units with `Lhirs = max(1, capacity * hir)`.
    pub fn new(capacity: u64, hir: f64) -> Self {
        let frames = crate::prealloc_frames(capacity);
        let lhirs = ((capacity as f64 * hir) as u64).clamp(1, capacity.max(1));
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
            max_nonres: 2 * frames.max(1),
            lir_used: 0,
            llirs: capacity.saturating_sub(lhirs),
            resident: 0,
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

    fn alloc_node(&mut self, key: u64, frame: u32) -> u32 {
        if let Some(n) = self.free_nodes.pop() {
            self.node_key[n as usize] = key;
            self.node_frame[n as usize] = frame;
            n
        } else {
            self.node_key.push(key);
            self.node_frame.push(frame);
            (self.node_key.len() - 1) as u32
        }
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
            self.s_links.unlink(&mut self.s, b);
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
            self.s_links.unlink(&mut self.s, b);
            self.status[fr as usize] = HIR;
            self.lir_used -= u64::from(self.sizes[fr as usize]);
            self.q_links.push_front(&mut self.q, FrameId(fr));
            self.prune();
        }
    }

    fn evict_frame(&mut self, f: FrameId) -> FrameId {
        let i = f.index();
        let n = self.frame_node[i];
        self.resident -= 1;
        if self.status[i] == HIR {
            self.q_links.unlink(&mut self.q, f);
            if self.in_s(n) {
                self.node_frame[n as usize] = NIL;
                self.nonres_links.push_front(&mut self.nonres, FrameId(n));
                self.nonres_map.insert(self.node_key[n as usize], n);
                if self.nonres.len() > self.max_nonres {
                    let old = self.nonres.tail().expect("non-empty");
                    self.nonres_links.unlink(&mut self.nonres, old);
                    self.s_links.unlink(&mut self.s, old);
                    self.nonres_map.forget(self.node_key[old.index()]);
                    self.free_node(old.0);
                }
            } else {
                self.free_node(n);
            }
        } else {
            self.s_links.unlink(&mut self.s, FrameId(n));
            self.lir_used -= u64::from(self.sizes[i]);
            self.free_node(n);
            self.prune();
        }
        self.status[i] = 0;
        self.frame_node[i] = NIL;
        f
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
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let i = frame.index();
        let n = FrameId(self.frame_node[i]);
        if self.status[i] == LIR {
            let was_bottom = self.s.tail() == Some(n);
            self.s_links.move_to_front(&mut self.s, n);
            if was_bottom {
                self.prune();
            }
        } else if self.in_s(n.0) {
            self.s_links.move_to_front(&mut self.s, n);
            self.q_links.unlink(&mut self.q, frame);
            self.status[i] = LIR;
            self.lir_used += u64::from(self.sizes[i]);
            self.fit_lir();
        } else {
            self.s_links.push_front(&mut self.s, n);
            self.q_links.move_to_front(&mut self.q, frame);
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
            self.s_links.move_to_front(&mut self.s, FrameId(n));
            self.status[i] = LIR;
            self.lir_used += s;
            self.fit_lir();
            return;
        }
        let n = self.alloc_node(access.key, frame.0);
        self.frame_node[i] = n;
        self.s_links.push_front(&mut self.s, FrameId(n));
        if self.lir_used + s <= self.llirs {
            self.status[i] = LIR;
            self.lir_used += s;
        } else {
            self.status[i] = HIR;
            self.q_links.push_front(&mut self.q, frame);
        }
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
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
        if self.status[i] == HIR {
            self.q_links.unlink(&mut self.q, frame);
            if self.in_s(n) {
                self.s_links.unlink(&mut self.s, FrameId(n));
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
}

impl NamedPolicy for Lirs {
    const NAME: &'static str = "lirs";
    const SUMMARY: &'static str =
        "low inter-reference recency set: LIR/HIR with stack S and list Q (Jiang & Zhang 2002)";
    const PARAMS: &'static [ParamInfo] = &[ParamInfo {
        name: "hir",
        default: "0.01",
        help: "share of the capacity for resident HIR blocks (Lhirs), 0..=1, at least one unit",
    }];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let hir = params.fraction("hir", 0.0, 1.0)?;
        let mut lirs = Lirs::new(ctx.capacity, hir);
        if ctx.key_space.is_some() {
            lirs.nonres_map = KeyMap::for_keys(ctx.key_space, 0);
        }
        Ok(lirs)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Cache, Lirs};

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
}
