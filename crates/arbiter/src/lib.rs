//! Memory arbiters: when one memory consumer needs a page and physical memory is full,
//! which consumer gives one up?
//!
//! Nelson (1990) studied this for two consumers, Sprite's file cache and its virtual
//! memory, each with its own replacement order; the same question comes back whenever
//! several caches share one memory budget (several buffer pools, a pool beside a
//! process's heap). The arbiter sees each consumer only through a [`ConsumerView`]: what
//! kind it is, how many pages it holds, and how long the page it would give up next has
//! been idle. It is told about evictions and misses by page key, which is all the
//! refault-based arbiters need to keep their shadow entries. No clock, no simulator type
//! and no pool type appears here, so the discrete-event simulator and the real pool call
//! the same code.
//!
//! The arbiters ([`ArbiterSpec`] names them):
//!
//! * [`fixed::FixedSplit`] — a fixed number of pages for file data, the rest for memory
//!   (Nelson's fixed-size file cache, Figures 1-2);
//! * [`age::OldestPage`] — Sprite's negotiation: the consumer whose next victim is idle
//!   longest gives it up; with a *penalty* added to the reference time of memory pages
//!   (Section 6), memory pages look that much younger;
//! * [`refault::RefaultCost`] — Linux's answer: shadow entries of evicted pages give a
//!   refault distance, refaults of the working set charge a cost to their consumer, and
//!   reclaim pressure is split by those costs, each consumer taking at least about a third
//!   (`mm/workingset.c`, `lru_note_cost`, `get_scan_count`);
//! * [`balance::GhostBalance`] — ours, with no tuned constant: ARC's adaptation applied to
//!   consumers instead of lists (a refault of a page a consumer recently gave up moves
//!   memory to it, in proportion to how often the others refault);
//! * [`regret::Regret`] — ours too, with no tuned constant: the consumer whose recent
//!   evictions came back least often (counted in the transfers they caused) gives the
//!   page.
//!
//! Every negotiation can be counted with [`Negotiations`], as Nelson's Table 2 does.

pub mod age;
pub mod balance;
pub mod fixed;
mod negotiation;
pub mod refault;
pub mod regret;
mod shadow;
mod spec;

pub use negotiation::Negotiations;
pub use spec::{ArbiterError, ArbiterSpec};

/// Index of a consumer in the slice of views the caller passes (stable for a run).
pub type ConsumerId = usize;

/// What a consumer caches. The penalty and the Linux-style split treat the two kinds
/// differently; nothing else looks at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// File data read and written through system calls (a file cache, a buffer pool).
    File,
    /// Process memory: virtual-memory images, heaps (Linux's anonymous pages).
    Memory,
}

/// One consumer as the arbiter sees it at the moment of a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsumerView {
    /// What it caches.
    pub kind: Kind,
    /// Pages it holds now.
    pub resident_pages: u64,
    /// How long (in the caller's ticks) the page it would give up next has gone without
    /// a reference; `None` when it cannot give a page (empty, at its minimum size, or
    /// everything it holds is pinned).
    pub oldest_idle: Option<u64>,
}

impl ConsumerView {
    /// Whether this consumer can give up a page now.
    pub fn can_give(&self) -> bool {
        self.oldest_idle.is_some()
    }
}

/// Decides which consumer gives up a page. Implementations keep whatever history they
/// need; the caller tells them about every eviction and every miss.
pub trait Arbiter: Send + std::fmt::Debug {
    /// `requester` needs a page and no page is free: the consumer that must give one up
    /// (possibly the requester itself), or `None` when no consumer can give one.
    fn pick(&mut self, requester: ConsumerId, consumers: &[ConsumerView]) -> Option<ConsumerId>;

    /// A page is free: may `requester` take it? Only a fixed split says no (a consumer at
    /// its share recycles its own page even when memory is free).
    fn may_grow(&self, requester: ConsumerId, consumers: &[ConsumerView]) -> bool {
        let _ = (requester, consumers);
        true
    }

    /// `consumer` gave up the page `key` (its own key space); `dirty` when the page had to
    /// be written before its frame could be reused.
    fn note_eviction(
        &mut self,
        consumer: ConsumerId,
        key: u64,
        dirty: bool,
        consumers: &[ConsumerView],
    ) {
        let _ = (consumer, key, dirty, consumers);
    }

    /// `consumer` missed on `key` and will read it in.
    fn note_miss(&mut self, consumer: ConsumerId, key: u64, consumers: &[ConsumerView]) {
        let _ = (consumer, key, consumers);
    }
}

/// The eligible consumer maximising `score`, the requester winning ties (Sprite's rule:
/// a module recycles its own page unless another's is strictly better to give up), then
/// the lowest id. Shared by every arbiter so that tie-breaking is the same everywhere.
pub(crate) fn best_by<S: PartialOrd + Copy>(
    requester: ConsumerId,
    consumers: &[ConsumerView],
    mut score: impl FnMut(ConsumerId, &ConsumerView) -> S,
) -> Option<ConsumerId> {
    let mut best: Option<(ConsumerId, S)> = None;
    let order = std::iter::once(requester)
        .filter(|&r| r < consumers.len())
        .chain((0..consumers.len()).filter(|&c| c != requester));
    for c in order {
        let view = &consumers[c];
        if !view.can_give() {
            continue;
        }
        let s = score(c, view);
        let better = match best {
            None => true,
            Some((_, b)) => s > b,
        };
        if better {
            best = Some((c, s));
        }
    }
    best.map(|(c, _)| c)
}

#[cfg(test)]
pub(crate) mod test_views {
    use super::{ConsumerView, Kind};

    /// A file consumer and a memory consumer with the given residency and idle times.
    pub fn pair(file: (u64, Option<u64>), memory: (u64, Option<u64>)) -> [ConsumerView; 2] {
        [
            ConsumerView {
                kind: Kind::File,
                resident_pages: file.0,
                oldest_idle: file.1,
            },
            ConsumerView {
                kind: Kind::Memory,
                resident_pages: memory.0,
                oldest_idle: memory.1,
            },
        ]
    }
}
