//! What one connection records, merged at the end: latency histograms split by hit and
//! miss, byte and status counts, and how often the scheduler's prediction matched the
//! server's ground truth.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Latencies are recorded in microseconds, from 1 µs to one hour, to 3 significant
/// digits (HDR's usual precision: 0.1% error at any magnitude).
const HIGHEST_US: u64 = 3_600_000_000;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_US, 3).expect("valid histogram bounds")
}

/// The server's word on one response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheWord {
    /// `x-bufcache-predicted`: `Some(true)` hit, `Some(false)` miss, `None` unknown/absent.
    pub predicted: Option<bool>,
    /// `x-bufcache-actual`, likewise (`joined` is a miss here: not every page was cached).
    pub actual: Option<bool>,
    /// `x-bufcache-actual: joined`: the missing pages were being read by a request
    /// already in service, so this one read nothing from the disk itself.
    pub joined: bool,
}

impl CacheWord {
    /// Parse a header value `hit` / `miss`; anything else is unknown.
    pub fn parse(value: Option<&str>) -> Option<bool> {
        match value {
            Some("hit") => Some(true),
            Some("miss") => Some(false),
            _ => None,
        }
    }

    /// From the two headers' values (`x-bufcache-actual` may also say `joined`).
    pub fn from_headers(predicted: Option<&str>, actual: Option<&str>) -> Self {
        let joined = actual == Some("joined");
        CacheWord {
            predicted: Self::parse(predicted),
            actual: if joined {
                Some(false)
            } else {
                Self::parse(actual)
            },
            joined,
        }
    }

    /// The class a response is counted in: the actual outcome where known, else the
    /// prediction.
    pub fn class(self) -> Option<bool> {
        self.actual.or(self.predicted)
    }
}

/// One connection's (or the merged) record.
#[derive(Clone, Debug)]
pub struct Recorder {
    all: Histogram<u64>,
    hit: Histogram<u64>,
    miss: Histogram<u64>,
    /// Successful responses (200/206).
    pub ok: u64,
    /// 503 answers (queue full).
    pub rejected: u64,
    /// Other statuses, and connection or protocol failures.
    pub errors: u64,
    /// Body bytes received in successful responses.
    pub bytes: u64,
    /// Responses with both a prediction and a ground truth.
    pub compared: u64,
    /// Of those, how many agreed.
    pub agreed: u64,
    /// Of those, how many were predicted hits that missed (the rest of the disagreements
    /// are predicted misses that hit): which way an oracle errs says why.
    pub false_hits: u64,
    /// Compared responses the server called `joined` (a miss riding on another
    /// request's read).
    pub joined: u64,
    /// Of those, how many were predicted hits: wrong by the strict count, right if a
    /// request that reads nothing from the disk itself counts as a hit.
    pub joined_predicted_hits: u64,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            all: histogram(),
            hit: histogram(),
            miss: histogram(),
            ok: 0,
            rejected: 0,
            errors: 0,
            bytes: 0,
            compared: 0,
            agreed: 0,
            false_hits: 0,
            joined: 0,
            joined_predicted_hits: 0,
        }
    }
}

/// Summary of one histogram, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Responses counted.
    pub count: u64,
    /// Mean.
    pub mean_ms: f64,
    /// Median.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// Largest.
    pub max_ms: f64,
}

fn summarise(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let ms = |us: u64| us as f64 / 1000.0;
    LatencySummary {
        count: h.len(),
        mean_ms: h.mean() / 1000.0,
        p50_ms: ms(h.value_at_quantile(0.50)),
        p90_ms: ms(h.value_at_quantile(0.90)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        p999_ms: ms(h.value_at_quantile(0.999)),
        max_ms: ms(h.max()),
    }
}

impl Recorder {
    /// A successful response of `bytes` that took `latency_us`.
    pub fn success(&mut self, latency_us: u64, bytes: u64, word: CacheWord) {
        let v = latency_us.clamp(1, HIGHEST_US);
        self.all.saturating_record(v);
        match word.class() {
            Some(true) => self.hit.saturating_record(v),
            Some(false) => self.miss.saturating_record(v),
            None => {}
        }
        if let (Some(p), Some(a)) = (word.predicted, word.actual) {
            self.compared += 1;
            self.agreed += u64::from(p == a);
            self.false_hits += u64::from(p && !a);
            self.joined += u64::from(word.joined);
            self.joined_predicted_hits += u64::from(word.joined && p);
        }
        self.ok += 1;
        self.bytes += bytes;
    }

    /// Fold `other` into this record.
    pub fn merge(&mut self, other: &Recorder) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.all.add(&other.all);
        let _ = self.hit.add(&other.hit);
        let _ = self.miss.add(&other.miss);
        self.ok += other.ok;
        self.rejected += other.rejected;
        self.errors += other.errors;
        self.bytes += other.bytes;
        self.compared += other.compared;
        self.agreed += other.agreed;
        self.false_hits += other.false_hits;
        self.joined += other.joined;
        self.joined_predicted_hits += other.joined_predicted_hits;
    }

    /// Agreement counting a predicted hit that joined another request's read as right.
    pub fn agreed_counting_joined(&self) -> u64 {
        self.agreed + self.joined_predicted_hits
    }

    /// Summaries of all responses, hits and misses.
    pub fn summaries(&self) -> [LatencySummary; 3] {
        [
            summarise(&self.all),
            summarise(&self.hit),
            summarise(&self.miss),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_split_by_the_servers_word() {
        let hit = CacheWord::from_headers(Some("hit"), Some("hit"));
        let wrong = CacheWord::from_headers(Some("hit"), Some("miss"));
        let fifo = CacheWord::from_headers(Some("unknown"), Some("miss"));
        let joined = CacheWord::from_headers(Some("hit"), Some("joined"));
        let joined_miss = CacheWord::from_headers(Some("miss"), Some("joined"));
        assert_eq!((joined.actual, joined.joined), (Some(false), true));
        let mut a = Recorder::default();
        a.success(1000, 10, hit);
        a.success(3000, 10, wrong);
        let mut b = Recorder::default();
        b.success(5000, 10, fifo);
        b.rejected = 2;
        a.merge(&b);
        let [all, h, m] = a.summaries();
        assert_eq!((all.count, h.count, m.count), (3, 1, 2));
        assert!((all.mean_ms - 3.0).abs() < 0.01, "{all:?}");
        assert_eq!((a.joined, a.agreed_counting_joined()), (0, 1));
        assert!((h.p50_ms - 1.0).abs() < 0.01);
        assert!((m.max_ms - 5.0).abs() < 0.01);
        assert_eq!(
            (
                a.compared,
                a.agreed,
                a.false_hits,
                a.ok,
                a.rejected,
                a.bytes
            ),
            (2, 1, 1, 3, 2, 30)
        );
        // A joined response is a miss (and a false hit when predicted a hit) by the
        // strict count; counting joined reads as hits puts the predicted one right.
        a.success(2000, 10, joined);
        a.success(2000, 10, joined_miss);
        assert_eq!((a.compared, a.agreed, a.false_hits, a.joined), (4, 2, 2, 2));
        assert_eq!(a.agreed_counting_joined(), 3);
        assert_eq!(CacheWord::parse(Some("hit")), Some(true));
        assert_eq!(CacheWord::parse(Some("unknown")), None);
    }
}
