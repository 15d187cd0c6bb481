//! Write ordering in the buffer cache (Burnett ch.4): what happens when an ordered write
//! dirties a buffer, when a buffer may be written, and how `fsync`, `sync`, duplicated
//! buffers and the end of a run make progress.
//!
//! [`Ordering`] owns the cache's ordering state: the epochs and graph nodes
//! ([`crate::des::ordering`]), the independent checker, the logical writes each buffer
//! carries, the duplicates. The hooks are methods of [`BufferCache`], since they act on its
//! buffers; every one of them does nothing unless the run orders writes (it syncs, uses
//! barriers or graph writes), so ordering costs the other runs nothing.

use super::super::ops::FileId;
use super::super::ordering::{Checker, Epochs, Graph};
use super::cache::{Buffer, BufferCache, Env, Io, WriteTag};
use super::storage::{key_file, NO_KEY};

/// No graph node (a buffer whose dirty data came from plain writes).
pub(super) const NO_NODE: u32 = u32::MAX;

/// No logical write (a run without ordering numbers none).
const NO_LOGICAL: u32 = u32::MAX;

/// The cache's write-ordering state.
#[derive(Debug)]
pub(super) struct Ordering {
    /// The run orders writes; all else here is idle when false.
    pub enabled: bool,
    /// Break the ordering on purpose (`ignore_ordering`), to show that the checker
    /// notices.
    pub ignore: bool,
    epochs: Epochs,
    graph: Graph,
    checker: Checker,
    /// Logical writes carried by each buffer's dirty data, and by its write in flight.
    carried: Vec<Vec<u32>>,
    in_flight: Vec<Vec<u32>>,
    /// Buffers holding each file's blocks (may hold stale entries; checked on use).
    pub file_frames: Vec<Vec<u32>>,
    /// Released duplicate buffers, for reuse.
    pub dup_free: Vec<u32>,
    /// Duplicates waiting for their dependencies before they can be written.
    deferred: Vec<u32>,
    write_seq: u64,
    /// Final sync in progress: each time the disks go idle, write what ordering allows.
    final_flush: bool,
}

impl Ordering {
    /// The state for a run over `files` files; `enabled` when the run orders writes.
    pub fn new(enabled: bool, ignore: bool, files: usize) -> Self {
        Ordering {
            enabled,
            ignore,
            epochs: Epochs::default(),
            graph: Graph::default(),
            checker: Checker::new(files),
            carried: Vec::new(),
            in_flight: Vec::new(),
            file_frames: vec![Vec::new(); files],
            dup_free: Vec::new(),
            deferred: Vec::new(),
            write_seq: 0,
            final_flush: false,
        }
    }

    /// Whether a buffer's dirty data may be written now: its epoch is the safe one and its
    /// graph node follows only nodes already on disk. (Always, for clean buffers.)
    pub fn writable(&self, b: &Buffer) -> bool {
        !b.dirty
            || (b.epoch <= self.epochs.safe()
                && (b.node == NO_NODE || self.graph.satisfied(b.node)))
    }

    /// `barrier()`: later writes go to a new epoch.
    pub fn barrier(&mut self) {
        if self.enabled {
            self.epochs.barrier();
        }
    }

    /// A `write` or `graphwrite` call on `file` starts: record it with the checker and,
    /// for a graph write, create its node after its (live) dependencies.
    pub fn begin_write(&mut self, file: FileId, graph: Option<(u32, &[u32])>) -> WriteTag {
        if !self.enabled {
            return WriteTag::PLAIN;
        }
        let (id, deps) = match graph {
            Some((id, deps)) => (Some(id), deps),
            None => (None, &[][..]),
        };
        let logical = self.checker.record(file, self.epochs.open(), id, deps);
        let node = match id {
            Some(id) => {
                let resolved = self.graph.resolve(deps);
                self.graph.create(id, resolved)
            }
            None => NO_NODE,
        };
        WriteTag { logical, node }
    }

    /// Ordering constraints broken by what reached the disk, and the first described.
    pub fn violations(&self) -> (u64, Option<String>) {
        (
            self.checker.violations(),
            self.checker.first_violation().map(str::to_string),
        )
    }
}

impl BufferCache {
    /// May this buffer be written now (see [`Ordering::writable`])? `ignore_ordering`
    /// breaks the rule on purpose, to show that the checker notices.
    pub(super) fn may_write(&self, f: u32) -> bool {
        !self.order.enabled || self.order.ignore || self.order.writable(&self.bufs[f as usize])
    }

    /// An ordered write is about to dirty buffer `f`: combine it with the dirty data
    /// already there, or keep that data apart in a duplicate when a barrier or a graph
    /// dependency lies between them; then join the buffer to the write's epoch and node.
    pub(super) fn order_write<E: Env>(&mut self, env: &mut E, f: u32, logical: u32, node: u32) {
        let b = self.bufs[f as usize];
        if b.dirty {
            let o = &self.order;
            let behind_barrier = b.epoch < o.epochs.open();
            let mine =
                node != NO_NODE && b.node != NO_NODE && o.graph.find(b.node) == o.graph.find(node);
            let ordered_between = node != NO_NODE
                && b.node != NO_NODE
                && !mine
                && o.graph.reachable(&o.graph.deps(node), b.node);
            if behind_barrier || ordered_between {
                self.duplicate(env, f);
            } else if node != NO_NODE && b.node != NO_NODE && !mine {
                // No path between the two nodes: one node, named by both ids.
                self.order.graph.merge(b.node, node);
            }
        }
        let o = &mut self.order;
        let b = &mut self.bufs[f as usize];
        if !b.dirty {
            b.epoch = o.epochs.open();
            o.epochs.join(b.epoch, f);
            b.node = NO_NODE;
        }
        if node != NO_NODE && b.node == NO_NODE {
            b.node = node;
            o.graph.join(node, f);
        }
        if o.carried.len() <= f as usize {
            o.carried.resize(f as usize + 1, Vec::new());
        }
        if logical != NO_LOGICAL {
            o.carried[f as usize].push(logical);
        }
    }

    /// Copy buffer `f`'s dirty data into a duplicate that keeps its epoch, node and
    /// logical writes, and start writing it as soon as ordering allows; `f` is then
    /// clean, ready for the new version (Burnett §4.2.2: copy rather than flush
    /// synchronously, and write the old copy at once).
    fn duplicate<E: Env>(&mut self, env: &mut E, f: u32) {
        let d = match self.order.dup_free.pop() {
            Some(d) => d,
            None => {
                // Duplicates live above the cache's own buffers.
                let at_least = self.capacity as usize;
                if self.bufs.len() < at_least {
                    self.bufs.resize(at_least, Buffer::EMPTY);
                }
                self.bufs.push(Buffer::EMPTY);
                self.bufs.len() as u32 - 1
            }
        };
        debug_assert!(
            self.waiters.none_wait_for(d),
            "a free duplicate has waiters"
        );
        let old = self.bufs[f as usize];
        self.bufs[d as usize] = Buffer {
            key: old.key,
            dirty: true,
            filled: old.filled,
            dirty_since: old.dirty_since,
            epoch: old.epoch,
            node: old.node,
            dup: true,
            ..Buffer::EMPTY
        };
        self.stats.duplicates += 1;
        let o = &mut self.order;
        if o.carried.len() <= d as usize {
            o.carried.resize(d as usize + 1, Vec::new());
        }
        o.carried[d as usize] = std::mem::take(&mut o.carried[f as usize]);
        o.epochs.adopt(old.epoch, d);
        if old.node != NO_NODE {
            o.graph.adopt(old.node, d);
        }
        o.file_frames[key_file(old.key) as usize].push(d);
        let b = &mut self.bufs[f as usize];
        b.dirty = false;
        b.filled = 0;
        b.node = NO_NODE;
        // Write the old version as soon as it may go: its epoch and everything before it.
        self.order.epochs.request_flush(old.epoch);
        if self.may_write(d) {
            self.start_write(env, d);
        } else {
            self.order.deferred.push(d);
        }
        self.pump(env);
    }

    /// A write of buffer `f` is being issued: it carries the logical writes applied since
    /// the buffer was last clean.
    pub(super) fn on_write_start(&mut self, f: u32) {
        let o = &mut self.order;
        o.write_seq += 1;
        self.bufs[f as usize].write_seq = o.write_seq;
        if o.in_flight.len() <= f as usize {
            o.in_flight.resize(f as usize + 1, Vec::new());
        }
        if let Some(c) = o.carried.get_mut(f as usize) {
            std::mem::swap(&mut o.in_flight[f as usize], c);
            c.clear();
        }
    }

    /// A write of buffer `f` reached the disk: check it, retire its epoch and node
    /// membership, and let whatever waited on them go.
    pub(super) fn on_write_done<E: Env>(&mut self, env: &mut E, f: u32) {
        let b = self.bufs[f as usize];
        let o = &mut self.order;
        let carried = std::mem::take(&mut o.in_flight[f as usize]);
        o.checker.reached_disk(&carried, b.key, env.now().as_ns());
        o.in_flight[f as usize] = carried;
        o.in_flight[f as usize].clear();
        let mut moved = o.epochs.leave(b.epoch);
        if b.node != NO_NODE {
            moved |= o.graph.leave(b.node);
            self.bufs[f as usize].node = NO_NODE;
        }
        if moved {
            self.pump(env);
        }
        if self.order.final_flush && self.busy == 0 {
            self.flush_everything(env);
        }
    }

    /// Dirty data of buffer `f` is being dropped (its file was deleted or truncated).
    pub(super) fn forget_dirty<E: Env>(&mut self, env: &mut E, f: u32) {
        let b = self.bufs[f as usize];
        let o = &mut self.order;
        if let Some(c) = o.carried.get_mut(f as usize) {
            let logical = std::mem::take(c);
            o.checker.mark_durable(&logical);
        }
        let mut moved = o.epochs.leave(b.epoch);
        if b.node != NO_NODE {
            moved |= o.graph.leave(b.node);
            self.bufs[f as usize].node = NO_NODE;
        }
        if moved {
            self.pump(env);
        }
    }

    /// Start whatever the ordering now allows: the safe epoch when a flush asked for it,
    /// and duplicates whose dependencies are on disk.
    fn pump<E: Env>(&mut self, env: &mut E) {
        if let Some(frames) = self.order.epochs.flushable() {
            let safe = self.order.epochs.safe();
            let ready: Vec<u32> = frames
                .iter()
                .copied()
                .filter(|&f| {
                    let b = &self.bufs[f as usize];
                    b.dirty && b.io == Io::Idle && b.epoch == safe
                })
                .collect();
            for f in ready {
                if self.bufs[f as usize].dirty && self.may_write(f) {
                    self.start_write(env, f);
                }
            }
        }
        let mut i = 0;
        while i < self.order.deferred.len() {
            let d = self.order.deferred[i];
            let b = self.bufs[d as usize];
            if !(b.dup && b.dirty && b.io == Io::Idle) {
                // Written meanwhile (by a sync or the flusher).
                self.order.deferred.swap_remove(i);
            } else if self.may_write(d) {
                self.order.deferred.swap_remove(i);
                self.start_write(env, d);
            } else {
                i += 1;
            }
        }
    }

    /// Nothing evictable and nothing in flight: write what ordering allows so that a
    /// buffer frees up (there is always such a buffer: the safe epoch, or a graph leaf).
    pub(super) fn force_progress<E: Env>(&mut self, env: &mut E) {
        let safe = self.order.epochs.safe();
        self.order.epochs.request_flush(safe);
        self.pump(env);
        if self.busy > 0 {
            return;
        }
        for f in 0..self.bufs.len() as u32 {
            let b = self.bufs[f as usize];
            if b.dirty && b.io == Io::Idle && self.may_write(f) {
                self.start_write(env, f);
                self.stats.cleaner_writes += 1;
                return;
            }
        }
    }

    /// The end of a run with `final_sync`: write everything, in as many passes as the
    /// ordering needs (each pass writes what is allowed, the next starts when it is done).
    pub fn flush_everything<E: Env>(&mut self, env: &mut E) {
        self.order.final_flush = true;
        let open = self.order.epochs.open();
        self.order.epochs.request_flush(open);
        self.pump(env);
        for f in 0..self.bufs.len() as u32 {
            let b = self.bufs[f as usize];
            if b.dirty && b.io == Io::Idle && self.may_write(f) {
                self.start_write(env, f);
            }
        }
    }

    /// Buffers that may hold blocks of `file` (or every buffer).
    fn sync_scope(&mut self, file: Option<FileId>) -> Vec<u32> {
        match file {
            None => (0..self.bufs.len() as u32).collect(),
            Some(file) => {
                let bufs = &self.bufs;
                let list = &mut self.order.file_frames[file as usize];
                list.retain(|&f| {
                    let b = &bufs[f as usize];
                    b.key != NO_KEY && key_file(b.key) == file
                });
                list.sort_unstable();
                list.dedup();
                list.clone()
            }
        }
    }

    /// `fsync(file)` / `sync()` by process `pid`: write the dirty blocks, first what they
    /// must follow; true once none is dirty or being written (the checker then confirms
    /// that every earlier write of the file is on disk), false if `pid` now waits.
    /// `mark` is the process's: the logical writes recorded before this sync began.
    pub fn sync<E: Env>(
        &mut self,
        env: &mut E,
        pid: u32,
        file: Option<FileId>,
        mark: &mut Option<u32>,
    ) -> bool {
        let recorded = *mark.get_or_insert(self.order.checker.recorded());
        let scope = self.sync_scope(file);
        let mut latest: Option<(u64, u32)> = None;
        let mut pending = false;
        for &f in &scope {
            let b = self.bufs[f as usize];
            if b.key == NO_KEY || file.is_some_and(|file| key_file(b.key) != file) {
                continue;
            }
            if b.dirty && b.io == Io::Idle {
                if self.may_write(f) {
                    self.start_write(env, f);
                } else {
                    self.write_what_it_follows(env, f);
                }
            }
            let b = self.bufs[f as usize];
            if b.dirty || b.io == Io::Writing {
                pending = true;
            }
            if b.io == Io::Writing && latest.is_none_or(|(seq, _)| b.write_seq > seq) {
                latest = Some((b.write_seq, f));
            }
        }
        if !pending {
            *mark = None;
            let o = &mut self.order;
            if o.enabled {
                let now = env.now().as_ns();
                match file {
                    Some(file) => o.checker.fsync_returned(file, recorded, now),
                    None => {
                        for file in 0..o.file_frames.len() as u32 {
                            o.checker.fsync_returned(file, recorded, now);
                        }
                    }
                }
            }
            return true;
        }
        match latest {
            // Wait for the write started last: with FIFO disks, everything before it is
            // done by then, so one rescan usually finishes.
            Some((_, f)) => self.waiters.wait_for_buffer(pid, f),
            None => self.waiters.wait_for_any(pid),
        }
        false
    }

    /// `fsync` of a buffer that must follow other writes: write those first (barriers:
    /// every epoch up to its own; graphs: the leaves below its node).
    fn write_what_it_follows<E: Env>(&mut self, env: &mut E, f: u32) {
        let b = self.bufs[f as usize];
        self.order.epochs.request_flush(b.epoch);
        if b.node != NO_NODE {
            let mut stack = self.order.graph.deps(b.node);
            let mut seen = Vec::new();
            while let Some(n) = stack.pop() {
                if seen.contains(&n) {
                    continue;
                }
                seen.push(n);
                let frames: Vec<u32> = self.order.graph.frames(n).to_vec();
                for g in frames {
                    let gb = self.bufs[g as usize];
                    if gb.dirty
                        && gb.io == Io::Idle
                        && gb.node != NO_NODE
                        && self.order.graph.find(gb.node) == n
                        && self.may_write(g)
                    {
                        self.start_write(env, g);
                    }
                }
                stack.extend(self.order.graph.deps(n));
            }
        }
        self.pump(env);
    }
}

#[cfg(test)]
mod tests {
    use super::super::cache::tests::Fake;
    use super::super::cache::Served;
    use super::*;
    use crate::des::config::{SystemConfig, WritePolicy};
    use crate::des::time::VTime;

    const B: u64 = 1024;

    /// A delayed-write LRU cache of 4 buffers that orders writes, for 2 processes and
    /// file 0 (whose block `b` has key `b`).
    fn ordered(ignore: bool) -> BufferCache {
        let mut cfg = SystemConfig::default();
        cfg.cache.block_bytes = B as u32;
        cfg.cache.buffers = 4;
        cfg.cache.policy = "lru".into();
        cfg.cache.write_policy = WritePolicy::Delayed;
        cfg.cache.ignore_ordering = ignore;
        BufferCache::new(&cfg, 2, 1, true, 1).unwrap()
    }

    /// Process 0 writes block `b` whole (never on disk: no read).
    fn write(c: &mut BufferCache, env: &mut Fake, b: u64) {
        let tag = c.order.begin_write(0, None);
        assert_eq!(c.access(env, 0, b, B, Some(tag), true), Served::Ready);
    }

    #[test]
    fn a_block_written_again_after_a_barrier_is_duplicated_and_the_old_version_goes_first() {
        let mut env = Fake::new(0);
        let mut c = ordered(false);
        write(&mut c, &mut env, 0);
        c.order.barrier();
        write(&mut c, &mut env, 0);
        // The old version went to a duplicate above the 4 cache buffers, written at once;
        // the new one (epoch 1) waits for epoch 0 to be on disk.
        assert_eq!(c.stats.duplicates, 1);
        assert_eq!(env.io, [(0, true, 4)]);
        assert!(c.bufs[0].dirty && !c.may_write(0));
        env.complete_all(&mut c);
        assert!(c.may_write(0));
        // The duplicate is released for reuse.
        assert_eq!(c.order.dup_free, [4]);
        assert_eq!(c.order.violations(), (0, None));
        assert_eq!(c.invariants(), Ok(()));
    }

    #[test]
    fn fsync_writes_the_files_dirty_blocks_and_waits_for_them() {
        let mut env = Fake::new(0);
        let mut c = ordered(false);
        write(&mut c, &mut env, 0);
        write(&mut c, &mut env, 1);
        let mut mark = None;
        assert!(!c.sync(&mut env, 1, Some(0), &mut mark));
        assert_eq!(mark, Some(2));
        assert_eq!(env.log, [(0, true), (1, true)]);
        env.complete_all(&mut c);
        // It waited for the write started last.
        assert_eq!(env.woken(), [1]);
        assert!(c.sync(&mut env, 1, Some(0), &mut mark));
        assert_eq!(mark, None);
        assert_eq!(c.order.violations(), (0, None));
    }

    #[test]
    fn the_flusher_holds_back_writes_behind_a_barrier() {
        let mut env = Fake::new(0);
        let mut c = ordered(false);
        write(&mut c, &mut env, 0);
        c.order.barrier();
        write(&mut c, &mut env, 1);
        env.now = VTime::ZERO.later(c.flush_age);
        c.flush(&mut env);
        // Only epoch 0 may go; epoch 1 follows once it is on disk.
        assert_eq!(env.log, [(0, true)]);
        env.complete_all(&mut c);
        c.flush(&mut env);
        assert_eq!(env.log, [(0, true), (1, true)]);
    }

    #[test]
    fn ignoring_the_order_is_caught_by_the_checker() {
        let mut env = Fake::new(0);
        let mut c = ordered(true);
        write(&mut c, &mut env, 0);
        c.order.barrier();
        write(&mut c, &mut env, 1);
        env.now = VTime::ZERO.later(c.flush_age);
        c.flush(&mut env);
        assert_eq!(env.log, [(0, true), (1, true)]);
        // Epoch 1's write lands first.
        let (_, _, f) = env.io.pop().unwrap();
        c.io_done(&mut env, f, true);
        let (n, first) = c.order.violations();
        assert_eq!(n, 1);
        assert!(first.unwrap().contains("epoch 1 while epoch 0"));
    }
}
