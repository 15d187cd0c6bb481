//! The event queue: a binary heap ordered by (time, insertion sequence).
//!
//! Ties in time are broken by the order in which events were scheduled, never by the
//! heap's internal layout, so a run is a pure function of its inputs (the nexosim habit).
//! Events are a plain enum, small and `Copy`: no boxed closures, so a run could be logged
//! and replayed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Virtual time in nanoseconds.
pub type Nanos = u64;

/// Nanoseconds per second, for reports.
pub const NS_PER_S: f64 = 1e9;

/// Where the clock ends: 2^64 − 1 ns, about 584 years. Time additions stop here
/// ([`later`]) instead of wrapping around into the past, and the engine runs no event due
/// here: the flusher's wake-up is dropped, anything else stops the run with
/// [`super::RunError::TimeOverflow`].
pub const END_OF_TIME: Nanos = Nanos::MAX;

/// `delay` after `time`, or [`END_OF_TIME`] if that is past the clock's end. Every event
/// time the engine and the disks compute goes through here: a plain `+` would wrap in a
/// release build and schedule the event in the past.
#[inline]
pub fn later(time: Nanos, delay: Nanos) -> Nanos {
    time.saturating_add(delay)
}

/// `value` units of `ns_per_unit` nanoseconds (as written in configurations), rounded to
/// whole nanoseconds, if the clock can hold it: zero or more and before [`END_OF_TIME`].
/// Otherwise the message says what is allowed. Validation calls this so that a duration
/// that cannot be represented is refused up front, where the plain conversion (`as
/// Nanos`) would silently clamp it to 0 or to the end of time.
pub fn check_time(value: f64, ns_per_unit: f64, unit: &str) -> Result<Nanos, String> {
    let ns = (value * ns_per_unit).round();
    // NaN fails both comparisons; END_OF_TIME as f64 is 2^64, so `ns` below it fits.
    if value >= 0.0 && ns < END_OF_TIME as f64 {
        Ok(ns as Nanos)
    } else {
        Err(format!(
            "must be zero or more {unit} and less than {} (2^64 ns, where the simulator's clock ends), got {value}",
            END_OF_TIME as f64 / ns_per_unit
        ))
    }
}

/// Something that happens at a point in virtual time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A process resumes: its compute delay ended, or it was woken.
    Process(u32),
    /// A disk finished the request it was serving.
    DiskDone(u16),
    /// The delayed-write flusher wakes up.
    Flusher,
}

/// Pending events in (time, sequence) order.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Nanos, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse((time, self.seq, event)));
    }

    /// The earliest event, first scheduled first among equal times.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_the_clock_cannot_hold_are_refused() {
        assert_eq!(check_time(1.5, 1e9, "seconds"), Ok(1_500_000_000));
        assert_eq!(check_time(0.0, 1e9, "seconds"), Ok(0));
        assert_eq!(
            check_time(18e9, 1e9, "seconds"),
            Ok(18_000_000_000_000_000_000)
        );
        for bad in [-1.0, -1e-12, 18.5e9, 1e300, f64::INFINITY, f64::NAN] {
            let e = check_time(bad, 1e9, "seconds").unwrap_err();
            assert!(e.contains("seconds and less than 18446744073.7"), "{e}");
        }
    }

    #[test]
    fn equal_times_pop_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.push(10, Event::Flusher);
        q.push(5, Event::Process(3));
        q.push(10, Event::Process(1));
        q.push(10, Event::DiskDone(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (5, Event::Process(3)),
                (10, Event::Flusher),
                (10, Event::Process(1)),
                (10, Event::DiskDone(0)),
            ]
        );
    }
}
