//! The engine's write-ordering hooks (Burnett ch.4): what happens when an ordered write
//! dirties a buffer, when a buffer may be written, and how `fsync`, `sync`, duplicated
//! buffers and the end of a run make progress. The bookkeeping itself (epochs, graph
//! nodes, the checker) is in [`crate::des::ordering`].

use super::{key_file, Buffer, Engine, Io, NONE, NO_KEY};
use crate::des::ops::FileId;
use crate::des::ordering::{Epochs, Graph};

/// Whether a buffer's dirty data may be written now: its epoch is the safe one and its
/// graph node follows only nodes already on disk. (Always, for clean buffers.)
pub(super) fn writable(b: &Buffer, epochs: &Epochs, graph: &Graph) -> bool {
    !b.dirty || (b.epoch <= epochs.safe() && (b.node == NONE || graph.satisfied(b.node)))
}

impl Engine<'_> {
    /// May this buffer be written now (see [`writable`])? `ignore_ordering` breaks the
    /// rule on purpose, to show that the checker notices.
    pub(super) fn may_write(&self, f: u32) -> bool {
        !self.ordering
            || self.cfg.cache.ignore_ordering
            || writable(&self.bufs[f as usize], &self.epochs, &self.graph)
    }

    /// A `write` or `graphwrite` call starts: record it with the checker and, for a graph
    /// write, create its node after its (live) dependencies.
    pub(super) fn begin_write(&mut self, p: usize, graph: Option<(u32, &[u32])>) {
        if !self.ordering {
            return;
        }
        let t = self.procs[p]
            .transfer
            .as_mut()
            .expect("begin() set the transfer");
        let (id, deps) = match graph {
            Some((id, deps)) => (Some(id), deps),
            None => (None, &[][..]),
        };
        t.logical = self.checker.record(t.file, self.epochs.open(), id, deps);
        if let Some(id) = id {
            let resolved = self.graph.resolve(deps);
            t.node = self.graph.create(id, resolved);
        }
    }

    /// An ordered write is about to dirty buffer `f`: combine it with the dirty data
    /// already there, or keep that data apart in a duplicate when a barrier or a graph
    /// dependency lies between them; then join the buffer to the write's epoch and node.
    pub(super) fn order_write(&mut self, f: u32, logical: u32, node: u32) {
        let b = self.bufs[f as usize];
        if b.dirty {
            let behind_barrier = b.epoch < self.epochs.open();
            let mine =
                node != NONE && b.node != NONE && self.graph.find(b.node) == self.graph.find(node);
            let ordered_between = node != NONE
                && b.node != NONE
                && !mine
                && self.graph.reachable(&self.graph.deps(node), b.node);
            if behind_barrier || ordered_between {
                self.duplicate(f);
            } else if node != NONE && b.node != NONE && !mine {
                // No path between the two nodes: one node, named by both ids.
                self.graph.merge(b.node, node);
            }
        }
        let b = &mut self.bufs[f as usize];
        if !b.dirty {
            b.epoch = self.epochs.open();
            self.epochs.join(b.epoch, f);
            b.node = NONE;
        }
        if node != NONE && b.node == NONE {
            b.node = node;
            self.graph.join(node, f);
        }
        if self.carried.len() <= f as usize {
            self.carried.resize(f as usize + 1, Vec::new());
        }
        if logical != NONE {
            self.carried[f as usize].push(logical);
        }
    }

    /// Copy buffer `f`'s dirty data into a duplicate that keeps its epoch, node and
    /// logical writes, and start writing it as soon as ordering allows; `f` is then
    /// clean, ready for the new version (Burnett §4.2.2: copy rather than flush
    /// synchronously, and write the old copy at once).
    fn duplicate(&mut self, f: u32) {
        let d = match self.dup_free.pop() {
            Some(d) => d,
            None => {
                let at_least = self.cfg.cache.buffers as usize;
                if self.bufs.len() < at_least {
                    self.bufs.resize(at_least, Buffer::EMPTY);
                }
                self.bufs.push(Buffer::EMPTY);
                self.bufs.len() as u32 - 1
            }
        };
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
        if self.carried.len() <= d as usize {
            self.carried.resize(d as usize + 1, Vec::new());
        }
        self.carried[d as usize] = std::mem::take(&mut self.carried[f as usize]);
        self.epochs.adopt(old.epoch, d);
        if old.node != NONE {
            self.graph.adopt(old.node, d);
        }
        self.file_frames[key_file(old.key) as usize].push(d);
        let b = &mut self.bufs[f as usize];
        b.dirty = false;
        b.filled = 0;
        b.node = NONE;
        // Write the old version as soon as it may go: its epoch and everything before it.
        self.epochs.request_flush(old.epoch);
        if self.may_write(d) {
            self.start_write(d);
        } else {
            self.deferred.push(d);
        }
        self.pump();
    }

    /// A write of buffer `f` is being issued: it carries the logical writes applied since
    /// the buffer was last clean.
    pub(super) fn on_write_start(&mut self, f: u32) {
        self.write_seq += 1;
        self.bufs[f as usize].write_seq = self.write_seq;
        if self.in_flight.len() <= f as usize {
            self.in_flight.resize(f as usize + 1, Vec::new());
        }
        if let Some(c) = self.carried.get_mut(f as usize) {
            std::mem::swap(&mut self.in_flight[f as usize], c);
            c.clear();
        }
    }

    /// A write of buffer `f` reached the disk: check it, retire its epoch and node
    /// membership, and let whatever waited on them go.
    pub(super) fn on_write_done(&mut self, f: u32) {
        let b = self.bufs[f as usize];
        let carried = std::mem::take(&mut self.in_flight[f as usize]);
        self.checker.reached_disk(&carried, b.key, self.now.as_ns());
        self.in_flight[f as usize] = carried;
        self.in_flight[f as usize].clear();
        let mut moved = self.epochs.leave(b.epoch);
        if b.node != NONE {
            moved |= self.graph.leave(b.node);
            self.bufs[f as usize].node = NONE;
        }
        if moved {
            self.pump();
        }
        if self.final_flush && self.buffers_busy == 0 {
            self.flush_everything();
        }
    }

    /// Dirty data of buffer `f` is being dropped (its file was deleted or truncated).
    pub(super) fn forget_dirty(&mut self, f: u32) {
        let b = self.bufs[f as usize];
        if let Some(c) = self.carried.get_mut(f as usize) {
            let logical = std::mem::take(c);
            self.checker.mark_durable(&logical);
        }
        let mut moved = self.epochs.leave(b.epoch);
        if b.node != NONE {
            moved |= self.graph.leave(b.node);
            self.bufs[f as usize].node = NONE;
        }
        if moved {
            self.pump();
        }
    }

    /// Start whatever the ordering now allows: the safe epoch when a flush asked for it,
    /// and duplicates whose dependencies are on disk.
    pub(super) fn pump(&mut self) {
        if let Some(frames) = self.epochs.flushable() {
            let safe = self.epochs.safe();
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
                    self.start_write(f);
                }
            }
        }
        let mut i = 0;
        while i < self.deferred.len() {
            let d = self.deferred[i];
            let b = self.bufs[d as usize];
            if !(b.dup && b.dirty && b.io == Io::Idle) {
                // Written meanwhile (by a sync or the flusher).
                self.deferred.swap_remove(i);
            } else if self.may_write(d) {
                self.deferred.swap_remove(i);
                self.start_write(d);
            } else {
                i += 1;
            }
        }
    }

    /// Nothing evictable and nothing in flight: write what ordering allows so that a
    /// buffer frees up (there is always such a buffer: the safe epoch, or a graph leaf).
    pub(super) fn force_progress(&mut self) {
        self.epochs.request_flush(self.epochs.safe());
        self.pump();
        if self.buffers_busy > 0 {
            return;
        }
        for f in 0..self.bufs.len() as u32 {
            let b = self.bufs[f as usize];
            if b.dirty && b.io == Io::Idle && self.may_write(f) {
                self.start_write(f);
                self.stats.cleaner_writes += 1;
                return;
            }
        }
    }

    /// The end of a run with `final_sync`: write everything, in as many passes as the
    /// ordering needs (each pass writes what is allowed, the next starts when it is done).
    pub(super) fn flush_everything(&mut self) {
        self.final_flush = true;
        self.epochs.request_flush(self.epochs.open());
        self.pump();
        for f in 0..self.bufs.len() as u32 {
            let b = self.bufs[f as usize];
            if b.dirty && b.io == Io::Idle && self.may_write(f) {
                self.start_write(f);
            }
        }
    }

    /// Buffers that may hold blocks of `file` (or every buffer).
    fn sync_scope(&mut self, file: Option<FileId>) -> Vec<u32> {
        match file {
            None => (0..self.bufs.len() as u32).collect(),
            Some(file) => {
                let bufs = &self.bufs;
                let list = &mut self.file_frames[file as usize];
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

    /// `fsync(file)` / `sync()`: write the dirty blocks, first what they must follow;
    /// true once none is dirty or being written (the checker then confirms that every
    /// earlier write of the file is on disk).
    pub(super) fn sync(&mut self, pid: u32, file: Option<FileId>) -> bool {
        if self.policy.is_none() {
            return true;
        }
        let p = pid as usize;
        let mark = *self.procs[p]
            .sync_mark
            .get_or_insert(self.checker.recorded());
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
                    self.start_write(f);
                } else {
                    self.write_what_it_follows(f);
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
            self.procs[p].sync_mark = None;
            if self.ordering {
                match file {
                    Some(file) => self.checker.fsync_returned(file, mark, self.now.as_ns()),
                    None => {
                        for file in 0..self.files.len() as u32 {
                            self.checker.fsync_returned(file, mark, self.now.as_ns());
                        }
                    }
                }
            }
            return true;
        }
        match latest {
            // Wait for the write started last: with FIFO disks, everything before it is
            // done by then, so one rescan usually finishes.
            Some((_, f)) => self.wait_on_buffer(pid, f),
            None => self.wait_for_any_buffer(pid),
        }
        false
    }

    /// `fsync` of a buffer that must follow other writes: write those first (barriers:
    /// every epoch up to its own; graphs: the leaves below its node).
    fn write_what_it_follows(&mut self, f: u32) {
        let b = self.bufs[f as usize];
        self.epochs.request_flush(b.epoch);
        if b.node != NONE {
            let mut stack = self.graph.deps(b.node);
            let mut seen = Vec::new();
            while let Some(n) = stack.pop() {
                if seen.contains(&n) {
                    continue;
                }
                seen.push(n);
                let frames: Vec<u32> = self.graph.frames(n).to_vec();
                for g in frames {
                    let gb = self.bufs[g as usize];
                    if gb.dirty
                        && gb.io == Io::Idle
                        && gb.node != NONE
                        && self.graph.find(gb.node) == n
                        && self.may_write(g)
                    {
                        self.start_write(g);
                    }
                }
                stack.extend(self.graph.deps(n));
            }
        }
        self.pump();
    }
}
