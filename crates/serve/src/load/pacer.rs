//! The open loop's clock: one thread that hands each request to its connection at the
//! request's due time.
//!
//! tokio's timers tick in milliseconds, so a task sleeping until a due time wakes up to a
//! millisecond late. An open loop measures latency from the due time (so that a stalled
//! server is charged for the requests it kept from being sent), and with tokio's timers
//! it charged the server for the timer's lateness as well: at 2,000 requests a second on
//! one cached file the median was a millisecond above oha's. A thread sleeping on the
//! kernel's high-resolution timers wakes within tens of microseconds; it sends each due
//! time down its connection's channel, which wakes the connection's task at once. A
//! connection still busy with its last request finds the due time waiting, and the
//! latency it records includes the wait, as the correction requires.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

/// The pacing thread; dropping this asks it to stop at its next wake-up.
#[derive(Debug)]
pub struct Pacer {
    stop: Arc<AtomicBool>,
}

impl Drop for Pacer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Request `i` of `requests` is due at `start + i × interval` and goes to connection
/// `i mod connections`; nothing due after `deadline` is sent. Returns each connection's
/// receiver (closed when the pacer is done) and the pacer.
pub fn start(
    requests: u64,
    interval: Duration,
    connections: usize,
    deadline: Instant,
) -> (Vec<UnboundedReceiver<tokio::time::Instant>>, Pacer) {
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..connections).map(|_| unbounded_channel()).unzip();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let start = Instant::now();
    std::thread::spawn(move || {
        for i in 0..requests {
            if stopped.load(Ordering::Relaxed) {
                return;
            }
            let due = start + interval.mul_f64(i as f64);
            if due > deadline {
                return;
            }
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            // A connection that ended (deadline, or its task failed) drops its receiver;
            // its requests are not sent, as they would not have been with timers.
            let _ = senders[(i % senders.len() as u64) as usize]
                .send(tokio::time::Instant::from_std(due));
        }
    });
    (receivers, Pacer { stop })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_are_dealt_round_robin_at_their_due_times() {
        let interval = Duration::from_millis(2);
        let far = Instant::now() + Duration::from_secs(60);
        let (mut rx, _pacer) = start(7, interval, 3, far);
        let mut got: Vec<Vec<tokio::time::Instant>> = Vec::new();
        for r in rx.iter_mut() {
            let mut dues = Vec::new();
            while let Some(d) = r.recv().await {
                // Handed over no earlier than due.
                assert!(tokio::time::Instant::now() >= d);
                dues.push(d);
            }
            got.push(dues);
        }
        // 7 requests over 3 connections: 0, 3, 6 / 1, 4 / 2, 5.
        assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 2, 2]);
        let first = got[0][0];
        for (c, dues) in got.iter().enumerate() {
            for (k, d) in dues.iter().enumerate() {
                let i = (c + 3 * k) as u32;
                assert_eq!(*d - first, interval * i, "request {i}");
            }
        }
    }

    #[tokio::test]
    async fn nothing_due_after_the_deadline_is_sent() {
        let deadline = Instant::now() + Duration::from_millis(5);
        let (mut rx, _pacer) = start(1_000, Duration::from_millis(2), 1, deadline);
        let mut n = 0;
        while rx[0].recv().await.is_some() {
            n += 1;
        }
        // Due at 0, 2 and 4 ms: 3 (the deadline is measured from just before the start).
        assert!((1..=3).contains(&n), "{n} sent");
    }
}
