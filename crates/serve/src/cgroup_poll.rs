//! `--cgroup-poll`: the server reads its own memory cgroup's page-cache total every few
//! milliseconds, on a thread of its own, and keeps the latest reading for the mirror.
//!
//! Two uses, kept apart on purpose. With `--mirror-track` the mirror takes the reading
//! as its size (Burnett §2.5.1 suggests correcting the mirror's size from observations;
//! this observes the size itself, one number, as Dust's estimate is one number; the
//! mirror still never asks which files are cached). Without it the reading is thrown
//! away, and what remains is the poll's effect on the kernel: reading `memory.stat`
//! flushes the cgroup's statistics, which this kernel's reclaim otherwise sees up to 2 s
//! late ([`linux::memcg_reading`]). The `usage` reading flushes nothing, so the two
//! separate the effect of the size from the effect of the poll.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use linux::memcg_reading::{own_cache_bytes, CacheReading};

use crate::background::Background;

/// What to read and how often.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgroupPoll {
    /// `memory.stat` (flushes the statistics) or the charge (does not).
    pub reading: CacheReading,
    /// Time between readings.
    pub every: Duration,
}

/// The latest page-cache reading in bytes; 0 until the first succeeds (or outside a
/// memory cgroup of the server's own, where none ever does).
pub type Reading = Arc<AtomicU64>;

/// The polling thread; stopped and joined when dropped.
#[derive(Debug)]
pub struct Poller {
    latest: Reading,
    readings: Arc<AtomicU64>,
    _thread: Background,
}

impl Poller {
    /// Start polling as `poll` says.
    pub fn start(poll: CgroupPoll) -> std::io::Result<Self> {
        let mut count = 0u64;
        Self::start_with(poll.every, move || {
            let bytes = own_cache_bytes(poll.reading);
            // The first reading and one every 200 go to the log: whether the poll reads
            // anything at all, and what, without a line per reading.
            if let Some(b) = bytes.filter(|_| count.is_multiple_of(200)) {
                tracing::info!(
                    reading = poll.reading.name(),
                    readings = count + 1,
                    "cgroup page cache {:.1} MiB",
                    b as f64 / f64::from(1u32 << 20)
                );
            }
            count += u64::from(bytes.is_some());
            bytes
        })
    }

    /// Poll `read` every `every` (the seam the tests use).
    fn start_with(
        every: Duration,
        mut read: impl FnMut() -> Option<u64> + Send + 'static,
    ) -> std::io::Result<Self> {
        let latest: Reading = Arc::default();
        let readings = Arc::new(AtomicU64::new(0));
        let (l, n) = (latest.clone(), readings.clone());
        let thread = Background::spawn("cgroup-poll", move || {
            if let Some(bytes) = read() {
                l.store(bytes, Ordering::Relaxed);
                n.fetch_add(1, Ordering::Relaxed);
            }
            std::thread::park_timeout(every);
            ControlFlow::Continue(())
        })?;
        Ok(Poller {
            latest,
            readings,
            _thread: thread,
        })
    }

    /// The shared latest reading (for the mirror).
    pub fn latest(&self) -> Reading {
        Arc::clone(&self.latest)
    }

    /// Successful readings so far.
    pub fn readings(&self) -> u64 {
        self.readings.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread keeps the last successful reading, and a failed one (`None`) leaves
    /// the last in place; dropping the poller stops it.
    #[test]
    fn the_latest_reading_is_kept_and_failures_leave_it() {
        let calls = Arc::new(AtomicU64::new(0));
        let c = calls.clone();
        let poller = Poller::start_with(Duration::from_millis(1), move || {
            let n = c.fetch_add(1, Ordering::SeqCst);
            (n < 3).then_some((n + 1) * 4096)
        })
        .unwrap();
        let latest = poller.latest();
        for _ in 0..5000 {
            if calls.load(Ordering::SeqCst) >= 6 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(calls.load(Ordering::SeqCst) >= 6, "the thread polls");
        assert_eq!(latest.load(Ordering::Relaxed), 3 * 4096);
        assert_eq!(poller.readings(), 3);
        drop(poller);
        let after = calls.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(calls.load(Ordering::SeqCst), after, "stopped on drop");
    }
}
