//! Ordered writes (Burnett 2006, ch.4) in the pool: `barrier()`, `graph_write()` and
//! `wait_durable()`, for a storage engine that must put its log before its data without
//! an `fsync` stall per transaction.
//!
//! * [`graph`] keeps the bookkeeping (nodes, dependencies, which frame carries which
//!   node's data, duplicates) with no I/O, so its rules are tested on their own.
//! * [`flush`] writes by *level*: every version whose node's dependencies are durable,
//!   from every transaction at once, then one sync per file touched, then the next level
//!   (the pool's group commit). Real storage promises no order among writes that are not
//!   separated by a sync, so the sync between levels is what makes the order real.
//! * This module holds the state the pool shares (`Order`), the hooks the write paths call
//!   before they change a frame, and the public API.
//!
//! # How the rest of the pool treats ordered data
//!
//! A frame carrying a version not yet durable is *tagged* (a bit per frame, read without
//! a lock). The delayed-write flusher, eviction's dirty victims and `fsync`'s page loop
//! skip tagged frames: only a level writes them. Tagged frames are dirty, so eviction
//! never drops them. When nothing but tagged frames is left to evict, the evicting thread
//! runs a level itself (the thesis's answer, "write the dependency first"): the graph is
//! acyclic, so some node is always ready, and each level makes at least one node durable.
//! `fsync`, `sync_all`, `close` and `set_len` first make every ordered write durable.
//!
//! # Leaves
//!
//! A graph write that nothing follows and nobody waits for gains nothing from a level's
//! sync, and its frame could not be evicted until that sync. Once its dependencies are
//! durable, a level *releases* it: its frames are untagged, plain dirty pages for the
//! usual write-back, and the write counts as durable only after a later sync of its file
//! (forced by whoever needs it; see `graph/release.rs`). A leaf combined from many
//! writes releases each page as soon as the writes its bytes follow are durable, even
//! while the node follows newer ones (`graph/needs.rs`).
//!
//! # Duplicates
//!
//! A page written again when its current version must reach storage first (an older
//! epoch, or a node the new write follows) keeps the old version in a duplicate: a
//! page-aligned copy owned by the ordering state until its level writes it. Duplicates
//! are bounded by a quarter of the pool's frames ([`BufferPool::ordering_stats`] shows
//! how many are held): a write that finds the bound reached first runs levels until
//! enough duplicates are written, before it latches its page (so the bound can be passed
//! only by the writers already past that check, one page each).

mod flush;
pub(crate) mod graph;

use super::{BufferPool, FileHandle, Inner};
use crate::error::PoolError;
use crate::frames::{Bits, Exclusive, NO_OWNER};
use flush::Scope;
pub use graph::OrderingFault;
use graph::{Confirm, NodeId, OrderState, Placement, Status};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Dependencies of a `graph_write` kept on the stack (more are rare: a vector then).
const FEW_DEPS: usize = 4;

/// Names one ordered write (a `graph_write`) or a barrier, for `wait_durable` and for
/// later writes' dependencies. Issued in increasing order by one pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriteId {
    pool: u64,
    node: u64,
}

impl WriteId {
    /// The number this pool gave the write (1, 2, ... in issue order).
    pub fn get(self) -> u64 {
        self.node
    }
}

/// Counts of the ordering machinery, since the pool was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrderingStats {
    /// Levels written (each ends with a sync of every file it wrote).
    pub levels: u64,
    /// File syncs issued by levels.
    pub syncs: u64,
    /// Page versions written by levels (frames and duplicates).
    pub pages_written: u64,
    /// Duplicates made (a page written again before its older version was durable).
    pub duplicates_made: u64,
    /// Duplicates held now.
    pub duplicates_held: usize,
    /// Frames carrying ordered data not yet durable now.
    pub tagged_frames: usize,
    /// Leaf versions released as plain dirty pages (written by the usual write-back, no
    /// sync of their own; see `docs/pool.md`, "Ordered writes").
    pub versions_released: u64,
    /// Released versions not yet confirmed by a later sync of their file, now.
    pub released_unconfirmed: usize,
}

/// A page-aligned copy of one page (valid for `O_DIRECT` writes), made without `unsafe`:
/// the buffer is one page longer than needed and the copy starts where it is aligned.
struct AlignedPage {
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedPage {
    fn copy_of(bytes: &[u8]) -> Self {
        let len = bytes.len();
        let mut buf = vec![0u8; 2 * len];
        let start = buf.as_ptr().align_offset(len).min(len);
        buf[start..start + len].copy_from_slice(bytes);
        AlignedPage { buf, start, len }
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }
}

/// What the lock protects: the bookkeeping and the duplicates' bytes (same slots).
#[derive(Default)]
struct Locked {
    graph: OrderState,
    dup_bytes: Vec<Option<AlignedPage>>,
    /// Nodes that callers of `wait_durable` wait for now (a level serves them all).
    waiting: Vec<NodeId>,
}

/// The pool's ordering state.
pub(super) struct Order {
    locked: Mutex<Locked>,
    /// A level finished (waiters re-check).
    progress: Condvar,
    /// Set by the first barrier or graph write: until then the hooks cost one load.
    active: AtomicBool,
    /// The last node id issued (a copy of the graph's, stored under the lock whenever a
    /// write id is about to be handed out): a `WriteId` of this pool is checked against
    /// it without taking the lock.
    issued: AtomicU64,
    /// One level at a time.
    flush_lock: Mutex<()>,
    /// Frames tagged now (a copy of the tag bits' count). While it is at least half the
    /// frames, a write that tags one asks the flusher for a level (unless one is asked
    /// for already): every transaction's log so far is synced and its data pages
    /// released as plain pages, before misses find nothing but tagged frames, scan every
    /// frame in vain and wait for a level of their own (the only trigger before, which
    /// made eviction step over thousands of unevictable frames per miss while the
    /// level's sync ran). Asking while the count stays high, not only when it crosses
    /// the mark, keeps levels coming when one level does not bring it down.
    tagged: AtomicUsize,
    /// A level was asked for by the count above.
    level_wanted: AtomicBool,
    /// `PageMut`s alive (a barrier inside one's lifetime is refused).
    pinned_mut: AtomicUsize,
    dup_limit: usize,
    /// Duplicates held (a copy of the count under the lock, for the write path's check).
    dups_held: AtomicUsize,
    levels: AtomicU64,
    syncs: AtomicU64,
    pages_written: AtomicU64,
    /// Whether leaves may leave as plain dirty pages: only with write-back, whose flusher
    /// and eviction write them (a write-through pool writes no dirty page later).
    release_leaves: bool,
}

impl Order {
    pub(super) fn new(frames: usize, release_leaves: bool, fault: Option<OrderingFault>) -> Self {
        let mut locked = Locked::default();
        locked.graph.fault = fault;
        Order {
            locked: Mutex::new(locked),
            progress: Condvar::new(),
            active: AtomicBool::new(false),
            issued: AtomicU64::new(0),
            flush_lock: Mutex::new(()),
            tagged: AtomicUsize::new(0),
            level_wanted: AtomicBool::new(false),
            pinned_mut: AtomicUsize::new(0),
            dup_limit: (frames / 4).max(1),
            dups_held: AtomicUsize::new(0),
            levels: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            pages_written: AtomicU64::new(0),
            release_leaves,
        }
    }

    /// Anything ordered not yet durable (cheap when ordering was never used).
    pub(super) fn has_pending(&self) -> bool {
        self.active.load(Ordering::Acquire) && self.locked.lock().graph.has_pending()
    }

    pub(super) fn pin_mut_taken(&self) {
        self.pinned_mut.fetch_add(1, Ordering::AcqRel);
    }

    pub(super) fn pin_mut_dropped(&self) {
        self.pinned_mut.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How an ordered write names its node on its way through the write loop.
pub(super) enum WriteOrder<'d> {
    /// A plain `write` or `pin_mut`: the open epoch once barriers are in use.
    Plain,
    /// A `graph_write` after `deps` (ids of this pool): its node is issued under the
    /// ordering lock its first page takes anyway, and is done under its last page's, so
    /// a one-page graph write takes the lock once (it took it four times, and the
    /// writers of the log's last page queued behind each other's acquisitions).
    Graph {
        deps: &'d [NodeId],
        /// Its node once issued (replaced if the write needs a fresh node after another).
        node: Option<NodeId>,
        /// Whether its last page was placed (the write is done).
        done: bool,
    },
}

impl Inner {
    /// Whether frame `id` carries ordered data not yet durable (only levels write it). The
    /// bit lives with the frame's chunk, so frames a resize adds have one too; it is set
    /// and cleared under the ordering lock and the frame's latch.
    #[inline]
    pub(super) fn is_tagged(&self, id: u32) -> bool {
        let (word, bit) = self.frames.bit(Bits::Tagged, id);
        word.load(Ordering::Acquire) & bit != 0
    }

    fn set_tagged(&self, id: u32, on: bool) {
        let (word, bit) = self.frames.bit(Bits::Tagged, id);
        if on {
            if word.fetch_or(bit, Ordering::Release) & bit == 0 {
                let before = self.order.tagged.fetch_add(1, Ordering::Relaxed);
                if before + 1 >= self.capacity() / 2
                    && !self.order.level_wanted.swap(true, Ordering::AcqRel)
                {
                    self.wake_flusher();
                }
            }
        } else if word.fetch_and(!bit, Ordering::Release) & bit != 0 {
            self.order.tagged.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Whether some dirty frame may carry no ordered data (a tagged frame is always dirty;
    /// both counts are read without a lock, so the answer is a hint, exact when nothing
    /// changes meanwhile).
    pub(super) fn untagged_dirty(&self) -> bool {
        let tagged = self.order.tagged.load(Ordering::Relaxed) as u64;
        self.dirty_pages.load(Ordering::Relaxed) > tagged
    }

    /// The flusher's level when half the frames carry ordered data (see
    /// [`Order::tagged`]), if one was asked for and no level is being written.
    pub(super) fn flush_level_for_pressure(&self) {
        if self.order.level_wanted.swap(false, Ordering::AcqRel) {
            self.flush_level_for_eviction();
        }
    }

    /// Before a write changes frame `g` (exclusively latched): place the frame's current
    /// data (combine, or duplicate it for its node) and tag the frame for the write's node.
    /// `last`: the write's last page (a graph write is done after it). Returns whether the
    /// frame carries ordered data now (then a write-through must not write it: only a
    /// level may).
    pub(super) fn order_before_write(
        &self,
        g: &Exclusive<'_>,
        order: &mut WriteOrder<'_>,
        last: bool,
    ) -> bool {
        if matches!(order, WriteOrder::Plain) && !self.order.active.load(Ordering::Acquire) {
            return false;
        }
        let id = g.id();
        // What the frame holds is stable under its latch: read before the lock is taken.
        let held = self.held_by(id);
        let mut locked = self.order.locked.lock();
        let l = &mut *locked;
        let mut node = match order {
            WriteOrder::Graph { deps, node, .. } => {
                l.graph.unrelease(held);
                *node.get_or_insert_with(|| l.graph.graph_node_at(id, deps))
            }
            WriteOrder::Plain => match l.graph.plain_node() {
                Some(n) => {
                    l.graph.unrelease(held);
                    n
                }
                None => {
                    l.graph.plain_write(id);
                    let tagged = l.graph.tag_of(id).is_some();
                    self.set_tagged(id, tagged);
                    return tagged;
                }
            },
        };
        let before = node;
        let graph_deps = match order {
            WriteOrder::Graph { deps, .. } => Some(*deps),
            WriteOrder::Plain => None,
        };
        if let Placement::Duplicate { node: old } = l.graph.order_write(id, &mut node, graph_deps) {
            debug_assert_ne!(held.owner, NO_OWNER, "a free frame carries ordered data");
            let slot = l.graph.add_dup(old, held.owner, held.page);
            if l.dup_bytes.len() <= slot {
                l.dup_bytes.resize_with(slot + 1, || None);
            }
            l.dup_bytes[slot] = Some(AlignedPage::copy_of(g.bytes()));
            self.order
                .dups_held
                .store(l.graph.dup_count(), Ordering::Release);
        }
        match order {
            WriteOrder::Graph { node: n, done, .. } => {
                *n = Some(node);
                if last {
                    l.graph.write_done(node);
                    *done = true;
                }
            }
            WriteOrder::Plain if node != before => l.graph.set_open_epoch(node),
            WriteOrder::Plain => {}
        }
        self.order
            .issued
            .store(l.graph.last_issued(), Ordering::Release);
        self.set_tagged(id, true);
        true
    }

    /// Frame `id` (exclusively latched) leaves the cache with its data (truncation,
    /// close): its version no longer holds its node back.
    pub(super) fn order_frame_dropped(&self, id: u32) {
        if self.is_tagged(id) {
            self.order.locked.lock().graph.frame_dropped(id);
            self.set_tagged(id, false);
        }
    }

    /// Before a write latches a page: if the duplicates reached their bound, write levels
    /// until they are below it (the writer holds no latch or lock here).
    pub(super) fn order_make_room(&self) -> Result<(), PoolError> {
        if !self.order.active.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut idle_rounds = 0u32;
        while self.order.dups_held.load(Ordering::Acquire) >= self.order.dup_limit {
            let wrote = {
                let _level = self.order.flush_lock.lock();
                self.flush_level(Scope::ALL)?
            };
            if wrote == 0 {
                idle_rounds += 1;
                if idle_rounds > 20_000 {
                    // The frames holding the duplicates' successors back are latched for
                    // a long time (application pins): go on past the bound.
                    return Ok(());
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        Ok(())
    }

    /// Make every ordered write durable (for `fsync`, `sync_all`, `close`, `set_len`).
    /// Waits for frames other threads hold latched (like `fsync`).
    pub(super) fn flush_ordered_all(&self) -> Result<(), PoolError> {
        if !self.order.active.load(Ordering::Acquire) {
            return Ok(());
        }
        loop {
            let wrote = {
                let _level = self.order.flush_lock.lock();
                {
                    let mut l = self.order.locked.lock();
                    l.graph.sweep();
                    if !l.graph.has_pending() {
                        return Ok(());
                    }
                }
                self.flush_level(Scope {
                    confirm: Confirm::Every,
                    ..Scope::ALL
                })?
            };
            if wrote == 0 {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// One level for eviction when only tagged frames are left dirty; how many versions it
    /// wrote (0 when another thread is writing a level or nothing could be written).
    pub(super) fn flush_level_for_eviction(&self) -> usize {
        if !self.order.active.load(Ordering::Acquire) {
            return 0;
        }
        let Some(_level) = self.order.flush_lock.try_lock() else {
            return 0;
        };
        // Errors stay with their nodes (waiters see them; the next level retries). Two
        // eviction batches at most: a miss needs frames, not every ready page written, and
        // a commit waiting for the flush lock should not wait behind thousands of pages.
        self.flush_level(Scope {
            max_frames: 2 * self.batch(),
            ..Scope::ALL
        })
        .unwrap_or(0)
    }

    /// The flusher's share: levels of the pages dirty for at least the delayed-write age
    /// (as the flusher writes plain pages: the same chance to absorb later writes), in
    /// levels of at most four eviction batches, unless someone else is writing one.
    pub(super) fn flush_ordered_background(&self) {
        if !self.order.has_pending() {
            return;
        }
        let min_age_ns = match self.write_policy {
            super::WritePolicy::WriteBack { age, .. } => {
                Some(u64::try_from(age.as_nanos()).unwrap_or(u64::MAX))
            }
            super::WritePolicy::WriteThrough => None,
        };
        for round in 0..64 {
            // The first round waits a little for a level in progress: waiters' levels
            // confirm only what they need, so skipping here would leave released leaves
            // unconfirmed (and in the graph) for another interval.
            let level = if round == 0 {
                self.order
                    .flush_lock
                    .try_lock_for(Duration::from_millis(10))
            } else {
                self.order.flush_lock.try_lock()
            };
            let Some(_level) = level else {
                return;
            };
            // The first level also confirms the released leaves the write-back wrote
            // since the last interval: one sync per file per interval.
            let scope = Scope {
                min_age_ns,
                max_frames: 4 * self.batch(),
                confirm: if round == 0 {
                    Confirm::AlsoWritten
                } else {
                    Confirm::Needed
                },
                ..Scope::ALL
            };
            if self.flush_level(scope).unwrap_or(0) == 0 {
                return;
            }
        }
    }

    /// At the first barrier, the writes made before ordering began must come before it
    /// too: dirty frames without a tag join the open epoch (each under its exclusive
    /// latch, so no write-back is writing it), and then every open file is synced, for
    /// the pages the usual write-back wrote but did not sync.
    fn order_untracked_writes(&self) -> Result<(), PoolError> {
        let dirty: Vec<u32> = self.dirty_frames().collect();
        for id in dirty {
            let mut spins = 0;
            let g = loop {
                if let Some(g) = self.frames.try_exclusive(id) {
                    break g;
                }
                crate::frames::backoff(&mut spins);
            };
            let h = g.header();
            if !h.dirty.load(Ordering::Acquire) || h.owner.load(Ordering::Relaxed) == NO_OWNER {
                continue;
            }
            let mut l = self.order.locked.lock();
            l.graph.unrelease(self.held_by(id));
            if l.graph.tag_of(id).is_none() {
                let mut epoch = l.graph.current_epoch();
                let placed = l.graph.order_write(id, &mut epoch, None);
                debug_assert_eq!(placed, Placement::Join, "an untagged frame joins");
                self.set_tagged(id, true);
            }
        }
        for (slot_no, s) in self.files.iter().enumerate() {
            let state = s.state.load(Ordering::Acquire);
            if state & super::OPEN == 0 {
                continue;
            }
            let fh = FileHandle {
                pool: self.id,
                slot: slot_no as u32,
                gen: (state >> 2) as u32,
            };
            let Ok((file, path)) = self.file_of(fh) else {
                continue; // closed meanwhile: close wrote its pages
            };
            file.sync().map_err(|source| PoolError::Io {
                path,
                op: "sync",
                source,
            })?;
        }
        Ok(())
    }

    /// `id`'s node, if this pool issued it (checked against the last id issued, without
    /// the lock: ids are never taken back).
    fn check_id(&self, id: WriteId) -> Result<NodeId, PoolError> {
        let issued = self.order.issued.load(Ordering::Acquire);
        if id.pool != self.id || id.node == 0 || id.node > issued {
            return Err(PoolError::UnknownWrite { id: id.node });
        }
        Ok(id.node)
    }
}

impl BufferPool {
    /// A file-system barrier (Burnett §4.2): every write issued before it (plain writes,
    /// graph writes, `pin_mut` changes) reaches storage before any write issued after it.
    /// Returns an id that is durable exactly when everything before the barrier is, for
    /// [`BufferPool::wait_durable`]. Asynchronous: nothing is written here.
    ///
    /// From the first barrier on, plain writes are ordered by epoch: a page written in an
    /// older epoch and again in a newer one before its old version is durable is kept as
    /// a duplicate, written as it was (see the module docs of `docs/pool.md`, "Ordered
    /// writes"). Refused with [`PoolError::BarrierInsidePin`] while a [`super::PageMut`]
    /// is alive: its changes would belong to both epochs.
    pub fn barrier(&self) -> Result<WriteId, PoolError> {
        let inner = &*self.inner;
        let pinned = inner.order.pinned_mut.load(Ordering::Acquire);
        if pinned > 0 {
            return Err(PoolError::BarrierInsidePin { pinned });
        }
        let first = inner.order.locked.lock().graph.plain_node().is_none();
        inner.order.active.store(true, Ordering::Release);
        if first {
            inner.order_untracked_writes()?;
        }
        let node = {
            let mut l = inner.order.locked.lock();
            let node = l.graph.barrier();
            inner
                .order
                .issued
                .store(l.graph.last_issued(), Ordering::Release);
            node
        };
        Ok(WriteId {
            pool: inner.id,
            node,
        })
    }

    /// Write `data` at `offset` of `f` like [`BufferPool::write`], as one node of an
    /// asynchronous dependency graph (Burnett §4.3): it reaches storage only after every
    /// write in `deps` is durable (and after everything before the last barrier). Returns
    /// its id, for later writes' dependencies and for [`BufferPool::wait_durable`].
    ///
    /// Versions combine where nothing must be written between them (two log records on
    /// one page, Figure 4.7) and are kept apart where something must (Figure 4.9). A
    /// dependency that is already durable is satisfied; one this pool never issued is
    /// [`PoolError::UnknownWrite`]. Ids are issued when a write returns, so a dependency
    /// always names an earlier write and the graph cannot have a cycle.
    ///
    /// ```
    /// use pool::{BufferPool, MemStorage};
    ///
    /// let pool = BufferPool::builder().capacity_frames(16).build_with_storage(MemStorage::new())?;
    /// let log = pool.create("/log")?;
    /// let data = pool.create("/data")?;
    /// let rec = pool.graph_write(log, 0, b"set a=1", &[])?;
    /// let upd = pool.graph_write(data, 0, b"a=1", &[rec])?; // never on storage before rec
    /// pool.wait_durable(rec)?; // the commit may be acknowledged now
    /// pool.wait_durable(upd)?;
    /// # Ok::<(), pool::PoolError>(())
    /// ```
    pub fn graph_write(
        &self,
        f: FileHandle,
        offset: u64,
        data: &[u8],
        deps: &[WriteId],
    ) -> Result<WriteId, PoolError> {
        let inner = &*self.inner;
        // The dependencies' node ids: on the stack for the few a write usually has (a data
        // write follows one log record), so a graph write allocates nothing for them.
        let mut few = [0 as NodeId; FEW_DEPS];
        let mut many = Vec::new();
        let ids: &[NodeId] = if deps.len() <= FEW_DEPS {
            for (slot, &d) in few.iter_mut().zip(deps) {
                *slot = inner.check_id(d)?;
            }
            &few[..deps.len()]
        } else {
            for &d in deps {
                many.push(inner.check_id(d)?);
            }
            &many
        };
        inner.slot(f)?;
        inner.order.active.store(true, Ordering::Release);
        let mut order = WriteOrder::Graph {
            deps: ids,
            node: None,
            done: false,
        };
        let written = self.write_with(f, offset, data, &mut order);
        let WriteOrder::Graph { node, done, .. } = order else {
            unreachable!("a graph write stays one")
        };
        // Not done: no data (or an error before its first page, which issues its node
        // here), or an error after some pages: what was written of it stays, as a node
        // that may now complete.
        let node = match (node, done) {
            (Some(node), true) => node,
            (node, _) => {
                let mut l = inner.order.locked.lock();
                let node = node.unwrap_or_else(|| l.graph.graph_node(ids));
                l.graph.write_done(node);
                inner
                    .order
                    .issued
                    .store(l.graph.last_issued(), Ordering::Release);
                node
            }
        };
        written?;
        Ok(WriteId {
            pool: inner.id,
            node,
        })
    }

    /// Wait until write `id` (a graph write, or a barrier: everything before it) is
    /// durable, writing levels meanwhile: every ready write of every waiting caller goes
    /// in the same level, with one sync per file (group commit). An I/O error of a write
    /// this one follows is returned here ([`PoolError::OrderedWriteFailed`]); the pool
    /// keeps the data and the next level retries it, so calling again may succeed.
    pub fn wait_durable(&self, id: WriteId) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let node = inner.check_id(id)?;
        inner.order.locked.lock().waiting.push(node);
        let out = self.wait_registered(node);
        let mut l = inner.order.locked.lock();
        if let Some(i) = l.waiting.iter().position(|&n| n == node) {
            l.waiting.swap_remove(i);
        }
        out
    }

    fn wait_registered(&self, node: NodeId) -> Result<(), PoolError> {
        let inner = &*self.inner;
        let mut attempted = false;
        loop {
            {
                let mut l = inner.order.locked.lock();
                l.graph.sweep();
                match l.graph.status(node) {
                    Ok(Status::Durable) | Err(_) => return Ok(()),
                    Ok(Status::Failed(message)) if attempted => {
                        return Err(PoolError::OrderedWriteFailed { id: node, message })
                    }
                    Ok(_) => {}
                }
            }
            if let Some(_level) = inner.order.flush_lock.try_lock() {
                let wanted = inner.order.locked.lock().waiting.clone();
                // An error is recorded on its node: the status check above decides who
                // sees it.
                let wrote = inner
                    .flush_level(Scope {
                        wanted: Some(&wanted),
                        ..Scope::ALL
                    })
                    .unwrap_or(1);
                if wrote == 0 {
                    std::thread::sleep(Duration::from_micros(50));
                }
            } else {
                let mut l = inner.order.locked.lock();
                inner
                    .order
                    .progress
                    .wait_for(&mut l, Duration::from_millis(1));
            }
            attempted = true;
        }
    }

    /// Counts of levels, syncs and duplicates.
    pub fn ordering_stats(&self) -> OrderingStats {
        let o = &self.inner.order;
        let l = o.locked.lock();
        OrderingStats {
            levels: o.levels.load(Ordering::Relaxed),
            syncs: o.syncs.load(Ordering::Relaxed),
            pages_written: o.pages_written.load(Ordering::Relaxed),
            duplicates_made: l.graph.duplicates_made,
            duplicates_held: l.graph.dup_count(),
            tagged_frames: l.graph.tagged_frames(),
            versions_released: l.graph.versions_released,
            released_unconfirmed: l.graph.released_unconfirmed(),
        }
    }
}
