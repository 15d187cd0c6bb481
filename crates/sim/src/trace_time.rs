//! Spans of trace time turned into positions.
//!
//! Replay counts in positions (operations, deletes included: [`crate::Schedule`]), but a
//! `cachesim` user asks for a warm-up of an hour or the miss ratio of every day. Those
//! ends depend on the requests' timestamps, which the compact trace does not keep (8 more
//! bytes a request). So [`TimeMarks`] watches the timestamps go by once, while the trace is
//! loaded or during a streaming replay's first pass, and remembers only the positions where
//! a span ends: memory in proportion to the intervals, not the requests.
//!
//! Time is the trace's own unit (seconds for oracleGeneral and CloudPhysics, 100 ns ticks
//! for MSR). Timestamps that go backwards are taken as the latest seen so far, so that
//! spans always move forward: a span ends at the first request at or after its end.

use std::sync::Arc;

use crate::replay::Intervals;

/// A warm-up length as a user writes it: `100000` requests, `0.1` of the trace, or a span
/// of trace time (`30m`, `1h`, `86400s`, `2d`). One parser for `replay` and `sweep`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Warmup {
    /// A number of positions (deletes included).
    Requests(u64),
    /// A fraction of the trace's positions, in `[0, 1)`.
    Fraction(f64),
    /// A span of trace time, in seconds.
    Seconds(u64),
}

impl Warmup {
    /// Parse a count, a fraction (always with a decimal point) or a span of trace time.
    pub fn parse(s: &str) -> Result<Self, String> {
        if let Some(span) = parse_span(s) {
            return span.map(Warmup::Seconds);
        }
        if s.contains('.') {
            match s.parse::<f64>() {
                Ok(f) if (0.0..1.0).contains(&f) => Ok(Warmup::Fraction(f)),
                _ => Err(format!(
                    "`{s}`: a fraction of the trace must be in 0..1 (a count has no decimal point)"
                )),
            }
        } else {
            s.parse::<u64>().map(Warmup::Requests).map_err(|_| {
                format!("`{s}`: expected a count of requests (100000), a fraction (0.1) or a span of trace time (1h)")
            })
        }
    }

    /// Positions of warm-up in a trace of `ops` positions; `None` for a span of trace
    /// time, whose end only the timestamps tell ([`TimeMarks::warmup`]).
    pub fn positions(self, ops: u64) -> Option<u64> {
        match self {
            Warmup::Requests(n) => Some(n),
            Warmup::Fraction(f) => Some((f * ops as f64) as u64),
            Warmup::Seconds(_) => None,
        }
    }
}

/// An interval length as a user writes it: every `100000` requests, or every span of
/// trace time (`1h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interval {
    /// Every this many positions.
    Requests(u64),
    /// Every span of trace time, in seconds.
    Seconds(u64),
}

impl Interval {
    /// Parse a positive count or a span of trace time.
    pub fn parse(s: &str) -> Result<Self, String> {
        if let Some(span) = parse_span(s) {
            return span.map(Interval::Seconds);
        }
        match s.parse::<u64>() {
            Ok(n) if n > 0 => Ok(Interval::Requests(n)),
            _ => Err(format!(
                "`{s}`: expected a count of requests (100000) or a span of trace time (1h)"
            )),
        }
    }
}

/// A span of time, `N` followed by `s`, `m`, `h` or `d`, in seconds; `None` when `s` does
/// not end in a unit (it is then a count), an error when the number before it is bad.
fn parse_span(s: &str) -> Option<Result<u64, String>> {
    let unit = s.chars().last().filter(char::is_ascii_alphabetic)?;
    let seconds_per = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => {
            return Some(Err(format!(
                "`{s}`: a span of trace time ends in s, m, h or d (30m, 1h, 86400s)"
            )))
        }
    };
    let number = &s[..s.len() - 1];
    Some(
        number
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .and_then(|n| n.checked_mul(seconds_per))
            .ok_or_else(|| format!("`{s}`: expected a whole positive number before `{unit}`")),
    )
}

/// Why a span of trace time cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeSpanError {
    /// Every request has the same timestamp (or the trace has none).
    #[error("the trace's timestamps are all {time}: a span of trace time needs a trace with time")]
    NoTime {
        /// The one timestamp.
        time: u64,
    },
    /// The warm-up covers the whole trace.
    #[error("a warm-up of {span} time units leaves nothing to count: the trace spans {spanned}")]
    WarmupTooLong {
        /// The warm-up asked for.
        span: u64,
        /// From the first timestamp to the last.
        spanned: u64,
    },
}

/// Watches timestamps in trace order and records where spans of trace time end.
#[derive(Debug, Clone)]
pub struct TimeMarks {
    warmup_span: Option<u64>,
    interval_span: Option<u64>,
    first: Option<u64>,
    latest: u64,
    warmup_end: Option<u64>,
    /// Positions where an interval ends (the next one starts there).
    ends: Vec<u64>,
    /// Each interval's number of spans from the first timestamp (0 for the first): an
    /// interval in which nothing happens is skipped, so these may jump.
    starts: Vec<u64>,
}

impl TimeMarks {
    /// Marks for a warm-up of `warmup_span` and intervals of `interval_span` time units
    /// (either may be absent; an interval span of 0 is taken as 1).
    pub fn new(warmup_span: Option<u64>, interval_span: Option<u64>) -> Self {
        TimeMarks {
            warmup_span,
            interval_span: interval_span.map(|s| s.max(1)),
            first: None,
            latest: 0,
            warmup_end: None,
            ends: Vec::new(),
            starts: vec![0],
        }
    }

    /// Whether any span is asked for (if not, there is nothing to watch).
    pub fn wanted(&self) -> bool {
        self.warmup_span.is_some() || self.interval_span.is_some()
    }

    /// The operation at `position` (counted as [`crate::Schedule`] counts) happened at
    /// `time`. Positions must come in increasing order.
    pub fn observe(&mut self, position: u64, time: u64) {
        let first = *self.first.get_or_insert(time);
        self.latest = self.latest.max(time);
        let elapsed = self.latest - first;
        if let (Some(span), None) = (self.warmup_span, self.warmup_end) {
            if elapsed >= span {
                self.warmup_end = Some(position);
            }
        }
        if let Some(span) = self.interval_span {
            let k = elapsed / span;
            if k > *self.starts.last().expect("the first interval") {
                self.ends.push(position);
                self.starts.push(k);
            }
        }
    }

    /// The positions served as warm-up (0 without a warm-up span).
    pub fn warmup(&self) -> Result<u64, TimeSpanError> {
        match self.warmup_span {
            None => Ok(0),
            Some(span) => {
                self.check_time()?;
                self.warmup_end.ok_or(TimeSpanError::WarmupTooLong {
                    span,
                    spanned: self.spanned(),
                })
            }
        }
    }

    /// The intervals to count in ([`Intervals::None`] without an interval span).
    pub fn intervals(&self) -> Result<Intervals, TimeSpanError> {
        match self.interval_span {
            None => Ok(Intervals::None),
            Some(_) => {
                self.check_time()?;
                Ok(Intervals::Ends(Arc::from(self.ends.as_slice())))
            }
        }
    }

    /// When each interval starts, in time units after the first timestamp (a multiple of
    /// the interval span), in the order the runs report their intervals.
    pub fn interval_start_times(&self) -> Vec<u64> {
        let span = self.interval_span.unwrap_or(0);
        self.starts.iter().map(|k| k * span).collect()
    }

    fn spanned(&self) -> u64 {
        self.latest - self.first.unwrap_or(0)
    }

    fn check_time(&self) -> Result<(), TimeSpanError> {
        if self.spanned() == 0 {
            return Err(TimeSpanError::NoTime {
                time: self.first.unwrap_or(0),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(times: &[u64], warmup: Option<u64>, interval: Option<u64>) -> TimeMarks {
        let mut marks = TimeMarks::new(warmup, interval);
        for (i, &t) in times.iter().enumerate() {
            marks.observe(i as u64, t);
        }
        marks
    }

    #[test]
    fn a_warmup_ends_at_the_first_request_at_or_after_its_span() {
        // Times 100 100 130 160 170 220: 60 units after 100 is 160, at position 3.
        let marks = watch(&[100, 100, 130, 160, 170, 220], Some(60), None);
        assert_eq!(marks.warmup(), Ok(3));
        // 61 units: 161 is first reached by 170, at position 4.
        assert_eq!(
            watch(&[100, 100, 130, 160, 170, 220], Some(61), None).warmup(),
            Ok(4)
        );
        assert_eq!(watch(&[5, 9], None, None).warmup(), Ok(0));
    }

    #[test]
    fn intervals_end_where_time_crosses_each_span_and_empty_ones_are_skipped() {
        // Spans of 50 from 100: [100,150) holds 0..3, [150,200) holds 3..5, [200,250) is
        // empty, [250,300) holds 5..7.
        let marks = watch(&[100, 120, 149, 150, 199, 260, 299], None, Some(50));
        assert_eq!(
            marks.intervals(),
            Ok(Intervals::Ends(Arc::from(&[3u64, 5][..])))
        );
        assert_eq!(marks.interval_start_times(), vec![0, 50, 150]);
    }

    #[test]
    fn time_going_backwards_does_not_move_a_span_back() {
        // 100 200 150 250 with spans of 100: the 150 counts as 200 (still interval 1).
        let marks = watch(&[100, 200, 150, 250, 300], None, Some(100));
        assert_eq!(
            marks.intervals(),
            Ok(Intervals::Ends(Arc::from(&[1u64, 4][..])))
        );
        assert_eq!(marks.interval_start_times(), vec![0, 100, 200]);
    }

    #[test]
    fn a_trace_without_time_or_too_short_is_refused() {
        let flat = watch(&[0, 0, 0], Some(10), Some(10));
        assert_eq!(flat.warmup(), Err(TimeSpanError::NoTime { time: 0 }));
        assert_eq!(flat.intervals(), Err(TimeSpanError::NoTime { time: 0 }));
        let short = watch(&[10, 20, 30], Some(21), None);
        assert_eq!(
            short.warmup(),
            Err(TimeSpanError::WarmupTooLong {
                span: 21,
                spanned: 20
            })
        );
        assert!(!TimeMarks::new(None, None).wanted());
    }
}
