//! The scenario the budget exists for, runnable by tests and by the `budget_index_scan`
//! example: two pools under one budget, one scanning a large file (every page read once),
//! one holding a hot index swept every few rounds. Nelson's question: when the scan needs
//! a page, does the index give one up?
//!
//! Ages come from the pools' coarse clock (about 17 ms a tick), so each round sleeps a
//! little more than a tick: a run takes `rounds` x 20 ms. Only lower bounds on time matter
//! (a longer sleep on a loaded machine makes every age longer alike).

use super::{ArbiterSpec, BudgetError, Consumer, Kind, MemoryBudget, PoolConsumer};
use crate::{BufferPool, FileHandle, MemStorage, PoolError};
use std::sync::Arc;
use std::time::Duration;

const PAGE: usize = 4096;

/// The scenario's shape.
#[derive(Clone, Copy, Debug)]
pub struct IndexScan {
    /// Pages in the budget (shared by both pools).
    pub budget_pages: u64,
    /// Each pool's capacity at the start (the rest of the budget is free).
    pub start_frames: usize,
    /// Pages of the index.
    pub index_pages: u64,
    /// Pages the scan reads per round.
    pub scan_per_round: u64,
    /// The index is read whole every this many rounds.
    pub sweep_every: u64,
    /// Rounds in a run.
    pub rounds: u64,
    /// Rounds before the index's misses are counted.
    pub warmup_rounds: u64,
}

impl Default for IndexScan {
    fn default() -> Self {
        IndexScan {
            budget_pages: 96,
            start_frames: 40,
            index_pages: 32,
            scan_per_round: 8,
            sweep_every: 10,
            rounds: 100,
            warmup_rounds: 30,
        }
    }
}

/// What one run showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexScanOutcome {
    /// Index misses after the warm-up: refaults of pages the budget took from it.
    pub index_misses: u64,
    /// Index pages resident at the end.
    pub index_resident: usize,
    /// Times the scan asked the index's pool for a page, and got one.
    pub scan_asked: u64,
    /// Times it got one.
    pub scan_got: u64,
}

fn pool_over(storage: &MemStorage, frames: usize) -> Result<Arc<BufferPool>, PoolError> {
    Ok(Arc::new(
        BufferPool::builder()
            .capacity_frames(frames)
            .policy("lru")
            .read_ahead(0)
            .pin_limit(1)
            .build_with_storage(storage.clone())?,
    ))
}

fn file(pool: &BufferPool, path: &str, pages: u64) -> Result<FileHandle, PoolError> {
    let f = pool.create(path)?;
    pool.write(f, 0, &vec![1u8; pages as usize * PAGE])?;
    pool.sync_all()?;
    pool.close(f)?;
    pool.open(path)
}

impl IndexScan {
    /// Run the scenario with `arbiter`, the index's pool declared as `index_kind`.
    pub fn run(
        &self,
        arbiter: &ArbiterSpec,
        index_kind: Kind,
    ) -> Result<IndexScanOutcome, BudgetError> {
        let storage = MemStorage::new();
        let scan = pool_over(&storage, self.start_frames)?;
        let index = pool_over(&storage, self.start_frames)?;
        let big = file(&scan, "/big", self.rounds * self.scan_per_round)?;
        let idx = file(&index, "/index", self.index_pages)?;
        let consumers: Vec<Arc<dyn Consumer>> = vec![
            Arc::new(PoolConsumer::new(Arc::clone(&scan), Kind::File)),
            Arc::new(PoolConsumer::new(Arc::clone(&index), index_kind)),
        ];
        let budget = MemoryBudget::new(self.budget_pages, arbiter, consumers)?.with_step(1);
        let mut b = [0u8; 1];
        let mut misses_at_warmup = 0;
        for round in 0..self.rounds {
            for p in 0..self.scan_per_round {
                let page = round * self.scan_per_round + p;
                scan.read(big, page * PAGE as u64, &mut b)?;
            }
            if round % self.sweep_every == 0 {
                for p in 0..self.index_pages {
                    index.read(idx, p * PAGE as u64, &mut b)?;
                }
            }
            budget.balance()?;
            debug_assert_eq!(
                (scan.capacity_frames() + index.capacity_frames()) as u64 + budget.free_pages(),
                self.budget_pages,
                "the budget's pages are all accounted for"
            );
            if round == self.warmup_rounds {
                misses_at_warmup = index.stats().misses;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let n = budget.negotiations();
        Ok(IndexScanOutcome {
            index_misses: index.stats().misses - misses_at_warmup,
            index_resident: index.resident(idx)?.iter().count(),
            scan_asked: n.asked(0, 1),
            scan_got: n.satisfied(0, 1),
        })
    }
}
