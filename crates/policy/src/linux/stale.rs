//! The kernel's reclaim as it runs between memory-cgroup statistics flushes: the part of
//! the `linux` policy that `stats_ms` switches on (module docs of [`super`]).
//!
//! Why a separate piece: the plain model balances the lists at every eviction from
//! exact sizes, which is what the kernel does when its statistics are fresh. With the
//! default 2 s flush, reclaim decides from totals up to one period old, and reclaims in
//! runs of about 32 pages. This module holds those totals, reclaim's snapshot of the
//! activation count, and the arithmetic of one run, so the list code stays one thing.

/// `SWAP_CLUSTER_MAX`: the pages one reclaim run is asked to free (a memory cgroup's
/// charge reclaims `max(pages charged, 32)`), and the largest batch scanned at once.
pub const RECLAIM_BATCH: u64 = 32;

/// `DEF_PRIORITY`: a run first scans `list size >> 12` of each list, then doubles the
/// share (priority 11, 10, ...) until it has freed a batch.
pub const DEF_PRIORITY: u32 = 12;

/// What reclaim reads: the lists' sizes and the count of refault activations
/// (`WORKINGSET_ACTIVATE_FILE`), as last flushed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Units on the active list.
    pub active: u64,
    /// Units on the inactive list.
    pub inactive: u64,
    /// Refault activations since the start.
    pub activations: u64,
}

/// The statistics as reclaim sees them, and reclaim's own state between runs.
#[derive(Clone, Debug)]
pub struct StaleStats {
    /// When the flushes fall, if on a timer; `None`: only when told ([`Self::flush`]).
    timer: Option<Timer>,
    /// The totals as of the last flush (all zero before the first).
    pub flushed: Totals,
    /// Reclaim's snapshot of the flushed activation count, taken at the end of each
    /// run (`snapshot_refaults`).
    snapshot: u64,
    /// Units the current run has yet to free; a new run starts when it reaches zero.
    credit: u64,
}

/// The kernel's periodic flush as a model can place it: a period and a phase.
#[derive(Clone, Copy, Debug)]
struct Timer {
    /// Milliseconds between flushes (`FLUSH_TIME`, 2 s in the kernel); at least 1.
    period_ms: u64,
    /// Where in the period the flushes fall (the kernel's worker keeps its own phase,
    /// unknown to a mirror started at some moment): flushes at `phase + k * period`.
    phase_ms: u64,
    /// The wall-clock millisecond of the next periodic flush.
    next_flush_ms: u64,
}

/// One reclaim run's decision: how many inactive units it frees, and how many active
/// units it moves to the inactive list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Units freed from the inactive tail.
    pub evict: u64,
    /// Units moved from the active tail to the inactive head.
    pub deactivate: u64,
}

impl StaleStats {
    /// Statistics flushed every `period_ms`, the first at `phase_ms` (taken modulo the
    /// period; 0: at the first period's end), none flushed yet.
    pub fn new(period_ms: u64, phase_ms: u64) -> Self {
        let period_ms = period_ms.max(1);
        let phase_ms = phase_ms % period_ms;
        let timer = Timer {
            period_ms,
            phase_ms,
            next_flush_ms: if phase_ms == 0 { period_ms } else { phase_ms },
        };
        StaleStats {
            timer: Some(timer),
            ..Self::on_events()
        }
    }

    /// Statistics flushed only when [`Self::flush`] says so (the kernel's own flushes,
    /// observed), none flushed yet.
    pub fn on_events() -> Self {
        StaleStats {
            timer: None,
            flushed: Totals::default(),
            snapshot: 0,
            credit: 0,
        }
    }

    /// Wall-clock time is `now_ms`: if a periodic flush has come due since the last
    /// one, the totals become `current`. Flushes fall on multiples of the period; several
    /// missed ones amount to one, as the worker's would. Without a timer, nothing.
    pub fn clock(&mut self, now_ms: u64, current: Totals) {
        let Some(t) = &mut self.timer else {
            return;
        };
        if now_ms >= t.next_flush_ms {
            self.flushed = current;
            let since = now_ms - t.phase_ms;
            t.next_flush_ms = (since / t.period_ms + 1) * t.period_ms + t.phase_ms;
        }
    }

    /// A flush now: the totals become `current`.
    pub fn flush(&mut self, current: Totals) {
        self.flushed = current;
    }

    /// Whether only [`Self::flush`] refreshes the totals (no timer).
    pub fn on_events_only(&self) -> bool {
        self.timer.is_none()
    }

    /// Whether an eviction starts a new reclaim run (the previous one has freed its
    /// share); if so, the run's decision from the sizes the lists have now (the scan
    /// counts use exact sizes, only the gates use flushed ones), with the snapshot
    /// taken. Otherwise `None` and one unit less is owed.
    pub fn next_eviction(&mut self, active: u64, inactive: u64, active_ratio: f64) -> Option<Run> {
        if self.credit > 0 {
            self.credit -= 1;
            return None;
        }
        let run = self.decide(active, inactive, active_ratio);
        self.credit = run.evict.saturating_sub(1);
        Some(run)
    }

    /// `prepare_scan_control`'s gate, then the scan of one run.
    fn decide(&mut self, active: u64, inactive: u64, active_ratio: f64) -> Run {
        let f = self.flushed;
        let may_deactivate =
            f.activations != self.snapshot || inactive_is_low(f.active, f.inactive, active_ratio);
        self.snapshot = f.activations;
        scan(active, inactive, may_deactivate)
    }
}

/// `inactive_is_low`, with the ratio written as the active list's largest share
/// (`active_ratio = r / (r + 1)`; 0.5 is the kernel's `inactive * 1 < active`).
pub fn inactive_is_low(active: u64, inactive: u64, active_ratio: f64) -> bool {
    active as f64 > active_ratio * (active + inactive) as f64
}

/// One run of `shrink_lruvec` over the file lists, priority by priority: at each, both
/// lists are scanned `size >> priority`, in batches of at most 32 per list, inactive
/// first; the run stops after the batch in which it has freed 32 units. Every inactive
/// unit scanned is freed (unmapped clean file pages are, referenced or not); active
/// units scanned are deactivated only when the gate allows, else skipped.
pub fn scan(active: u64, inactive: u64, may_deactivate: bool) -> Run {
    let mut run = Run {
        evict: 0,
        deactivate: 0,
    };
    for priority in (0..=DEF_PRIORITY).rev() {
        let (mut left_inactive, mut left_active) = (inactive >> priority, active >> priority);
        if !may_deactivate {
            left_active = 0;
        }
        while left_inactive > 0 || left_active > 0 {
            let take = left_inactive.min(RECLAIM_BATCH);
            left_inactive -= take;
            run.evict += take;
            let take = left_active.min(RECLAIM_BATCH);
            left_active -= take;
            run.deactivate += take;
            if run.evict >= RECLAIM_BATCH {
                return run;
            }
        }
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_at_the_mirrors_size_frees_37_pages() {
        // 80 MiB = 20480 pages, half on each list: 10240 >> 12 = 2, >> 11 = 5, >> 10 = 10,
        // >> 9 = 20: freed 2, 7, 17, 37 >= 32 after priority 9.
        assert_eq!(
            scan(10240, 10240, true),
            Run {
                evict: 37,
                deactivate: 37
            }
        );
        assert_eq!(
            scan(10240, 10240, false),
            Run {
                evict: 37,
                deactivate: 0
            }
        );
        // A large active list is scanned in proportion: 30720 >> 12..10 = 7, 15, 30; at
        // priority 9 one batch of 32 of its 60, after which the run has freed enough.
        assert_eq!(scan(30720, 10240, true).deactivate, 7 + 15 + 30 + 32);
    }

    #[test]
    fn batches_of_32_end_a_run_early() {
        // 4096 inactive: priorities 12..8 free 1 + 2 + 4 + 8 + 16 = 31, then priority 7
        // has 32 to scan, one batch, and the run stops at 63.
        assert_eq!(scan(0, 4096, true).evict, 31 + 32);
        // Too small a list: every priority is scanned, and the run frees what there is.
        assert_eq!(
            scan(3, 4, true),
            Run {
                evict: 4 + 2 + 1,
                deactivate: 3 + 1
            }
        );
        assert_eq!(scan(5, 0, true).evict, 0);
    }

    #[test]
    fn the_gate_reads_flushed_totals_and_the_snapshot() {
        let mut s = StaleStats::new(2000, 0);
        let now = Totals {
            active: 100,
            inactive: 10,
            activations: 5,
        };
        // Before the first flush reclaim sees zeros: no new activations, inactive not
        // low, so the active list is left alone whatever it holds now.
        assert_eq!(s.decide(100, 10, 0.5).deactivate, 0);
        s.clock(1999, now);
        assert_eq!(s.flushed, Totals::default());
        s.clock(2000, now);
        assert_eq!(s.flushed, now);
        // Activations changed since the snapshot (0): this run may deactivate ...
        assert!(s.decide(100, 10, 0.5).deactivate > 0);
        // ... and so may the next, because the flushed inactive list is low.
        assert!(s.decide(100, 10, 0.5).deactivate > 0);
        // The flush due at 4000 ms, applied at the first clock after it: balanced lists. Activations unchanged: no run
        // deactivates, though the lists now (exact) are far out of balance.
        s.clock(4500, Totals {
            active: 50,
            inactive: 60,
            activations: 5,
        });
        assert_eq!(s.decide(1000, 10, 0.5).deactivate, 0);
        // The next flush at 6000 ms (not 6500: flushes fall on the period's multiples).
        s.clock(5999, now);
        assert_eq!(s.flushed.active, 50);
        s.clock(6000, now);
        assert_eq!(s.flushed.active, 100);
    }

    /// Without a timer the clock never flushes; each flush takes the totals of its
    /// moment, and the gate reads them as after a timed flush.
    #[test]
    fn observed_flushes_replace_the_timer() {
        let mut s = StaleStats::on_events();
        let now = Totals {
            active: 100,
            inactive: 10,
            activations: 5,
        };
        s.clock(2000, now);
        s.clock(1_000_000, now);
        assert_eq!(s.flushed, Totals::default());
        assert_eq!(s.decide(100, 10, 0.5).deactivate, 0);
        s.flush(now);
        assert_eq!(s.flushed, now);
        assert!(s.decide(100, 10, 0.5).deactivate > 0);
    }

    #[test]
    fn a_run_is_owed_unit_by_unit() {
        let mut s = StaleStats::new(1, 0);
        let run = s.next_eviction(0, 4096, 0.5).unwrap();
        assert_eq!(run.evict, 63);
        for _ in 0..62 {
            assert_eq!(s.next_eviction(0, 4096, 0.5), None);
        }
        assert!(s.next_eviction(0, 4096, 0.5).is_some());
    }
}
