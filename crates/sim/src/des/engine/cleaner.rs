//! Finding a buffer for a new block: the free list, then the cleaners.
//!
//! [`BufferCache::allocate`] takes a freed buffer, or one never used, or asks the
//! configured [`Cleaner`]: `scan` and `sync` walk the policy's victims, writing dirty ones
//! and taking the first clean one; `daemon` takes buffers from a pool of clean free
//! buffers ([`FreePool`], owned here) that XMF's clock daemon refills between two
//! watermarks. When write ordering holds every victim back, the ordering is asked to make
//! progress.

use std::collections::VecDeque;

use policy::{Access, FrameId, Policy};

use super::super::config::Cleaner;
use super::cache::{Buffer, BufferCache, Env, Io};

/// The daemon cleaner's pool: clean buffers evicted ahead of need, in the order they came
/// free. A buffer taken back out of the pool by a hit stays in the queue with a stale
/// generation and is skipped when it comes up.
#[derive(Clone, Debug)]
pub(super) struct FreePool {
    queue: VecDeque<(u32, u32)>,
    /// Buffers in the pool (queue entries whose generation is current).
    pub count: u32,
    /// Dirty buffers being written on their way into the pool.
    pub cleaning: u32,
    low: u32,
    high: u32,
}

impl FreePool {
    /// An empty pool refilled to `high` when it falls below `low`.
    pub fn new(low: u32, high: u32) -> Self {
        FreePool {
            queue: VecDeque::new(),
            count: 0,
            cleaning: 0,
            low,
            high,
        }
    }

    /// Below the low watermark (counting buffers being cleaned for the pool).
    fn low(&self) -> bool {
        self.count + self.cleaning < self.low
    }

    /// Below the high watermark (counting buffers being cleaned for the pool).
    fn wants_more(&self) -> bool {
        self.count + self.cleaning < self.high
    }

    /// Add the clean, idle buffer `f`.
    pub fn push(&mut self, bufs: &mut [Buffer], f: u32) {
        let b = &mut bufs[f as usize];
        debug_assert!(!b.dirty && b.io == Io::Idle && !b.in_pool);
        b.in_pool = true;
        b.pool_gen = b.pool_gen.wrapping_add(1);
        self.queue.push_back((f, b.pool_gen));
        self.count += 1;
    }

    /// Take the buffer that came free first.
    pub fn pop(&mut self, bufs: &mut [Buffer]) -> Option<u32> {
        while let Some((f, gen)) = self.queue.pop_front() {
            let b = &mut bufs[f as usize];
            if b.in_pool && b.pool_gen == gen {
                b.in_pool = false;
                self.count -= 1;
                return Some(f);
            }
        }
        None
    }

    /// Take buffer `f` out of the pool (a hit on its block, or its block was dropped).
    pub fn take(&mut self, bufs: &mut [Buffer], f: u32) {
        let b = &mut bufs[f as usize];
        debug_assert!(b.in_pool, "buffer {f} is not in the pool");
        b.in_pool = false;
        self.count -= 1;
    }
}

/// Whether the scan may take or clean a buffer.
fn candidate(b: &Buffer, allow_held: bool) -> bool {
    b.io == Io::Idle && (allow_held || !b.dirty || b.holders == 0)
}

impl BufferCache {
    /// A buffer for a new block, or `None` (the process, if any, now waits for one).
    pub(super) fn allocate<E: Env>(
        &mut self,
        env: &mut E,
        waiter: Option<u32>,
        incoming: &Access,
    ) -> Option<u32> {
        if let Some(f) = self.free.pop() {
            return Some(f);
        }
        if self.issued < self.capacity {
            let f = self.issued;
            self.issued += 1;
            if self.bufs.len() <= f as usize {
                self.bufs.push(Buffer::EMPTY);
            }
            return Some(f);
        }
        let got = match self.cleaner {
            Cleaner::Daemon => self.allocate_from_pool(env),
            Cleaner::Scan => self.allocate_scanning(env, incoming, usize::MAX),
            Cleaner::Sync => self.allocate_scanning(env, incoming, 1),
        };
        let got = match got {
            None if self.order.enabled && self.busy == 0 => {
                // Every victim is dirty behind an ordering constraint: write what may be
                // written (the safe epoch, or a graph leaf) and wait for it.
                self.force_progress(env);
                None
            }
            other => other,
        };
        match got {
            Some(f) => {
                self.unmap(f);
                Some(f)
            }
            None => {
                if let Some(pid) = waiter {
                    self.waiters.wait_for_any(pid);
                }
                None
            }
        }
    }

    /// Walk the victims in replacement order, starting writes of dirty ones, and evict the
    /// first clean one. `max_writes` bounds how many dirty victims are written per call
    /// (1 for the sync cleaner). A dirty buffer that some process holds (the block it is
    /// writing) is passed over, as a kernel passes over a buffer in use, unless nothing else
    /// is left and no I/O in flight will free a buffer: cleaning it early would write a
    /// half-filled block.
    fn allocate_scanning<E: Env>(
        &mut self,
        env: &mut E,
        incoming: &Access,
        max_writes: usize,
    ) -> Option<u32> {
        match self.scan_pass(env, incoming, max_writes, false) {
            (Some(f), _) => Some(f),
            // Only when no I/O in flight will free a buffer: held buffers are next.
            (None, 0) if self.busy == 0 => self.scan_pass(env, incoming, max_writes, true).0,
            (None, _) => None,
        }
    }

    /// One walk; returns the buffer taken, if any, and how many candidates it saw.
    fn scan_pass<E: Env>(
        &mut self,
        env: &mut E,
        incoming: &Access,
        max_writes: usize,
        allow_held: bool,
    ) -> (Option<u32>, usize) {
        let mut written = 0;
        // Usually the first victim is clean: start small, grow geometrically.
        let mut want = 2usize;
        let mut victims = std::mem::take(&mut self.victims_scratch);
        let result = 'walk: loop {
            victims.clear();
            {
                let bufs = &self.bufs;
                let order = &self.order;
                let strict = order.enabled && !order.ignore;
                let ok = |f: FrameId| {
                    let b = &bufs[f.index()];
                    candidate(b, allow_held) && (!strict || order.writable(b))
                };
                self.policy.victims(want, &ok, &mut victims);
            }
            let seen = victims.len() + written;
            for &v in &victims {
                if !self.bufs[v.index()].dirty {
                    let got = self.evict_where(incoming, |b, f| f == v && candidate(b, allow_held));
                    debug_assert_eq!(got, Some(v));
                    break 'walk (got.map(|f| f.0), seen);
                }
                if written == max_writes {
                    break 'walk (None, seen);
                }
                self.start_write(env, v.0);
                self.stats.cleaner_writes += 1;
                written += 1;
            }
            if victims.len() < want {
                break 'walk (None, seen);
            }
            want = want.saturating_mul(8);
        };
        self.victims_scratch = victims;
        result
    }

    /// Ask the policy to evict a frame whose buffer satisfies `allow`.
    fn evict_where(
        &mut self,
        incoming: &Access,
        allow: impl Fn(&Buffer, FrameId) -> bool,
    ) -> Option<FrameId> {
        let bufs = &self.bufs;
        let evictable = |f: FrameId| allow(&bufs[f.index()], f);
        let got = self.policy.evict(incoming, &evictable);
        if let Some(f) = got {
            self.bufs[f.index()].in_policy = false;
        }
        got
    }

    fn allocate_from_pool<E: Env>(&mut self, env: &mut E) -> Option<u32> {
        if self.pool.count == 0 {
            self.run_daemon(env);
        }
        let f = self.pool.pop(&mut self.bufs)?;
        if self.pool.low() {
            self.run_daemon(env);
        }
        Some(f)
    }

    /// A clean buffer enters the daemon's pool; whoever waits for a buffer may take it.
    pub(super) fn push_pool<E: Env>(&mut self, env: &mut E, f: u32) {
        self.pool.push(&mut self.bufs, f);
        self.wake_any(env);
    }

    /// XMF's clock daemon: evict until the free pool (plus buffers being cleaned for it)
    /// reaches the high watermark.
    fn run_daemon<E: Env>(&mut self, env: &mut E) {
        let phantom = Access::phantom();
        while self.pool.wants_more() {
            let got = self
                .evict_where(&phantom, |b, _| {
                    b.io == Io::Idle && (!b.dirty || b.holders == 0)
                })
                .or_else(|| {
                    if self.busy == 0 {
                        self.evict_where(&phantom, |b, _| b.io == Io::Idle)
                    } else {
                        None
                    }
                });
            let Some(f) = got else { break };
            if self.bufs[f.index()].dirty {
                self.bufs[f.index()].to_pool = true;
                self.pool.cleaning += 1;
                self.start_write(env, f.0);
                self.stats.cleaner_writes += 1;
            } else {
                self.push_pool(env, f.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(n: usize) -> Vec<Buffer> {
        vec![Buffer::EMPTY; n]
    }

    #[test]
    fn the_pool_hands_out_buffers_in_the_order_they_came_free() {
        let mut bufs = clean(4);
        let mut pool = FreePool::new(1, 3);
        assert!(pool.wants_more() && pool.low());
        for f in [2, 0, 3] {
            pool.push(&mut bufs, f);
        }
        assert_eq!(pool.count, 3);
        assert!(!pool.wants_more() && !pool.low());
        assert_eq!(pool.pop(&mut bufs), Some(2));
        assert!(!bufs[2].in_pool && bufs[0].in_pool);
        assert_eq!(pool.count, 2);
    }

    #[test]
    fn a_buffer_taken_back_is_skipped_and_may_come_back() {
        let mut bufs = clean(3);
        let mut pool = FreePool::new(1, 2);
        pool.push(&mut bufs, 0);
        pool.push(&mut bufs, 1);
        // A hit takes buffer 0 back; later it is freed again, behind buffer 1.
        pool.take(&mut bufs, 0);
        assert_eq!(pool.count, 1);
        pool.push(&mut bufs, 0);
        assert_eq!(pool.pop(&mut bufs), Some(1));
        assert_eq!(pool.pop(&mut bufs), Some(0));
        assert_eq!(pool.pop(&mut bufs), None);
        assert_eq!(pool.count, 0);
    }

    #[test]
    fn buffers_being_cleaned_count_toward_the_watermarks() {
        let mut pool = FreePool::new(2, 4);
        pool.cleaning = 3;
        assert!(!pool.low() && pool.wants_more());
        pool.cleaning = 4;
        assert!(!pool.wants_more());
    }
}
