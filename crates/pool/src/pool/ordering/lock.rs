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
