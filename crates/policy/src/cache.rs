//! The request template every policy shares: look up, evict until it fits, insert.
//!
//! [`Cache`] owns the key-to-frame map and the frame allocator, and drives a [`Policy`]
//! through one request at a time. The replay engine, the simulator and the Dust targets use
//! it; the real pool has its own concurrent frame table but calls the same policy methods in
//! the same order.
//!
//! Objects larger than the whole capacity are not admitted (the request counts as a miss
//! and nothing is evicted). A size of 0 counts as 1 unit, so that every resident object
//! occupies room. A hit does not change an object's recorded size.
//!
//! An optional admission filter ([`Cache::with_admission`]) is asked on every miss before
//! anything else, as libCacheSim does: a refused object is served as a miss, takes no room
//! and evicts nothing.
//!
//! A policy that contests admission ([`Policy::contest`], TinyUFO) is asked when a single
//! victim makes room: if it keeps the victim, the request is a miss that is not admitted
//! and evicts nothing. With several victims there is no contest (pingora compares only
//! one newcomer with one victim).
//!
//! An optional prefetcher ([`Cache::with_prefetch`]) is asked after every request; the
//! objects it names are inserted as prefetches (not requests, not filtered), evicting as an
//! insertion would, and [`Cache::prefetch_stats`] counts how many were later used.

pub use crate::index::{DenseIndex, HashIndex, KeyIndex, Vacant};

use crate::admit::Admitter;
use crate::prefetch::{PrefetchStats, Prefetcher};
use crate::{Access, FrameId, Policy, Verdict};

/// What one request did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The key was resident.
    Hit,
    /// The key was not resident.
    Miss {
        /// Whether it was inserted (false when larger than the cache, or when nothing
        /// evictable could make room).
        admitted: bool,
        /// How many resident objects were evicted to make room; their keys are in
        /// [`Cache::evicted`].
        evictions: u32,
    },
}

impl Outcome {
    /// True for [`Outcome::Hit`].
    #[inline]
    pub fn is_hit(self) -> bool {
        matches!(self, Outcome::Hit)
    }
}

/// A cache of `capacity` units driven by policy `P`, finding keys through index `I`.
#[derive(Clone, Debug)]
pub struct Cache<P, I = HashIndex> {
    policy: P,
    map: I,
    keys: Vec<u64>,
    sizes: Vec<u32>,
    free: Vec<FrameId>,
    frames_issued: u32,
    used: u64,
    capacity: u64,
    evicted: Vec<u64>,
    admission: Admitter,
    prefetch: Option<Box<Prefetching>>,
}

/// A prefetcher's state inside a cache: kept apart (and boxed) so that a cache without one
/// pays a single pointer.
#[derive(Clone, Debug)]
struct Prefetching {
    prefetcher: Prefetcher,
    /// Per frame: inserted by a prefetch and not yet requested.
    unused: Vec<bool>,
    stats: PrefetchStats,
    /// Scratch list of keys to prefetch.
    wanted: Vec<u64>,
}

impl<P: Policy> Cache<P> {
    /// A cache of `capacity` units (objects, or bytes when sizes are bytes) using `policy`,
    /// which must have been built for the same capacity; keys are hashed.
    pub fn new(policy: P, capacity: u64) -> Self {
        let frames = capacity.min(1 << 20) as usize;
        Self::with_index(policy, capacity, HashIndex::with_capacity(frames))
    }
}

impl<P: Policy, I: KeyIndex> Cache<P, I> {
    /// A cache whose keys are found through `index` (empty).
    pub fn with_index(policy: P, capacity: u64, index: I) -> Self {
        let frames = capacity.min(1 << 20) as usize;
        Cache {
            policy,
            map: index,
            keys: Vec::with_capacity(frames),
            sizes: Vec::with_capacity(frames),
            free: Vec::new(),
            frames_issued: 0,
            used: 0,
            capacity,
            evicted: Vec::with_capacity(8),
            admission: Admitter::Always,
            prefetch: None,
        }
    }

    /// The same cache with `prefetcher` inserting what it predicts after every request.
    pub fn with_prefetch(mut self, prefetcher: Prefetcher) -> Self {
        self.prefetch = Some(Box::new(Prefetching {
            prefetcher,
            unused: Vec::new(),
            stats: PrefetchStats::default(),
            wanted: Vec::new(),
        }));
        self
    }

    /// What prefetching has done so far (all zero without a prefetcher).
    pub fn prefetch_stats(&self) -> PrefetchStats {
        self.prefetch
            .as_ref()
            .map_or_else(PrefetchStats::default, |p| p.stats)
    }

    /// The same cache with `admission` deciding which missed objects are inserted.
    pub fn with_admission(mut self, admission: Admitter) -> Self {
        self.admission = admission;
        self
    }

    /// The policy.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// Capacity in units.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Units in use.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Number of resident objects.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing is resident.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// True when `key` is resident.
    pub fn contains(&self, key: u64) -> bool {
        self.map.get(key, &self.keys).is_some()
    }

    /// The frame holding `key`, if resident.
    pub fn frame_of(&self, key: u64) -> Option<FrameId> {
        self.map.get(key, &self.keys)
    }

    /// The key held by a resident frame.
    pub fn key_of(&self, frame: FrameId) -> u64 {
        self.keys[frame.index()]
    }

    /// Keys evicted by the most recent [`Cache::access`].
    pub fn evicted(&self) -> &[u64] {
        &self.evicted
    }

    /// Serve one request with every frame evictable.
    #[inline]
    pub fn access(&mut self, access: &Access) -> Outcome {
        self.access_with(access, &|_| true)
    }

    /// Serve one request; only frames for which `evictable` holds may be evicted.
    #[inline]
    pub fn access_with(&mut self, access: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Outcome {
        self.evicted.clear();
        let outcome = self.serve(access, evictable);
        if self.prefetch.is_some() {
            self.prefetch_after(access, outcome, evictable);
        }
        outcome
    }

    /// Look up, evict until it fits, insert: one request without prefetching.
    #[inline]
    fn serve(&mut self, access: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Outcome {
        if let Some(frame) = self.map.get(access.key, &self.keys) {
            self.policy.on_hit(frame, access);
            return Outcome::Hit;
        }
        if !self.admission.is_always() && !self.admission.admit(access) {
            return Outcome::Miss {
                admitted: false,
                evictions: 0,
            };
        }
        self.insert(access, evictable)
    }

    /// Insert the missing object of `access`, evicting until it fits.
    fn insert(&mut self, access: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Outcome {
        let size = access.size.max(1);
        if u64::from(size) > self.capacity {
            return Outcome::Miss {
                admitted: false,
                evictions: 0,
            };
        }
        let mut evictions = 0;
        while self.used + u64::from(size) > self.capacity {
            match self.policy.evict(access, evictable) {
                Some(victim) => {
                    let key = self.keys[victim.index()];
                    debug_assert!(evictable(victim), "policy evicted a protected frame");
                    if self.policy.contests()
                        && evictions == 0
                        && self.used - u64::from(self.sizes[victim.index()]) + u64::from(size)
                            <= self.capacity
                        && self.policy.contest(access, victim) == Verdict::KeepVictim
                    {
                        return Outcome::Miss {
                            admitted: false,
                            evictions: 0,
                        };
                    }
                    self.release(victim, key);
                    self.evicted.push(key);
                    evictions += 1;
                }
                None => {
                    return Outcome::Miss {
                        admitted: false,
                        evictions,
                    }
                }
            }
        }
        let frame = self.allocate();
        self.keys[frame.index()] = access.key;
        self.sizes[frame.index()] = size;
        self.used += u64::from(size);
        self.map.insert(access.key, frame, &self.keys);
        let mut admitted = *access;
        admitted.size = size;
        self.policy.on_insert(frame, &admitted);
        Outcome::Miss {
            admitted: true,
            evictions,
        }
    }

    /// Count a hit on a prefetched object, then insert what the prefetcher names (with the
    /// request's size and time, no future knowledge: a prefetch is nobody's request).
    #[cold]
    fn prefetch_after(
        &mut self,
        access: &Access,
        outcome: Outcome,
        evictable: &dyn Fn(FrameId) -> bool,
    ) {
        let Some(p) = self.prefetch.as_deref_mut() else {
            return;
        };
        if outcome.is_hit() {
            let frame = self
                .map
                .get(access.key, &self.keys)
                .expect("hit is resident");
            if p.unused.get(frame.index()).copied().unwrap_or(false) {
                p.unused[frame.index()] = false;
                p.stats.used += 1;
            }
        }
        let mut wanted = std::mem::take(&mut p.wanted);
        wanted.clear();
        p.prefetcher.after_request(access.key, &mut wanted);
        for &key in &wanted {
            if self.map.get(key, &self.keys).is_some() {
                continue;
            }
            let ahead = Access {
                key,
                next_access: crate::NEVER,
                ..*access
            };
            if let Outcome::Miss { admitted: true, .. } = self.insert(&ahead, evictable) {
                let frame = self.map.get(key, &self.keys).expect("just inserted");
                let p = self.prefetch.as_deref_mut().expect("still there");
                if p.unused.len() <= frame.index() {
                    p.unused.resize(frame.index() + 1, false);
                }
                p.unused[frame.index()] = true;
                p.stats.issued += 1;
            }
        }
        self.prefetch.as_deref_mut().expect("still there").wanted = wanted;
    }

    /// Invalidate `key` (file deleted, page truncated). Returns whether it was resident.
    pub fn remove(&mut self, key: u64) -> bool {
        match self.map.get(key, &self.keys) {
            Some(frame) => {
                self.policy.remove(frame);
                self.release(frame, key);
                true
            }
            None => false,
        }
    }

    /// Resize to `capacity` units, as the buffer pool's `resize` does: when shrinking,
    /// the policy's victims are evicted down to the new capacity first (their keys in
    /// [`Cache::evicted`]), then the policy is told ([`Policy::set_capacity`]), so its
    /// contract holds with the capacity it was last told.
    pub fn set_capacity(&mut self, capacity: u64) {
        self.evicted.clear();
        let shrink = Access::phantom();
        while self.used > capacity {
            let Some(victim) = self.policy.evict(&shrink, &|_| true) else {
                break;
            };
            let key = self.keys[victim.index()];
            self.release(victim, key);
            self.evicted.push(key);
        }
        self.capacity = capacity;
        self.policy.set_capacity(capacity);
    }

    /// Tell the policy the wall-clock time ([`Policy::set_wall_clock`]).
    pub fn set_wall_clock(&mut self, now_ms: u64) {
        self.policy.set_wall_clock(now_ms);
    }

    /// Tell the policy the next request's place in the whole trace
    /// ([`Policy::set_trace_clock`]).
    #[inline]
    pub fn set_trace_clock(&mut self, position: u64) {
        self.policy.set_trace_clock(position);
    }

    /// Tell the policy the modelled system's statistics were flushed
    /// ([`Policy::flush_stats`]).
    pub fn flush_stats(&mut self) {
        self.policy.flush_stats();
    }

    /// Whether the policy's statistics change only when told of flushes
    /// ([`Policy::wants_flush_events`]).
    pub fn wants_flush_events(&self) -> bool {
        self.policy.wants_flush_events()
    }

    /// The keys the next `n` evictions would remove, in order (Burnett's victim list).
    pub fn victims(&self, n: usize) -> Vec<u64> {
        let mut frames = Vec::with_capacity(n);
        self.policy.victims(n, &|_| true, &mut frames);
        frames.into_iter().map(|f| self.keys[f.index()]).collect()
    }

    fn allocate(&mut self) -> FrameId {
        if let Some(f) = self.free.pop() {
            return f;
        }
        let f = FrameId(self.frames_issued);
        self.frames_issued += 1;
        self.keys.push(0);
        self.sizes.push(0);
        f
    }

    /// Evict one victim to make room for `access` and leave the room empty, as a buffer
    /// pool does when the read that was to fill it fails. Returns the victim's key. (For
    /// the test kit: policies must survive every call pattern a real driver makes.)
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn evict_without_insert(
        &mut self,
        access: &Access,
        evictable: &dyn Fn(FrameId) -> bool,
    ) -> Option<u64> {
        let victim = self.policy.evict(access, evictable)?;
        let key = self.keys[victim.index()];
        self.release(victim, key);
        Some(key)
    }

    /// Ask for a victim for `access` and put it back at once, as a buffer pool does when
    /// the frame the policy chose was pinned or dirtied before it could be taken: the
    /// policy sees `evict` followed by `on_insert` of the same frame and key. Returns the
    /// victim's key.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn refuse_victim(
        &mut self,
        access: &Access,
        evictable: &dyn Fn(FrameId) -> bool,
    ) -> Option<u64> {
        let victim = self.policy.evict(access, evictable)?;
        let back = Access {
            key: self.keys[victim.index()],
            size: self.sizes[victim.index()],
            ..*access
        };
        self.policy.on_insert(victim, &back);
        Some(back.key)
    }

    fn release(&mut self, frame: FrameId, key: u64) {
        if let Some(p) = self.prefetch.as_deref_mut() {
            if let Some(unused) = p.unused.get_mut(frame.index()) {
                if std::mem::take(unused) {
                    p.stats.evicted_unused += 1;
                }
            }
        }
        self.map.remove(key, &self.keys);
        self.used -= u64::from(self.sizes[frame.index()]);
        self.free.push(frame);
    }
}
