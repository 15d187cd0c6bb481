//! A simulated cache of any policy as a source: the same policy code the pool runs,
//! driven by the library's own accesses, with an exact victim list and eviction counter.

use crate::source::{PageKey, Source};
use crate::{InfoReplaceError, SourceError};
use policy::{Access, AnyPolicy, BuildContext, Cache, HitPath, Outcome, Policy, PolicySpec};

/// A simulated cache as a source.
#[derive(Clone, Debug)]
pub struct SimSource {
    cache: Cache<AnyPolicy>,
    label: String,
    evictions: u64,
    time: u64,
    hits: u64,
    misses: u64,
}

impl SimSource {
    /// A cache of `capacity_pages` pages run by `policy` (`name[:param=value...]`).
    pub fn new(policy: &str, capacity_pages: u64, seed: u64) -> Result<Self, InfoReplaceError> {
        let spec = PolicySpec::parse(policy)?;
        let built = spec.build(&BuildContext::new(capacity_pages, seed))?;
        if built.needs_future() {
            return Err(InfoReplaceError::TargetNeedsFuture {
                target: spec.label(),
            });
        }
        Ok(SimSource {
            cache: Cache::new(built, capacity_pages),
            label: spec.label(),
            evictions: 0,
            time: 0,
            hits: 0,
            misses: 0,
        })
    }

    /// The application accesses `page`; returns whether it hit. Counted in
    /// [`SimSource::hits`] and [`SimSource::misses`], unlike refreshes.
    pub fn access(&mut self, page: PageKey) -> Result<bool, InfoReplaceError> {
        let hit = self.touch(page)?;
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        Ok(hit)
    }

    /// The application's hits so far.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// The application's misses so far.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// The simulated cache.
    pub fn cache(&self) -> &Cache<AnyPolicy> {
        &self.cache
    }

    fn touch(&mut self, page: PageKey) -> Result<bool, InfoReplaceError> {
        let key = page
            .key()
            .ok_or(InfoReplaceError::PageOutOfRange { page: page.page })?;
        self.time += 1;
        let outcome = self.cache.access(&Access::unit(key, self.time));
        if let Outcome::Miss { evictions, .. } = outcome {
            self.evictions += u64::from(evictions);
        }
        Ok(outcome.is_hit())
    }
}

impl Source for SimSource {
    fn describe(&self) -> String {
        format!(
            "simulated {} cache of {} pages",
            self.label,
            self.cache.capacity()
        )
    }

    fn capacity_pages(&self) -> u64 {
        self.cache.capacity()
    }

    fn raises_priority_on_access(&self) -> bool {
        self.cache.policy().hit_path() != HitPath::Ignore
    }

    fn victims(&mut self, n: usize, out: &mut Vec<PageKey>) -> Result<(), SourceError> {
        out.extend(self.cache.victims(n).into_iter().map(PageKey::from_key));
        Ok(())
    }

    fn is_full(&self) -> bool {
        self.cache.used() >= self.cache.capacity()
    }

    fn evictions(&self) -> u64 {
        self.evictions
    }

    fn refresh(&mut self, page: PageKey) -> Result<(), SourceError> {
        // Listed pages are resident and keyed, so this cannot fail.
        let _ = self.touch(page);
        Ok(())
    }

    fn is_resident(&self, page: PageKey) -> Result<bool, SourceError> {
        Ok(page.key().is_some_and(|k| self.cache.contains(k)))
    }
}
