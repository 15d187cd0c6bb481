//! Algorithmic mirroring: a simulated copy of the OS cache, fed with the server's own
//! reads as they are scheduled (Burnett §2.5.1).
//!
//! The mirror counts in pages (the kernel's unit), keyed by inode and page number, and
//! uses the very policy code of the registry that replay, the DES and the pool use: what
//! Dust names is what the mirror runs. Its size is an estimate: the experiment sweeps it
//! from far too small to far too large. It can be read from a `bufcache dust --json`
//! line (`verdict`, `size_estimate_pages`), or follow a reading of the page cache's size
//! ([`Mirror::track`], `--mirror-track`).

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use policy::{Access, AnyPolicy, BuildContext, Cache, Policy, PolicySpec};

use crate::backend::{Job, PAGE_BYTES};
use crate::cgroup_poll::Reading;
use crate::flush_watch::FlushCount;
use crate::ServeError;

/// Bits of a key holding the page number: files up to 2^24 pages (64 GiB) are told apart
/// exactly; beyond that pages of one file share keys, which only blurs the prediction.
const PAGE_BITS: u32 = 24;

/// The simulated cache.
pub struct Mirror {
    cache: Cache<AnyPolicy>,
    label: String,
    clock: u64,
    /// When the mirror was made: the live mirror's wall clock counts from here
    /// ([`policy::Policy::set_wall_clock`], for models of the kernel's timers).
    epoch: Instant,
    /// With tracking: the page cache's size as last read (bytes; 0: not yet), and the
    /// reading last applied.
    size_source: Option<(Reading, u64)>,
    /// With observed flushes: the count of the kernel's flushes, and the count last
    /// applied.
    flush_source: Option<(FlushCount, u64)>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("policy", &self.label)
            .field("pages", &self.cache.capacity())
            .finish()
    }
}

impl Mirror {
    /// A mirror of `policy` (a spec such as `clock` or `lru`) holding `size_bytes`.
    pub fn new(policy: &str, size_bytes: u64) -> Result<Self, ServeError> {
        let pages = (size_bytes / PAGE_BYTES).max(1);
        let spec = PolicySpec::parse(policy)?;
        let built = spec.build(&BuildContext::new(pages, 0))?;
        if built.needs_future() {
            return Err(ServeError::config(
                "mirror policy",
                format!("{policy} needs future accesses; a mirror sees only the past"),
            ));
        }
        Ok(Mirror {
            cache: Cache::new(built, pages),
            label: spec.label(),
            clock: 0,
            epoch: Instant::now(),
            size_source: None,
            flush_source: None,
        })
    }

    /// Policy and size from a `bufcache dust --json` line.
    pub fn from_dust_report(path: &Path) -> Result<(String, u64), ServeError> {
        let text = std::fs::read_to_string(path).map_err(ServeError::io("reading", path))?;
        let parse = |why: String| ServeError::Parse {
            path: path.to_path_buf(),
            why,
        };
        let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| parse(e.to_string()))?;
        let verdict = value["verdict"]
            .as_str()
            .ok_or_else(|| parse("no \"verdict\" string".into()))?;
        if verdict == "unknown" {
            return Err(parse(
                "Dust could not name the policy (verdict \"unknown\"); give --mirror-policy".into(),
            ));
        }
        let pages = value["size_estimate_pages"]
            .as_u64()
            .filter(|&p| p > 0)
            .ok_or_else(|| parse("no positive \"size_estimate_pages\"".into()))?;
        Ok((verdict.to_string(), pages * PAGE_BYTES))
    }

    /// The mirror's size in pages.
    pub fn capacity_pages(&self) -> u64 {
        self.cache.capacity()
    }

    /// Whether the mirror's policy refreshes its statistics only when told of the
    /// kernel's flushes (`linux:stats_events=true`): it must then follow them
    /// ([`Mirror::follow_flushes`]), or it models statistics that never change.
    pub fn wants_flush_events(&self) -> bool {
        self.cache.wants_flush_events()
    }

    fn key(inode: u64, page: u64) -> u64 {
        (inode << PAGE_BITS) ^ (page & ((1 << PAGE_BITS) - 1))
    }

    /// Whether every page of the job is in the simulated cache (stops at the first that
    /// is not, so predicted misses cost little).
    pub fn predicts_hit(&self, job: &Job) -> bool {
        self.holds(job.inode, job.pages())
    }

    /// Whether every page of `pages` of file `inode` is in the simulated cache.
    pub fn holds(&self, inode: u64, mut pages: Range<u64>) -> bool {
        pages.all(|page| self.cache.contains(Self::key(inode, page)))
    }

    /// From now on take the size from `reading` (bytes of page cache, 0 while unknown)
    /// before each access: the given size stands until the first reading, then each
    /// new reading resizes the mirror (shrinking evicts the policy's own victims, as a
    /// smaller cache would have). Only the size is read, never which files are cached.
    pub fn track(&mut self, reading: Reading) {
        self.size_source = Some((reading, 0));
    }

    /// From now on flush the model's statistics ([`policy::Policy::flush_stats`]) before
    /// an access whenever `count` (the kernel's flushes, [`crate::flush_watch`]) has moved
    /// since the last: several flushes between two accesses amount to one, as they
    /// would have for the kernel's reclaim.
    pub fn follow_flushes(&mut self, count: FlushCount) {
        let seen = count.load(Ordering::Acquire);
        self.flush_source = Some((count, seen));
    }

    /// Apply the kernel's flushes seen since the last access, if any.
    fn follow_flushes_seen(&mut self) {
        let Some((count, applied)) = &mut self.flush_source else {
            return;
        };
        let seen = count.load(Ordering::Acquire);
        if seen != *applied {
            *applied = seen;
            self.cache.flush_stats();
        }
    }

    /// The modelled kernel flushed its statistics (a replay's logged flush).
    pub fn flush_stats(&mut self) {
        self.cache.flush_stats();
    }

    /// Apply a new size reading, if there is one.
    fn follow_size(&mut self) {
        let Some((reading, applied)) = &mut self.size_source else {
            return;
        };
        let bytes = reading.load(Ordering::Relaxed);
        if bytes == 0 || bytes == *applied {
            return;
        }
        *applied = bytes;
        self.cache.set_capacity((bytes / PAGE_BYTES).max(1));
    }

    /// The job is being served: its pages are read, in order, at the wall-clock time
    /// since the mirror was made.
    pub fn access(&mut self, job: &Job) {
        self.follow_size();
        self.set_wall_clock(self.epoch.elapsed().as_millis() as u64);
        self.follow_flushes_seen();
        self.read(job.inode, job.pages());
    }

    /// The wall clock reads `now_ms` milliseconds: the live mirror's since it was made,
    /// a replay's the request log's own times. Only policies that model a timer of the
    /// kernel use it (`linux:stats_ms=2000`); the page reads' logical times are apart.
    pub fn set_wall_clock(&mut self, now_ms: u64) {
        self.cache.set_wall_clock(now_ms);
    }

    /// Pages `pages` of file `inode` are read, in order.
    pub fn read(&mut self, inode: u64, pages: Range<u64>) {
        for page in pages {
            self.read_page(inode, page);
        }
    }

    /// One page of file `inode` is read.
    pub fn read_page(&mut self, inode: u64, page: u64) {
        self.clock += 1;
        self.cache
            .access(&Access::unit(Self::key(inode, page), self.clock));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Source;
    use std::sync::Arc;

    fn job(inode: u64, pages: u64) -> Job {
        let file = tempfile::tempfile().unwrap();
        Job {
            path: std::path::Path::new("/x").into(),
            inode,
            start: 0,
            end: pages * PAGE_BYTES,
            source: Source::Os(Arc::new(file)),
        }
    }

    /// LRU over three two-page files with room for four pages: after a, b the cache holds
    /// both; c evicts a; touching b then a keeps b and brings a back, evicting c.
    #[test]
    fn an_lru_mirror_follows_the_hand_worked_sequence() {
        let mut m = Mirror::new("lru", 4 * PAGE_BYTES).unwrap();
        let (a, b, c) = (job(1, 2), job(2, 2), job(3, 2));
        assert!(!m.predicts_hit(&a));
        m.access(&a);
        m.access(&b);
        assert!(m.predicts_hit(&a) && m.predicts_hit(&b));
        m.access(&c);
        assert!(!m.predicts_hit(&a) && m.predicts_hit(&b) && m.predicts_hit(&c));
        m.access(&b);
        m.access(&a);
        assert!(m.predicts_hit(&a) && m.predicts_hit(&b) && !m.predicts_hit(&c));
        // An empty range is trivially cached.
        assert!(m.predicts_hit(&job(9, 0)));
    }

    /// LRU over two-page files, room for four pages, tracking a reading. No reading yet
    /// (0): the given size stands. The reading drops to 2 pages: at c's access the mirror
    /// shrinks first (a, the oldest, goes), then c's pages push b out. The reading rises
    /// to 6 pages: a and b come back beside c, nothing is evicted.
    #[test]
    fn a_tracking_mirror_resizes_to_each_new_reading() {
        let reading: Reading = Default::default();
        let mut m = Mirror::new("lru", 4 * PAGE_BYTES).unwrap();
        m.track(reading.clone());
        let (a, b, c) = (job(1, 2), job(2, 2), job(3, 2));
        m.access(&a);
        m.access(&b);
        assert_eq!(m.capacity_pages(), 4);
        assert!(m.predicts_hit(&a) && m.predicts_hit(&b));
        reading.store(2 * PAGE_BYTES, Ordering::Relaxed);
        m.access(&c);
        assert_eq!(m.capacity_pages(), 2);
        assert!(!m.predicts_hit(&a) && !m.predicts_hit(&b) && m.predicts_hit(&c));
        reading.store(6 * PAGE_BYTES + 100, Ordering::Relaxed);
        m.access(&a);
        m.access(&b);
        assert_eq!(m.capacity_pages(), 6);
        assert!(m.predicts_hit(&a) && m.predicts_hit(&b) && m.predicts_hit(&c));
        // A reading below one page keeps one page.
        reading.store(100, Ordering::Relaxed);
        m.access(&c);
        assert_eq!(m.capacity_pages(), 1);
        assert!(!m.predicts_hit(&c) && !m.predicts_hit(&a));
    }

    /// The hand-worked sequence of the policy's `an_observed_flush_is_a_timed_one_at_that_moment`
    /// in whole files of one page, in a mirror of 4 pages (`linux:stats_events=true`,
    /// no shadows): 1 1 2 2 3 3 put 1 2 3 on the active list; 4 5 6 go through the
    /// inactive one. A flush seen before 7 (the count moved) lets reclaim empty the
    /// active list, so 6 is evicted and 1 stays, inactive; without it 6 stays evicted
    /// only because the inactive list is all reclaim may take, and 1 2 3 stay active.
    /// Two flushes before one access are one; a count that does not move flushes nothing.
    #[test]
    fn a_mirror_flushes_its_model_when_the_kernel_flushed() {
        let spec = "linux:stats_events=true:shadow=false";
        let run = |flushes_before_7: u64| {
            let count = FlushCount::default();
            let mut m = Mirror::new(spec, 4 * PAGE_BYTES).unwrap();
            m.follow_flushes(count.clone());
            for f in [1, 1, 2, 2, 3, 3, 4, 5, 6] {
                m.access(&job(f, 1));
            }
            count.fetch_add(flushes_before_7, Ordering::Release);
            m.access(&job(7, 1));
            m
        };
        let flushed = run(2);
        assert!(flushed.predicts_hit(&job(1, 1)) && !flushed.predicts_hit(&job(6, 1)));
        // After the flush the whole active list went to the inactive head: three more
        // new files push 1 2 3 out (a stale list would have kept them).
        let mut f = flushed;
        for k in [8, 9, 10] {
            f.access(&job(k, 1));
        }
        assert!(!f.predicts_hit(&job(1, 1)) && !f.predicts_hit(&job(3, 1)));
        let mut unflushed = run(0);
        for k in [8, 9, 10] {
            unflushed.access(&job(k, 1));
        }
        assert!(unflushed.predicts_hit(&job(1, 1)) && unflushed.predicts_hit(&job(3, 1)));
    }

    #[test]
    fn offline_and_unknown_policies_are_refused() {
        assert!(Mirror::new("belady", 1 << 20).is_err());
        assert!(Mirror::new("no-such-policy", 1 << 20).is_err());
        assert_eq!(Mirror::new("clock", 1 << 20).unwrap().capacity_pages(), 256);
    }

    #[test]
    fn dust_reports_give_policy_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("dust.json");
        std::fs::write(
            &p,
            r#"{"verdict":"clock","size_estimate_pages":20480,"x":1}"#,
        )
        .unwrap();
        assert_eq!(
            Mirror::from_dust_report(&p).unwrap(),
            ("clock".to_string(), 80 << 20)
        );
        std::fs::write(&p, r#"{"verdict":"unknown","size_estimate_pages":20480}"#).unwrap();
        assert!(Mirror::from_dust_report(&p).is_err());
        std::fs::write(&p, "not json").unwrap();
        assert!(Mirror::from_dust_report(&p).is_err());
        assert!(Mirror::from_dust_report(&dir.path().join("missing")).is_err());
    }
}
