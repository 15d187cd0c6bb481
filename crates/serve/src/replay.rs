//! Mirror models scored offline against a request log ([`crate::trace_log`]).
//!
//! A logged run fixes the order in which requests were scheduled, when each one's read
//! began and ended, and what the kernel held at each start. Replaying that log through
//! a mirror model gives the model's prediction at each scheduling decision, which is
//! scored against the logged ground truth — deterministically, in milliseconds, without
//! running the server again. The order of the requests is the live run's (a different
//! model would have scheduled differently), so a score says how well a model tracks the
//! kernel along one real sequence; the live runs then check the chosen model.
//!
//! A model is a policy and a size (as the live mirror's) and a [`Feed`]: when the
//! request's pages enter the simulated cache. Models of the kernel's timers
//! (`linux:stats_ms=2000`) read the log's own clock: a request's pages enter at its
//! logged start (the live mirror reads its clock when it chooses the request, a few
//! milliseconds before), a completed read at its logged end. Models told of the
//! kernel's flushes (`linux:stats_events=true`) flush before the first read fed after
//! each logged flush (the log's `flush_us` lines, [`crate::trace_log::RequestLog`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::ops::Range;

use serde::Serialize;

use crate::mirror::Mirror;
use crate::oracle::Actual;
use crate::trace_log::TraceRecord;
use crate::ServeError;

/// When a request's pages enter the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// When it is scheduled (Burnett's mirror, and `--mirror-feed scheduled`).
    Scheduled,
    /// When it is scheduled, but a file whose read was predicted a miss and has not
    /// ended is predicted a miss (`--mirror-wait`): the kernel holds only part of it, and
    /// a request for it would wait on that read in a slot of its own. The scheduler
    /// knows this: it predicted the miss and has not been told the read ended.
    ScheduledWait,
    /// When its read ends (`--mirror-feed completed`): reads in flight are not yet in
    /// the model, as they are not yet (wholly) in the kernel's cache.
    Completed,
    /// Diagnostic, not available to a live mirror: each page at the moment the kernel
    /// plausibly took it — a logged miss's pages spread evenly over its real read time,
    /// a logged hit's at its start — so concurrent reads interleave in the model as they
    /// do on the kernel's lists. It uses the ground truth and the real read times as
    /// input, so it bounds what modelling the timing could give.
    Timed,
}

impl Feed {
    /// Every feed, in the order reports list them.
    pub const ALL: [Feed; 4] = [
        Feed::Scheduled,
        Feed::ScheduledWait,
        Feed::Completed,
        Feed::Timed,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Feed::Scheduled => "scheduled",
            Feed::ScheduledWait => "scheduled-wait",
            Feed::Completed => "completed",
            Feed::Timed => "timed",
        }
    }

    /// From its name.
    pub fn parse(name: &str) -> Result<Self, ServeError> {
        Feed::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Feed::ALL.iter().map(|f| f.name()).collect();
                ServeError::config(
                    "mirror feed",
                    format!(
                        "unknown feed {name:?}: expected one of {}",
                        names.join(", ")
                    ),
                )
            })
    }
}

/// Which requests are scored, against which ground truth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scoring {
    /// Requests before this place in the schedule feed the models but are not scored
    /// (a load generator's warm-up).
    pub scored_from: u64,
    /// Score against the cache's state when each request was chosen (`cached_at_choice`)
    /// instead of when its service began (`actual`): the moment the prediction speaks
    /// of, without the delay until the server's thread runs the request. Such a check
    /// cannot tell joined reads apart; a request not wholly cached is a miss.
    pub at_choice: bool,
}

impl Scoring {
    /// The ground truth of `r`, or `None` when it is not scored.
    pub(crate) fn truth(&self, r: &TraceRecord) -> Option<Actual> {
        if r.order < self.scored_from {
            return None;
        }
        if self.at_choice {
            r.cached_at_choice.map(|c| Actual::from_hit(c >= r.pages))
        } else {
            r.actual
        }
    }
}

/// Predictions scored against the ground truth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Score {
    /// Requests with a ground truth.
    pub compared: u64,
    /// Predicted hits whose pages were all cached at service start.
    pub right_hits: u64,
    /// Predicted misses that were misses (joined or not).
    pub right_misses: u64,
    /// Predicted hits that were not all cached.
    pub false_hits: u64,
    /// Of those, the ones whose pages a read in service was bringing in (`joined`).
    pub false_hits_joined: u64,
    /// Predicted misses that were hits.
    pub false_misses: u64,
}

impl Score {
    pub(crate) fn add(&mut self, predicted_hit: bool, actual: Actual) {
        self.compared += 1;
        match (predicted_hit, actual) {
            (true, Actual::Hit) => self.right_hits += 1,
            (false, Actual::Miss | Actual::Joined) => self.right_misses += 1,
            (true, Actual::Joined) => {
                self.false_hits += 1;
                self.false_hits_joined += 1;
            }
            (true, Actual::Miss) => self.false_hits += 1,
            (false, Actual::Hit) => self.false_misses += 1,
        }
    }

    /// Share of predictions that matched the ground truth.
    pub fn agreement(&self) -> f64 {
        self.ratio(self.right_hits + self.right_misses)
    }

    /// The same, counting a predicted hit that joined a read in service as right.
    pub fn agreement_joined(&self) -> f64 {
        self.ratio(self.right_hits + self.right_misses + self.false_hits_joined)
    }

    fn ratio(&self, right: u64) -> f64 {
        if self.compared == 0 {
            0.0
        } else {
            right as f64 / self.compared as f64
        }
    }
}

pub(crate) fn pages(r: &TraceRecord) -> Range<u64> {
    r.first_page..r.first_page + r.pages
}

/// How the live oracle's own predictions (the `predicted` field) scored; requests
/// predicted `unknown` (fifo) are not counted.
pub fn recorded(trace: &[TraceRecord], scoring: Scoring) -> Score {
    let mut score = Score::default();
    for r in trace {
        let hit = match r.predicted {
            crate::oracle::Prediction::Hit => true,
            crate::oracle::Prediction::Miss => false,
            crate::oracle::Prediction::Unknown => continue,
        };
        if let Some(actual) = scoring.truth(r) {
            score.add(hit, actual);
        }
    }
    score
}

/// Logged misses (joined or not) by the share of their pages cached when service
/// began: none, up to a quarter, up to a half, up to three quarters, more (all but some).
/// Misses with most of their pages cached are files the kernel has only begun to evict:
/// the edge of the cache, where one page gone makes a whole request a miss.
pub fn miss_depths(trace: &[TraceRecord]) -> [u64; 5] {
    let mut out = [0; 5];
    for r in trace {
        let (Some(Actual::Miss | Actual::Joined), Some(cached)) = (r.actual, r.cached_pages) else {
            continue;
        };
        let bucket = if cached == 0 {
            0
        } else {
            (1 + 4 * cached.saturating_sub(1) / r.pages.max(1)).min(4) as usize
        };
        out[bucket] += 1;
    }
    out
}

/// The kernel's logged statistics flushes (µs, ascending), handed to a model in time
/// order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flushes<'a> {
    times_us: &'a [u64],
    next: usize,
}

impl<'a> Flushes<'a> {
    pub(crate) fn new(times_us: &'a [u64]) -> Self {
        Flushes { times_us, next: 0 }
    }

    /// Whether a flush fell at or before `now_us` since the last call that said so.
    pub(crate) fn due(&mut self, now_us: u64) -> bool {
        let before = self.next;
        while self.times_us.get(self.next).is_some_and(|&t| t <= now_us) {
            self.next += 1;
        }
        self.next > before
    }
}

/// Feed `r`'s pages to `mirror` at `at_us`, flushing first if a logged flush came due.
fn feed(mirror: &mut Mirror, flushes: &mut Flushes, r: &TraceRecord, at_us: u64) {
    mirror.set_wall_clock(at_us / 1000);
    if flushes.due(at_us) {
        mirror.flush_stats();
    }
    mirror.read(r.inode, pages(r));
}

/// Replay `trace` (in schedule order, as [`crate::trace_log::read_trace`] returns it)
/// through a mirror of `policy` and `size_bytes` fed as `feed`, with the kernel's
/// statistics flushes at `flushes_us` (empty if not logged), and score its predictions
/// as `scoring` says.
pub fn evaluate(
    trace: &[TraceRecord],
    flushes_us: &[u64],
    policy: &str,
    size_bytes: u64,
    feed: Feed,
    scoring: Scoring,
) -> Result<Score, ServeError> {
    let mut mirror = Mirror::new(policy, size_bytes)?;
    let mut flushes = Flushes::new(flushes_us);
    if feed == Feed::Timed {
        return Ok(timed(trace, flushes_us, &mut mirror, scoring));
    }
    let mut score = Score::default();
    // Reads handed out and not yet ended, by end time (for Completed and ScheduledWait).
    let mut running = Running::new();
    // Files whose predicted-miss reads are in flight, with how many such reads.
    let mut in_flight: HashMap<u64, u32> = HashMap::new();
    let mut arriving = vec![false; trace.len()];
    for (i, r) in trace.iter().enumerate() {
        while let Some((end, j)) = pop_ended(&mut running, r.start_us) {
            let done = &trace[j];
            if feed == Feed::Completed {
                self::feed(&mut mirror, &mut flushes, done, end);
            }
            if let Some(n) = arriving[j]
                .then(|| in_flight.get_mut(&done.inode))
                .flatten()
            {
                *n -= 1;
                if *n == 0 {
                    in_flight.remove(&done.inode);
                }
            }
        }
        let waits = feed == Feed::ScheduledWait && in_flight.contains_key(&r.inode);
        let hit = !waits && mirror.holds(r.inode, pages(r));
        if let Some(actual) = scoring.truth(r) {
            score.add(hit, actual);
        }
        if feed != Feed::Completed {
            self::feed(&mut mirror, &mut flushes, r, r.start_us);
        }
        running.push(Reverse((r.end_us, i)));
        if !hit {
            arriving[i] = true;
            *in_flight.entry(r.inode).or_default() += 1;
        }
    }
    Ok(score)
}

/// Reads in service, by end time (µs) and place in the log.
pub(crate) type Running = BinaryHeap<Reverse<(u64, usize)>>;

/// The next read of `running` that ended by `now_us` (taken off), if any.
pub(crate) fn pop_ended(running: &mut Running, now_us: u64) -> Option<(u64, usize)> {
    let &Reverse((end, j)) = running.peek()?;
    (end <= now_us).then(|| {
        running.pop();
        (end, j)
    })
}

/// [`Feed::Timed`]: page reads, flushes and predictions merged by time.
fn timed(
    trace: &[TraceRecord],
    flushes_us: &[u64],
    mirror: &mut Mirror,
    scoring: Scoring,
) -> Score {
    // (time, 0 = predict / 1 = flush / 2 = read, record, page)
    let mut events: Vec<(u64, u8, usize, u64)> = flushes_us.iter().map(|&t| (t, 1, 0, 0)).collect();
    for (i, r) in trace.iter().enumerate() {
        events.push((r.start_us, 0, i, 0));
        let spread = r.actual != Some(Actual::Hit);
        let span = r.end_us.saturating_sub(r.start_us);
        for (k, page) in pages(r).enumerate() {
            let at = if spread {
                r.start_us + span * (k as u64 + 1) / r.pages
            } else {
                r.start_us
            };
            events.push((at, 2, i, page));
        }
    }
    events.sort_unstable();
    let mut score = Score::default();
    for (at, kind, i, page) in events {
        let r = &trace[i];
        if kind == 1 {
            mirror.flush_stats();
        } else if kind == 2 {
            mirror.set_wall_clock(at / 1000);
            mirror.read_page(r.inode, page);
        } else if let Some(actual) = scoring.truth(r) {
            score.add(mirror.holds(r.inode, pages(r)), actual);
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Prediction;

    const PAGE: u64 = 4096;

    /// An LRU mirror of `pages` pages fed as `feed`, every request scored.
    fn lru(trace: &[TraceRecord], pages: u64, feed: Feed) -> Score {
        evaluate(trace, &[], "lru", pages * PAGE, feed, Scoring::default()).unwrap()
    }

    /// A two-page request for file `inode`, scheduled `order`-th, served from `start` to
    /// `end` µs, with the ground truth `actual`.
    fn req(order: u64, inode: u64, start: u64, end: u64, actual: Actual) -> TraceRecord {
        TraceRecord {
            order,
            inode,
            first_page: 0,
            pages: 2,
            predicted: Prediction::Miss,
            cached_pages: None,
            cached_at_choice: None,
            actual: Some(actual),
            start_us: start,
            end_us: end,
        }
    }

    /// LRU of 4 pages (two 2-page files), reads one after another: a b c evict a, so
    /// the cache holds b c; a again (a miss) evicts b, leaving c a; c is then a hit.
    /// Without overlap every feed sees the same sequence and scores alike.
    #[test]
    fn sequential_reads_score_alike_under_every_feed() {
        use Actual::{Hit, Miss};
        // a b c a b: after a b c the LRU holds b c; a evicts b (holds c a); b evicts c.
        let trace = vec![
            req(0, 1, 0, 10, Miss),
            req(1, 2, 20, 30, Miss),
            req(2, 3, 40, 50, Miss),
            req(3, 1, 60, 70, Miss),
            req(4, 3, 80, 81, Hit),
        ];
        for feed in Feed::ALL {
            let s = lru(&trace, 4, feed);
            assert_eq!(
                (s.compared, s.right_hits, s.right_misses, s.false_hits),
                (5, 1, 4, 0),
                "{feed:?}"
            );
        }
    }

    /// Two overlapping reads: b is scheduled while a's read is under way, then a second
    /// request for a arrives before a's read ends; the kernel had only part of a (a
    /// joined miss). Fed at scheduling, the mirror calls it a hit (wrong; right counting
    /// joined reads); told that a is in flight, or fed at completion, a miss (right).
    #[test]
    fn a_request_for_a_file_in_flight_is_a_miss_unless_fed_at_scheduling() {
        use Actual::{Hit, Joined, Miss};
        let trace = vec![
            req(0, 1, 0, 100, Miss),
            req(1, 2, 10, 110, Miss),
            req(2, 1, 20, 120, Joined),
            req(3, 1, 200, 201, Hit),
        ];
        let s = lru(&trace, 8, Feed::Scheduled);
        assert_eq!((s.false_hits, s.false_hits_joined, s.right_hits), (1, 1, 1));
        assert!((s.agreement() - 0.75).abs() < 1e-12);
        assert!((s.agreement_joined() - 1.0).abs() < 1e-12);
        for feed in [Feed::ScheduledWait, Feed::Completed, Feed::Timed] {
            let s = lru(&trace, 8, feed);
            assert_eq!(
                (s.right_hits, s.right_misses, s.false_hits),
                (1, 3, 0),
                "{feed:?}"
            );
        }
    }

    /// Interleaving, LRU of 4 pages: b and c are read at the same time, so the kernel's
    /// list holds b0 c0 b1 c1; d, read next, evicts b0 and c0, and a request for c then
    /// misses (c0 is gone). Fed whole (b then c), the model's list is b0 b1 c0 c1, d
    /// evicts b alone, and c is predicted a hit: a false hit at the edge of the cache.
    /// Only the timed feed, which interleaves b and c page by page, predicts the miss.
    #[test]
    fn concurrent_reads_interleave_only_in_the_timed_feed() {
        use Actual::Miss;
        let trace = vec![
            req(0, 2, 100, 200, Miss),
            req(1, 3, 100, 200, Miss),
            req(2, 4, 300, 400, Miss),
            req(3, 3, 500, 501, Miss),
        ];
        let of = |feed| lru(&trace, 4, feed);
        for feed in [Feed::Scheduled, Feed::ScheduledWait, Feed::Completed] {
            let s = of(feed);
            assert_eq!((s.false_hits, s.right_misses), (1, 3), "{feed:?}");
        }
        let s = of(Feed::Timed);
        assert_eq!((s.false_hits, s.right_misses), (0, 4));
    }

    /// The mirror's hand-worked flush (`a_mirror_flushes_its_model_when_the_kernel_flushed`)
    /// from a log: one-page files 1 1 2 2 3 3 4 5 6 7 8 9 10 1, one after another, every
    /// 100 µs, in a 4-page `linux:stats_events=true:shadow=false` model. A logged flush
    /// between 6 and 7 lets reclaim empty the active list, and the last request for 1 is
    /// predicted a miss (right: the kernel missed); with no flush logged the stale model
    /// keeps 1 active and predicts a hit. Every feed sees the flush alike here.
    #[test]
    fn logged_flushes_reach_models_told_of_them() {
        let files = [1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10, 1];
        let trace: Vec<TraceRecord> = files
            .iter()
            .enumerate()
            .map(|(n, &f)| {
                let t = 100 * n as u64;
                TraceRecord {
                    pages: 1,
                    ..req(n as u64, f, t, t + 10, Actual::Miss)
                }
            })
            .collect();
        let scoring = Scoring {
            scored_from: 13,
            at_choice: false,
        };
        let spec = "linux:stats_events=true:shadow=false";
        for feed in Feed::ALL {
            let score =
                |flushes: &[u64]| evaluate(&trace, flushes, spec, 4 * PAGE, feed, scoring).unwrap();
            assert_eq!(score(&[850]).right_misses, 1, "{feed:?}");
            assert_eq!(score(&[]).false_hits, 1, "{feed:?}");
        }
        // The fresh model ignores flushes.
        let fresh = |flushes: &[u64]| {
            evaluate(
                &trace,
                flushes,
                "linux:shadow=false",
                4 * PAGE,
                Feed::Scheduled,
                scoring,
            )
            .unwrap()
        };
        assert_eq!(fresh(&[850]), fresh(&[]));
        let mut f = Flushes::new(&[5, 7, 20]);
        assert!(!f.due(4) && f.due(7) && !f.due(8) && f.due(100) && !f.due(200));
    }

    #[test]
    fn the_recorded_predictions_are_scored_and_feeds_parse() {
        let mut a = req(0, 1, 0, 10, Actual::Hit);
        a.predicted = Prediction::Hit;
        let mut b = req(1, 2, 0, 10, Actual::Hit);
        b.predicted = Prediction::Unknown;
        let s = recorded(&[a.clone(), b], Scoring::default());
        assert_eq!((s.compared, s.right_hits), (1, 1));
        let later = Scoring {
            scored_from: 1,
            at_choice: false,
        };
        assert_eq!(recorded(&[a.clone()], later).compared, 0);
        // Scored at choice: 255 of 256 pages then is a miss; no probe, not scored.
        let at_choice = Scoring {
            scored_from: 0,
            at_choice: true,
        };
        let mut c = a.clone();
        (c.pages, c.cached_at_choice) = (256, Some(255));
        let s = recorded(&[a, c], at_choice);
        assert_eq!((s.compared, s.false_hits), (1, 1));
        for f in Feed::ALL {
            assert_eq!(Feed::parse(f.name()).unwrap(), f);
        }
        assert!(Feed::parse("later").is_err());
        // Miss depths: 0 cached; 1 and 64 of 256 (up to a quarter); 65 (up to a half);
        // 255 (more than three quarters); hits are not counted.
        let depth = |cached, actual| TraceRecord {
            pages: 256,
            cached_pages: Some(cached),
            ..req(0, 1, 0, 1, actual)
        };
        let t: Vec<TraceRecord> = [0, 1, 64, 65, 255]
            .into_iter()
            .map(|c| depth(c, Actual::Miss))
            .chain([depth(256, Actual::Hit), depth(3, Actual::Joined)])
            .collect();
        assert_eq!(miss_depths(&t), [1, 3, 1, 0, 1]);
        assert_eq!(Score::default().agreement(), 0.0);
    }
}
