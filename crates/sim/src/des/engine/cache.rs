//! The buffer cache: buffers, the block map, the replacement policy, the write policy,
//! read-ahead and the flusher's pass.
//!
//! [`BufferCache`] owns every buffer and what each holds, the map from blocks to buffers,
//! the [`Policy`], the processes' held buffers, the wait lists ([`super::waiters`]), the
//! cleaners' state ([`super::cleaner`]) and the write-ordering state
//! ([`super::ordered`]). It reaches the rest of the simulator only through [`Env`]: the
//! clock, whether a block is on disk, a file's size, starting a disk request and waking a
//! process. So it can be driven on its own, as its unit tests do, with the disks played
//! by hand.
//!
//! # The model
//!
//! * A block's buffer is *busy* while a disk read or write of it is in flight. A process
//!   that needs the data of a buffer being read waits for the read; a process that wants to
//!   write into a buffer being written waits for the write (the classic `B_BUSY` rule —
//!   which is what makes WriteThru's rewrite mistakes cost time). Reads of a buffer being
//!   written proceed.
//! * A write of part of a block that exists on disk and is not cached reads the block
//!   first; a write that covers the whole block, or a block that was never on disk, does
//!   not.
//! * Each process has a *held* buffer: the block it touched last. A buffer no process holds
//!   is *replaceable*, which is what triggers WriteFree. (Toss-immediately keeps the same
//!   notion inside the policy.)
//! * Replacement asks the policy crate's [`Policy`] for victims among buffers that are not
//!   busy; the [`Cleaner`] decides what happens when they are dirty.
//! * Hits and misses are counted once per block access (a process that waits and retries
//!   is not counted twice), and the policy sees each block access exactly once.
//! * An admission filter (`cache.admission`, the policy crate's [`Admitter`]) is asked
//!   once per missed block access, before a buffer is sought. A refused block takes no
//!   buffer and evicts nothing: the access is still a miss, and the process moves its data
//!   by uncached I/O, as with no cache at all ([`Served::Uncached`]). A buffer cannot be
//!   lent for the transfer instead: it would have to come from the policy's victims, which
//!   is exactly the eviction the filter exists to prevent.
//! * A prefetcher (`cache.prefetch`, the policy crate's [`Prefetcher`]) is told every
//!   block access (hit, miss or refused, reads and writes, as `Cache` replay does) and
//!   names blocks to bring in: each one not cached and on disk gets a buffer that can be
//!   had without waiting and an asynchronous disk read, skipping the filter. Read-ahead
//!   (`cache.read_ahead`) is the older, per-process form of the same idea; both may run.

use bufcache_core::FixedHashMap;
use policy::{
    Access, AdmissionSpec, Admitter, AnyPolicy, BuildContext, FrameId, Policy, PolicySpec,
    PrefetchSpec, Prefetcher, NEVER,
};

use super::super::config::{s_to_ns, Cleaner, ConfigProblem, SystemConfig, WritePolicy};
use super::super::ops::FileId;
use super::super::time::{Nanos, VTime};
use super::cleaner::FreePool;
use super::ordered::{Ordering, NO_NODE};
use super::storage::{block_key, key_block, key_file, BlockKey, NO_KEY};
use super::waiters::WaitLists;

/// The stream id read-ahead uses with the policy, so that prefetched blocks are nobody's
/// most recently used block.
const PREFETCH_STREAM: u32 = u32::MAX - 1;

/// No buffer (a process that holds none).
const NO_FRAME: u32 = u32::MAX;

/// What the buffer cache needs from the rest of the simulator.
pub(super) trait Env {
    /// The current virtual time.
    fn now(&self) -> VTime;
    /// Whether the block has data on disk (so a partial write must read it first).
    fn on_disk(&self, key: BlockKey) -> bool;
    /// The size of `file` in bytes (read-ahead stops at its end).
    fn file_bytes(&self, file: FileId) -> u64;
    /// Start a disk read or write of buffer `frame`'s block; the engine calls
    /// [`BufferCache::io_done`] when it completes.
    fn submit(&mut self, key: BlockKey, write: bool, frame: u32);
    /// Let process `pid` run again (it retries what it waited for).
    fn wake(&mut self, pid: u32);
}

/// How a block access went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub(super) enum Served {
    /// The data was copied; the process moves on.
    Ready,
    /// The process waits (for the buffer's I/O or for any buffer) and calls again.
    Wait,
    /// The admission filter refused the block: the process moves the data by uncached
    /// I/O and does not call again for this block.
    Uncached,
}

/// The state of a buffer's disk I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Io {
    Idle,
    Reading,
    Writing,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Buffer {
    pub key: BlockKey,
    pub io: Io,
    pub dirty: bool,
    /// Bytes written since the buffer was last clean (WriteFull's "full" test).
    pub filled: u64,
    pub dirty_since: VTime,
    pub holders: u32,
    pub in_policy: bool,
    pub in_pool: bool,
    pub pool_gen: u32,
    /// The block's file was deleted while I/O was in flight: free the buffer afterwards.
    pub doomed: bool,
    /// Daemon cleaning: enter the free pool when the write completes.
    pub to_pool: bool,
    /// Write ordering: the barrier epoch the dirty data belongs to, and its graph node.
    pub epoch: u64,
    pub node: u32,
    /// An old version kept for ordering (not in the cache's map or capacity): written
    /// once, then released.
    pub dup: bool,
    /// Order in which writes were started (to wait on the latest).
    pub write_seq: u64,
    /// Brought in by the prefetcher and not yet accessed.
    pub prefetched: bool,
}

impl Buffer {
    pub const EMPTY: Buffer = Buffer {
        key: NO_KEY,
        io: Io::Idle,
        dirty: false,
        filled: 0,
        dirty_since: VTime::ZERO,
        holders: 0,
        in_policy: false,
        in_pool: false,
        pool_gen: 0,
        doomed: false,
        to_pool: false,
        epoch: 0,
        node: NO_NODE,
        dup: false,
        write_seq: 0,
        prefetched: false,
    };
}

/// A block write as the cache sees it: the ordering checker's number for the logical
/// write, and its graph node (both "none" when the run does not order writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct WriteTag {
    pub logical: u32,
    pub node: u32,
}

impl WriteTag {
    /// A write with no ordering attached.
    pub const PLAIN: WriteTag = WriteTag {
        logical: u32::MAX,
        node: NO_NODE,
    };
}

/// What the cache counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub readahead_reads: u64,
    pub flusher_writes: u64,
    pub cleaner_writes: u64,
    pub dirty_discarded: u64,
    pub duplicates: u64,
    pub admission_refused: u64,
    pub prefetch_reads: u64,
    pub prefetch_used: u64,
}

/// A process as the cache sees it.
#[derive(Clone, Copy, Debug)]
struct Reader {
    /// (buffer, key) of the block this process touched last.
    held: (u32, BlockKey),
    /// The block this process would read next if it reads sequentially.
    sequential_next: BlockKey,
}

/// The buffer cache (see the module documentation).
#[derive(Debug)]
pub(super) struct BufferCache {
    pub(super) block_bytes: u64,
    pub(super) capacity: u32,
    write_policy: WritePolicy,
    pub(super) cleaner: Cleaner,
    read_ahead: u64,
    pub(super) flush_age: Nanos,
    pub(super) bufs: Vec<Buffer>,
    pub(super) map: FixedHashMap<u32>,
    pub(super) policy: AnyPolicy,
    admission: Admitter,
    prefetcher: Option<Prefetcher>,
    /// Scratch list of the blocks the prefetcher names.
    prefetch_wanted: Vec<u64>,
    /// Freed buffers, for reuse before anything is evicted.
    pub(super) free: Vec<u32>,
    /// Cache buffers handed out so far (indices `0..issued`; duplicates live above
    /// `capacity`).
    pub(super) issued: u32,
    /// Buffers with a disk read or write in flight.
    pub(super) busy: u32,
    /// The daemon cleaner's pool of clean free buffers.
    pub(super) pool: FreePool,
    /// Reused by the scan cleaner's walks.
    pub(super) victims_scratch: Vec<FrameId>,
    access_clock: u64,
    readers: Vec<Reader>,
    pub(super) waiters: WaitLists,
    pub(super) order: Ordering,
    pub(super) stats: CacheStats,
}

impl BufferCache {
    /// A cache of `cfg`'s buffers (more than 0) for `processes` processes and `files`
    /// files; `ordering` turns write ordering on; `seed` feeds the policy.
    pub fn new(
        cfg: &SystemConfig,
        processes: usize,
        files: usize,
        ordering: bool,
        seed: u64,
    ) -> Result<Self, ConfigProblem> {
        let c = &cfg.cache;
        debug_assert!(c.buffers > 0, "a cache of no buffers is no cache");
        let problem = |e: &dyn std::fmt::Display| ConfigProblem {
            key: "cache.policy".into(),
            message: e.to_string(),
        };
        let ctx = BuildContext::new(u64::from(c.buffers), seed);
        let policy = PolicySpec::parse(&c.policy)
            .and_then(|spec| spec.build(&ctx))
            .map_err(|e| problem(&e))?;
        let module_problem = |key: &str, e: policy::ConfigError| ConfigProblem {
            key: key.into(),
            message: e.to_string(),
        };
        let admission = match &c.admission {
            Some(text) => AdmissionSpec::parse(text)
                .and_then(|spec| spec.build(&ctx))
                .map_err(|e| module_problem("cache.admission", e))?,
            None => Admitter::Always,
        };
        let prefetcher = match &c.prefetch {
            Some(text) => Some(
                PrefetchSpec::parse(text)
                    .and_then(|spec| spec.build())
                    .map_err(|e| module_problem("cache.prefetch", e))?,
            ),
            None => None,
        };
        let buffers = c.buffers as usize;
        let (pool_low, pool_high) = cfg.pool_watermarks();
        Ok(BufferCache {
            block_bytes: u64::from(c.block_bytes),
            capacity: c.buffers,
            write_policy: c.write_policy,
            cleaner: c.cleaner,
            read_ahead: u64::from(c.read_ahead),
            flush_age: s_to_ns(c.flush_age_s),
            bufs: Vec::with_capacity(buffers),
            map: FixedHashMap::with_capacity_and_hasher(buffers, Default::default()),
            policy,
            admission,
            prefetcher,
            prefetch_wanted: Vec::new(),
            free: Vec::new(),
            issued: 0,
            busy: 0,
            pool: FreePool::new(pool_low, pool_high),
            victims_scratch: Vec::new(),
            access_clock: 0,
            readers: vec![
                Reader {
                    held: (NO_FRAME, NO_KEY),
                    sequential_next: NO_KEY,
                };
                processes
            ],
            waiters: WaitLists::new(processes),
            order: Ordering::new(ordering, c.ignore_ordering, files),
            stats: CacheStats::default(),
        })
    }

    /// Whether the write policy is the delayed one (which needs the flusher).
    pub fn delays_writes(&self) -> bool {
        self.write_policy == WritePolicy::Delayed
    }

    /// The policy's view of one access of `key` by `stream`, at the next tick of the
    /// cache's access clock (one tick per access the policy sees).
    fn next_access(&mut self, key: u64, stream: u32) -> Access {
        self.access_clock += 1;
        Access {
            key,
            size: 1,
            time: self.access_clock,
            next_access: NEVER,
            stream,
        }
    }

    /// Process `pid` copies `n` bytes into or out of block `key`: [`Served::Ready`] when
    /// done, [`Served::Wait`] when it now waits (it is woken through [`Env::wake`] and
    /// calls again), [`Served::Uncached`] when the admission filter refused the block.
    /// `first` is true on the first call for this block access (later calls are retries,
    /// not counted and not shown to the policy, the filter or the prefetcher again);
    /// `write` is `Some` for a write.
    // Called from one place, once per block of every transfer: inlined, the per-block
    // path costs what it did before the cache became a type of its own (callgrind).
    #[inline(always)]
    pub fn access<E: Env>(
        &mut self,
        env: &mut E,
        pid: u32,
        key: BlockKey,
        n: u64,
        write: Option<WriteTag>,
        first: bool,
    ) -> Served {
        let p = pid as usize;
        let (file, block) = (key_file(key), key_block(key));
        let access = self.next_access(key, pid);
        if let Some(&f) = self.map.get(&key) {
            if first {
                self.stats.hits += 1;
            }
            let b = self.bufs[f as usize];
            if b.in_pool {
                self.pool.take(&mut self.bufs, f);
                self.policy.on_insert(FrameId(f), &access);
                self.bufs[f as usize].in_policy = true;
            } else if first && b.in_policy {
                self.policy.on_hit(FrameId(f), &access);
            }
            if first && b.prefetched {
                self.bufs[f as usize].prefetched = false;
                self.stats.prefetch_used += 1;
            }
            if first && write.is_none() {
                self.read_ahead(env, p, file, block);
            }
            if b.io == Io::Reading || (write.is_some() && b.io == Io::Writing) {
                self.waiters.wait_for_buffer(pid, f);
                if first {
                    self.prefetch(env, key);
                }
                return Served::Wait;
            }
            self.apply(env, p, f, n, write);
            if first {
                self.prefetch(env, key);
            }
            return Served::Ready;
        }
        if first {
            self.stats.misses += 1;
            if !self.admission.is_always() && !self.admission.admit(&access) {
                self.stats.admission_refused += 1;
                // The process touches a block outside the cache: it holds none now.
                self.release_held(env, p);
                if write.is_none() {
                    self.read_ahead(env, p, file, block);
                }
                self.prefetch(env, key);
                return Served::Uncached;
            }
        }
        let Some(f) = self.allocate(env, Some(pid), &access) else {
            if first {
                // The prefetcher hears of every access once, even one that waits here.
                self.prefetch(env, key);
            }
            return Served::Wait;
        };
        self.install(f, key, &access);
        if write.is_none() {
            self.read_ahead(env, p, file, block);
        }
        let needs_read = env.on_disk(key) && !(write.is_some() && n == self.block_bytes);
        if needs_read {
            self.start_read(env, f);
            self.waiters.wait_for_buffer(pid, f);
            if first {
                self.prefetch(env, key);
            }
            return Served::Wait;
        }
        self.apply(env, p, f, n, write);
        if first {
            self.prefetch(env, key);
        }
        Served::Ready
    }

    /// Tell the prefetcher that `key` was accessed and read in what it names. Called once
    /// per block access, after the accessed block is either busy (so no prefetch can take
    /// its buffer) or copied (so taking it no longer matters).
    fn prefetch<E: Env>(&mut self, env: &mut E, key: BlockKey) {
        let Some(prefetcher) = self.prefetcher.as_mut() else {
            return;
        };
        let mut wanted = std::mem::take(&mut self.prefetch_wanted);
        wanted.clear();
        prefetcher.after_request(key, &mut wanted);
        for &ahead in &wanted {
            // A block never written has nothing to read.
            if self.map.contains_key(&ahead) || !env.on_disk(ahead) {
                continue;
            }
            let access = self.next_access(ahead, PREFETCH_STREAM);
            let Some(f) = self.allocate(env, None, &access) else {
                break;
            };
            self.install(f, ahead, &access);
            self.bufs[f as usize].prefetched = true;
            self.stats.prefetch_reads += 1;
            self.start_read(env, f);
        }
        self.prefetch_wanted = wanted;
    }

    fn install(&mut self, f: u32, key: BlockKey, access: &Access) {
        debug_assert!(!self.map.contains_key(&key), "block {key:#x} cached twice");
        self.map.insert(key, f);
        let b = &mut self.bufs[f as usize];
        b.key = key;
        b.dirty = false;
        b.filled = 0;
        b.holders = 0;
        b.doomed = false;
        b.prefetched = false;
        b.in_policy = true;
        self.policy.on_insert(FrameId(f), access);
        if self.order.enabled {
            self.order.file_frames[key_file(key) as usize].push(f);
        }
    }

    /// Copy into or out of a valid, non-busy buffer and apply the write policy.
    fn apply<E: Env>(&mut self, env: &mut E, p: usize, f: u32, n: u64, write: Option<WriteTag>) {
        if let Some(tag) = write {
            if self.order.enabled {
                self.order_write(env, f, tag.logical, tag.node);
            }
            let now = env.now();
            let b = &mut self.bufs[f as usize];
            if !b.dirty {
                b.dirty = true;
                b.dirty_since = now;
            }
            b.filled += n;
            let full = b.filled >= self.block_bytes;
            let write_now = match self.write_policy {
                WritePolicy::WriteThru => true,
                WritePolicy::WriteFull => full,
                _ => false,
            };
            if write_now && self.may_write(f) {
                self.start_write(env, f);
            }
        }
        self.hold(env, p, f);
    }

    fn hold<E: Env>(&mut self, env: &mut E, p: usize, f: u32) {
        let key = self.bufs[f as usize].key;
        if self.readers[p].held == (f, key) {
            return;
        }
        self.release_held(env, p);
        self.readers[p].held = (f, key);
        self.bufs[f as usize].holders += 1;
    }

    /// Process `p` lets go of the block it touched last (it touches another, or ends);
    /// under WriteFree a dirty buffer no one holds any more is written.
    pub fn release_held<E: Env>(&mut self, env: &mut E, p: usize) {
        let (old, old_key) = self.readers[p].held;
        self.readers[p].held = (NO_FRAME, NO_KEY);
        if old == NO_FRAME || self.bufs[old as usize].key != old_key {
            return;
        }
        let b = &mut self.bufs[old as usize];
        b.holders = b.holders.saturating_sub(1);
        if b.holders == 0
            && b.dirty
            && b.io == Io::Idle
            && self.write_policy == WritePolicy::WriteFree
            && self.may_write(old)
        {
            self.start_write(env, old);
        }
    }

    fn read_ahead<E: Env>(&mut self, env: &mut E, p: usize, file: FileId, block: u64) {
        let depth = self.read_ahead;
        let sequential = self.readers[p].sequential_next == block_key(file, block);
        self.readers[p].sequential_next = block_key(file, block + 1);
        if depth == 0 || !sequential {
            return;
        }
        let file_blocks = env.file_bytes(file).div_ceil(self.block_bytes);
        for b in block + 1..=(block + depth).min(file_blocks.saturating_sub(1)) {
            let key = block_key(file, b);
            if self.map.contains_key(&key) || !env.on_disk(key) {
                continue;
            }
            let access = self.next_access(key, PREFETCH_STREAM);
            let Some(f) = self.allocate(env, None, &access) else {
                break;
            };
            self.install(f, key, &access);
            self.stats.readahead_reads += 1;
            self.start_read(env, f);
        }
    }

    /// Forget the block a reused buffer held.
    pub(super) fn unmap(&mut self, f: u32) {
        let b = &mut self.bufs[f as usize];
        if b.key != NO_KEY {
            self.map.remove(&b.key);
        }
        *b = Buffer {
            pool_gen: b.pool_gen,
            ..Buffer::EMPTY
        };
    }

    /// A buffer comes free: put it on the free list and wake whoever waits for one.
    fn release<E: Env>(&mut self, env: &mut E, f: u32) {
        self.free.push(f);
        self.wake_any(env);
    }

    /// Drop `file`'s cached blocks from block `first` on (the file was truncated or
    /// deleted): dirty data is discarded, buffers with I/O in flight are freed when it
    /// completes.
    pub fn drop_blocks<E: Env>(&mut self, env: &mut E, file: FileId, first: u64) {
        for f in 0..self.bufs.len() as u32 {
            let b = self.bufs[f as usize];
            if b.key == NO_KEY || key_file(b.key) != file || key_block(b.key) < first {
                continue;
            }
            self.map.remove(&b.key);
            if b.dirty {
                self.stats.dirty_discarded += 1;
                if self.order.enabled {
                    self.forget_dirty(env, f);
                }
            }
            if b.in_policy {
                self.policy.remove(FrameId(f));
            }
            if b.in_pool {
                self.pool.take(&mut self.bufs, f);
            }
            let buf = &mut self.bufs[f as usize];
            buf.in_policy = false;
            buf.dirty = false;
            buf.prefetched = false;
            buf.key = NO_KEY;
            if b.io == Io::Idle {
                self.release(env, f);
            } else {
                buf.doomed = true;
            }
        }
    }

    // ----- disk I/O --------------------------------------------------------------------

    pub(super) fn start_read<E: Env>(&mut self, env: &mut E, f: u32) {
        let b = &mut self.bufs[f as usize];
        debug_assert!(
            b.io == Io::Idle && !b.dirty,
            "only an idle clean buffer is read"
        );
        b.io = Io::Reading;
        self.busy += 1;
        env.submit(b.key, false, f);
    }

    pub(super) fn start_write<E: Env>(&mut self, env: &mut E, f: u32) {
        let b = &mut self.bufs[f as usize];
        assert!(
            b.dirty && b.io == Io::Idle,
            "only an idle dirty buffer is written"
        );
        b.io = Io::Writing;
        self.busy += 1;
        b.dirty = false;
        b.filled = 0;
        let key = b.key;
        if self.order.enabled {
            self.on_write_start(f);
        }
        env.submit(key, true, f);
    }

    /// The disk read or write of buffer `f` completed.
    // Called from one place, once per disk completion: inlined for the same reason as
    // `access`.
    #[inline(always)]
    pub fn io_done<E: Env>(&mut self, env: &mut E, f: u32, write: bool) {
        debug_assert!(
            self.bufs[f as usize].io != Io::Idle,
            "buffer {f} had no I/O"
        );
        self.busy -= 1;
        self.bufs[f as usize].io = Io::Idle;
        if write && self.order.enabled {
            self.on_write_done(env, f);
        }
        if self.bufs[f as usize].dup {
            // A duplicate's one write is done: release it.
            self.bufs[f as usize] = Buffer::EMPTY;
            self.order.dup_free.push(f);
            self.wake_waiters_of(env, f);
            self.wake_any(env);
            return;
        }
        let b = &mut self.bufs[f as usize];
        let doomed = b.doomed;
        let to_pool = b.to_pool;
        b.to_pool = false;
        if to_pool {
            self.pool.cleaning -= 1;
        }
        self.wake_waiters_of(env, f);
        if doomed {
            self.bufs[f as usize].doomed = false;
            self.release(env, f);
        } else if to_pool && !self.bufs[f as usize].dirty {
            self.push_pool(env, f);
        } else {
            self.wake_any(env);
        }
    }

    /// The delayed-write flusher's pass: start writing every idle buffer dirty for at
    /// least the flush age that ordering lets go.
    pub fn flush<E: Env>(&mut self, env: &mut E) {
        let now = env.now();
        for f in 0..self.bufs.len() as u32 {
            let b = &self.bufs[f as usize];
            if b.dirty
                && b.io == Io::Idle
                && now.since(b.dirty_since) >= self.flush_age
                && self.may_write(f)
            {
                self.start_write(env, f);
                self.stats.flusher_writes += 1;
            }
        }
    }

    // ----- waiting ---------------------------------------------------------------------

    pub(super) fn wake_waiters_of<E: Env>(&mut self, env: &mut E, f: u32) {
        self.waiters.wake_buffer(f, |pid| env.wake(pid));
    }

    pub(super) fn wake_any<E: Env>(&mut self, env: &mut E) {
        self.waiters.wake_any(|pid| env.wake(pid));
    }

    /// The bookkeeping agrees with the buffers: the busy count, the block map, the pool
    /// count. (Checked at the end of every run in debug builds, and by the tests.)
    pub fn invariants(&self) -> Result<(), String> {
        let busy = self.bufs.iter().filter(|b| b.io != Io::Idle).count();
        if busy != self.busy as usize {
            return Err(format!("{busy} buffers busy, counted {}", self.busy));
        }
        for (&key, &f) in self.map.iter() {
            let b = &self.bufs[f as usize];
            if b.key != key || b.dup {
                return Err(format!("block {key:#x} maps to buffer {f}: {b:?}"));
            }
        }
        let mapped = self
            .bufs
            .iter()
            .filter(|b| b.key != NO_KEY && !b.dup)
            .count();
        if mapped != self.map.len() {
            return Err(format!(
                "{mapped} buffers hold blocks, {} mapped",
                self.map.len()
            ));
        }
        let pooled = self.bufs.iter().filter(|b| b.in_pool).count();
        if pooled != self.pool.count as usize {
            return Err(format!(
                "{pooled} buffers pooled, counted {}",
                self.pool.count
            ));
        }
        if self.issued > self.capacity {
            return Err(format!(
                "{} buffers issued of {}",
                self.issued, self.capacity
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
pub(super) mod tests;
