//! Disks: a request queue, a scheduler that picks the next request, and a service-time
//! model.
//!
//! A disk serves one request at a time. Positions are block numbers *on that disk*; the
//! head rests where the last request ended, and the linear model charges for the distance
//! from there. The scheduler only chooses among queued requests; it never preempts.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use super::time::{check_time, Nanos, VTime};

/// How the next request is chosen from a disk's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Scheduler {
    /// First come, first served.
    #[default]
    Fifo,
    /// Shortest seek time first: the request nearest the head (ties: oldest).
    Sstf,
    /// The elevator: keep moving in one direction while requests lie ahead, then reverse.
    Look,
    /// Circular LOOK: serve upward only; when nothing lies ahead, jump to the lowest request.
    Clook,
}

impl Scheduler {
    /// Every scheduler, in documentation order.
    pub const ALL: [Scheduler; 4] = [
        Scheduler::Fifo,
        Scheduler::Sstf,
        Scheduler::Look,
        Scheduler::Clook,
    ];

    /// The short name used in scenarios and reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Fifo => "fifo",
            Scheduler::Sstf => "sstf",
            Scheduler::Look => "look",
            Scheduler::Clook => "clook",
        }
    }
}

/// Time to serve one request.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ServiceTime {
    /// Every request takes the same time (Kotz & Ellis: 30 ms).
    Constant {
        /// Milliseconds per request.
        ms: f64,
    },
    /// `min_ms` plus a part of `max_ms - min_ms` proportional to the seek distance, reaching
    /// `max_ms` at `span_blocks` or more (Burnett: 1 ms to 10 ms over the disk).
    Linear {
        /// Time for a request at the head's position.
        min_ms: f64,
        /// Time for a seek of `span_blocks` or more.
        max_ms: f64,
        /// The distance (in blocks on this disk) that costs `max_ms`.
        span_blocks: u64,
    },
}

impl ServiceTime {
    /// Service time for a request `distance` blocks from the head.
    #[inline]
    pub fn time_ns(&self, distance: u64) -> Nanos {
        match *self {
            ServiceTime::Constant { ms } => ms_to_ns(ms),
            ServiceTime::Linear {
                min_ms,
                max_ms,
                span_blocks,
            } => {
                let min = ms_to_ns(min_ms);
                let max = ms_to_ns(max_ms);
                let span = span_blocks.max(1);
                let d = distance.min(span);
                min + ((max - min) as u128 * d as u128 / span as u128) as u64
            }
        }
    }

    /// Check the parameters; the message says what is allowed. Every time must be one the
    /// clock can hold ([`check_time`]).
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            ServiceTime::Constant { ms } if !(ms.is_finite() && ms > 0.0) => Err(format!(
                "ms must be a positive number of milliseconds, got {ms}"
            )),
            ServiceTime::Constant { ms } => check_time(ms, 1e6, "milliseconds")
                .map(drop)
                .map_err(|m| format!("ms {m}")),
            ServiceTime::Linear { min_ms, max_ms, .. }
                if !(min_ms.is_finite()
                    && max_ms.is_finite()
                    && min_ms > 0.0
                    && max_ms >= min_ms) =>
            {
                Err(format!(
                    "need 0 < min_ms <= max_ms, got min_ms = {min_ms}, max_ms = {max_ms}"
                ))
            }
            // min_ms <= max_ms: checking max_ms covers both.
            ServiceTime::Linear { max_ms, .. } => check_time(max_ms, 1e6, "milliseconds")
                .map(drop)
                .map_err(|m| format!("max_ms {m}")),
        }
    }
}

/// Milliseconds (as written in scenarios) to nanoseconds.
pub fn ms_to_ns(ms: f64) -> Nanos {
    (ms * 1e6).round() as Nanos
}

/// One queued disk request. `token` and `block` belong to the caller, who gets them back
/// when the request completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskRequest {
    /// Block number on this disk.
    pub pos: u64,
    /// A write (true) or a read.
    pub write: bool,
    /// The caller's handle for whatever waits on this request.
    pub token: u32,
    /// The caller's name for the block (for counting and ordering checks).
    pub block: u64,
    seq: u64,
}

/// Waiting requests: in arrival order for FIFO, sorted by (position, arrival) for the
/// positional schedulers, so that every pick is O(log n) however deep the queue gets (a
/// flusher can queue thousands of writes at once).
#[derive(Clone, Debug)]
enum Queue {
    Fifo(VecDeque<DiskRequest>),
    Sorted(BTreeMap<(u64, u64), DiskRequest>),
}

/// A disk with its queue and statistics.
#[derive(Clone, Debug)]
pub struct Disk {
    scheduler: Scheduler,
    service: ServiceTime,
    queue: Queue,
    current: Option<DiskRequest>,
    head: u64,
    moving_up: bool,
    seq: u64,
    busy_ns: Nanos,
    /// Requests served, reads and writes.
    pub reads: u64,
    /// Writes served.
    pub writes: u64,
}

impl Disk {
    /// An idle disk with its head at block 0.
    pub fn new(scheduler: Scheduler, service: ServiceTime) -> Self {
        let queue = match scheduler {
            Scheduler::Fifo => Queue::Fifo(VecDeque::new()),
            _ => Queue::Sorted(BTreeMap::new()),
        };
        Disk {
            scheduler,
            service,
            queue,
            current: None,
            head: 0,
            moving_up: true,
            seq: 0,
            busy_ns: 0,
            reads: 0,
            writes: 0,
        }
    }

    /// Queue a request. Returns the completion time if the disk was idle and started it
    /// at `now` (the caller schedules the completion event), `None` if it waits in line.
    pub fn submit(
        &mut self,
        now: VTime,
        pos: u64,
        write: bool,
        token: u32,
        block: u64,
    ) -> Option<VTime> {
        self.seq += 1;
        let req = DiskRequest {
            pos,
            write,
            token,
            block,
            seq: self.seq,
        };
        match &mut self.queue {
            Queue::Fifo(q) => q.push_back(req),
            Queue::Sorted(q) => {
                q.insert((pos, req.seq), req);
            }
        }
        if self.current.is_none() {
            self.start_next(now)
        } else {
            None
        }
    }

    /// The request in service finished at `now`: returns it and, if another was queued,
    /// the completion time of the one just started.
    pub fn complete(&mut self, now: VTime) -> (DiskRequest, Option<VTime>) {
        let done = self
            .current
            .take()
            .expect("disk completion without a request in service");
        let next = self.start_next(now);
        (done, next)
    }

    /// Requests waiting (not counting the one in service).
    pub fn queued(&self) -> usize {
        match &self.queue {
            Queue::Fifo(q) => q.len(),
            Queue::Sorted(q) => q.len(),
        }
    }

    /// True when a request is in service.
    pub fn is_busy(&self) -> bool {
        self.current.is_some()
    }

    /// Total time spent serving requests.
    pub fn busy_ns(&self) -> Nanos {
        self.busy_ns
    }

    fn start_next(&mut self, now: VTime) -> Option<VTime> {
        let req = self.take_next()?;
        let distance = req.pos.abs_diff(self.head);
        if req.pos != self.head {
            self.moving_up = req.pos > self.head;
        }
        self.head = req.pos;
        let t = self.service.time_ns(distance);
        self.busy_ns = self.busy_ns.saturating_add(t);
        if req.write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        self.current = Some(req);
        Some(now.later(t))
    }

    /// Remove and return the request to serve next. Every rule breaks ties by arrival
    /// order, so the choice never depends on how the queue is stored.
    fn take_next(&mut self) -> Option<DiskRequest> {
        let head = self.head;
        let q = match &mut self.queue {
            Queue::Fifo(q) => return q.pop_front(),
            Queue::Sorted(q) => q,
        };
        // The oldest request at the nearest position at or above the head, and below it.
        let up = q.range((head, 0)..).next().map(|(&k, _)| k);
        let down = q
            .range(..(head, 0))
            .next_back()
            .map(|(&(pos, _), _)| pos)
            .map(|pos| {
                let (&k, _) = q.range((pos, 0)..).next().expect("position present");
                k
            });
        let key = match self.scheduler {
            Scheduler::Fifo => unreachable!("FIFO keeps an arrival-order queue"),
            Scheduler::Sstf => match (up, down) {
                (Some(u), Some(d)) => {
                    let (du, dd) = (u.0 - head, head - d.0);
                    if du < dd || (du == dd && u.1 < d.1) {
                        Some(u)
                    } else {
                        Some(d)
                    }
                }
                (u, d) => u.or(d),
            },
            Scheduler::Look => {
                if self.moving_up {
                    up.or(down)
                } else {
                    let at_head = up.filter(|&(pos, _)| pos == head);
                    at_head.or(down).or(up)
                }
            }
            Scheduler::Clook => up.or_else(|| q.keys().next().copied()),
        }?;
        q.remove(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_MS: ServiceTime = ServiceTime::Constant { ms: 1.0 };

    /// Serve a queue that was filled while the disk was busy at `start`, and return the
    /// positions in service order.
    fn order(scheduler: Scheduler, start: u64, queued: &[u64]) -> Vec<u64> {
        let mut d = Disk::new(scheduler, ONE_MS);
        d.head = start;
        let mut now = d.submit(VTime::ZERO, start, false, 0, 0).unwrap();
        for &p in queued {
            assert!(d.submit(VTime::ZERO, p, false, 0, 0).is_none());
        }
        let mut served = Vec::new();
        loop {
            let (done, next) = d.complete(now);
            if done.pos != start || !served.is_empty() {
                served.push(done.pos);
            }
            match next {
                Some(t) => now = t,
                None => break,
            }
        }
        served
    }

    // The textbook queue (Silberschatz): head at 53, requests 98 183 37 122 14 124 65 67.
    const QUEUE: [u64; 8] = [98, 183, 37, 122, 14, 124, 65, 67];

    #[test]
    fn fifo_serves_in_arrival_order() {
        assert_eq!(order(Scheduler::Fifo, 53, &QUEUE), QUEUE);
    }

    #[test]
    fn sstf_serves_the_nearest_first() {
        assert_eq!(
            order(Scheduler::Sstf, 53, &QUEUE),
            [65, 67, 37, 14, 98, 122, 124, 183]
        );
    }

    #[test]
    fn look_sweeps_up_then_reverses() {
        // The first request (at 53 itself) leaves the head moving up.
        assert_eq!(
            order(Scheduler::Look, 53, &QUEUE),
            [65, 67, 98, 122, 124, 183, 37, 14]
        );
    }

    #[test]
    fn clook_sweeps_up_then_wraps_to_the_lowest() {
        assert_eq!(
            order(Scheduler::Clook, 53, &QUEUE),
            [65, 67, 98, 122, 124, 183, 14, 37]
        );
    }

    #[test]
    fn ties_go_to_the_oldest_request() {
        assert_eq!(order(Scheduler::Sstf, 50, &[60, 40, 60]), [60, 60, 40]);
    }

    /// The rule written the slow, obvious way: the smallest (key, arrival) over the queue.
    fn reference_pick(
        scheduler: Scheduler,
        head: u64,
        moving_up: bool,
        queue: &[(u64, u64)],
    ) -> usize {
        let best = |key: &dyn Fn(u64) -> Option<u64>| {
            queue
                .iter()
                .enumerate()
                .filter_map(|(i, &(pos, seq))| key(pos).map(|k| (k, seq, i)))
                .min()
                .map(|(_, _, i)| i)
        };
        let up = best(&|p| (p >= head).then(|| p - head));
        let down = best(&|p| (p <= head).then(|| head - p));
        match scheduler {
            Scheduler::Fifo => best(&|_| Some(0)),
            Scheduler::Sstf => best(&|p| Some(p.abs_diff(head))),
            Scheduler::Look if moving_up => up.or(down),
            Scheduler::Look => down.or(up),
            Scheduler::Clook => up.or_else(|| best(&|p| Some(p))),
        }
        .unwrap()
    }

    proptest::proptest! {
        #[test]
        fn every_scheduler_agrees_with_the_obvious_rule(
            start in 0u64..50,
            batches in proptest::collection::vec(proptest::collection::vec(0u64..50, 0..6), 1..12),
            which in 0usize..4,
        ) {
            let scheduler = Scheduler::ALL[which];
            let mut disk = Disk::new(scheduler, ONE_MS);
            disk.head = start;
            // The model: queued (pos, seq), head and direction, advanced the same way.
            let mut model: Vec<(u64, u64)> = Vec::new();
            let (mut head, mut up, mut seq) = (start, true, 0u64);
            let mut now = VTime::ZERO;
            let mut busy = false;
            for batch in batches {
                for pos in batch {
                    seq += 1;
                    let started = disk.submit(now, pos, false, 0, pos);
                    if busy {
                        proptest::prop_assert!(started.is_none());
                        model.push((pos, seq));
                    } else {
                        // An idle disk starts the request at once.
                        proptest::prop_assert!(started.is_some());
                        if pos != head { up = pos > head; }
                        head = pos;
                        busy = true;
                        now = started.unwrap();
                    }
                }
                // Serve one request per batch.
                if busy {
                    let (_, next) = disk.complete(now);
                    match next {
                        Some(t) => {
                            let i = reference_pick(scheduler, head, up, &model);
                            let (pos, _) = model.remove(i);
                            if pos != head { up = pos > head; }
                            head = pos;
                            proptest::prop_assert_eq!(disk.current.unwrap().pos, pos);
                            now = t;
                        }
                        None => busy = false,
                    }
                }
            }
        }
    }

    #[test]
    fn linear_service_time_grows_with_distance_and_saturates() {
        let s = ServiceTime::Linear {
            min_ms: 1.0,
            max_ms: 10.0,
            span_blocks: 1000,
        };
        assert_eq!(s.time_ns(0), 1_000_000);
        assert_eq!(s.time_ns(500), 5_500_000);
        assert_eq!(s.time_ns(1000), 10_000_000);
        assert_eq!(s.time_ns(5000), 10_000_000);
        assert!(s.validate().is_ok());
        let bad = ServiceTime::Linear {
            min_ms: 5.0,
            max_ms: 1.0,
            span_blocks: 10,
        };
        assert!(bad.validate().unwrap_err().contains("min_ms"));
    }

    #[test]
    fn utilization_counts_service_time() {
        let mut d = Disk::new(Scheduler::Fifo, ServiceTime::Constant { ms: 30.0 });
        let t = d.submit(VTime::ZERO, 5, true, 1, 7).unwrap();
        assert_eq!(t, VTime::from_ns(30_000_000));
        assert!(d.submit(VTime::from_ns(10), 6, false, 2, 8).is_none());
        let (done, next) = d.complete(t);
        assert_eq!((done.token, done.block, done.write), (1, 7, true));
        assert_eq!(next, Some(VTime::from_ns(60_000_000)));
        assert_eq!(d.busy_ns(), 60_000_000);
        assert_eq!((d.reads, d.writes), (1, 1));
    }
}
