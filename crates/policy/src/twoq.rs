//! 2Q, full version (Johnson & Shasha 1994, "2Q: a low overhead high performance buffer
//! management replacement algorithm", VLDB).
//!
//! A first access does not earn a place in the main cache. New pages enter `A1in`, a FIFO
//! queue of resident pages; when pushed out of it their *keys* go to `A1out`, a bounded
//! FIFO ghost list. Only a page referenced again while remembered in `A1out` is admitted to
//! `Am`, the main LRU list. Hits in `A1in` change nothing (they are taken to be correlated
//! references, e.g. several reads of one page by one transaction); hits in `Am` move the
//! page to its head. The paper's `reclaimfor`: if `A1in` holds more than `Kin`, its tail
//! goes (to `A1out`); otherwise `Am`'s tail goes (and is forgotten).
//!
//! Parameters (defaults are the paper's recommendation, also those Burnett 2006 §2.3.4
//! used): `kin` = 0.25 — `A1in`'s share of the capacity, in the cache's units; `kout` =
//! 0.5 — `A1out`'s size as a fraction of the capacity, counted in *entries* in unit mode.
//! With byte sizes the ghost list is bounded twice: by `kout * capacity` units of the
//! remembered objects' sizes, and by `kout * min(capacity, 2^24)` entries so that its
//! memory stays proportional to the frame arrays.
//!
//! Where `reclaimfor` must choose and the chosen queue has nothing evictable (pinned
//! frames), we take the other queue; within a queue we walk from the tail and skip
//! protected frames, leaving them in place. If `Am` is empty, `A1in` is used even when it
//! is within `Kin`.
//!
//! The newcomer's `A1out` entry: the paper tests `A1out` *before* reclaiming, so a page
//! remembered there is admitted to `Am` even if the reclaim pushes `A1out` past its bound.
//! We do the same: `evict` takes the incoming key out of `A1out` first and remembers that
//! it is due for `Am`.
//!
//! libCacheSim's `TwoQ` uses `Ain` = 25% and `Aout` = 50% of the cache size as well, but
//! sizes its ghost in bytes; unit-mode results should coincide. Both partitions are
//! truncated to whole units (`kin * capacity` rounded down), as libCacheSim's integer
//! assignment does, so that capacities such as 2,449 give the same `A1in` in both tools.
//!
//! The victim list is exact without simulation only if we repeat the queue choice as
//! queue sizes shrink, so it is computed on a copy ([`crate::victims_by_simulation`]).
//!
//! Cost: O(1) per hit and insertion; eviction O(1) plus skipped protected frames; one
//! key-map lookup in `A1out` per miss (with dense keys, a presence-bit test). Memory: 13
//! bytes per frame (8 of links, 4 of size, 1 of queue flag) plus the ghost list (16-32
//! bytes per remembered key and its key map). Measured with `bufcache bench replay` (Zipf
//! 1.0, 1M keys, 20M requests, 10% cache, best of three on a shared machine): 14.4 M
//! requests/s with a linked-slab ghost list, 21.5 M with the current one.

use crate::ghost::GhostList;
use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Full 2Q: A1in FIFO, A1out ghost FIFO, Am LRU.
#[derive(Clone, Debug)]
pub struct TwoQ {
    links: Links,
    a1in: List,
    am: List,
    in_am: Vec<bool>,
    size: Vec<u32>,
    keys: Vec<u64>,
    a1in_units: u64,
    kin_units: u64,
    a1out: GhostList,
    kout_units: u64,
    /// A1in's and A1out's shares of the capacity, to size them again after a resize.
    kin: f64,
    kout: f64,
    /// Key taken out of A1out by the eviction made for it; admitted to Am on insertion.
    promote: Option<u64>,
}

impl TwoQ {
    /// 2Q for `capacity` units with `A1in` = `kin` and `A1out` = `kout` of the capacity.
    pub fn new(capacity: u64, kin: f64, kout: f64) -> Self {
        let frames = crate::prealloc_frames(capacity);
        // Partitions are truncated to whole units, as libCacheSim sizes them.
        let kout_entries = (kout * crate::entry_bound(capacity) as f64) as usize;
        TwoQ {
            links: Links::with_capacity(frames),
            a1in: List::new(),
            am: List::new(),
            in_am: vec![false; frames],
            size: vec![0; frames],
            keys: vec![0; frames],
            a1in_units: 0,
            kin_units: (kin * capacity as f64) as u64,
            a1out: GhostList::new(kout_entries),
            kout_units: (kout * capacity as f64) as u64,
            kin,
            kout,
            promote: None,
        }
    }

    fn unlink(&mut self, f: FrameId) {
        if self.in_am[f.index()] {
            self.links.unlink(&mut self.am, f);
        } else {
            self.links.unlink(&mut self.a1in, f);
            self.a1in_units -= u64::from(self.size[f.index()]);
        }
    }

    fn first_evictable(
        &self,
        from_a1in: bool,
        evictable: &dyn Fn(FrameId) -> bool,
    ) -> Option<FrameId> {
        let list = if from_a1in { &self.a1in } else { &self.am };
        self.links.iter_from_tail(list).find(|&f| evictable(f))
    }
}

impl Policy for TwoQ {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.a1in.len() + self.am.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        if self.in_am[frame.index()] {
            self.links.move_to_front(&mut self.am, frame);
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.in_am, frame, false);
        ensure_slot(&mut self.size, frame, 0);
        ensure_slot(&mut self.keys, frame, 0);
        let size = access.size.max(1);
        self.size[frame.index()] = size;
        self.keys[frame.index()] = access.key;
        let remembered = self.promote.take() == Some(access.key) || self.a1out.remove(access.key);
        self.in_am[frame.index()] = remembered;
        if remembered {
            self.links.push_front(&mut self.am, frame);
        } else {
            self.links.push_front(&mut self.a1in, frame);
            self.a1in_units += u64::from(size);
        }
    }

    fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if self.a1out.remove(incoming.key) {
            self.promote = Some(incoming.key);
        }
        let prefer_a1in = self.a1in_units > self.kin_units || self.am.is_empty();
        let (victim, from_a1in) = match self.first_evictable(prefer_a1in, evictable) {
            Some(f) => (f, prefer_a1in),
            None => (self.first_evictable(!prefer_a1in, evictable)?, !prefer_a1in),
        };
        self.unlink(victim);
        if from_a1in {
            let size = self.size[victim.index()];
            self.a1out.push_front(self.keys[victim.index()], size);
            while self.a1out.size_sum() > self.kout_units {
                self.a1out.pop_back();
            }
        }
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.unlink(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }

    /// A1in's and A1out's sizes follow the new capacity (truncated, as at construction);
    /// A1out keeps its newest keys. Exact: 2Q's partitions are fixed fractions.
    fn set_capacity(&mut self, capacity: u64) {
        self.kin_units = (self.kin * capacity as f64) as u64;
        self.kout_units = (self.kout * capacity as f64) as u64;
        self.a1out
            .set_capacity((self.kout * crate::entry_bound(capacity) as f64) as usize);
        while self.a1out.size_sum() > self.kout_units && self.a1out.pop_back().is_some() {}
    }
}

impl NamedPolicy for TwoQ {
    const NAME: &'static str = "twoq";
    const SUMMARY: &'static str = "full 2Q: A1in FIFO, A1out ghost, Am LRU (Johnson & Shasha 1994)";
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "kin",
            default: "0.25",
            help: "A1in share of the capacity, 0..=1 (paper: 25%)",
        },
        ParamInfo {
            name: "kout",
            default: "0.5",
            help: "A1out ghost size as a fraction of the capacity, 0..=4 (paper: 50%)",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let kin = params.fraction("kin", 0.0, 1.0)?;
        let kout = params.fraction("kout", 0.0, 4.0)?;
        let mut twoq = TwoQ::new(ctx.capacity, kin, kout);
        twoq.a1out.set_key_space(ctx.key_space);
        Ok(twoq)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::TwoQ;

    #[test]
    fn hand_worked_sequence() {
        // capacity 4: Kin = 1 unit, Kout = 2 entries. Queues newest first.
        //  1 2 3 4 miss: A1in [4 3 2 1], Am []
        //  5: A1in holds 4 > Kin: evict 1 -> A1out [1]            A1in [5 4 3 2]
        //  1: in A1out: taken out first, then evict 2 -> A1out [2]; Am [1]   A1in [5 4 3]
        //  2: in A1out: taken out, evict 3 -> A1out [3]; Am [2 1]             A1in [5 4]
        //  1 hit (Am): Am [1 2]
        //  6: A1in 2 > 1: evict 4 -> A1out [4 3]                  A1in [6 5]
        //  5 hit (A1in): nothing
        //  7: evict 5 -> A1out [5 4] (3 forgotten)                A1in [7 6]
        //  3: not remembered: evict 6 -> A1out [6 5]              A1in [3 7]
        //  8: evict 7                                             A1in [8 3]
        let trace = [1, 2, 3, 4, 5, 1, 2, 1, 6, 5, 7, 3, 8];
        assert_eq!(
            hits(TwoQ::new(4, 0.25, 0.5), 4, &trace),
            [
                false, false, false, false, false, false, false, true, false, true, false, false,
                false
            ]
        );
        let ev: Vec<u64> = evictions(TwoQ::new(4, 0.25, 0.5), 4, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ev, [1, 2, 3, 4, 5, 6, 7]);
        // Victims now: A1in holds 2 > 1: 3; then A1in holds 1 = Kin: Am's LRU tail 2, then
        // 1; then A1in's 8 (Am empty).
        assert_eq!(
            resident_after(TwoQ::new(4, 0.25, 0.5), 4, &trace),
            [3, 2, 1, 8]
        );
    }

    #[test]
    fn scan_does_not_flush_the_main_queue() {
        // Two hot keys earn Am; a long scan of one-time keys passes through A1in only.
        let mut trace = vec![1, 2, 10, 11, 12, 1, 2];
        trace.extend(100..140);
        trace.extend([1, 2]);
        let h = hits(TwoQ::new(4, 0.25, 0.5), 4, &trace);
        assert_eq!(&h[h.len() - 2..], [true, true]);
    }
}
