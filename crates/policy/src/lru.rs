//! LRU: evict the least recently used object.
//!
//! The classic recency policy; the baseline of every paper in `shared/papers`. Mattson et
//! al. (1970) showed it is a *stack algorithm*: the contents of a cache of size `c` are
//! always a subset of those of size `c + 1`, which is what makes one-pass miss-ratio curves
//! possible (`bufcache mrc`).
//!
//! Parameters: none.
//!
//! Cost: O(1) per hit, insertion and eviction (one intrusive list). Memory: 8 bytes per
//! frame for the links.

use crate::list::{Links, List};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{Access, FrameId, Policy};

/// Least recently used. Head of the list is the most recent.
#[derive(Clone, Debug)]
pub struct Lru {
    links: Links,
    order: List,
}

impl Lru {
    /// An LRU policy expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        Lru {
            links: Links::with_capacity(frames),
            order: List::new(),
        }
    }
}

impl Policy for Lru {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        self.links.move_to_front(&mut self.order, frame);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        self.links.push_front(&mut self.order, frame);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self
            .links
            .iter_from_tail(&self.order)
            .find(|&f| evictable(f))?;
        self.links.unlink(&mut self.order, victim);
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.links.unlink(&mut self.order, frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        out.extend(
            self.links
                .iter_from_tail(&self.order)
                .filter(|&f| evictable(f))
                .take(n),
        );
    }
}

impl NamedPolicy for Lru {
    const NAME: &'static str = "lru";
    const SUMMARY: &'static str = "least recently used (Mattson et al. 1970)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Lru::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{hits, resident_after};
    use crate::Lru;

    #[test]
    fn hand_worked_sequence() {
        // capacity 3: a b c a d (evicts b) b (evicts c) a
        let trace = [1, 2, 3, 1, 4, 2, 1];
        assert_eq!(
            hits(Lru::new(3), 3, &trace),
            [false, false, false, true, false, false, true]
        );
        // victim order after the trace: LRU first: 4, 2, 1
        assert_eq!(resident_after(Lru::new(3), 3, &trace), [4, 2, 1]);
    }
}
