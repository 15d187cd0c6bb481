//! The InfoReplace loop (thesis §3.3.2): on every read or write, simulate the target,
//! and when the eviction counter says the victim list may have moved, fetch it, re-read
//! the pages the target wants kept, and check again.
//!
//! # The loop, and where it departs from the thesis
//!
//! For each page the application is about to read or write:
//!
//! 1. the target policy is told of the access (it runs on the library's own simulated
//!    cache of the source's size);
//! 2. if an eviction is due, the library fetches the next `N` victims (default 100, as in
//!    the thesis), re-reads those the target holds, and fetches the list again; it repeats
//!    until the victims about to go are pages the target does not hold, or `max_rounds`
//!    rounds (1000, as in the thesis) have run;
//! 3. the caller then does the read or write itself.
//!
//! The thesis's list was padded with every other process's pages, so "re-read until no
//! listed page is wanted" ended quickly. A cache holding only the application's pages
//! has no padding: when source and target hold the same pages, every listed page is
//! wanted and the literal rule runs to the bound on every call. So:
//!
//! * **When to look.** When the access will evict (the source is full and does not hold
//!   the page), and when the thesis's eviction counter has moved `recheck_evictions`
//!   (default `N`) since the last look (evictions made by others: a flusher, threads).
//! * **What to clear.** The first `batch` victims (the most one access evicts: 1 for a
//!   simulated cache, the pool's eviction batch) must be pages the target does not hold.
//!   Wanted pages anywhere on the list are re-read once each, in list order, which brings
//!   the unwanted ones forward (the thesis's "access them accordingly"); when every
//!   wanted page listed has been re-read and the front is still wanted (a source that
//!   needs several reads to promote a page, such as Linux's inactive list), the front's
//!   wanted pages are read again, as the thesis rechecks, while that makes progress.
//! * **When to stop.** The front is clear, or re-reading again cleared nothing more (the
//!   source holds fewer unwanted pages than one batch), or the bound.

use crate::overhead::{Overhead, Part, Stopwatch};
use crate::source::{PageKey, Source};
use crate::InfoReplaceError;
use policy::{Access, AdmissionSpec, AnyPolicy, BuildContext, Cache, Policy, PolicySpec};

/// InfoReplace's settings; [`Config::default`] is the thesis's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// `N`: victims fetched per check (thesis: 100). Raised to twice the source's
    /// eviction batch when smaller: a list shorter than what one miss evicts cannot
    /// protect the pages that miss takes (the pool evicts 1/32 of its frames at once:
    /// 512 at 16,384 frames).
    pub victim_list_len: usize,
    /// Rounds of refresh-and-recheck per call at most (thesis: 1000).
    pub max_rounds: u32,
    /// Evictions after which the list is fetched again at the latest (thesis: about `N`).
    pub recheck_evictions: u64,
    /// Seed for targets that draw random numbers.
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            victim_list_len: 100,
            max_rounds: 1000,
            recheck_evictions: 100,
            seed: 0,
        }
    }
}

impl Config {
    /// Check the settings.
    pub fn validate(&self) -> Result<(), InfoReplaceError> {
        let bad = |setting, why| Err(InfoReplaceError::Config { setting, why });
        if self.victim_list_len == 0 {
            return bad("victim_list_len", "must be at least 1");
        }
        if self.max_rounds == 0 {
            return bad("max_rounds", "must be at least 1");
        }
        if self.recheck_evictions == 0 || self.recheck_evictions > self.victim_list_len as u64 {
            return bad("recheck_evictions", "must be 1..=victim_list_len");
        }
        Ok(())
    }
}

/// A target policy emulated over a source.
pub struct InfoReplace<S: Source> {
    source: S,
    target: Cache<AnyPolicy>,
    target_label: String,
    config: Config,
    overhead: Overhead,
    time: u64,
    /// Source evictions when the list was last looked at.
    last_check: u64,
    victims: Vec<PageKey>,
    refreshed: hashbrown::HashSet<u64>,
}

impl<S: Source> InfoReplace<S> {
    /// Emulate `target` (any online policy of the policy crate, with parameters) over
    /// `source`, with the thesis's settings.
    pub fn new(source: S, target: &str) -> Result<Self, InfoReplaceError> {
        Self::with_config(source, target, Config::default())
    }

    /// Emulate `target` over `source` with `config`.
    pub fn with_config(source: S, target: &str, config: Config) -> Result<Self, InfoReplaceError> {
        config.validate()?;
        let mut config = config;
        let batch = source.eviction_batch() as usize;
        if config.victim_list_len < 2 * batch {
            config.victim_list_len = 2 * batch;
        }
        let source_name = source.describe();
        if !source.has_victim_list() {
            return Err(InfoReplaceError::NoVictimList { source_name });
        }
        if !source.raises_priority_on_access() {
            return Err(InfoReplaceError::SourceIgnoresAccess { source_name });
        }
        let spec = PolicySpec::parse(target)?;
        let capacity = source.capacity_pages();
        let policy = spec.build(&BuildContext::new(capacity, config.seed))?;
        if policy.needs_future() {
            return Err(InfoReplaceError::TargetNeedsFuture {
                target: spec.label(),
            });
        }
        if policy.contests() {
            return Err(InfoReplaceError::TargetRefusesPages {
                target: spec.label(),
            });
        }
        Ok(InfoReplace {
            source,
            target: Cache::new(policy, capacity),
            target_label: spec.label(),
            config,
            overhead: Overhead::default(),
            time: 0,
            last_check: 0,
            victims: Vec::with_capacity(config.victim_list_len),
            refreshed: hashbrown::HashSet::new(),
        })
    }

    /// Put an admission filter (`secondhit`, `prob:p=0.1`, ... of the policy crate) in
    /// front of the target: pages it refuses are not kept by the target, and a source
    /// with a lever for them (the page cache's `RWF_DONTCACHE`) reads them uncached.
    pub fn admit_with(mut self, admission: &str) -> Result<Self, InfoReplaceError> {
        let spec = AdmissionSpec::parse(admission)?;
        let ctx = BuildContext::new(self.target.capacity(), self.config.seed);
        let filter = spec.build(&ctx)?;
        self.target = self.target.with_admission(filter);
        self.target_label = format!("{}+{}", self.target_label, spec.label());
        Ok(self)
    }

    /// The plain API: call before the application reads or writes `page`, then do the
    /// read or write. Simulates the target and steers the source.
    pub fn before_access(&mut self, page: PageKey) -> Result<(), InfoReplaceError> {
        let mut watch = Stopwatch::start();
        let key = page
            .key()
            .ok_or(InfoReplaceError::PageOutOfRange { page: page.page })?;
        self.time += 1;
        watch.lap(Part::Rest, &mut self.overhead);
        self.target.access(&Access::unit(key, self.time));
        watch.lap(Part::Simulate, &mut self.overhead);
        let result = self.pass_on_target_evictions(&mut watch).and_then(|()| {
            if self.check_due(page) {
                self.steer(&mut watch)
            } else {
                Ok(())
            }
        });
        watch.finish(&mut self.overhead);
        result
    }

    /// Tell the source which pages the target just evicted (a lever, where the source
    /// has one: [`Source::target_evicted`]); charged to refreshing, as steering.
    fn pass_on_target_evictions(&mut self, watch: &mut Stopwatch) -> Result<(), InfoReplaceError> {
        if self.target.evicted().is_empty() {
            return Ok(());
        }
        for &k in self.target.evicted() {
            self.source.target_evicted(PageKey::from_key(k))?;
        }
        watch.lap(Part::Refresh, &mut self.overhead);
        Ok(())
    }

    /// Whether to look at the victim list before this access (module docs).
    fn check_due(&self, page: PageKey) -> bool {
        let moved = self.source.evictions().saturating_sub(self.last_check);
        let will_evict = || self.source.is_full() && !self.source.predicts_resident(page);
        moved >= self.config.recheck_evictions || will_evict()
    }

    /// Step 2 of the loop: fetch, refresh, recheck (module docs).
    fn steer(&mut self, watch: &mut Stopwatch) -> Result<(), InfoReplaceError> {
        self.overhead.checked_calls += 1;
        self.refreshed.clear();
        let n = self.config.victim_list_len;
        let need = (self.source.eviction_batch() as usize).clamp(1, n);
        let mut last_again: Option<usize> = None;
        let mut settled = false;
        for _ in 0..self.config.max_rounds {
            self.victims.clear();
            self.source.victims(n, &mut self.victims)?;
            self.overhead.victim_fetches += 1;
            let target = &self.target;
            let wanted = |p: &PageKey| p.key().is_some_and(|k| target.contains(k));
            let clear = self.victims.iter().take_while(|p| !wanted(p)).count();
            if clear >= need.min(self.victims.len()) {
                watch.lap(Part::Check, &mut self.overhead);
                settled = true;
                break;
            }
            let refreshed = &self.refreshed;
            let mut again: Vec<PageKey> = self
                .victims
                .iter()
                .filter(|p| wanted(p) && p.key().is_some_and(|k| !refreshed.contains(&k)))
                .copied()
                .collect();
            if again.is_empty() {
                if last_again == Some(clear) {
                    // Reading the front again cleared nothing more.
                    watch.lap(Part::Check, &mut self.overhead);
                    settled = true;
                    break;
                }
                last_again = Some(clear);
                again = self.victims[..need.min(self.victims.len())]
                    .iter()
                    .copied()
                    .filter(|p| wanted(p))
                    .collect();
            }
            watch.lap(Part::Check, &mut self.overhead);
            for p in again {
                self.source.refresh(p)?;
                if let Some(k) = p.key() {
                    self.refreshed.insert(k);
                }
                self.overhead.refreshes += 1;
            }
            watch.lap(Part::Refresh, &mut self.overhead);
        }
        if !settled {
            self.overhead.bound_reached += 1;
        }
        self.last_check = self.source.evictions();
        Ok(())
    }

    /// The source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// Stop steering and hand the source back.
    pub fn into_source(self) -> S {
        self.source
    }

    /// The source, mutably (for the application's own reads and writes).
    pub fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// The target's simulated cache: what the target would hold now.
    pub fn target(&self) -> &Cache<AnyPolicy> {
        &self.target
    }

    /// The target as written (`pinrange:range=100`).
    pub fn target_label(&self) -> &str {
        &self.target_label
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Overhead so far.
    pub fn overhead(&self) -> &Overhead {
        &self.overhead
    }

    /// The pages the target would hold now, in the target's eviction order.
    pub fn target_pages(&self) -> Vec<PageKey> {
        self.target
            .victims(self.target.len())
            .into_iter()
            .map(PageKey::from_key)
            .collect()
    }

    /// Thesis Figure 3.1's inaccuracy: the share of the pages the target would hold that
    /// the source does not hold (0 when the target holds nothing).
    pub fn inaccuracy(&self) -> Result<f64, InfoReplaceError> {
        let pages = self.target_pages();
        let mut missing = 0usize;
        for &p in &pages {
            if !self.source.is_resident(p)? {
                missing += 1;
            }
        }
        Ok(if pages.is_empty() {
            0.0
        } else {
            missing as f64 / pages.len() as f64
        })
    }
}
