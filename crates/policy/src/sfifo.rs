//! Segmented FIFO (SFIFO), the VAX/VMS page replacement policy.
//!
//! Turner & Levy (1981, "Segmented FIFO page replacement") and Babaoglu & Joy (1981,
//! "Converting a swap-based system to do paging in an architecture lacking page-referenced
//! bits") approximate LRU without reference bits. The cache is split in two: a *primary*
//! FIFO queue, where pages arrive, and a *secondary* LRU list. A page pushed out of the
//! primary queue moves to the head of the secondary list instead of leaving memory. A hit
//! in the secondary list (in VMS a cheap "soft fault") moves the page back to the head of
//! the primary queue; a hit in the primary queue changes nothing (no reference bits).
//! Pages leave memory from the tail of the secondary list. Burnett (2006, §2.3.2)
//! describes it this way and fingerprints it: a cyclic shift of FIFO at `p = 0.3`,
//! indistinguishable from LRU once `p >= 0.5`.
//!
//! Parameter `p` (default 0.3): the fraction of the capacity given to the secondary list,
//! "the traditional choice" per Burnett. The secondary list holds `round(p * capacity)`
//! units, the primary queue the rest. `p = 0` is FIFO; `p = 1` is LRU (every page goes
//! straight through the primary queue to the head of the secondary list, and every hit
//! brings it back there). Both limits are checked by tests.
//!
//! Balance: after each insertion and each secondary hit, frames move from the primary's
//! tail to the secondary's head while the primary holds more than its share (and more
//! than one frame, so that the page just faulted in is never demoted by its own arrival
//! unless the primary's share is zero). Eviction never rebalances: it takes the
//! secondary's tail, or the primary's tail when the secondary list is empty (possible
//! with variable sizes or after removals).
//!
//! Protected frames: eviction walks the secondary list from its tail, then the primary
//! queue from its tail, and takes the first evictable frame; skipped frames keep their
//! place. Because eviction does not rebalance, the victim list is the same walk (exact).
//!
//! Deviations: sizes are in units (VMS had fixed-size pages and per-process queues; we
//! model one global cache). libCacheSim has no SFIFO.
//!
//! Cost: O(1) per hit, insertion and eviction (amortized: each frame is demoted at most
//! once per entry into the primary queue). Memory: 13 bytes per frame (8 of links, 4 of
//! size, 1 of segment flag).

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Segmented FIFO: a primary FIFO queue backed by a secondary LRU list.
#[derive(Clone, Debug)]
pub struct SFifo {
    links: Links,
    primary: List,
    secondary: List,
    in_secondary: Vec<bool>,
    size: Vec<u32>,
    primary_units: u64,
    primary_cap: u64,
    /// The secondary list's fraction, kept to recompute the split on a resize.
    p: f64,
}

impl SFifo {
    /// A segmented FIFO of `capacity` units giving fraction `p` to the secondary list.
    pub fn new(capacity: u64, p: f64) -> Self {
        let frames = crate::prealloc_frames(capacity);
        let p = p.clamp(0.0, 1.0);
        SFifo {
            links: Links::with_capacity(frames),
            primary: List::new(),
            secondary: List::new(),
            in_secondary: vec![false; frames],
            size: vec![0; frames],
            primary_units: 0,
            primary_cap: Self::primary_cap_of(capacity, p),
            p,
        }
    }

    /// The primary queue's share of `capacity`: what the secondary's `round(p * capacity)`
    /// leaves.
    fn primary_cap_of(capacity: u64, p: f64) -> u64 {
        let secondary_cap = (p * capacity as f64).round() as u64;
        capacity - secondary_cap.min(capacity)
    }

    /// Demote primary tails while the primary queue is over its share.
    #[inline]
    fn balance(&mut self) {
        while self.primary_units > self.primary_cap
            && (self.primary.len() > 1 || self.primary_cap == 0)
        {
            let Some(f) = self.links.pop_back(&mut self.primary) else {
                break;
            };
            self.primary_units -= u64::from(self.size[f.index()]);
            self.in_secondary[f.index()] = true;
            self.links.push_front(&mut self.secondary, f);
        }
    }

    fn walk(&self) -> impl Iterator<Item = FrameId> + '_ {
        self.links
            .iter_from_tail(&self.secondary)
            .chain(self.links.iter_from_tail(&self.primary))
    }

    fn unlink(&mut self, frame: FrameId) {
        if self.in_secondary[frame.index()] {
            self.links.unlink(&mut self.secondary, frame);
        } else {
            self.links.unlink(&mut self.primary, frame);
            self.primary_units -= u64::from(self.size[frame.index()]);
        }
    }
}

impl Policy for SFifo {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.primary.len() + self.secondary.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        if self.in_secondary[frame.index()] {
            self.links.unlink(&mut self.secondary, frame);
            self.in_secondary[frame.index()] = false;
            self.links.push_front(&mut self.primary, frame);
            self.primary_units += u64::from(self.size[frame.index()]);
            self.balance();
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.in_secondary, frame, false);
        ensure_slot(&mut self.size, frame, 0);
        let size = access.size.max(1);
        self.size[frame.index()] = size;
        self.in_secondary[frame.index()] = false;
        self.links.push_front(&mut self.primary, frame);
        self.primary_units += u64::from(size);
        self.balance();
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self.walk().find(|&f| evictable(f))?;
        self.unlink(victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.unlink(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        out.extend(self.walk().filter(|&f| evictable(f)).take(n));
    }

    /// Exact: the split `round(p * capacity)` is recomputed as at construction; a primary
    /// queue over its new share demotes its oldest to the secondary list, as an insertion
    /// would.
    fn set_capacity(&mut self, capacity: u64) {
        self.primary_cap = Self::primary_cap_of(capacity, self.p);
        self.balance();
    }
}

impl NamedPolicy for SFifo {
    const NAME: &'static str = "sfifo";
    const SUMMARY: &'static str =
        "segmented FIFO of VAX/VMS: primary FIFO + secondary LRU (Turner & Levy 1981)";
    const PARAMS: &'static [ParamInfo] = &[ParamInfo {
        name: "p",
        default: "0.3",
        help: "fraction of the capacity for the secondary LRU list, 0..=1 (0 = FIFO, 1 = LRU)",
    }];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let p = params.fraction("p", 0.0, 1.0)?;
        Ok(SFifo::new(ctx.capacity, p))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Fifo, Lru, SFifo};

    /// A shrink mid-run: capacity 8, p = 0.5 (primary 4): 1..=4 fill the primary queue.
    /// Told 4 (primary 2), it demotes its two oldest, 1 then 2, to the secondary list, so
    /// the victims are 1 and 2 (the secondary list from its tail) then 3 and 4.
    #[test]
    fn a_shrink_demotes_the_oldest_primaries() {
        use crate::{Access, FrameId, Policy};
        let mut p = SFifo::new(8, 0.5);
        for k in 1..=4u32 {
            p.on_insert(FrameId(k), &Access::unit(u64::from(k), u64::from(k)));
        }
        let mut out = Vec::new();
        p.victims(4, &|_| true, &mut out);
        assert_eq!(out, [1, 2, 3, 4].map(FrameId), "all primary, FIFO order");
        p.set_capacity(4);
        assert_eq!(p.primary_units, 2);
        // secondary from its tail (1, demoted first), then primary from its tail
        out.clear();
        p.victims(4, &|_| true, &mut out);
        assert_eq!(out, [1, 2, 3, 4].map(FrameId));
        assert!(p.in_secondary[1] && p.in_secondary[2] && !p.in_secondary[3]);
    }

    #[test]
    fn hand_worked_sequence() {
        // capacity 4, p = 0.5: primary 2, secondary 2. Queues newest first.
        //  1 2          primary [2 1]          secondary []
        //  3            primary [3 2]          secondary [1]
        //  4            primary [4 3]          secondary [2 1]
        //  1 hit (secondary): back to primary  [1 4], 3 demoted: secondary [3 2]
        //  5 miss: evict 2 (secondary LRU tail); primary [5 1], 4 demoted: [4 3]
        //  4 hit: primary [4 5], 1 demoted: secondary [1 3]
        //  5 hit (primary): nothing
        //  6 miss: evict 3; primary [6 4], 5 demoted: secondary [5 1]
        let trace = [1, 2, 3, 4, 1, 5, 4, 5, 6];
        assert_eq!(
            hits(SFifo::new(4, 0.5), 4, &trace),
            [false, false, false, false, true, false, true, true, false]
        );
        let ev: Vec<u64> = evictions(SFifo::new(4, 0.5), 4, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ev, [2, 3]);
        // victim order: secondary from its tail, then primary from its tail
        assert_eq!(resident_after(SFifo::new(4, 0.5), 4, &trace), [1, 5, 4, 6]);
    }

    #[test]
    fn limits_are_fifo_and_lru() {
        let trace = [1, 2, 3, 1, 4, 2, 5, 1, 2, 3, 4, 5, 3, 3, 6, 1, 2, 6, 4];
        for cap in 1..6u64 {
            assert_eq!(
                hits(SFifo::new(cap, 0.0), cap, &trace),
                hits(Fifo::new(cap as usize), cap, &trace),
                "p=0 cap={cap}"
            );
            assert_eq!(
                hits(SFifo::new(cap, 1.0), cap, &trace),
                hits(Lru::new(cap as usize), cap, &trace),
                "p=1 cap={cap}"
            );
        }
    }
}
