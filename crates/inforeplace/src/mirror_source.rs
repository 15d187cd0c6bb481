//! The unmodified Linux page cache as a source, through an **algorithmic mirror** (thesis
//! §2.5.1): the kernel exports no victim list, so the library keeps a simulated cache of
//! the policy and size Dust measured (or that the caller gives), feeds it the
//! application's own reads exactly as the kernel sees them, and uses the mirror's victim
//! list and eviction counter instead of the kernel's.
//!
//! What the mirror is told, so that it sees what the kernel sees:
//!
//! * every read of the file made through this source (the application's and the
//!   library's refreshes alike), but a read of the same cached page as the previous read
//!   is not an access: the kernel marks a page accessed once per run of reads of it on
//!   one descriptor (`filemap_read`); a page that is not cached is brought in whatever. Dust saw exactly this on Linux 6.18: a page read nine
//!   times in a burst is not promoted (`docs/dust.md`);
//! * an uncached read (`RWF_DONTCACHE`) of a page the mirror does not hold changes
//!   nothing; of a page it holds, it counts as an access;
//! * a dropped page (`POSIX_FADV_DONTNEED`) leaves the mirror too.
//!
//! The mirror is only as good as its assumptions: the application's reads must be most
//! of the file's traffic, the policy the kernel's, the size what the file may occupy.
//! [`PageCacheSource::agreement`] measures it against the ground truth page by page.
//!
//! The levers ([`Levers`]), used only when asked: `drop_target_evictions` drops the pages
//! the target evicts (`DONTNEED`), so the kernel has free pages and need not reclaim
//! wanted ones; `dontcache` reads the pages the target does not admit uncached, so they
//! displace nothing. `WILLNEED` is not used: it brings a page in without marking it
//! accessed, so it cannot raise a page, and the application's next read would fetch it
//! anyway.

use crate::kernel::{PageCacheFile, ReadHow};
use crate::source::{PageKey, Source};
use crate::{InfoReplace, InfoReplaceError, SourceError};
use policy::{Access, AnyPolicy, BuildContext, Cache, HitPath, Outcome, Policy, PolicySpec};
use serde::Serialize;

/// The cheaper levers the kernel offers besides re-reading (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Levers {
    /// `POSIX_FADV_DONTNEED` on every page the target evicts.
    pub drop_target_evictions: bool,
    /// `RWF_DONTCACHE` for reads of pages the target does not admit.
    pub dontcache: bool,
    /// Ask the ground truth (`cachestat`, one system call) before each refresh: a page
    /// the kernel no longer holds is not read (that read would go to the device and
    /// evict another page) but removed from the mirror, which was wrong about it.
    pub verify_refreshes: bool,
}

impl Levers {
    /// `none`, or the levers joined by `+` (`dontneed`, `dontcache`, `verify`).
    pub fn label(&self) -> &'static str {
        match (
            self.drop_target_evictions,
            self.dontcache,
            self.verify_refreshes,
        ) {
            (false, false, false) => "none",
            (true, false, false) => "dontneed",
            (false, true, false) => "dontcache",
            (true, true, false) => "dontneed+dontcache",
            (false, false, true) => "verify",
            (true, false, true) => "dontneed+verify",
            (false, true, true) => "dontcache+verify",
            (true, true, true) => "dontneed+dontcache+verify",
        }
    }
}

/// What the source did to the kernel, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelCalls {
    /// Reads (the application's and refreshes).
    pub reads: u64,
    /// Of those, uncached.
    pub uncached_reads: u64,
    /// Reads the mirror did not count as accesses (same page as the previous read).
    pub repeats: u64,
    /// Pages dropped with `DONTNEED`.
    pub dropped: u64,
    /// Refreshes not made because the kernel no longer held the page (the `verify`
    /// lever): the mirror's mispredictions, corrected.
    pub corrected: u64,
}

/// How the mirror compares with the ground truth over the whole file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Agreement {
    /// Pages of the file.
    pub pages: u64,
    /// Pages where mirror and kernel agree (both cached, or both not).
    pub agree: u64,
    /// Cached in the mirror only.
    pub mirror_only: u64,
    /// Cached in the kernel only.
    pub kernel_only: u64,
}

impl Agreement {
    /// Share of the file's pages on which the two agree.
    pub fn rate(&self) -> f64 {
        self.agree as f64 / self.pages.max(1) as f64
    }
}

/// The page cache of one file, steered through its mirror (module docs). Its pages are
/// file 0's: [`PageKey::file`] must be 0.
pub struct PageCacheSource<K: PageCacheFile> {
    kernel: K,
    mirror: Cache<AnyPolicy>,
    label: String,
    levers: Levers,
    time: u64,
    evictions: u64,
    last_read: Option<u64>,
    calls: KernelCalls,
    batch: u64,
}

impl<K: PageCacheFile> PageCacheSource<K> {
    /// Mirror `kernel` with `policy` (a registry spec, such as `linux`) at `pages` pages.
    pub fn new(
        kernel: K,
        policy: &str,
        pages: u64,
        levers: Levers,
    ) -> Result<Self, InfoReplaceError> {
        let spec = PolicySpec::parse(policy)?;
        let built = spec.build(&BuildContext::new(pages, 0))?;
        if built.needs_future() {
            return Err(InfoReplaceError::TargetNeedsFuture {
                target: spec.label(),
            });
        }
        Ok(PageCacheSource {
            kernel,
            mirror: Cache::new(built, pages),
            label: spec.label(),
            levers,
            time: 0,
            evictions: 0,
            last_read: None,
            calls: KernelCalls::default(),
            batch: 1,
        })
    }

    /// Tell the library that the kernel reclaims `pages` at a time (1 by default). Linux
    /// reclaims at least `SWAP_CLUSTER_MAX` (32) pages when a memory cgroup reaches its
    /// limit, so the first 32 victims of the mirror's list may all go at once: the
    /// library then keeps that many clear of wanted pages.
    pub fn with_reclaim_batch(mut self, pages: u64) -> Self {
        self.batch = pages.max(1);
        self
    }

    /// The application reads `page`: the kernel reads it, the mirror follows. Returns
    /// whether the mirror predicted a hit.
    pub fn read(&mut self, page: u64, how: ReadHow) -> Result<bool, SourceError> {
        let predicted = self.mirror.contains(page);
        self.kernel.read(page, how)?;
        self.calls.reads += 1;
        let uncached = how == ReadHow::Uncached && self.kernel.dontcache();
        if uncached {
            self.calls.uncached_reads += 1;
        }
        if self.last_read == Some(page) && predicted {
            // Only marking accessed is skipped: a page gone since (dropped, or read
            // uncached) is read in again like any miss.
            self.calls.repeats += 1;
        } else if !uncached || predicted {
            self.time += 1;
            if let Outcome::Miss { evictions, .. } =
                self.mirror.access(&Access::unit(page, self.time))
            {
                self.evictions += u64::from(evictions);
            }
        }
        self.last_read = Some(page);
        Ok(predicted)
    }

    /// Compare the mirror with the ground truth on every page of the file.
    pub fn agreement(&self) -> Result<Agreement, SourceError> {
        self.agreement_over(0..self.kernel.pages())
    }

    /// Compare the mirror with the ground truth on `pages` (those an application reads:
    /// pages never read agree trivially and would only pad the rate).
    pub fn agreement_over(&self, pages: std::ops::Range<u64>) -> Result<Agreement, SourceError> {
        let mut a = Agreement {
            pages: pages.end.saturating_sub(pages.start),
            ..Agreement::default()
        };
        for page in pages {
            match (self.mirror.contains(page), self.kernel.resident(page)?) {
                (true, false) => a.mirror_only += 1,
                (false, true) => a.kernel_only += 1,
                _ => a.agree += 1,
            }
        }
        Ok(a)
    }

    /// The simulated cache.
    pub fn mirror(&self) -> &Cache<AnyPolicy> {
        &self.mirror
    }

    /// The kernel side.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The kernel side, mutably (to start cold, for instance).
    pub fn kernel_mut(&mut self) -> &mut K {
        &mut self.kernel
    }

    /// What was asked of the kernel so far.
    pub fn calls(&self) -> KernelCalls {
        self.calls
    }

    /// The levers in use.
    pub fn levers(&self) -> Levers {
        self.levers
    }

    fn page_of(&self, page: PageKey) -> Result<u64, SourceError> {
        if page.file == 0 {
            Ok(page.page)
        } else {
            Err(SourceError::UnknownFile {
                file: page.file,
                source_name: self.describe(),
            })
        }
    }
}

impl<K: PageCacheFile> Source for PageCacheSource<K> {
    fn describe(&self) -> String {
        format!(
            "{} through a {} mirror of {} pages",
            self.kernel.describe(),
            self.label,
            self.mirror.capacity()
        )
    }

    fn capacity_pages(&self) -> u64 {
        self.mirror.capacity()
    }

    fn raises_priority_on_access(&self) -> bool {
        self.mirror.policy().hit_path() != HitPath::Ignore
    }

    fn victims(&mut self, n: usize, out: &mut Vec<PageKey>) -> Result<(), SourceError> {
        out.extend(
            self.mirror
                .victims(n)
                .into_iter()
                .map(|page| PageKey { file: 0, page }),
        );
        Ok(())
    }

    fn evictions(&self) -> u64 {
        self.evictions
    }

    fn is_full(&self) -> bool {
        self.mirror.used() >= self.mirror.capacity()
    }

    fn eviction_batch(&self) -> u64 {
        self.batch
    }

    fn refresh(&mut self, page: PageKey) -> Result<(), SourceError> {
        let page = self.page_of(page)?;
        if self.levers.verify_refreshes && !self.kernel.resident(page)? {
            // The kernel took it already: reading it back would cost a device read and
            // a page of someone else's. The mirror follows the kernel instead.
            self.mirror.remove(page);
            self.calls.corrected += 1;
            return Ok(());
        }
        self.read(page, ReadHow::Cached).map(|_| ())
    }

    /// The ground truth (for inaccuracy): the kernel's answer, not the mirror's.
    fn is_resident(&self, page: PageKey) -> Result<bool, SourceError> {
        self.kernel.resident(self.page_of(page)?)
    }

    /// The mirror's belief: asked on every call, so no system call.
    fn predicts_resident(&self, page: PageKey) -> bool {
        page.file == 0 && self.mirror.contains(page.page)
    }

    fn target_evicted(&mut self, page: PageKey) -> Result<(), SourceError> {
        if !self.levers.drop_target_evictions {
            return Ok(());
        }
        let page = self.page_of(page)?;
        self.kernel.drop_page(page)?;
        self.calls.dropped += 1;
        self.mirror.remove(page);
        Ok(())
    }
}

/// The thesis's read wrapper over the page cache: steer, then read.
impl<K: PageCacheFile> InfoReplace<PageCacheSource<K>> {
    /// Read `page` of the file the way the target wants it: steered first, and uncached
    /// when the `dontcache` lever is on and the target does not admit the page. Returns
    /// whether the mirror predicted a hit.
    pub fn read_page(&mut self, page: u64) -> Result<bool, InfoReplaceError> {
        let key = PageKey { file: 0, page };
        self.before_access(key)?;
        let admitted = key.key().is_some_and(|k| self.target().contains(k));
        let how = if self.source().levers.dontcache && !admitted {
            ReadHow::Uncached
        } else {
            ReadHow::Cached
        };
        Ok(self.source_mut().read(page, how)?)
    }
}
