//! LFU: evict the least frequently used object, with O(1) frequency buckets.
//!
//! Each resident frame counts its references since it entered the cache (the insertion
//! counts as the first). Eviction takes a frame with the smallest count. Ties are broken by
//! **least recent use**: among the frames of the lowest count, the one whose last
//! reference is oldest goes first. Counts are **forgotten on eviction** ("in-cache" LFU,
//! not "perfect" LFU): a returning object starts again at 1.
//!
//! Structure, after Shah, Mitra & Matani (2010, "An O(1) algorithm for implementing the
//! LFU cache eviction scheme"): a list of *buckets* in increasing count order, each bucket
//! holding a list of the frames with that count. A reference moves a frame from bucket `c`
//! to bucket `c + 1` (created just after `c` if missing, `c` dropped if emptied), pushed at
//! that bucket's head. Because a frame enters bucket `c + 1` exactly when it is referenced,
//! the tail of every bucket is the frame whose last reference is oldest: the LRU tie-break
//! comes for free. Buckets live in a slab addressed by `u32` with a free list; there are
//! never more buckets than resident frames, so the slab is sized at construction.
//!
//! Protected frames: eviction walks the lowest bucket from its tail, then the next bucket,
//! and takes the first evictable frame; skipped frames keep their place. Since evicting
//! never reorders the others, the victim list is the same walk (exact, no simulation).
//!
//! Counts saturate at `u32::MAX` (a further hit then only refreshes recency in the last
//! bucket).
//!
//! libCacheSim's `LFU` breaks ties the same way (LRU within a frequency); its `LFUDA` and
//! "perfect" variants differ. Parameters: none.
//!
//! Cost: O(1) per hit, insertion and eviction (plus skipped protected frames).
//! Memory: 8 bytes of frame links + 4 bytes of bucket index per frame, plus a bucket slab
//! of up to one 24-byte bucket per frame.

use crate::list::{Links, List, NIL};
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{ensure_slot, Access, FrameId, Policy};

#[derive(Clone, Copy, Debug)]
struct Bucket {
    count: u32,
    /// Neighbour bucket with a smaller count.
    lower: u32,
    /// Neighbour bucket with a larger count.
    higher: u32,
    frames: List,
}

/// Least frequently used, LRU among equals.
#[derive(Clone, Debug)]
pub struct Lfu {
    links: Links,
    bucket_of: Vec<u32>,
    buckets: Vec<Bucket>,
    free_buckets: Vec<u32>,
    /// Bucket with the smallest count, or NIL.
    lowest: u32,
    len: usize,
}

impl Lfu {
    /// An LFU policy expecting about `frames` resident objects.
    pub fn new(frames: usize) -> Self {
        Lfu {
            links: Links::with_capacity(frames),
            bucket_of: vec![NIL; frames],
            buckets: Vec::with_capacity(frames + 1),
            free_buckets: Vec::with_capacity(frames + 1),
            lowest: NIL,
            len: 0,
        }
    }

    /// The reference count of a resident frame (for tests and Dust).
    pub fn count(&self, frame: FrameId) -> u32 {
        self.buckets[self.bucket_of[frame.index()] as usize].count
    }

    fn new_bucket(&mut self, count: u32, lower: u32, higher: u32) -> u32 {
        let b = Bucket {
            count,
            lower,
            higher,
            frames: List::new(),
        };
        let id = match self.free_buckets.pop() {
            Some(id) => {
                self.buckets[id as usize] = b;
                id
            }
            None => {
                self.buckets.push(b);
                (self.buckets.len() - 1) as u32
            }
        };
        if lower != NIL {
            self.buckets[lower as usize].higher = id;
        } else {
            self.lowest = id;
        }
        if higher != NIL {
            self.buckets[higher as usize].lower = id;
        }
        id
    }

    /// Take `frame` off its bucket; drop the bucket if it empties unless `keep` is set.
    /// Returns the bucket's neighbours `(lower, higher)` after the removal (the bucket
    /// itself stands in for `lower` when kept).
    #[inline]
    fn detach(&mut self, frame: FrameId, keep: bool) -> (u32, u32) {
        let b = self.bucket_of[frame.index()];
        let bucket = &mut self.buckets[b as usize];
        self.links.unlink(&mut bucket.frames, frame);
        self.bucket_of[frame.index()] = NIL;
        let (lower, higher) = (bucket.lower, bucket.higher);
        if bucket.frames.is_empty() && !keep {
            if lower != NIL {
                self.buckets[lower as usize].higher = higher;
            } else {
                self.lowest = higher;
            }
            if higher != NIL {
                self.buckets[higher as usize].lower = lower;
            }
            self.free_buckets.push(b);
            (lower, higher)
        } else {
            (b, higher)
        }
    }

    #[inline]
    fn attach(&mut self, frame: FrameId, b: u32) {
        self.links
            .push_front(&mut self.buckets[b as usize].frames, frame);
        self.bucket_of[frame.index()] = b;
    }

    fn walk(&self) -> impl Iterator<Item = FrameId> + '_ {
        let mut b = self.lowest;
        std::iter::from_fn(move || {
            if b == NIL {
                return None;
            }
            let bucket = &self.buckets[b as usize];
            b = bucket.higher;
            Some(self.links.iter_from_tail(&bucket.frames))
        })
        .flatten()
    }
}

impl Policy for Lfu {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        let count = self.count(frame);
        if count == u32::MAX {
            let b = self.bucket_of[frame.index()];
            self.links
                .move_to_front(&mut self.buckets[b as usize].frames, frame);
            return;
        }
        // Keep the old bucket alive until the frame is attached to its successor, so that
        // the new bucket can be linked next to it.
        let b = self.bucket_of[frame.index()];
        let (_, higher) = self.detach(frame, true);
        let target = if higher != NIL && self.buckets[higher as usize].count == count + 1 {
            higher
        } else {
            self.new_bucket(count + 1, b, higher)
        };
        self.attach(frame, target);
        if self.buckets[b as usize].frames.is_empty() {
            let (lower, higher) = (self.buckets[b as usize].lower, target);
            if lower != NIL {
                self.buckets[lower as usize].higher = higher;
            } else {
                self.lowest = higher;
            }
            self.buckets[higher as usize].lower = lower;
            self.free_buckets.push(b);
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        ensure_slot(&mut self.bucket_of, frame, NIL);
        let target = if self.lowest != NIL && self.buckets[self.lowest as usize].count == 1 {
            self.lowest
        } else {
            self.new_bucket(1, NIL, self.lowest)
        };
        self.attach(frame, target);
        self.len += 1;
    }

    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let victim = self.walk().find(|&f| evictable(f))?;
        self.detach(victim, false);
        self.len -= 1;
        Some(victim)
    }

    fn remove(&mut self, frame: FrameId) {
        self.detach(frame, false);
        self.len -= 1;
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        out.extend(self.walk().filter(|&f| evictable(f)).take(n));
    }
}

impl NamedPolicy for Lfu {
    const NAME: &'static str = "lfu";
    const SUMMARY: &'static str =
        "least frequently used, LRU among ties, O(1) buckets (Shah, Mitra, Matani 2010)";
    const PARAMS: &'static [ParamInfo] = &[];

    fn build(ctx: &BuildContext, _: &Params) -> Result<Self, ConfigError> {
        Ok(Lfu::new(crate::prealloc_frames(ctx.capacity)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{evictions, hits, resident_after};
    use crate::{Access, Cache, Lfu};

    #[test]
    fn hand_worked_sequence() {
        // capacity 3, trace 1 2 1 3 2 4 3 5 1
        //  1 2 miss; 1 hit (1:2, 2:1); 3 miss (3:1); 2 hit (2:2)
        //  counts 1:2 2:2 3:1 -> 4 misses, evicts 3 (only count 1)
        //  4:1; 3 misses, evicts 4 (count 1)
        //  3:1; 5 misses, evicts 3 (count 1)
        //  5:1; 1 hits (1:3)
        let trace = [1, 2, 1, 3, 2, 4, 3, 5, 1];
        assert_eq!(
            hits(Lfu::new(3), 3, &trace),
            [false, false, true, false, true, false, false, false, true]
        );
        let ev: Vec<Vec<u64>> = evictions(Lfu::new(3), 3, &trace);
        assert_eq!(ev[5], [3]);
        assert_eq!(ev[6], [4]);
        assert_eq!(ev[7], [3]);
        // final counts 5:1, 2:2, 1:3 -> victim order 5, 2, 1
        assert_eq!(resident_after(Lfu::new(3), 3, &trace), [5, 2, 1]);
    }

    #[test]
    fn ties_go_to_the_least_recently_used() {
        // 1 2 3 all at count 1 then 3 1 2 all at count 2 in that order: the tie at count 2
        // is broken by recency: 3 (oldest hit) goes first.
        let trace = [1, 2, 3, 3, 1, 2, 4];
        let ev = evictions(Lfu::new(3), 3, &trace);
        assert_eq!(ev[6], [3]);
        assert_eq!(resident_after(Lfu::new(3), 3, &trace), [4, 1, 2]);
    }

    #[test]
    fn counts_and_buckets() {
        let mut c = Cache::new(Lfu::new(4), 4);
        for (t, k) in [1, 1, 1, 2, 2, 3].into_iter().enumerate() {
            c.access(&Access::unit(k, t as u64));
        }
        let p = c.policy();
        assert_eq!(p.count(c.frame_of(1).unwrap()), 3);
        assert_eq!(p.count(c.frame_of(2).unwrap()), 2);
        assert_eq!(p.count(c.frame_of(3).unwrap()), 1);
        assert_eq!(c.victims(3), [3, 2, 1]);
        // removing leaves buckets consistent
        c.remove(2);
        assert_eq!(c.victims(3), [3, 1]);
        assert!(c.remove(1));
        assert!(c.remove(3));
        assert_eq!(c.policy().lowest, crate::list::NIL);
    }
}
