//! A memory budget shared by several consumers — buffer pools, and anything else that can
//! say how many pages it holds, how long its next victim has been idle, and give pages
//! back on request — balanced by the same arbiters the discrete-event simulator runs
//! (`bufcache-arbiter`: Sprite's age comparison, the penalty, Linux's refault cost, ours).
//!
//! The budget holds `total_pages`. A consumer that needs pages [`MemoryBudget::request`]s
//! them (a pool's demand is its misses since it last asked: [`MemoryBudget::balance`] asks
//! for every consumer at once). Free pages are granted if the arbiter allows
//! ([`arbiter::Arbiter::may_grow`]); otherwise the arbiter picks who gives one up, given
//! every consumer's [`ConsumerView`]: a pool that gives shrinks through its policy
//! ([`crate::BufferPool::resize`]), writing its dirty pages first. When the arbiter picks
//! the requester itself, the requester recycles its own pages and the request ends.
//!
//! Pages move in *steps* (1/64 of the budget, at least one page) so that a pool is not
//! resized once per page; every step is one negotiation in [`Negotiations`] (Nelson's
//! Table 2). Ages are in nanoseconds (the pools' coarse clock, [`crate::TICK_NS`]).
//!
//! The refault-based arbiters learn from page keys: pages a consumer gave back are told to
//! the arbiter as evictions, and those that came back since ([`Consumer::refaulted`]) as
//! misses, at the next negotiation.

mod pool_consumer;
mod scenario;

pub use arbiter::{ArbiterError, ArbiterSpec, ConsumerId, ConsumerView, Kind, Negotiations};
pub use pool_consumer::PoolConsumer;
pub use scenario::{IndexScan, IndexScanOutcome};

use crate::PoolError;
use arbiter::Arbiter;
use parking_lot::Mutex;
use std::sync::Arc;

/// A memory consumer under a [`MemoryBudget`].
pub trait Consumer: Send + Sync {
    /// What it caches (the penalty and the refault split treat the kinds differently).
    fn kind(&self) -> Kind;
    /// Pages it holds from the budget now.
    fn held_pages(&self) -> u64;
    /// Pages it cannot give back now (pinned): the budget never asks below this.
    fn pinned_pages(&self) -> u64;
    /// How long the page it would give up next has been idle, in nanoseconds; `None`
    /// when it cannot give one.
    fn oldest_idle_ns(&self) -> Option<u64>;
    /// Give back `pages` pages; returns the keys of the pages that went (any stable
    /// numbering of its own, for the arbiter's shadow entries).
    fn give_back(&self, pages: u64) -> Result<Vec<u64>, BudgetError>;
    /// Hold `pages` more pages.
    fn take(&self, pages: u64) -> Result<(), BudgetError>;
    /// Pages it would use now if it had them (a pool: its misses since it last said).
    fn demand(&self) -> u64 {
        0
    }
    /// Keys of pages it gave back earlier that it has had to load again since it was
    /// last asked (refaults).
    fn refaulted(&self) -> Vec<u64> {
        Vec::new()
    }
}

/// What can go wrong with a budget. Nothing is changed when one of these is returned
/// from [`MemoryBudget::new`]; a failed step of a request leaves every consumer holding
/// what it held before that step.
#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    /// A budget needs at least one consumer.
    #[error("a memory budget needs at least one consumer")]
    NoConsumers,
    /// The consumers already hold more than the budget.
    #[error("the consumers hold {held} pages, more than the budget of {total}")]
    Overcommitted {
        /// Pages held.
        held: u64,
        /// The budget.
        total: u64,
    },
    /// The consumers pin more pages than the budget could ever hold.
    #[error("the consumers pin {pinned} pages, more than the budget of {total}")]
    BelowPinned {
        /// Pages pinned.
        pinned: u64,
        /// The budget.
        total: u64,
    },
    /// No such consumer.
    #[error("no consumer {id} (the budget has {count})")]
    UnknownConsumer {
        /// The id asked for.
        id: ConsumerId,
        /// Consumers in the budget.
        count: usize,
    },
    /// The arbiter's configuration is invalid (a negative, NaN or absurd penalty, a
    /// fixed split larger than the budget).
    #[error(transparent)]
    Arbiter(#[from] ArbiterError),
    /// A pool refused to shrink or grow.
    #[error("resizing a pool: {0}")]
    Pool(#[from] PoolError),
}

/// Several consumers sharing `total_pages` pages, balanced by an arbiter.
pub struct MemoryBudget {
    total_pages: u64,
    step_pages: u64,
    consumers: Vec<Arc<dyn Consumer>>,
    state: Mutex<State>,
}

struct State {
    arbiter: Box<dyn Arbiter>,
    negotiations: Negotiations,
}

impl std::fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("total_pages", &self.total_pages)
            .field("step_pages", &self.step_pages)
            .field("consumers", &self.consumers.len())
            .finish()
    }
}

/// Nanoseconds per second: the arbiters' penalty is in seconds, ages here in ns.
const NS_PER_S: u64 = 1_000_000_000;

impl MemoryBudget {
    /// A budget of `total_pages` over `consumers`, balanced by `arbiter`. Refuses a budget
    /// smaller than what the consumers pin or already hold, and an invalid arbiter.
    pub fn new(
        total_pages: u64,
        arbiter: &ArbiterSpec,
        consumers: Vec<Arc<dyn Consumer>>,
    ) -> Result<MemoryBudget, BudgetError> {
        if consumers.is_empty() {
            return Err(BudgetError::NoConsumers);
        }
        let pinned: u64 = consumers.iter().map(|c| c.pinned_pages()).sum();
        if pinned > total_pages {
            return Err(BudgetError::BelowPinned {
                pinned,
                total: total_pages,
            });
        }
        let held: u64 = consumers.iter().map(|c| c.held_pages()).sum();
        if held > total_pages {
            return Err(BudgetError::Overcommitted {
                held,
                total: total_pages,
            });
        }
        let kinds: Vec<Kind> = consumers.iter().map(|c| c.kind()).collect();
        let arbiter = arbiter.build(total_pages, &kinds, NS_PER_S)?;
        Ok(MemoryBudget {
            total_pages,
            step_pages: (total_pages / 64).max(1),
            consumers,
            state: Mutex::new(State {
                arbiter,
                negotiations: Negotiations::new(kinds.len()),
            }),
        })
    }

    /// Move pages in steps of `pages` (default: 1/64 of the budget, at least 1).
    pub fn with_step(mut self, pages: u64) -> MemoryBudget {
        self.step_pages = pages.max(1);
        self
    }

    /// The budget, in pages.
    pub fn total_pages(&self) -> u64 {
        self.total_pages
    }

    /// Pages no consumer holds.
    pub fn free_pages(&self) -> u64 {
        self.total_pages.saturating_sub(self.held_pages())
    }

    fn held_pages(&self) -> u64 {
        self.consumers.iter().map(|c| c.held_pages()).sum()
    }

    /// Every consumer as the arbiter sees it now.
    pub fn views(&self) -> Vec<ConsumerView> {
        self.consumers
            .iter()
            .map(|c| {
                let held = c.held_pages();
                // A consumer at its pinned floor cannot give.
                let can_give = held > c.pinned_pages();
                ConsumerView {
                    kind: c.kind(),
                    resident_pages: held,
                    oldest_idle: if can_give { c.oldest_idle_ns() } else { None },
                }
            })
            .collect()
    }

    /// The negotiations so far: who asked whom, and how often it was satisfied.
    pub fn negotiations(&self) -> Negotiations {
        self.state.lock().negotiations.clone()
    }

    /// `requester` needs up to `pages` more pages: free pages first (where the arbiter
    /// allows), then pages the arbiter takes from others, one step at a time, until the
    /// arbiter picks the requester itself (it recycles its own pages from then on) or no
    /// one can give. Returns the pages granted.
    pub fn request(&self, requester: ConsumerId, pages: u64) -> Result<u64, BudgetError> {
        let me = self
            .consumers
            .get(requester)
            .ok_or(BudgetError::UnknownConsumer {
                id: requester,
                count: self.consumers.len(),
            })?;
        let mut state = self.state.lock();
        self.note_refaults(&mut state);
        let mut granted = 0;
        while granted < pages {
            let step = self.step_pages.min(pages - granted);
            let views = self.views();
            let free = self.total_pages.saturating_sub(self.held_pages());
            if free > 0 && state.arbiter.may_grow(requester, &views) {
                let n = step.min(free);
                me.take(n)?;
                granted += n;
                continue;
            }
            let Some(victim) = state.arbiter.pick(requester, &views) else {
                break;
            };
            state.negotiations.record(requester, victim);
            if victim == requester {
                break;
            }
            let v = &self.consumers[victim];
            let spare = v.held_pages().saturating_sub(v.pinned_pages());
            let given = v.give_back(step.min(spare))?;
            let views = self.views();
            for &key in &given {
                state.arbiter.note_eviction(victim, key, false, &views);
            }
            let n = given.len() as u64;
            if n == 0 {
                break;
            }
            me.take(n)?;
            granted += n;
        }
        Ok(granted)
    }

    /// Ask for every consumer's demand ([`Consumer::demand`]), in consumer order: the
    /// call a pool's owner makes now and then (or a thread, every few milliseconds).
    /// Returns the pages granted to each.
    pub fn balance(&self) -> Result<Vec<u64>, BudgetError> {
        (0..self.consumers.len())
            .map(|c| {
                let want = self.consumers[c].demand();
                if want == 0 {
                    Ok(0)
                } else {
                    self.request(c, want)
                }
            })
            .collect()
    }

    fn note_refaults(&self, state: &mut State) {
        let views = self.views();
        for (c, consumer) in self.consumers.iter().enumerate() {
            for key in consumer.refaulted() {
                state.arbiter.note_miss(c, key, &views);
            }
        }
    }
}
