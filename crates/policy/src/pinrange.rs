//! PinRange: prefer the pages at the head of each file (Burnett 2006, thesis §3.4.3).
//!
//! A policy for on-disk tree indexes laid out with the root at the head of the file and
//! the leaves towards its end. The nodes near the root are read by every lookup, so they
//! should stay cached even when a burst of leaf reads would push them out of an LRU list.
//! Burnett's PinRange keeps the pages in the first `N` bytes of the file in one large LRU
//! queue and every other page in a much smaller one; it was inspired by DBMIN (Chou &
//! DeWitt 1985), which gives each index level its own buffer share.
//!
//! # Keys and file offsets
//!
//! A policy sees keys, not files. Every driver in bufcache puts the page number inside
//! the file in the low bits of the key: the DES forms `file << 32 | block`, the pool
//! `slot << 48 ^ generation << 40 ^ page`, and a plain trace of page numbers is its own
//! page number. PinRange reads the page number as the key's low `page_bits` bits (default
//! 32, right for all three while a file has fewer than 2^32 pages) and prefers a page
//! when that number is below `range`. The range is counted in pages because a policy does
//! not know the page size: the thesis's "first 90 MB" at 4 KiB pages is `range=23040`.
//!
//! # Eviction
//!
//! Hits move a page to the head of its own queue. To make room, the small queue gives up
//! its least recently used page while it holds more than its floor (`rest` of the
//! capacity) or while the large queue is empty; otherwise the large queue gives up its
//! least recently used page. The preferred pages may so take everything but the floor,
//! and pages outside the range use whatever the preferred ones leave. The thesis gives no
//! sizes for the two queues; a floor is the simplest reading of "much smaller queue" that
//! never starves the leaves outright. When the chosen queue has nothing evictable
//! (pinned frames), the other one gives up its oldest evictable page; protected pages
//! keep their place.
//!
//! Parameters:
//! * `range` (default `auto`): preferred pages per file, counted from page 0. `auto`
//!   takes the large queue's share of the capacity, `capacity - floor`, so that the
//!   preferred range just fits (the thesis chose 90 MB of a 128 MB machine for the same
//!   reason).
//! * `rest` (default 0.1): the small queue's floor as a fraction of the capacity.
//! * `page_bits` (default 32): how many low bits of the key are the page number.
//!
//! The victim list is an exact walk of the two queues (evicting a page changes the order
//! of neither), so it costs O(n) with no copy of the state.
//!
//! Cost: O(1) per hit, insertion and eviction (plus skipped protected frames). Memory: 13
//! bytes per frame (8 of links, 4 of size, 1 of queue flag).

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

/// Two LRU queues: pages inside the preferred range, and the rest.
#[derive(Clone, Debug)]
pub struct PinRange {
    links: Links,
    preferred: List,
    rest: List,
    in_preferred: Vec<bool>,
    size: Vec<u32>,
    rest_units: u64,
    rest_floor_units: u64,
    range_pages: u64,
    page_mask: u64,
    /// `rest`, kept to recompute the floor on a resize.
    rest_fraction: f64,
    /// The range was `auto` (the capacity less the floor): it follows a resize too.
    range_follows_capacity: bool,
}

impl PinRange {
    /// PinRange for `capacity` units preferring pages `0..range_pages` of each file, with
    /// the small queue's floor at `rest` of the capacity and the page number in the low
    /// `page_bits` bits of the key (1..=64).
    pub fn new(capacity: u64, range_pages: u64, rest: f64, page_bits: u32) -> Self {
        assert!((1..=64).contains(&page_bits), "page_bits must be 1..=64");
        let frames = crate::prealloc_frames(capacity);
        PinRange {
            links: Links::with_capacity(frames),
            preferred: List::new(),
            rest: List::new(),
            in_preferred: vec![false; frames],
            size: vec![0; frames],
            rest_units: 0,
            rest_floor_units: Self::floor_of(capacity, rest),
            range_pages,
            rest_fraction: rest,
            range_follows_capacity: false,
            page_mask: if page_bits == 64 {
                u64::MAX
            } else {
                (1u64 << page_bits) - 1
            },
        }
    }

    /// The small queue's floor: `rest` of the capacity, rounded.
    fn floor_of(capacity: u64, rest: f64) -> u64 {
        (rest * capacity as f64).round() as u64
    }

    /// The `auto` range for `capacity`: what the floor leaves.
    fn auto_range(capacity: u64, rest: f64) -> u64 {
        capacity.saturating_sub(Self::floor_of(capacity, rest))
    }

    /// Whether `key` names a page inside the preferred range.
    pub fn is_preferred(&self, key: u64) -> bool {
        key & self.page_mask < self.range_pages
    }

    /// Preferred pages per file.
    pub fn range_pages(&self) -> u64 {
        self.range_pages
    }

    /// Whether the next eviction looks at the small queue first, given the units it holds
    /// and how many preferred pages are resident.
    fn rest_first(&self, rest_units: u64, preferred_len: usize) -> bool {
        rest_units > self.rest_floor_units || preferred_len == 0
    }

    fn queue(&self, preferred: bool) -> &List {
        if preferred {
            &self.preferred
        } else {
            &self.rest
        }
    }
}

impl Policy for PinRange {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.preferred.len() + self.rest.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        if self.in_preferred[frame.index()] {
            self.links.move_to_front(&mut self.preferred, frame);
        } else {
            self.links.move_to_front(&mut self.rest, frame);
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.in_preferred, frame, false);
        ensure_slot(&mut self.size, frame, 0);
        let size = access.size.max(1);
        self.size[frame.index()] = size;
        let preferred = self.is_preferred(access.key);
        self.in_preferred[frame.index()] = preferred;
        if preferred {
            self.links.push_front(&mut self.preferred, frame);
        } else {
            self.links.push_front(&mut self.rest, frame);
            self.rest_units += u64::from(size);
        }
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let rest_first = self.rest_first(self.rest_units, self.preferred.len());
        let oldest = |preferred: bool| {
            self.links
                .iter_from_tail(self.queue(preferred))
                .find(|&f| evictable(f))
        };
        let victim = oldest(!rest_first).or_else(|| oldest(rest_first))?;
        self.remove(victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        if self.in_preferred[frame.index()] {
            self.links.unlink(&mut self.preferred, frame);
        } else {
            self.links.unlink(&mut self.rest, frame);
            self.rest_units -= u64::from(self.size[frame.index()]);
        }
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // Replays the queue choice of `evict` with the two counts it depends on.
        let mut preferred = self
            .links
            .iter_from_tail(&self.preferred)
            .filter(|&f| evictable(f));
        let mut rest = self.links.iter_from_tail(&self.rest).filter(|&f| evictable(f));
        let mut rest_units = self.rest_units;
        let mut preferred_len = self.preferred.len();
        for _ in 0..n {
            let victim = if self.rest_first(rest_units, preferred_len) {
                rest.next().or_else(|| preferred.next())
            } else {
                preferred.next().or_else(|| rest.next())
            };
            let Some(victim) = victim else { break };
            if self.in_preferred[victim.index()] {
                preferred_len -= 1;
            } else {
                rest_units -= u64::from(self.size[victim.index()]);
            }
            out.push(victim);
        }
    }

    /// Exact: the floor is `rest` of the new capacity and an `auto` range follows it, as
    /// at construction. Resident pages keep the queue they entered (a page's queue is
    /// decided when it is inserted); the next evictions restore the floor.
    fn set_capacity(&mut self, capacity: u64) {
        self.rest_floor_units = Self::floor_of(capacity, self.rest_fraction);
        if self.range_follows_capacity {
            self.range_pages = Self::auto_range(capacity, self.rest_fraction);
        }
    }
}

impl NamedPolicy for PinRange {
    const NAME: &'static str = "pinrange";
    const SUMMARY: &'static str =
        "prefer each file's first `range` pages: large LRU for them, small for the rest (Burnett 2006)";
    /// The page number is read from the key's low bits, so the key values themselves
    /// decide the choice: renumbering a trace's keys (the replay's dense ids) changes it.
    const HASHES_KEYS: bool = true;
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "range",
            default: "auto",
            help: "preferred pages per file from page 0, or `auto` = capacity minus the rest floor",
        },
        ParamInfo {
            name: "rest",
            default: "0.1",
            help: "floor of the small queue (pages outside the range), fraction 0..=1 of the capacity",
        },
        ParamInfo {
            name: "page_bits",
            default: "32",
            help: "low bits of the key that are the page number, 1..=64 (DES, pool, plain traces: 32)",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let rest = params.fraction("rest", 0.0, 1.0)?;
        let page_bits = params.integer("page_bits", 1, 64)? as u32;
        let range = params.integer_or_auto("range", 0, u64::MAX)?;
        let auto = PinRange::auto_range(ctx.capacity, rest);
        let mut p = PinRange::new(ctx.capacity, range.unwrap_or(auto), rest, page_bits);
        p.range_follows_capacity = range.is_none();
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{BuildContext, PinRange, PolicySpec};

    /// Capacity 4, floor 1 unit (rest = 0.25), pages 0 and 1 preferred.
    fn small() -> PinRange {
        PinRange::new(4, 2, 0.25, 32)
    }

    #[test]
    fn hand_worked_sequence() {
        // Queues newest first; P = preferred, R = rest (floor 1).
        //  0 miss: P [0]
        //  10, 11 miss: R [11 10] (2 units)
        //  1 miss: P [1 0]; the cache is full
        //  12 miss: R holds 2 > 1: evict R's oldest, 10       R [12 11]
        //  0 hit: P [0 1]
        //  13 miss: R 2 > 1: evict 11                         R [13 12]
        //  1 hit: P [1 0]
        let trace = [0, 10, 11, 1, 12, 0, 13, 1];
        assert_eq!(
            hits(small(), 4, &trace),
            [false, false, false, false, false, true, false, true]
        );
        let ev: Vec<u64> = evictions(small(), 4, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ev, [10, 11]);
        // Victims: R 2 > 1: 12 (R now 1 = floor); P's oldest 0, then 1; P empty: 13.
        assert_eq!(resident_after(small(), 4, &trace), [12, 0, 1, 13]);
    }

    #[test]
    fn preferred_pages_survive_a_leaf_scan_that_flushes_lru() {
        // Two root pages read before every leaf; leaves 100.. are read once each.
        let mut trace = Vec::new();
        for leaf in 100..120 {
            trace.extend([0, 1, leaf]);
        }
        // Long scan of leaves only, then the roots again.
        trace.extend(200..210);
        trace.extend([0, 1]);
        let h = hits(small(), 4, &trace);
        assert_eq!(&h[h.len() - 2..], [true, true]);
        let lru = hits(crate::Lru::new(4), 4, &trace);
        assert_eq!(&lru[lru.len() - 2..], [false, false]);
    }

    #[test]
    fn page_number_is_the_low_bits_of_pool_and_des_keys() {
        let p = PinRange::new(8, 3, 0.1, 32);
        // the pool's key: slot << 48 ^ generation << 40 ^ page
        assert!(p.is_preferred((5u64 << 48) ^ (2u64 << 40) ^ 2));
        assert!(!p.is_preferred((5u64 << 48) ^ (2u64 << 40) ^ 3));
        // the DES's key: file << 32 | block
        assert!(p.is_preferred((7u64 << 32) | 1));
        assert!(!p.is_preferred((7u64 << 32) | 40));
        // the whole key as the page number
        let whole = PinRange::new(8, 3, 0.1, 64);
        assert!(!whole.is_preferred((7u64 << 32) | 1));
        assert!(whole.is_preferred(2));
    }

    #[test]
    fn parameters_and_their_defaults() {
        let build = |text: &str| PolicySpec::parse(text)?.build(&BuildContext::new(100, 0));
        // auto: the capacity less the floor of 10
        match build("pinrange").unwrap() {
            crate::AnyPolicy::PinRange(p) => assert_eq!(p.range_pages(), 90),
            other => panic!("built {other:?}"),
        }
        match build("pinrange:range=23040:rest=0.2").unwrap() {
            crate::AnyPolicy::PinRange(p) => assert_eq!(p.range_pages(), 23040),
            other => panic!("built {other:?}"),
        }
        assert!(build("pinrange:rest=1.5").is_err());
        assert!(build("pinrange:page_bits=0").is_err());
        assert!(build("pinrange:page_bits=65").is_err());
        assert!(build("pinrange:range=lots").is_err());
    }
}
