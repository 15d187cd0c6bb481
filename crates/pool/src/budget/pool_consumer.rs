//! A buffer pool as a budget consumer: it holds its capacity, gives pages back by
//! shrinking through its policy, takes them by growing, and asks for as many pages as it
//! missed since it last asked.

use super::{BudgetError, Consumer, Kind};
use crate::{BufferPool, FileHandle};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Pages given back that a pool remembers, to tell which come back (refaults): twice
/// the pages it gave in one step would do; this bounds memory for long runs.
const GIVEN_MAX: usize = 1 << 16;

/// A [`BufferPool`] under a [`super::MemoryBudget`].
pub struct PoolConsumer {
    pool: Arc<BufferPool>,
    kind: Kind,
    /// Misses counted when the pool last said what it wants.
    misses_seen: AtomicU64,
    /// Pages it gave back, by key, not yet seen again.
    given: Mutex<HashMap<u64, (FileHandle, u64)>>,
}

impl PoolConsumer {
    /// `pool`, declared as caching `kind` (a pool of file pages is [`Kind::File`]; one
    /// holding the application's working data, such as an index it cannot work without,
    /// may declare [`Kind::Memory`] so that a penalty protects it as Sprite protected
    /// process pages).
    pub fn new(pool: Arc<BufferPool>, kind: Kind) -> PoolConsumer {
        let misses = pool.stats().misses;
        PoolConsumer {
            pool,
            kind,
            misses_seen: AtomicU64::new(misses),
            given: Mutex::new(HashMap::new()),
        }
    }

    /// The pool.
    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    /// The key of a page for the arbiter's shadow entries: its file's identity (slot and
    /// generation) and the page number, mixed.
    fn key(fh: FileHandle, page: u64) -> u64 {
        use std::hash::BuildHasher;
        bufcache_core::FixedState::default().hash_one((fh, page))
    }
}

impl Consumer for PoolConsumer {
    fn kind(&self) -> Kind {
        self.kind
    }

    fn held_pages(&self) -> u64 {
        self.pool.capacity_frames() as u64
    }

    fn pinned_pages(&self) -> u64 {
        // The pool's own floor (pin limit, read-ahead, one frame to load into) counts as
        // pinned: the pool cannot shrink below it.
        (self.pool.pinned_pages() as u64 + 1).max(self.pool.min_capacity_frames() as u64)
    }

    fn oldest_idle_ns(&self) -> Option<u64> {
        self.pool.oldest_idle_ns()
    }

    fn give_back(&self, pages: u64) -> Result<Vec<u64>, BudgetError> {
        let capacity = self.pool.capacity_frames();
        let n = usize::try_from(pages).unwrap_or(usize::MAX).min(capacity);
        // The victims now are the pages the shrink will evict (approximately: misses of
        // other threads may evict some of them first).
        let victims = self.pool.victims(n);
        self.pool.resize(capacity - n)?;
        let mut given = self.given.lock();
        if given.len() + victims.len() > GIVEN_MAX {
            given.clear();
        }
        Ok(victims
            .into_iter()
            .map(|(fh, page)| {
                let key = Self::key(fh, page);
                given.insert(key, (fh, page));
                key
            })
            .collect())
    }

    fn take(&self, pages: u64) -> Result<(), BudgetError> {
        let n = usize::try_from(pages).unwrap_or(usize::MAX);
        self.pool
            .resize(self.pool.capacity_frames().saturating_add(n))?;
        Ok(())
    }

    fn demand(&self) -> u64 {
        let misses = self.pool.stats().misses;
        misses.saturating_sub(self.misses_seen.swap(misses, Ordering::Relaxed))
    }

    fn refaulted(&self) -> Vec<u64> {
        let mut given = self.given.lock();
        let back: Vec<u64> = given
            .iter()
            .filter(|(_, &(fh, page))| self.pool.is_resident(fh, page).unwrap_or(false))
            .map(|(&k, _)| k)
            .collect();
        for k in &back {
            given.remove(k);
        }
        back
    }
}
