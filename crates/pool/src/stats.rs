//! Counters that many threads bump without sharing a cache line.
//!
//! A single `AtomicU64` for hits would put every hit of every thread on one cache line,
//! which costs more than the hit itself once two cores take turns owning it. Each thread
//! instead bumps its own stripe (chosen once per thread), and [`Counters::snapshot`] sums
//! the stripes. Sums are not atomic across counters: a snapshot taken while threads work
//! is approximate, one taken at rest is exact.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What each counter means is documented on [`crate::PoolStats`].
#[derive(Clone, Copy, Debug)]
#[repr(usize)]
pub(crate) enum Counter {
    Hits,
    Misses,
    ReadCalls,
    PagesRead,
    ReadAheadPages,
    PagesWritten,
    WriteCalls,
    ForegroundWrites,
    FlusherWrites,
    FlusherRuns,
    WriteErrors,
    Evictions,
    PrefetchedPages,
}

const COUNTERS: usize = 13;
const STRIPES: usize = 16;

#[repr(align(128))]
struct Stripe([AtomicU64; COUNTERS]);

pub(crate) struct Counters {
    stripes: Box<[Stripe]>,
}

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static STRIPE: usize = NEXT_THREAD.fetch_add(1, Ordering::Relaxed) % STRIPES;
}

/// This thread's stripe number (0..16), also used for the pool's per-thread hit queues.
#[inline]
pub(crate) fn stripe() -> usize {
    STRIPE.with(|s| *s)
}

/// Number of stripes.
pub(crate) const STRIPE_COUNT: usize = STRIPES;

impl Counters {
    pub(crate) fn new() -> Self {
        Counters {
            stripes: (0..STRIPES)
                .map(|_| Stripe(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
        }
    }

    #[inline]
    pub(crate) fn add(&self, c: Counter, n: u64) {
        self.stripes[stripe()].0[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn bump(&self, c: Counter) {
        self.add(c, 1);
    }

    pub(crate) fn get(&self, c: Counter) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0[c as usize].load(Ordering::Relaxed))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_many_threads_add_up() {
        let c = std::sync::Arc::new(Counters::new());
        let hs: Vec<_> = (0..5)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        c.bump(Counter::Hits);
                    }
                    c.add(Counter::Evictions, 3);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(c.get(Counter::Hits), 5000);
        assert_eq!(c.get(Counter::Evictions), 15);
        assert_eq!(c.get(Counter::Misses), 0);
    }
}
