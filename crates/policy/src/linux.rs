//! Linux-style active/inactive page lists with refault detection (the split LRU of
//! mm/vmscan.c since 2.6.28, and Johannes Weiner's mm/workingset.c since 3.15).
//!
//! Two lists share the cache. A page read for the first time goes to the head of the
//! **inactive** list with its `referenced` flag set (the read path calls
//! `mark_page_accessed`). Following `mark_page_accessed` for unmapped file pages:
//!
//! * an access to an inactive page that is already referenced **activates** it: it moves
//!   to the head of the **active** list and its flag is cleared; so the second access
//!   while inactive promotes;
//! * an access to an inactive, unreferenced page (one demoted from the active list)
//!   only sets the flag;
//! * an access to an active page only sets the flag; the active list is not reordered.
//!
//! Reclaim (our `evict`) first balances the lists: while the active list holds more than
//! `active_ratio` of the resident units, its tail is **demoted** to the inactive head,
//! keeping its flag (so a page used while active is re-activated by its next access). It
//! then evicts from the inactive tail. Linux's `inactive_is_low` keeps
//! `inactive * ratio >= active` with `ratio = sqrt(10 * memory in GB)`, which is 1 below
//! 1 GB: the active list at most half, hence the default 0.5. For larger machines, set
//! `active_ratio = r / (r + 1)`.
//!
//! **Shadow entries** (`shadow`, default on, as in every kernel since 3.15): on eviction
//! the page's key is remembered with the value of a counter, `nonresident_age`, that
//! advances with every eviction and every activation (by the page's size in units). When
//! the key faults in again, `refault distance = age now - age at eviction` estimates how
//! many more units the inactive list would have needed to keep it. If that is at most the
//! active list's size, the page would have stayed resident had the lists been split
//! differently, so it is inserted directly into the active list (a *workingset
//! refault*). For file pages on a machine without swap, the kernel's workingset size is
//! the active file list, which is what we compare with. Shadows are bounded to one per
//! frame (`min(capacity, 2^24)`, oldest evictions forgotten first): a page evicted more
//! than that many evictions ago has a refault distance larger than any active list and
//! could never be activated, so the bound loses nothing in unit mode.
//!
//! **Stale statistics** (`stats_ms`, default 0). Reclaim does not read the lists'
//! sizes directly: a memory cgroup's counters are summed into the totals reclaim reads
//! only when *flushed*, which a kernel worker does every 2 s (`flush_memcg_stats_dwork`)
//! and reading the cgroup's `memory.stat` does at once. With `stats_ms = P > 0` the
//! policy keeps a copy of (active size, inactive size, refault activations) refreshed at
//! the first [`Policy::set_wall_clock`] call of each period (at `stats_phase_ms + k P`),
//! and reclaims as `shrink_node` does between flushes:
//!
//! * evictions come in **runs**: a run frees the inactive tail `size >> priority` units
//!   at priority 12, 11, ... (`DEF_PRIORITY`), in batches of at most 32
//!   (`SWAP_CLUSTER_MAX`), until 32 are freed (37 units at 80 MiB of 4 KiB units, half
//!   active); the units are freed one per `evict` as the cache needs them, and the next
//!   eviction after the last starts a new run;
//! * a run may shrink the active list (`may_deactivate`, `prepare_scan_control`) only if
//!   the *flushed* refault-activation count differs from reclaim's snapshot of it (taken
//!   at the end of every run, `snapshot_refaults`) or `inactive_is_low` holds for the
//!   *flushed* sizes; if so it moves `active >> priority` units per priority scanned
//!   (exact sizes: the scan counts are not statistics) from the active tail to the
//!   inactive head;
//! * a refault is activated if its distance is at most the *flushed* active size
//!   (`workingset_test_recent`).
//!
//! So between flushes the lists drift: an active list found too large at a flush is
//! shrunk at every run for a whole period, one found small is left alone while
//! activations grow it. `stats_ms = 0` is the model above (balanced at every eviction
//! from exact sizes: what the kernel does when the statistics are fresh). The period
//! is wall-clock time, not [`Access::time`]: drivers that have none never flush, and
//! reclaim then sees zeros (no activation, no deactivation unless the inactive list
//! runs dry). The constants assume one unit is one 4 KiB page, as the server's mirror
//! counts; the phase of the kernel's worker is unknown to a mirror (`stats_phase_ms`).
//! With `stats_events = true` there is no timer: the totals are refreshed when the
//! driver says the kernel flushed them ([`Policy::flush_stats`]; the server observes
//! the kernel's flushes through a tracepoint, which flushes nothing), so the period,
//! its phase and the worker's drift (its re-queued timer runs 2016-2020 ms here) need
//! no guessing.
//!
//! Deviations: no mapped pages, no anonymous list, no `VM_EXEC` protection, no
//! per-cgroup lists, no LRU batching (pagevecs); the lists are balanced at each eviction
//! rather than in reclaim batches. Pinned frames (locked or under I/O in the kernel)
//! are skipped in place; if the inactive list has nothing evictable we evict from the
//! active tail (the kernel would deactivate first and retry). libCacheSim has no Linux
//! model.
//!
//! **The victim list** is a walk, not a simulation: balancing only ever moves the active
//! tail to the inactive *head*, behind every page already inactive, and eviction takes
//! the first evictable page from the inactive tail (or, when the inactive list has none,
//! from the active tail). So however the lists are rebalanced along the way, the next
//! evictions take the evictable pages of "inactive from its tail, then active from its
//! tail", in that order. Listing `n` victims costs O(n + skipped) and copies nothing
//! (InfoReplace fetches the list on every eviction; a copy of the lists cost O(frames)).
//! A test holds it equal to running `evict` on a copy.
//!
//! With stale statistics a run's deactivations also go to the inactive head, so the
//! walk holds for them too (the same test runs every variant).
//!
//! Cost: O(1) per hit and insertion; eviction amortized O(1) (each demotion follows an
//! activation); one key-map lookup per miss and per eviction for shadows; victim list
//! O(n). Memory: 21 bytes
//! per frame (8 links, 8 key, 4 size, 1 flags) plus about 40 bytes per shadow entry.

mod stale;

use crate::history::HistoryRing;
use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

const ACTIVE: u8 = 1;
const REFERENCED: u8 = 2;

/// Linux-style two-list page cache replacement.
#[derive(Clone, Debug)]
pub struct Linux {
    links: Links,
    active: List,
    inactive: List,
    flags: Vec<u8>,
    size: Vec<u32>,
    keys: Vec<u64>,
    active_units: u64,
    inactive_units: u64,
    active_ratio: f64,
    shadows: Option<HistoryRing>,
    nonresident_age: u64,
    /// Refault activations so far (`WORKINGSET_ACTIVATE_FILE`).
    refault_activations: u64,
    /// With `stats_ms > 0`: reclaim in runs, gated by statistics flushed every period.
    stats: Option<stale::StaleStats>,
}

impl Linux {
    /// The two-list policy for about `frames` residents; `shadow` enables refault detection.
    pub fn new(frames: usize, active_ratio: f64, shadow: bool) -> Self {
        Linux {
            links: Links::with_capacity(frames),
            active: List::new(),
            inactive: List::new(),
            flags: vec![0; frames],
            size: vec![0; frames],
            keys: vec![0; frames],
            active_units: 0,
            inactive_units: 0,
            active_ratio: active_ratio.clamp(0.0, 1.0),
            shadows: shadow.then(|| HistoryRing::new(frames, 1)),
            nonresident_age: 0,
            refault_activations: 0,
            stats: None,
        }
    }

    /// The same policy with the kernel's memory-cgroup statistics flushed only every
    /// `period_ms` of wall-clock time (given by [`Policy::set_wall_clock`]): reclaim
    /// runs and refault activation decide from the last flushed totals (module docs).
    /// A period of 0 keeps the fresh model.
    pub fn with_stale_stats(mut self, period_ms: u64, phase_ms: u64) -> Self {
        self.stats = (period_ms > 0).then(|| stale::StaleStats::new(period_ms, phase_ms));
        self
    }

    /// The same policy with the statistics flushed only when the driver says the
    /// modelled kernel flushed them ([`Policy::flush_stats`]), not on a timer: the
    /// server can observe the kernel's flushes (`bufcache serve --mirror-flush-events`),
    /// so neither period nor phase has to be guessed.
    pub fn with_observed_flushes(mut self) -> Self {
        self.stats = Some(stale::StaleStats::on_events());
        self
    }

    /// The totals a flush would publish now.
    fn totals(&self) -> stale::Totals {
        stale::Totals {
            active: self.active_units,
            inactive: self.inactive_units,
            activations: self.refault_activations,
        }
    }

    /// The active list's size as refault activation compares with it: exact with fresh
    /// statistics, as last flushed otherwise.
    fn workingset_size(&self) -> u64 {
        match &self.stats {
            Some(stats) => stats.flushed.active,
            None => self.active_units,
        }
    }

    /// Make room for one eviction: with fresh statistics, balance the lists now; with
    /// stale ones, start a reclaim run when the last has freed its share, and move the
    /// active units it deactivates.
    fn reclaim(&mut self) {
        let (active, inactive, ratio) = (self.active_units, self.inactive_units, self.active_ratio);
        let Some(stats) = &mut self.stats else {
            self.balance();
            return;
        };
        if let Some(run) = stats.next_eviction(active, inactive, ratio) {
            self.deactivate(run.deactivate);
        }
    }

    /// Whether a resident frame is on the active list (for tests and Dust).
    pub fn is_active(&self, frame: FrameId) -> bool {
        self.flags[frame.index()] & ACTIVE != 0
    }

    #[inline]
    fn activate(&mut self, f: FrameId) {
        let size = u64::from(self.size[f.index()]);
        self.links.unlink(&mut self.inactive, f);
        self.inactive_units -= size;
        self.links.push_front(&mut self.active, f);
        self.active_units += size;
        self.flags[f.index()] = ACTIVE;
        self.nonresident_age += size;
    }

    fn balance(&mut self) {
        let total = (self.active_units + self.inactive_units) as f64;
        while self.active_units as f64 > self.active_ratio * total {
            if !self.demote_tail() {
                break;
            }
        }
    }

    /// Move at least `units` units (whole pages) from the active tail to the inactive
    /// head, or the whole active list if it holds fewer.
    fn deactivate(&mut self, units: u64) {
        let target = self.active_units.saturating_sub(units);
        while self.active_units > target {
            if !self.demote_tail() {
                break;
            }
        }
    }

    /// Demote the active tail to the inactive head, keeping its referenced flag; false
    /// when the active list is empty.
    fn demote_tail(&mut self) -> bool {
        let Some(f) = self.links.pop_back(&mut self.active) else {
            return false;
        };
        let size = u64::from(self.size[f.index()]);
        self.active_units -= size;
        self.inactive_units += size;
        self.links.push_front(&mut self.inactive, f);
        self.flags[f.index()] &= !ACTIVE;
        true
    }

    fn unlink(&mut self, f: FrameId) {
        let size = u64::from(self.size[f.index()]);
        if self.flags[f.index()] & ACTIVE != 0 {
            self.links.unlink(&mut self.active, f);
            self.active_units -= size;
        } else {
            self.links.unlink(&mut self.inactive, f);
            self.inactive_units -= size;
        }
    }
}

impl Policy for Linux {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.active.len() + self.inactive.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let flags = self.flags[frame.index()];
        if flags == REFERENCED {
            self.activate(frame);
        } else {
            self.flags[frame.index()] = flags | REFERENCED;
        }
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        ensure_slot(&mut self.flags, frame, 0);
        ensure_slot(&mut self.size, frame, 0);
        ensure_slot(&mut self.keys, frame, 0);
        let size = access.size.max(1);
        let f = frame.index();
        self.size[f] = size;
        self.keys[f] = access.key;
        let mut eviction_age = [0u64];
        let refault = match &mut self.shadows {
            Some(ring) => ring.take(access.key, &mut eviction_age),
            None => false,
        };
        let distance = self.nonresident_age.wrapping_sub(eviction_age[0]);
        if refault && distance <= self.workingset_size() {
            self.refault_activations += u64::from(size);
            self.links.push_front(&mut self.active, frame);
            self.active_units += u64::from(size);
            self.flags[f] = ACTIVE;
            self.nonresident_age += u64::from(size);
        } else {
            self.links.push_front(&mut self.inactive, frame);
            self.inactive_units += u64::from(size);
            self.flags[f] = REFERENCED;
        }
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.reclaim();
        let victim = match self
            .links
            .iter_from_tail(&self.inactive)
            .find(|&f| evictable(f))
        {
            Some(f) => f,
            None => self
                .links
                .iter_from_tail(&self.active)
                .find(|&f| evictable(f))?,
        };
        self.unlink(victim);
        self.nonresident_age += u64::from(self.size[victim.index()]);
        if let Some(ring) = &mut self.shadows {
            ring.insert(self.keys[victim.index()], &[self.nonresident_age]);
        }
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.unlink(frame);
    }

    fn set_wall_clock(&mut self, now_ms: u64) {
        let current = self.totals();
        if let Some(stats) = &mut self.stats {
            stats.clock(now_ms, current);
        }
    }

    fn flush_stats(&mut self) {
        let current = self.totals();
        if let Some(stats) = &mut self.stats {
            stats.flush(current);
        }
    }

    fn wants_flush_events(&self) -> bool {
        self.stats.as_ref().is_some_and(stale::StaleStats::on_events_only)
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        // The order eviction will take them in (module docs): demoted pages join the
        // inactive head, so they go after every page inactive now, active tail first.
        let order = self
            .links
            .iter_from_tail(&self.inactive)
            .chain(self.links.iter_from_tail(&self.active));
        out.extend(order.filter(|&f| evictable(f)).take(n));
    }
}

impl NamedPolicy for Linux {
    const NAME: &'static str = "linux";
    const SUMMARY: &'static str =
        "Linux active/inactive lists with shadow-entry refault detection (mm/workingset.c)";
    const PARAMS: &'static [ParamInfo] = &[
        ParamInfo {
            name: "active_ratio",
            default: "0.5",
            help:
                "largest share of the resident units on the active list, 0..=1 (Linux < 1GB: 0.5)",
        },
        ParamInfo {
            name: "shadow",
            default: "true",
            help: "remember evicted pages and activate refaults closer than the active list",
        },
        ParamInfo {
            name: "stats_ms",
            default: "0",
            help: "memcg statistics flushed every this many ms of wall clock (the kernel: 2000); reclaim in 32-page runs gated by them; 0: fresh, lists balanced at every eviction",
        },
        ParamInfo {
            name: "stats_phase_ms",
            default: "0",
            help: "with stats_ms: the first flush at this many ms (then every stats_ms); 0: at stats_ms",
        },
        ParamInfo {
            name: "stats_events",
            default: "false",
            help: "stale statistics as with stats_ms, flushed only when the driver observes the kernel flush them (bufcache serve --mirror-flush-events), not on a timer",
        },
    ];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let ratio = params.fraction("active_ratio", 0.0, 1.0)?;
        let shadow = params.boolean("shadow")?;
        let stats_ms = params.integer("stats_ms", 0, 3_600_000)?;
        let phase_ms = params.integer("stats_phase_ms", 0, 3_600_000)?;
        let mut linux = Linux::new(crate::prealloc_frames(ctx.capacity), ratio, shadow)
            .with_stale_stats(stats_ms, phase_ms);
        if params.boolean("stats_events")? {
            if stats_ms > 0 {
                return Err(ConfigError::BadValue {
                    policy: "linux",
                    param: "stats_events",
                    value: "true".into(),
                    expected: "stats_ms=0 (its flushes come from the driver, not a timer)".into(),
                });
            }
            linux = linux.with_observed_flushes();
        }
        if let Some(shadows) = &mut linux.shadows {
            shadows.set_key_space(ctx.key_space);
        }
        Ok(linux)
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::Linux;

    #[test]
    fn hand_worked_without_shadows() {
        // capacity 4, ratio 0.5, no shadows. Lists newest first; r = referenced.
        //  1 2 3 4        inactive [4r 3r 2r 1r]
        //  1 hit: referenced -> active [1]; inactive [4r 3r 2r]
        //  2 hit -> active [2 1]; inactive [4r 3r]
        //  1 hit (active): sets r; no move: active [2 1r]
        //  5: balance: active 2 <= 0.5 * 4: nothing. evict inactive tail 3
        //                 inactive [5r 4r]
        //  3: evict 4     inactive [3r 5r]
        //  5 hit -> activate: active [5 2 1r]; inactive [3r]
        //  6: balance: 3 > 2: demote 1r, keeps flag: inactive [1r 3r], active [5 2]
        //     evict 3     inactive [6r 1r]
        //  1 hit: referenced -> active [1 5 2]; inactive [6r]
        //  7: balance: demote 2: inactive [2 6r]; active [1 5]. evict 6.
        let trace = [1, 2, 3, 4, 1, 2, 1, 5, 3, 5, 6, 1, 7];
        assert_eq!(
            hits(Linux::new(4, 0.5, false), 4, &trace),
            [
                false, false, false, false, true, true, true, false, false, true, false, true,
                false
            ]
        );
        let ev: Vec<u64> = evictions(Linux::new(4, 0.5, false), 4, &trace)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ev, [3, 4, 3, 6]);
        // Now active [1 5], inactive [7r 2]. Victims: 2 (active 2 of 4 is not too many);
        // then with 3 resident, active 2 > 1.5: 5 is demoted, and 7 (inactive tail) goes;
        // then 5; then 1 (demoted when it is the only resident frame).
        assert_eq!(
            resident_after(Linux::new(4, 0.5, false), 4, &trace),
            [2, 7, 5, 1]
        );
    }

    #[test]
    fn refault_within_the_active_size_is_activated() {
        // capacity 4, ratio 0.5, shadows on.
        //  1 2 hit twice each -> active [2 1] (age 2 after two activations)
        //  3 4 -> inactive [4r 3r]
        //  5: evict 3, age 3, shadow(3) = 3   inactive [5r 4r]
        //  3: first evict 4 (age 4); then the refault distance of 3 is 4 - 3 = 1 <= active
        //     2: 3 is inserted on the active list. Without shadows it goes to inactive.
        let trace = [1, 1, 2, 2, 3, 4, 5, 3];
        let with = hits(Linux::new(4, 0.5, true), 4, &trace);
        let without = hits(Linux::new(4, 0.5, false), 4, &trace);
        assert_eq!(with, without); // same hits so far; the difference is where 3 went
        let mut c = crate::Cache::new(Linux::new(4, 0.5, true), 4);
        for (t, &k) in trace.iter().enumerate() {
            c.access(&crate::Access::unit(k, t as u64));
        }
        assert!(c.policy().is_active(c.frame_of(3).unwrap()));
        let mut c = crate::Cache::new(Linux::new(4, 0.5, false), 4);
        for (t, &k) in trace.iter().enumerate() {
            c.access(&crate::Access::unit(k, t as u64));
        }
        assert!(!c.policy().is_active(c.frame_of(3).unwrap()));
    }

    /// Drive a cache of `capacity` with `trace`, the wall clock at `clock[i]` ms before
    /// access `i`; return the hits and the final cache.
    fn drive(
        policy: Linux,
        capacity: u64,
        trace: &[u64],
        clock: &[u64],
    ) -> (Vec<bool>, crate::Cache<Linux>) {
        let mut c = crate::Cache::new(policy, capacity);
        let hits = trace
            .iter()
            .zip(clock)
            .enumerate()
            .map(|(t, (&k, &ms))| {
                c.set_wall_clock(ms);
                c.access(&crate::Access::unit(k, t as u64)).is_hit()
            })
            .collect();
        (hits, c)
    }

    fn active_keys(c: &crate::Cache<Linux>, keys: &[u64]) -> Vec<u64> {
        let active = |&&k: &&u64| c.frame_of(k).is_some_and(|f| c.policy().is_active(f));
        keys.iter().filter(active).copied().collect()
    }

    #[test]
    fn stale_statistics_leave_an_overfull_active_list_alone_until_a_flush() {
        // capacity 4, ratio 0.5, no shadows, statistics flushed every 1000 ms.
        //  1 1 2 2 3 3 -> active [3 2 1]; 4 -> inactive [4r]. All at 0 ms.
        //  5: fresh: balance demotes 1 (active 3 > 2), evicts 4; inactive [5r 1].
        //     stale: reclaim reads the unflushed totals (all 0): no new refault
        //     activations, inactive not low: the run may not deactivate; it frees
        //     4 >> 0 = 1 page of the 1-page inactive list: 4. inactive [5r].
        //  6: fresh: evicts 1. stale: a new run, the same gate: evicts 5 (the newest).
        //  1: fresh: a miss; stale: a hit (1 never left the active list).
        let trace = [1, 1, 2, 2, 3, 3, 4, 5, 6, 1];
        let at_zero = [0; 10];
        let fresh = drive(Linux::new(4, 0.5, false), 4, &trace, &at_zero);
        let stale = drive(
            Linux::new(4, 0.5, false).with_stale_stats(1000, 0),
            4,
            &trace,
            &at_zero,
        );
        assert!(!fresh.0[9]);
        assert!(stale.0[9]);
        assert_eq!(fresh.0[..9], stale.0[..9]);
        assert_eq!(active_keys(&stale.1, &[1, 2, 3]), [1, 2, 3]);
        // Fresh: 1 came back on the inactive list, evicting 5 ... the lists at half.
        assert_eq!(active_keys(&fresh.1, &[1, 2, 3]), [2, 3]);

        // The same up to 6, then a flush (1000 ms) of active 3, inactive 1 before 7:
        // inactive_is_low(3, 1), so the run may deactivate: 3 >> 1 = 1, then 3 >> 0 = 3
        // scanned: the whole active list goes to the inactive head, and 6 (the inactive
        // tail) is freed. Fresh keeps 2 and 3 active and evicts 5.
        let trace = [1, 1, 2, 2, 3, 3, 4, 5, 6, 7];
        let clock = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1000];
        let (_, stale) = drive(
            Linux::new(4, 0.5, false).with_stale_stats(1000, 0),
            4,
            &trace,
            &clock,
        );
        assert_eq!(active_keys(&stale, &[1, 2, 3, 7]), Vec::<u64>::new());
        assert!(!stale.contains(6) && stale.contains(1));
        let (_, fresh) = drive(Linux::new(4, 0.5, false), 4, &trace, &clock);
        assert_eq!(active_keys(&fresh, &[1, 2, 3, 7]), [2, 3]);
        assert!(!fresh.contains(5) && fresh.contains(6));
    }

    #[test]
    fn stale_refault_activation_compares_with_the_flushed_active_list() {
        // As `refault_within_the_active_size_is_activated`: 3 refaults at distance 1
        // while 2 units are active. Fresh: activated. Stale with no flush yet: the
        // flushed active list is 0, so 3 goes to the inactive list. With a flush at
        // 1000 ms before 5 (active 2 then): activated, as the fresh model does.
        let trace = [1, 1, 2, 2, 3, 4, 5, 3];
        let stale = || Linux::new(4, 0.5, true).with_stale_stats(1000, 0);
        let (_, c) = drive(stale(), 4, &trace, &[0; 8]);
        assert_eq!(active_keys(&c, &[3]), Vec::<u64>::new());
        let flushed = [0, 0, 0, 0, 0, 0, 1000, 1000];
        let (_, c) = drive(stale(), 4, &trace, &flushed);
        assert_eq!(active_keys(&c, &[3]), [3]);
        let (_, c) = drive(Linux::new(4, 0.5, true), 4, &trace, &[0; 8]);
        assert_eq!(active_keys(&c, &[3]), [3]);
    }

    /// Observed flushes act as timed ones at the same moment: the second sequence of
    /// `stale_statistics_leave_an_overfull_active_list_alone_until_a_flush`, with the
    /// flush told before 7 instead of timed at 1000 ms, empties the active list the
    /// same way; without it (the clock moving, no flush told) 1 2 3 stay active.
    #[test]
    fn an_observed_flush_is_a_timed_one_at_that_moment() {
        let trace = [1, 1, 2, 2, 3, 3, 4, 5, 6, 7];
        let run = |flush_before_last: bool| {
            let mut c = crate::Cache::new(Linux::new(4, 0.5, false).with_observed_flushes(), 4);
            for (t, &k) in trace.iter().enumerate() {
                c.set_wall_clock(1000 * t as u64);
                if flush_before_last && t == trace.len() - 1 {
                    c.flush_stats();
                }
                c.access(&crate::Access::unit(k, t as u64));
            }
            c
        };
        let told = run(true);
        assert_eq!(active_keys(&told, &[1, 2, 3, 7]), Vec::<u64>::new());
        assert!(!told.contains(6) && told.contains(1));
        let untold = run(false);
        assert_eq!(active_keys(&untold, &[1, 2, 3, 7]), [1, 2, 3]);
        // The spec: stats_events builds it; with a timer as well it is refused.
        let ctx = crate::BuildContext::new(4, 0);
        assert!(crate::PolicySpec::parse("linux:stats_events=true")
            .unwrap()
            .build(&ctx)
            .is_ok());
        assert!(crate::PolicySpec::parse("linux:stats_events=true:stats_ms=2000")
            .unwrap()
            .build(&ctx)
            .is_err());
    }

    /// `stats_ms=0` is the fresh model: the same hits and the same residents as the
    /// plain spec, on seeded random runs with a wall clock that moves.
    #[test]
    fn period_zero_is_the_plain_linux_policy() {
        use crate::{BuildContext, Cache, PolicySpec};
        use testutil::Rng;
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            for _ in 0..50 {
                let capacity = rng.gen_range(1..60u64);
                let build = |spec: &str| {
                    let ctx = BuildContext::new(capacity, 0);
                    Cache::new(PolicySpec::parse(spec).unwrap().build(&ctx).unwrap(), capacity)
                };
                let (mut plain, mut zero) = (build("linux"), build("linux:stats_ms=0"));
                let mut ms = 0;
                for t in 0..rng.gen_range(0..500u64) {
                    ms += rng.gen_range(0..700u64);
                    let a = crate::Access::unit(rng.gen_range(0..capacity * 3), t);
                    plain.set_wall_clock(ms);
                    zero.set_wall_clock(ms);
                    assert_eq!(plain.access(&a).is_hit(), zero.access(&a).is_hit());
                }
                assert_eq!(plain.victims(capacity as usize), zero.victims(capacity as usize));
            }
        });
    }

    /// The walk lists exactly what running `evict` on a copy of the lists would take, on
    /// seeded random runs: hits, misses, removals, byte sizes, every active ratio, with
    /// and without shadows, and random frames that may not be evicted (pinned or dirty).
    #[test]
    fn the_walk_equals_evicting_a_copy() {
        use crate::Policy;
        use testutil::Rng;
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            for case in 0..200 {
                let capacity = rng.gen_range(1..40u64);
                let ratio = [0.0, 0.25, 0.5, 0.9, 1.0][rng.gen_range(0..5)];
                let bytes = rng.gen_bool(0.3);
                let stats_ms = [0, 0, 1, 7][rng.gen_range(0..4)];
                let policy = Linux::new(capacity as usize, ratio, rng.gen_bool(0.5))
                    .with_stale_stats(stats_ms, 0);
                let mut c = crate::Cache::new(policy, capacity);
                for t in 0..rng.gen_range(0..300u64) {
                    c.set_wall_clock(t);
                    let key = rng.gen_range(0..capacity * 2 + 1);
                    if rng.gen_bool(0.05) {
                        c.remove(key);
                        continue;
                    }
                    let mut a = crate::Access::unit(key, t);
                    if bytes {
                        a.size = rng.gen_range(1..4);
                    }
                    c.access(&a);
                }
                let blocked: Vec<bool> = (0..capacity * 4).map(|_| rng.gen_bool(0.2)).collect();
                let evictable = |f: crate::FrameId| !blocked[f.index() % blocked.len()];
                for n in [0, 1, 3, capacity as usize, capacity as usize + 5] {
                    let (mut walk, mut copy) = (Vec::new(), Vec::new());
                    c.policy().victims(n, &evictable, &mut walk);
                    crate::victims_by_simulation(c.policy(), n, &evictable, &mut copy);
                    assert_eq!(walk, copy, "case {case}, n {n}, ratio {ratio}");
                }
            }
        });
    }
}
