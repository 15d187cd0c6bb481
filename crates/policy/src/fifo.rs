//! FIFO: evict the object that entered the cache first; hits change nothing.
//!
//! The simplest policy and the one that shows Belady's anomaly (a larger cache can miss
//! more). Dust identifies it by its sensitivity to initial-access order only
//! (Burnett ch.2).
//!
//! Parameters: none.
//!
//! Cost: O(1) per insertion and eviction, nothing on a hit. Memory: 8 bytes per frame.

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{Access, FrameId, Policy};

/// First in, first out. Head of the queue is the newest.
#[derive(Clone, Debug)]
pub struct Fifo {
    links: Links,
    queue: List,
}

impl Fifo {
    /// A FIFO policy expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        Fifo {
            links: Links::with_capacity(frames),
            queue: List::new(),
        }
    }
}

impl Policy for Fifo {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    #[inline]
    fn on_hit(&mut self, _: FrameId, _: &Access) {}

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        self.links.push_front(&mut self.queue, frame);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self
            .links
            .iter_from_tail(&self.queue)
            .find(|&f| evictable(f))?;
        self.links.unlink(&mut self.queue, victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.links.unlink(&mut self.queue, frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        out.extend(
            self.links
                .iter_from_tail(&self.queue)
                .filter(|&f| evictable(f))
                .take(n),
        );
    }
}

impl NamedPolicy for Fifo {
    const NAME: &'static str = "fifo";
    const SUMMARY: &'static str = "first in, first out; hits do not reorder";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Fifo::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{hits, miss_count, resident_after};
    use crate::Fifo;

    #[test]
    fn hand_worked_sequence() {
        let trace = [1, 2, 3, 1, 4, 2, 1];
        // 4 evicts 1 (oldest, despite its hit); 2 hits; 1 misses and evicts 2
        assert_eq!(
            hits(Fifo::new(3), 3, &trace),
            [false, false, false, true, false, true, false]
        );
        assert_eq!(resident_after(Fifo::new(3), 3, &trace), [3, 4, 1]);
    }

    #[test]
    fn belady_anomaly() {
        // The textbook reference string: FIFO misses 9 times with 3 frames, 10 with 4.
        let trace = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5];
        assert_eq!(miss_count(Fifo::new(3), 3, &trace), 9);
        assert_eq!(miss_count(Fifo::new(4), 4, &trace), 10);
    }
}
