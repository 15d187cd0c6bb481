//! Where InfoReplace's time goes (thesis Figure 3.1, right): checking the victim list,
//! refreshing pages about to go, simulating the target, and the rest.
//!
//! One clock is read at every boundary between parts and the time since the previous
//! reading is charged to the part just finished, so the parts partition the call: they
//! add up to the total exactly (in nanoseconds), which a test checks.

use serde::Serialize;
use std::time::Instant;

/// The parts of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Fetching the victim list and finding the target's pages on it.
    Check,
    /// Reading the pages the target wants kept.
    Refresh,
    /// Running the target policy on the access.
    Simulate,
    /// Everything else: forming the key, reading the eviction counter, bookkeeping.
    Rest,
}

/// Accumulated overhead and what caused it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Overhead {
    /// Calls (reads or writes of one page) accounted.
    pub calls: u64,
    /// Time fetching and scanning victim lists.
    pub check_ns: u64,
    /// Time refreshing pages.
    pub refresh_ns: u64,
    /// Time simulating the target.
    pub simulate_ns: u64,
    /// Time in everything else.
    pub rest_ns: u64,
    /// Time of the calls from entry to exit.
    pub total_ns: u64,
    /// Victim lists fetched.
    pub victim_fetches: u64,
    /// Pages refreshed.
    pub refreshes: u64,
    /// Calls that looked at the victim list at all (the eviction counter said so).
    pub checked_calls: u64,
    /// Calls whose recheck loop stopped at the bound with wanted pages still listed.
    pub bound_reached: u64,
}

impl Overhead {
    /// The four parts added up.
    pub fn parts_ns(&self) -> u64 {
        self.check_ns + self.refresh_ns + self.simulate_ns + self.rest_ns
    }

    /// Mean overhead per call in microseconds: (check, refresh, simulate, rest).
    pub fn per_call_us(&self) -> [f64; 4] {
        let per = |ns: u64| ns as f64 / 1000.0 / self.calls.max(1) as f64;
        [
            per(self.check_ns),
            per(self.refresh_ns),
            per(self.simulate_ns),
            per(self.rest_ns),
        ]
    }
}

/// Charges the time between readings to parts; see the module docs.
pub(crate) struct Stopwatch {
    start: Instant,
    last: Instant,
}

impl Stopwatch {
    pub(crate) fn start() -> Self {
        let now = Instant::now();
        Stopwatch {
            start: now,
            last: now,
        }
    }

    /// Charge the time since the last reading to `part`.
    pub(crate) fn lap(&mut self, part: Part, into: &mut Overhead) {
        let now = Instant::now();
        let ns = now.duration_since(self.last).as_nanos() as u64;
        self.last = now;
        match part {
            Part::Check => into.check_ns += ns,
            Part::Refresh => into.refresh_ns += ns,
            Part::Simulate => into.simulate_ns += ns,
            Part::Rest => into.rest_ns += ns,
        }
    }

    /// End the call: the rest since the last reading, and the total (from the same two
    /// readings, so that the parts add up to it exactly).
    pub(crate) fn finish(mut self, into: &mut Overhead) {
        self.lap(Part::Rest, into);
        into.total_ns += self.last.duration_since(self.start).as_nanos() as u64;
        into.calls += 1;
    }
}
