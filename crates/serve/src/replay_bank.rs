//! A bank of mirror models replayed as a live bank would choose among them: every model
//! is fed every scheduled request, each read is judged a hit or a miss from its logged
//! service time ([`Judge`]), and
//! each prediction comes from the model that has agreed best with the reads judged so
//! far (decayed as the adaptive mirror's scores).
//!
//! Why: a model of the kernel's timers (`linux:stats_ms=2000`) needs the timer's phase,
//! which the kernel keeps to itself and a mirror started at some moment cannot know.
//! Choosing the phase per log by its ground truth would tune the model to the log; a
//! bank over the phases learns it online from what the server itself sees (its read
//! times), so its score is one a live mirror could reach. Only the `Scheduled` feed.

use std::cmp::Reverse;

use crate::backend::PAGE_BYTES;
pub use crate::bank_score::{Judge, MAX_MODELS};
use crate::bank_score::{Scores, ServiceTimes};
use crate::mirror::Mirror;
use crate::replay::{pages, pop_ended, Flushes, Running, Score, Scoring};
use crate::trace_log::TraceRecord;
use crate::ServeError;

/// How a logged request is judged: its span is all the log has, so it stands for the
/// read's own time too.
fn judged(judge: Judge, r: &TraceRecord) -> bool {
    let span_ns = r.end_us.saturating_sub(r.start_us).saturating_mul(1000);
    let times = ServiceTimes {
        read_ns: span_ns,
        span_ns,
    };
    judge.hit(r.pages * PAGE_BYTES, times)
}

/// Replay `trace` through a bank of `specs` (policies, each at `size_bytes`), with the
/// kernel's flushes at `flushes_us` (for models told of them), judging reads as `judge`
/// says, and score the bank's predictions as `scoring` says.
pub fn evaluate_bank(
    trace: &[TraceRecord],
    flushes_us: &[u64],
    specs: &[String],
    size_bytes: u64,
    judge: Judge,
    scoring: Scoring,
) -> Result<Score, ServeError> {
    if specs.is_empty() || specs.len() > MAX_MODELS {
        return Err(ServeError::config(
            "bank",
            format!("1 to {MAX_MODELS} models, not {}", specs.len()),
        ));
    }
    let mut mirrors = specs
        .iter()
        .map(|s| Mirror::new(s, size_bytes))
        .collect::<Result<Vec<_>, _>>()?;
    // Ties go to the first model, as in the live bank of phases.
    let mut scores = Scores::new(mirrors.len(), 0);
    // Reads not yet judged, by end time; each request's predictions, bit k for model k.
    let mut running = Running::new();
    let mut said_hit = vec![0u32; trace.len()];
    let mut score = Score::default();
    let mut flushes = Flushes::new(flushes_us);
    for (i, r) in trace.iter().enumerate() {
        while let Some((_, j)) = pop_ended(&mut running, r.start_us) {
            scores.judged(said_hit[j], judged(judge, &trace[j]));
        }
        let flush = flushes.due(r.start_us);
        for (k, m) in mirrors.iter_mut().enumerate() {
            if m.holds(r.inode, pages(r)) {
                said_hit[i] |= 1 << k;
            }
            m.set_wall_clock(r.start_us / 1000);
            if flush {
                m.flush_stats();
            }
            m.read(r.inode, pages(r));
        }
        if let Some(actual) = scoring.truth(r) {
            score.add(said_hit[i] >> scores.chosen() & 1 == 1, actual);
        }
        running.push(Reverse((r.end_us, i)));
    }
    Ok(score)
}

/// The period of a spec's timer (`stats_ms=2000` gives 2000), if it has one above 0.
pub fn stats_period(spec: &str) -> Option<u64> {
    spec.split(':')
        .find_map(|p| p.strip_prefix("stats_ms="))
        .and_then(|v| v.parse().ok())
        .filter(|&ms| ms > 0)
}

/// The phases of a bank over a timer of `period_ms`: `n` specs, `spec` with
/// `stats_phase_ms` at 0, 1/n, ..., (n-1)/n of the period.
pub fn phase_specs(spec: &str, period_ms: u64, n: u64) -> Vec<String> {
    (0..n)
        .map(|k| format!("{spec}:stats_phase_ms={}", k * period_ms / n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::{Actual, Prediction};

    /// A one-page request for file `inode`, the `order`-th, served in `read_us` from
    /// 100 ms times `order`.
    fn req(order: u64, inode: u64, read_us: u64, actual: Actual) -> TraceRecord {
        TraceRecord {
            order,
            inode,
            first_page: 0,
            pages: 1,
            predicted: Prediction::Miss,
            cached_pages: None,
            cached_at_choice: None,
            actual: Some(actual),
            start_us: order * 100_000,
            end_us: order * 100_000 + read_us,
        }
    }

    /// Two pages; a is asked every other time, between new files. LRU keeps a and is
    /// always right. FIFO evicts a at c (#3) and e (#7), wrong at #4 and #8. The bank
    /// [fifo, lru] starts on fifo (ties go first); the reads agree with both until #4,
    /// whose fast read (a hit fifo called a miss) is judged before #5; from #5 on the
    /// bank follows lru: one wrong prediction of ten.
    #[test]
    fn the_bank_follows_the_model_the_read_times_agree_with() {
        use Actual::{Hit, Miss};
        let (a, slow, fast) = (1, 20_000, 10);
        let files = [a, 2, a, 3, a, 4, a, 5, a, 6];
        let trace: Vec<TraceRecord> = files
            .iter()
            .enumerate()
            .map(|(n, &f)| {
                let hit = f == a && n > 0;
                let (read, actual) = if hit { (fast, Hit) } else { (slow, Miss) };
                req(n as u64, f, read, actual)
            })
            .collect();
        let size = 2 * PAGE_BYTES;
        let all = Scoring::default();
        let alone = |p: &str| {
            crate::replay::evaluate(&trace, &[], p, size, crate::replay::Feed::Scheduled, all)
                .unwrap()
        };
        assert_eq!(alone("fifo").false_misses, 2);
        assert_eq!(alone("lru").false_misses, 0);
        let specs = ["fifo".to_string(), "lru".to_string()];
        let bank = evaluate_bank(&trace, &[], &specs, size, Judge::Adaptive, all).unwrap();
        assert_eq!(
            (bank.compared, bank.false_misses, bank.false_hits),
            (10, 1, 0)
        );
        // A bank of one is that model.
        // The same with a judge by span: 10 µs hits, 20 ms misses either side of 1 ms.
        let by_span = evaluate_bank(&trace, &[], &specs, size, Judge::Within(1000), all).unwrap();
        assert_eq!(by_span, bank);
        // A judge that calls everything a miss keeps the bank on fifo (the two agree
        // on every miss, and fifo's wrong calls are misses): fifo's score.
        let blind = evaluate_bank(&trace, &[], &specs, size, Judge::Within(1), all).unwrap();
        assert_eq!(blind, alone("fifo"));
        // A bank of one is that model.
        let one = evaluate_bank(&trace, &[], &specs[..1], size, Judge::Adaptive, all).unwrap();
        assert_eq!(one, alone("fifo"));
        assert!(evaluate_bank(&trace, &[], &[], size, Judge::Adaptive, all).is_err());
    }

    #[test]
    fn phases_split_the_period() {
        assert_eq!(
            phase_specs("linux:stats_ms=2000", 2000, 4),
            [
                "linux:stats_ms=2000:stats_phase_ms=0",
                "linux:stats_ms=2000:stats_phase_ms=500",
                "linux:stats_ms=2000:stats_phase_ms=1000",
                "linux:stats_ms=2000:stats_phase_ms=1500",
            ]
        );
    }
}
