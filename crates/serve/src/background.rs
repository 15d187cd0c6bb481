//! A thread of the server's own that repeats one step until its owner is dropped.
//!
//! Why one type: the server's watchers (the cgroup poll, the kernel's statistics
//! flushes) each loop on a thread beside the request path, and each must stop, and be
//! joined, when the server stops, so that nothing of theirs (a tracefs instance, a file
//! handle) outlives the server. The stop flag, the wake-up and the join live here once.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The running thread; asked to stop, woken if parked, and joined when dropped.
#[derive(Debug)]
pub struct Background {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Run `step` on a thread called `name` until the returned value is dropped or
    /// `step` breaks. A step that waits should wait boundedly (a timeout, or
    /// `std::thread::park_timeout`, which the drop cuts short), since the stop flag is
    /// looked at only between steps.
    pub fn spawn(
        name: &str,
        mut step: impl FnMut() -> ControlFlow<()> + Send + 'static,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                while !stopping.load(Ordering::Relaxed) {
                    if step().is_break() {
                        return;
                    }
                }
            })?;
        Ok(Background {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    /// A parked step is woken by the drop, which returns only once the thread is done:
    /// no step runs after it.
    #[test]
    fn dropping_wakes_the_step_and_joins_it() {
        let steps = Arc::new(AtomicU64::new(0));
        let s = Arc::clone(&steps);
        let bg = Background::spawn("test-bg", move || {
            s.fetch_add(1, Ordering::SeqCst);
            std::thread::park_timeout(Duration::from_secs(600));
            ControlFlow::Continue(())
        })
        .unwrap();
        while steps.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        drop(bg); // would take 600 s if the drop did not unpark
        let after = steps.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            steps.load(Ordering::SeqCst),
            after,
            "no step after the drop"
        );
    }

    /// A step that breaks ends the thread; dropping afterwards still returns.
    #[test]
    fn a_step_that_breaks_ends_the_thread() {
        let steps = Arc::new(AtomicU64::new(0));
        let s = Arc::clone(&steps);
        let bg = Background::spawn("test-bg", move || {
            if s.fetch_add(1, Ordering::SeqCst) == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
        while steps.load(Ordering::SeqCst) < 3 {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            steps.load(Ordering::SeqCst),
            3,
            "the thread stopped at the break"
        );
        drop(bg);
    }
}
