//! The ordering lock: a mutex that waits by spinning briefly and then sleeping in the
//! kernel (the standard library's futex lock), never by `sched_yield`.
//!
//! Why not `parking_lot` (the rest of the pool's choice): its first waiter spins, then
//! calls `sched_yield` up to seven times before it parks. The ordering lock is taken by
//! every ordered page write with the page latched, and held by levels for a sweep of
//! hundreds of nodes, so waits on it are often long: on two cores the yields became a
//! fifth of a graph run's context switches, and a yielding writer that holds the log's
//! last page latched made the other log writers spin and yield on that latch too (see
//! `docs/experiments/burnett-ordering.md`, "A blocking ordering lock").
//!
//! Poisoning is ignored, as `parking_lot` has none: a panic under the lock is a bug that
//! already fails its own thread.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The guard of an [`OrderLock`].
pub(super) type Guard<'a, T> = MutexGuard<'a, T>;

/// A mutex that blocks rather than yields (see the module's doc).
pub(super) struct OrderLock<T>(Mutex<T>);

impl<T> OrderLock<T> {
    pub(super) fn new(value: T) -> Self {
        OrderLock(Mutex::new(value))
    }

    pub(super) fn lock(&self) -> Guard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Let waiting threads take the lock, then take it again: between steps of a long
    /// piece of work under the lock. The standard lock hands nothing over on unlock (a
    /// woken waiter competes with the releaser), so the releaser gives its CPU up once
    /// between unlocking and locking again.
    pub(super) fn bump<'a>(&'a self, guard: Guard<'a, T>) -> Guard<'a, T> {
        drop(guard);
        std::thread::yield_now();
        self.lock()
    }

    /// Wait on `cond` for at most `timeout` (the guard is released meanwhile).
    pub(super) fn wait_for<'a>(
        &'a self,
        cond: &Condvar,
        guard: Guard<'a, T>,
        timeout: Duration,
    ) -> Guard<'a, T> {
        match cond.wait_timeout(guard, timeout) {
            Ok((g, _)) => g,
            Err(poisoned) => poisoned.into_inner().0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic under the lock leaves it usable with the data as the panic left it (as
    /// `parking_lot`'s lock did): the ordering state must stay reachable for `close`.
    #[test]
    fn a_panic_under_the_lock_does_not_poison_it() {
        let lock = std::sync::Arc::new(OrderLock::new(1u32));
        let l2 = lock.clone();
        let joined = std::thread::spawn(move || {
            let mut g = l2.lock();
            *g = 2;
            panic!("under the lock");
        })
        .join();
        assert!(joined.is_err());
        assert_eq!(*lock.lock(), 2);
        let g = lock.bump(lock.lock());
        assert_eq!(*g, 2);
        let g = lock.wait_for(&Condvar::new(), g, Duration::from_millis(1));
        assert_eq!(*g, 2);
    }

    /// A thread waiting on the lock gets it once the holder's step ends at a `bump`.
    #[test]
    fn a_waiter_gets_the_lock_at_a_bump() {
        let lock = std::sync::Arc::new(OrderLock::new(0u32));
        let mut g = lock.lock();
        let l2 = lock.clone();
        let waiter = std::thread::spawn(move || *l2.lock() += 1);
        // The holder keeps bumping until the waiter's increment shows (a bump that
        // never unlocked would run out of rounds).
        let mut rounds = 0u32;
        while *g == 0 && rounds < 1_000_000 {
            g = lock.bump(g);
            rounds += 1;
        }
        assert_eq!(*g, 1, "the waiter never got the lock in {rounds} bumps");
        drop(g);
        waiter.join().unwrap();
        assert_eq!(*lock.lock(), 1);
    }
}
