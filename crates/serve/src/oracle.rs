//! Whether a queued request would hit if it were served now: the only thing the
//! schedulers differ in.
//!
//! | choice | how it knows | cost per queued request |
//! |---|---|---|
//! | `fifo` | it does not ([`Prediction::Unknown`]) | nothing |
//! | `mirror` | a simulated cache ([`crate::mirror`]); adaptive: the best of a bank of sizes ([`crate::adaptive`]) | hash lookups until the first miss |
//! | `nowait` | `preadv2(RWF_NOWAIT)` of one byte on the first, middle and last page: `EAGAIN` means a read would block | up to three system calls |
//! | `cachestat` | `cachestat(2)` over the request's pages | one system call |
//! | `pool` | the pool's residency map | one lookup per page |
//!
//! `nowait` samples three pages rather than reading the range (which would copy it for
//! every queued request at every decision); a file whose sampled pages are cached but
//! whose others are not is predicted a hit. On a miss the kernel may start read-ahead
//! for the probed page without waiting for it, as it does for ClickHouse's and
//! Seastar's probes.

use std::io::IoSliceMut;

use rustix::io::{preadv2, Errno, ReadWriteFlags};

use crate::adaptive::MirrorBank;
use crate::backend::{Backend, Job, Source, PAGE_BYTES};
use crate::bank_score::{Judge, ServiceTimes};
use crate::cgroup_poll::Reading;
use crate::config::{MirrorBanking, SchedulerChoice};
use crate::flush_watch::FlushCount;
use crate::mirror::Mirror;
use crate::ServeError;

/// What an oracle says of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Prediction {
    /// Its data is (believed to be) cached.
    Hit,
    /// It is (believed to be) not.
    Miss,
    /// The oracle does not know (`fifo`).
    Unknown,
}

impl Prediction {
    /// `hit`, `miss` or `unknown`, as in the response header.
    pub fn as_str(self) -> &'static str {
        match self {
            Prediction::Hit => "hit",
            Prediction::Miss => "miss",
            Prediction::Unknown => "unknown",
        }
    }

    fn from_bool(hit: bool) -> Self {
        if hit {
            Prediction::Hit
        } else {
            Prediction::Miss
        }
    }
}

/// A scheduler's source of knowledge about the cache.
pub trait Oracle: Send {
    /// Would `job` hit if it were served now?
    fn predict(&mut self, job: &Job) -> Prediction;
    /// `job` has been chosen for service (the mirror reads its pages).
    fn scheduled(&mut self, _job: &Job) {}
    /// `job`'s data was read, in `times` (the banks of mirrors learn from them).
    fn served(&mut self, _job: &Job, _times: ServiceTimes) {}
    /// `job` was scheduled but will not be read (its client went away).
    fn abandoned(&mut self, _job: &Job) {}
}

/// `fifo`: knows nothing, so the scheduler keeps arrival order.
#[derive(Debug, Default)]
pub struct Oblivious;

impl Oracle for Oblivious {
    fn predict(&mut self, _job: &Job) -> Prediction {
        Prediction::Unknown
    }
}

impl Oracle for Mirror {
    fn predict(&mut self, job: &Job) -> Prediction {
        Prediction::from_bool(self.predicts_hit(job))
    }

    fn scheduled(&mut self, job: &Job) {
        self.access(job);
    }
}

/// `nowait`: non-blocking reads of sample pages.
#[derive(Debug, Default)]
pub struct NoWaitProbe;

impl Oracle for NoWaitProbe {
    fn predict(&mut self, job: &Job) -> Prediction {
        let Source::Os(file) = &job.source else {
            return Prediction::Unknown;
        };
        let pages = job.pages();
        if pages.is_empty() {
            return Prediction::Hit;
        }
        let samples = [pages.start, (pages.start + pages.end) / 2, pages.end - 1];
        let mut byte = [0u8; 1];
        for page in samples {
            let offset = (page * PAGE_BYTES).max(job.start);
            let mut bufs = [IoSliceMut::new(&mut byte)];
            match preadv2(&**file, &mut bufs, offset, ReadWriteFlags::NOWAIT) {
                Ok(_) => {}
                Err(Errno::AGAIN) => return Prediction::Miss,
                // Not supported here, or failed: say nothing rather than guess.
                Err(_) => return Prediction::Unknown,
            }
        }
        Prediction::Hit
    }
}

/// `cachestat` and `pool`: the cache's own answer.
#[derive(Debug)]
pub struct GroundTruth {
    backend: Backend,
}

impl Oracle for GroundTruth {
    fn predict(&mut self, job: &Job) -> Prediction {
        match ground_truth(&self.backend, job) {
            Some(hit) => Prediction::from_bool(hit),
            None => Prediction::Unknown,
        }
    }
}

/// The ground truth of one request, as `x-bufcache-actual` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Actual {
    /// Every page was cached when service began.
    Hit,
    /// Some page was not cached, and no request in service was reading it.
    Miss,
    /// Some page was not cached, but a request in service was reading all of them: this
    /// one waits on that read and reads nothing from the disk itself
    /// ([`crate::in_flight`]).
    Joined,
}

impl Actual {
    /// Hit or miss, from a residency check that cannot see reads in flight.
    pub fn from_hit(hit: bool) -> Self {
        if hit {
            Actual::Hit
        } else {
            Actual::Miss
        }
    }

    /// The header value.
    pub fn as_str(self) -> &'static str {
        match self {
            Actual::Hit => "hit",
            Actual::Miss => "miss",
            Actual::Joined => "joined",
        }
    }
}

/// Whether every page of `job` is cached right now, where that can be known: the pool's
/// residency map for the pool, `cachestat(2)` for the page cache (`None` on kernels
/// without it). The `x-bufcache-actual` header and the `cachestat`/`pool` oracles both
/// ask this.
pub fn ground_truth(backend: &Backend, job: &Job) -> Option<bool> {
    let pages = job.pages();
    resident_pages(backend, job).map(|cached| cached >= pages.end - pages.start)
}

/// How many pages of `job` are cached right now: the pool's map, or `cachestat(2)`
/// (`None` on kernels without it). The request log ([`crate::trace_log`]) records it:
/// a miss by one page and a miss by the whole file are different stories.
pub fn resident_pages(backend: &Backend, job: &Job) -> Option<u64> {
    if let Some(resident) = backend.pool_resident_pages(job) {
        return Some(resident);
    }
    let Source::Os(file) = &job.source else {
        return None;
    };
    let pages = job.pages();
    let count = pages.end - pages.start;
    if count == 0 {
        return Some(0);
    }
    linux::page_cache::cached_pages(file, pages.start * PAGE_BYTES, count * PAGE_BYTES).ok()
}

/// The oracle for a scheduler choice (and the backend it reads through); a plain mirror
/// given `size_reading` follows it ([`Mirror::track`]), given `flushes` flushes its
/// model with the kernel ([`Mirror::follow_flushes`]).
pub fn build(
    choice: &SchedulerChoice,
    backend: &Backend,
    size_reading: Option<Reading>,
    flushes: Option<FlushCount>,
) -> Result<Box<dyn Oracle>, ServeError> {
    if let SchedulerChoice::Mirror { policy, bank, .. } = choice {
        refuse_unflushed(policy, bank, flushes.is_some())?;
    }
    Ok(match choice {
        SchedulerChoice::Fifo => Box::new(Oblivious),
        SchedulerChoice::Mirror {
            policy,
            size_bytes,
            bank: MirrorBanking::Single,
        } => {
            let mut mirror = Mirror::new(policy, *size_bytes)?;
            if let Some(reading) = size_reading {
                mirror.track(reading);
            }
            if let Some(count) = flushes {
                mirror.follow_flushes(count);
            }
            Box::new(mirror)
        }
        SchedulerChoice::Mirror {
            policy,
            size_bytes,
            bank: MirrorBanking::Sizes,
        } => Box::new(MirrorBank::new(policy, *size_bytes)?),
        SchedulerChoice::Mirror {
            policy,
            size_bytes,
            bank: MirrorBanking::Phases { count, judge_us },
        } => Box::new(MirrorBank::phases(
            policy,
            *size_bytes,
            *count,
            Judge::Within(*judge_us),
        )?),
        SchedulerChoice::NoWait => Box::new(NoWaitProbe),
        SchedulerChoice::Cachestat | SchedulerChoice::Pool { .. } => Box::new(GroundTruth {
            backend: backend.clone(),
        }),
    })
}

/// Refuse a mirror policy whose statistics change only when told of the kernel's flushes
/// (`linux:stats_events=true`) where nothing would tell it: without the flushes watched,
/// or in a bank, whose mirrors do not follow them (with a bank the watched flushes only go
/// to the request log). Such a mirror would model statistics frozen at zero for the
/// whole run and say nothing about it.
fn refuse_unflushed(
    policy: &str,
    bank: &MirrorBanking,
    flushes_watched: bool,
) -> Result<(), ServeError> {
    // One page is enough to ask the policy how it is refreshed.
    if !Mirror::new(policy, PAGE_BYTES)?.wants_flush_events() {
        return Ok(());
    }
    match bank {
        MirrorBanking::Single if flushes_watched => Ok(()),
        MirrorBanking::Single => Err(ServeError::config(
            "mirror policy",
            format!(
                "{policy}: its statistics are refreshed only by the kernel's observed \
                 flushes; add --mirror-flush-events (root, Linux 6.14 or later), or use \
                 stats_ms for a timer"
            ),
        )),
        _ => Err(ServeError::config(
            "mirror policy",
            format!(
                "{policy}: a bank's mirrors do not follow the kernel's observed flushes; \
                 use it as a single mirror with --mirror-flush-events"
            ),
        )),
    }
}

/// The backend a scheduler choice reads through.
pub fn backend_for(choice: &SchedulerChoice) -> Result<Backend, ServeError> {
    match choice {
        SchedulerChoice::Pool {
            policy,
            capacity_bytes,
        } => Backend::pool(policy, *capacity_bytes),
        _ => Ok(Backend::Os),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mirror(policy: &str, bank: MirrorBanking) -> SchedulerChoice {
        SchedulerChoice::Mirror {
            policy: policy.to_string(),
            size_bytes: 64 * PAGE_BYTES,
            bank,
        }
    }

    /// A policy refreshed only by observed flushes runs only as a single mirror that
    /// follows them; with a timer, or fresh, it runs as it did; the flag alone changes
    /// nothing for other policies.
    #[test]
    fn a_mirror_refreshed_by_observed_flushes_is_refused_where_nothing_tells_it() {
        let events = "linux:stats_events=true";
        let build_with = |choice: &SchedulerChoice, watched: bool| {
            build(
                choice,
                &Backend::Os,
                None,
                watched.then(FlushCount::default),
            )
            .map(|_| ())
        };
        let single = mirror(events, MirrorBanking::Single);
        assert!(build_with(&single, true).is_ok());
        let err = build_with(&single, false).unwrap_err().to_string();
        assert!(err.contains("--mirror-flush-events"), "{err}");
        let phases = MirrorBanking::Phases {
            count: 4,
            judge_us: 5000,
        };
        for bank in [MirrorBanking::Sizes, phases] {
            let err = build_with(&mirror(events, bank), true)
                .unwrap_err()
                .to_string();
            assert!(err.contains("bank"), "{err}");
        }
        for fine in ["linux", "linux:stats_ms=2000", "clock"] {
            assert!(build_with(&mirror(fine, MirrorBanking::Single), false).is_ok());
            assert!(build_with(&mirror(fine, MirrorBanking::Single), true).is_ok());
        }
        assert!(build_with(&mirror("linux:stats_ms=2000", phases), false).is_ok());
    }
}
