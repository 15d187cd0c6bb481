//! Counters that many threads bump without sharing a cache line, and mostly without a
//! locked instruction.
//!
//! A single `AtomicU64` for hits would put every hit of every thread on one cache line,
//! which costs more than the hit itself once two cores take turns owning it. Each thread
//! instead bumps its own stripe, and [`Counters::get`] sums the stripes. Sums are not
//! atomic across counters: a snapshot taken while threads work is approximate, one taken
//! at rest is exact.
//!
//! The first [`STRIPES`] threads alive at once each *own* a stripe (a lease, handed back
//! when the thread exits). An owner is the only writer of its stripe, so it bumps with a
//! plain load and store of the atomic instead of a locked read-modify-write (a `lock add`
//! was one of the hit path's locked instructions, about a fifth of a pin's cost). Threads
//! beyond that share one extra stripe, which they bump with `fetch_add`, so no count is
//! ever lost. A lease handed back is released (`Release`) and taken again by acquiring
//! (`Acquire`), so the next owner starts from the last owner's final counts.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

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
    AdmissionRefused,
    HintRefreshes,
}

const COUNTERS: usize = 15;
const STRIPES: usize = 16;

#[repr(align(128))]
struct Stripe([AtomicU64; COUNTERS]);

pub(crate) struct Counters {
    /// `STRIPES` owned stripes and the shared one, as an array: an owner's index, once
    /// tested below `STRIPES`, needs no bounds check.
    stripes: Box<[Stripe; STRIPES + 1]>,
}

/// Threads that found no stripe to own, for spreading them over the hit queues.
static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);

/// Bit `i` set: stripe `i` is owned by a live thread.
static OWNED: AtomicU32 = AtomicU32::new(0);

/// `STRIPE_OF` before the thread's first count.
const UNSET: usize = usize::MAX;

thread_local! {
    /// The stripe this thread counts in: `0..STRIPES` owned, `STRIPES` shared, or
    /// [`UNSET`]. Const-initialized and without a destructor, so reading it is one
    /// thread-local load with no lazy-initialization check, and it stays readable while
    /// other thread-locals are destroyed.
    static STRIPE_OF: Cell<usize> = const { Cell::new(UNSET) };
    /// This thread's hit queue, `0..STRIPES` (its owned stripe, or a round-robin pick).
    static QUEUE_OF: Cell<usize> = const { Cell::new(0) };
    /// Holds the owned stripe so that it is handed back when the thread exits.
    static LEASE: RefCell<Option<Lease>> = const { RefCell::new(None) };
}

/// An owned stripe, handed back on drop (at thread exit).
struct Lease(usize);

impl Drop for Lease {
    fn drop(&mut self) {
        // Count in the shared stripe from now on (other thread-locals' destructors may
        // still count), then hand the stripe back; `Release` so that the next owner's
        // `Acquire` sees every count this thread stored.
        STRIPE_OF.with(|s| s.set(STRIPES));
        OWNED.fetch_and(!(1u32 << self.0), Ordering::Release);
    }
}

/// This thread's stripe, taking one at the first call: a free stripe to own if one is
/// left, else the shared one.
#[inline]
fn stripe_of() -> usize {
    let s = STRIPE_OF.with(Cell::get);
    if s != UNSET {
        return s;
    }
    take_stripe()
}

#[cold]
fn take_stripe() -> usize {
    let mut cur = OWNED.load(Ordering::Relaxed);
    let owned = loop {
        let free = !cur & ((1u32 << STRIPES) - 1);
        if free == 0 {
            break None;
        }
        let i = free.trailing_zeros() as usize;
        match OWNED.compare_exchange_weak(cur, cur | (1 << i), Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => break Some(i),
            Err(now) => cur = now,
        }
    };
    let stripe = match owned {
        // Keep the lease for the thread's life; a thread already tearing its
        // thread-locals down gives it back at once and shares.
        Some(i) => match LEASE.try_with(|l| *l.borrow_mut() = Some(Lease(i))) {
            Ok(()) => i,
            Err(_) => {
                OWNED.fetch_and(!(1u32 << i), Ordering::Release);
                STRIPES
            }
        },
        None => STRIPES,
    };
    let queue = if stripe < STRIPES {
        stripe
    } else {
        NEXT_THREAD.fetch_add(1, Ordering::Relaxed) % STRIPES
    };
    QUEUE_OF.with(|q| q.set(queue));
    STRIPE_OF.with(|s| s.set(stripe));
    stripe
}

/// This thread's hit-queue number (0..16): its own while it owns a counter stripe.
#[inline]
pub(crate) fn stripe() -> usize {
    stripe_of();
    QUEUE_OF.with(Cell::get)
}

/// Number of hit queues.
pub(crate) const STRIPE_COUNT: usize = STRIPES;

impl Counters {
    pub(crate) fn new() -> Self {
        Counters {
            stripes: Box::new(std::array::from_fn(|_| {
                Stripe(std::array::from_fn(|_| AtomicU64::new(0)))
            })),
        }
    }

    /// Add `n` to counter `c` of this thread's stripe: a plain load and store when the
    /// thread owns the stripe, `fetch_add` on the shared one. The owner's case is one
    /// test of the thread-local (it is on every hit); a thread's first count and the
    /// shared stripe go out of line.
    #[inline]
    pub(crate) fn add(&self, c: Counter, n: u64) {
        let i = STRIPE_OF.with(Cell::get);
        if i < STRIPES {
            let cell = &self.stripes[i].0[c as usize];
            cell.store(cell.load(Ordering::Relaxed) + n, Ordering::Relaxed);
        } else {
            self.add_unowned(c, n);
        }
    }

    /// [`Counters::add`] for a thread that owns no stripe yet, or none at all: take one
    /// if a stripe is free (then `add` finds it owned), else count in the shared one.
    #[cold]
    fn add_unowned(&self, c: Counter, n: u64) {
        if stripe_of() < STRIPES {
            self.add(c, n);
        } else {
            self.stripes[STRIPES].0[c as usize].fetch_add(n, Ordering::Relaxed);
        }
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

    /// More threads alive at once than there are stripes to own: the owners bump with a
    /// plain store, the rest share a stripe with `fetch_add`, and no count is lost.
    #[test]
    fn counts_are_exact_with_more_threads_than_stripes() {
        let threads = 3 * STRIPES;
        let c = std::sync::Arc::new(Counters::new());
        let all_started = std::sync::Arc::new(std::sync::Barrier::new(threads));
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let (c, all_started) = (c.clone(), all_started.clone());
                std::thread::spawn(move || {
                    c.bump(Counter::Hits);
                    all_started.wait();
                    for _ in 0..999 {
                        c.bump(Counter::Hits);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(c.get(Counter::Hits), threads as u64 * 1000);
    }

    /// Leases pass from exiting threads to new ones: each new owner continues from the
    /// counts its predecessor stored.
    #[test]
    fn a_stripe_handed_on_keeps_its_counts() {
        let c = std::sync::Arc::new(Counters::new());
        for round in 1..=20u64 {
            let c2 = c.clone();
            std::thread::spawn(move || {
                for _ in 0..100 {
                    c2.bump(Counter::Misses);
                }
            })
            .join()
            .unwrap();
            assert_eq!(c.get(Counter::Misses), round * 100);
        }
    }
}
