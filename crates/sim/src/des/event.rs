//! The event queue: a binary heap ordered by (time, insertion sequence).
//!
//! Ties in time are broken by the order in which events were scheduled, never by the
//! heap's internal layout, so a run is a pure function of its inputs (the nexosim habit).
//! Events are a plain enum, small and `Copy`: no boxed closures, so a run could be logged
//! and replayed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub use super::time::{check_time, Nanos, VTime, END_OF_TIME, NS_PER_S};

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

/// Pending events in (time, sequence) order. Generic over the event type so that other
/// simulations in this crate (the memory simulator of [`super::memory`]) share the same
/// deterministic queue; the file-cache engine uses [`Event`].
#[derive(Debug)]
pub struct EventQueue<E = Event> {
    heap: BinaryHeap<Reverse<(VTime, u64, E)>>,
    seq: u64,
}

impl<E: Ord> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<E: Ord> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: VTime, event: E) {
        self.seq += 1;
        self.heap.push(Reverse((time, self.seq, event)));
    }

    /// The earliest event, first scheduled first among equal times.
    #[inline]
    pub fn pop(&mut self) -> Option<(VTime, E)> {
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
    fn equal_times_pop_in_scheduling_order() {
        let t = VTime::from_ns;
        let mut q = EventQueue::new();
        q.push(t(10), Event::Flusher);
        q.push(t(5), Event::Process(3));
        q.push(t(10), Event::Process(1));
        q.push(t(10), Event::DiskDone(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (t(5), Event::Process(3)),
                (t(10), Event::Flusher),
                (t(10), Event::Process(1)),
                (t(10), Event::DiskDone(0)),
            ]
        );
    }
}
