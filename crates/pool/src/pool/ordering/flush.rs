//! One level: write every version whose node is ready, sync each file written, then mark
//! those versions durable. The caller holds the flush lock (one level at a time), so the
//! versions of one level are all on storage, synced, before any of the next is written.
//!
//! Frames are latched shared only while their bytes are written (`try_share`: a frame an
//! application holds is left for the next level), and stay dirty and tagged "in flight"
//! until the sync: a writer that changes one meanwhile makes a new version, and a reader
//! after an eviction could never see storage older than the pool (the frame is not
//! evictable before it is clean).

use std::collections::BTreeSet;

use super::graph::{NodeId, Tag};
use super::Inner;
use crate::error::PoolError;
use std::sync::atomic::Ordering;

/// Which versions a level writes: those of ready nodes, and of these only
#[derive(Clone, Copy)]
pub(in crate::pool) struct Scope<'a> {
    /// the nodes these waiters' writes depend on (or are), when given;
    pub wanted: Option<&'a [NodeId]>,
    /// frames dirty for at least this long (the flusher's delayed-write age), when given;
    pub min_age_ns: Option<u64>,
    /// at most this many frames (the rest of their nodes waits for the next level).
    pub max_frames: usize,
}

impl Scope<'_> {
    /// Every ready version.
    pub const ALL: Scope<'static> = Scope {
        wanted: None,
        min_age_ns: None,
        max_frames: usize::MAX,
    };
}

/// What one version of a level was, for the bookkeeping after the sync.
enum Written {
    Frame {
        id: u32,
        tag: Tag,
        owner: u64,
    },
    Dup {
        slot: usize,
        owner: u64,
        node: NodeId,
    },
}

impl Written {
    fn owner(&self) -> u64 {
        match *self {
            Written::Frame { owner, .. } | Written::Dup { owner, .. } => owner,
        }
    }
}

impl Inner {
    /// Write one level of `scope`. Returns how many versions it wrote and synced; the
    /// first error after trying them all (each failed version stays pending with its
    /// node's error, and the next level retries it).
    pub(in crate::pool) fn flush_level(&self, scope: Scope<'_>) -> Result<usize, PoolError> {
        let (mut frames, dups) = {
            let mut l = self.order.locked.lock();
            l.graph.sweep();
            l.graph.level(scope.wanted)
        };
        if let Some(age_ns) = scope.min_age_ns {
            let now = self.now_ns();
            frames.retain(|&(id, _)| {
                let since = self
                    .frames
                    .header(id)
                    .dirty_since_ns
                    .load(Ordering::Relaxed);
                now.saturating_sub(since) >= age_ns
            });
        }
        frames.truncate(scope.max_frames);
        if frames.is_empty() && dups.is_empty() {
            return Ok(0);
        }
        let mut written = Vec::with_capacity(frames.len() + dups.len());
        let mut first_err = None;
        for slot in dups {
            if let Some(w) = self.write_dup(slot, &mut first_err) {
                written.push(w);
            }
        }
        for (id, tag) in frames {
            if let Some(w) = self.write_tagged_frame(id, tag, &mut first_err) {
                written.push(w);
            }
        }
        // One sync per file, after every write of the level.
        let owners: BTreeSet<u64> = written.iter().map(Written::owner).collect();
        let mut failed_owners = BTreeSet::new();
        for owner in owners {
            let synced = self
                .file_of(self.handle_of(owner))
                .and_then(|(file, path)| {
                    file.sync().map_err(|source| PoolError::Io {
                        path,
                        op: "sync",
                        source,
                    })
                });
            self.order.syncs.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = synced {
                failed_owners.insert(owner);
                first_err.get_or_insert(e);
            }
        }
        let why = first_err.as_ref().map(ToString::to_string);
        let mut durable = 0;
        for w in &written {
            if failed_owners.contains(&w.owner()) {
                let why = why.as_deref().unwrap_or("sync failed");
                let mut l = self.order.locked.lock();
                match *w {
                    Written::Frame { id, tag, .. } => {
                        let Tag::Pending { node, .. } = tag else {
                            continue;
                        };
                        l.graph.failed(node, Some((id, tag)), None, why);
                    }
                    Written::Dup { slot, node, .. } => l.graph.failed(node, None, Some(slot), why),
                }
                continue;
            }
            durable += 1;
            match *w {
                Written::Frame { id, tag, .. } => self.frame_synced(id, tag),
                Written::Dup { slot, .. } => {
                    let mut l = self.order.locked.lock();
                    l.graph.dup_durable(slot);
                    if let Some(b) = l.dup_bytes.get_mut(slot) {
                        *b = None;
                    }
                    self.order
                        .dups_held
                        .store(l.graph.dup_count(), Ordering::Release);
                }
            }
        }
        self.order.levels.fetch_add(1, Ordering::Relaxed);
        self.order
            .pages_written
            .fetch_add(written.len() as u64, Ordering::Relaxed);
        {
            let mut l = self.order.locked.lock();
            l.graph.sweep();
        }
        self.order.progress.notify_all();
        match first_err {
            Some(e) if durable == 0 => Err(e),
            _ => Ok(durable.max(usize::from(!written.is_empty()))),
        }
    }

    /// Write duplicate `slot` (its bytes are taken out of the lock for the write and put
    /// back after).
    fn write_dup(&self, slot: usize, first_err: &mut Option<PoolError>) -> Option<Written> {
        let (info, bytes) = {
            let mut l = self.order.locked.lock();
            let info = l.graph.dup(slot)?;
            (info, l.dup_bytes.get_mut(slot)?.take()?)
        };
        let fh = self.handle_of(info.owner);
        let result = self.file_of(fh).and_then(|(file, path)| {
            let len = self.slot(fh)?.len.load(Ordering::Acquire);
            self.write_page(&*file, &path, info.page, bytes.bytes(), len)
        });
        let mut l = self.order.locked.lock();
        l.dup_bytes[slot] = Some(bytes);
        match result {
            Ok(()) => {
                l.graph.dup_written(slot);
                Some(Written::Dup {
                    slot,
                    owner: info.owner,
                    node: info.node,
                })
            }
            Err(PoolError::Closed(_)) => {
                // Its file was closed (close makes ordered writes durable first, so this
                // copy was superseded): nothing of it is left to write.
                l.graph.dup_written(slot);
                l.graph.dup_durable(slot);
                l.dup_bytes[slot] = None;
                self.order
                    .dups_held
                    .store(l.graph.dup_count(), Ordering::Release);
                None
            }
            Err(e) => {
                l.graph.failed(info.node, None, Some(slot), &e.to_string());
                first_err.get_or_insert(e);
                None
            }
        }
    }

    /// Write tagged frame `id` if it still carries version `tag` and no one holds it.
    fn write_tagged_frame(
        &self,
        id: u32,
        tag: Tag,
        first_err: &mut Option<PoolError>,
    ) -> Option<Written> {
        let g = self.frames.try_share(id)?;
        let h = g.header();
        if self.order.locked.lock().graph.tag_of(id) != Some(tag) {
            return None;
        }
        // One write of a page at a time (invariant 7).
        if h.writing
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        let owner = h.owner.load(Ordering::Relaxed);
        let result = self.write_out(h, g.bytes());
        h.writing.store(false, Ordering::Release);
        let mut l = self.order.locked.lock();
        match result {
            Ok(()) => {
                l.graph.frame_written(id, tag);
                Some(Written::Frame { id, tag, owner })
            }
            Err(e) => {
                if let Tag::Pending { node, .. } = tag {
                    l.graph.failed(node, None, None, &e.to_string());
                }
                h.write_failed.store(true, Ordering::Relaxed);
                first_err.get_or_insert(e);
                None
            }
        }
    }

    /// The level's sync covered frame `id`'s version `tag`: count it durable and, if the
    /// frame still carries exactly that version, untag it and mark it clean (under a
    /// latch; a frame someone holds stays dirty and is written again the usual way).
    fn frame_synced(&self, id: u32, tag: Tag) {
        let g = self.frames.try_share(id);
        let mut l = self.order.locked.lock();
        if l.graph.frame_durable(id, tag) {
            self.set_tagged(id, false);
            if let Some(g) = &g {
                self.clear_dirty(id, g.header());
                g.header().write_failed.store(false, Ordering::Relaxed);
            }
        }
    }
}
