//! `--mirror-flush-events`: the server watches the kernel flush its memory cgroup's
//! statistics, and the mirror's model of reclaim (`linux:stats_events=true`) flushes its
//! own copy of them at the same moments.
//!
//! Why: with the statistics flushed only every ~2 s, the kernel's reclaim decides from
//! stale totals, and a model of it agrees with the kernel only if its flushes fall when
//! the kernel's do. A bank of guessed phases learns that from service times, but
//! scheduling with its own predictions it did worse than the fresh model
//! (docs/experiments/stale-statistics-mirror.md, fifth and sixth passes). The kernel
//! publishes each flush on a tracepoint ([`linux::memcg_flushes`]); watching it reads
//! nothing that flushes, so the kernel reclaims exactly as it would unwatched.
//!
//! Which flushes count: the periodic worker's (the root cgroup's, id 1, covering every
//! cgroup) and any of the server's own memory cgroup or its ancestors (a reader of
//! their `memory.stat`; reclaim's own late flush). The server's cgroup is looked up at
//! each batch, since the experiment moves the server into its cgroup after it starts.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use linux::memcg_flushes::{own_memcg_ids, Flush, FlushTrace};

use crate::background::Background;
use crate::ServeError;

/// The number of the kernel's flushes seen so far (for the mirror).
pub type FlushCount = Arc<AtomicU64>;

/// Called with each counted flush's `CLOCK_MONOTONIC` time in ns (the request log).
pub type FlushSink = Box<dyn Fn(u64) + Send>;

/// The watching thread; stopped, and the tracefs instance removed, when dropped.
#[derive(Debug)]
pub struct FlushWatch {
    count: FlushCount,
    _thread: Background,
}

/// How often the thread looks at its stop flag while no flush comes.
const WAKE: Duration = Duration::from_millis(100);

impl FlushWatch {
    /// Start watching; each counted flush also goes to `sink`.
    pub fn start(sink: Option<FlushSink>) -> Result<Self, ServeError> {
        let mut trace = FlushTrace::start().map_err(|e| {
            ServeError::config("mirror flush events", format!("watching the kernel: {e}"))
        })?;
        let count = FlushCount::default();
        let c = count.clone();
        let thread = Background::spawn("memcg-flushes", move || {
            let flushes = match trace.next(WAKE) {
                Ok(f) => f,
                Err(e) => {
                    tracing::warn!("memcg flush trace: {e}; the mirror flushes no more");
                    return ControlFlow::Break(());
                }
            };
            if flushes.is_empty() {
                return ControlFlow::Continue(()); // spares reading the cgroup ids
            }
            for f in counted(&flushes, &own_memcg_ids()) {
                c.fetch_add(1, Ordering::Release);
                if let Some(sink) = &sink {
                    sink(f.mono_ns);
                }
            }
            ControlFlow::Continue(())
        })
        .map_err(|e| ServeError::config("mirror flush events", format!("its thread: {e}")))?;
        Ok(FlushWatch {
            count,
            _thread: thread,
        })
    }

    /// The shared count of flushes (for the mirror).
    pub fn count(&self) -> FlushCount {
        Arc::clone(&self.count)
    }
}

/// The flushes that reach the server's cgroup, whose own and ancestors' ids are `own`:
/// the root's (id 1) always, others only if in `own`.
pub fn counted<'a>(flushes: &'a [Flush], own: &'a [u64]) -> impl Iterator<Item = &'a Flush> {
    flushes
        .iter()
        .filter(move |f| f.memcg_id == 1 || own.contains(&f.memcg_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root's flushes count, the server's cgroup's and its parent's count, a
    /// sibling's (someone reading another cgroup's `memory.stat`) does not.
    #[test]
    fn only_flushes_that_cover_the_servers_cgroup_count() {
        let f = |mono_ns, memcg_id| Flush { mono_ns, memcg_id };
        let flushes = [f(1, 1), f(2, 812), f(3, 40), f(4, 977), f(5, 1)];
        let own = [812, 40, 1];
        let got: Vec<u64> = counted(&flushes, &own).map(|f| f.mono_ns).collect();
        assert_eq!(got, [1, 2, 3, 5]);
        let outside: Vec<u64> = counted(&flushes, &[]).map(|f| f.mono_ns).collect();
        assert_eq!(outside, [1, 5]);
    }
}
