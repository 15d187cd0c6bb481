//! The mirror that corrects its size from observed service times (Burnett §2.5.1: "if
//! the time is low, the file must have been in the cache ... by comparing these timings
//! with the prediction provided by the mirror cache, NeST can adjust the size").
//!
//! Policies cannot be resized in place, so instead of one mirror this keeps a bank of
//! mirrors at 1/8, 1/4, 1/2, 1, 2, 4 and 8 times the given estimate, all fed the same
//! scheduled requests. Each read is timed and judged a hit or a miss; each mirror scores
//! (with exponential decay) how often its prediction for that request, made when it was
//! scheduled, agreed with the judgement; predictions come from the best-scoring mirror
//! (ties go to the one nearest the given estimate). The cost is seven mirrors' updates
//! per scheduled request.
//!
//! The judgement: a read is a miss when it took longer than 50 µs plus the time to copy
//! its bytes at 4 GB/s. A page-cache hit costs a system call and a copy (a few µs for a
//! small file, ~0.1-0.3 ms for 1 MiB); a miss costs at least one device access (~0.1 ms
//! on fast flash, milliseconds on a disk), so the threshold sits between the two on the
//! devices this project measures; on a device faster than that the judge calls misses
//! hits and the bank drifts toward larger mirrors.
//!
//! The same bank learns a kernel timer's phase instead ([`MirrorBank::phases`]): a
//! model of reclaim with stale statistics (`linux:stats_ms=2000`) agrees with the
//! kernel only when its flushes fall when the kernel's do, which a mirror cannot see;
//! mirrors at phases spread over the period are judged by the request's span (slot
//! granted to read end) against a threshold, exactly as the offline bank judges a
//! request log ([`crate::replay_bank`], [`crate::bank_score`]), so the offline score
//! forecasts this one.

use std::collections::HashMap;

use crate::backend::Job;
use crate::bank_score::{Judge, Scores, ServiceTimes, MAX_MODELS};
use crate::mirror::Mirror;
use crate::oracle::{Oracle, Prediction};
use crate::replay_bank::{phase_specs, stats_period};
use crate::ServeError;

/// Sizes of the bank relative to the estimate, smallest first.
pub const FACTORS: [f64; 7] = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0];
const GIVEN: usize = 3;

/// Whether a read of `bytes` that took `read_ns` was served from the cache.
pub fn judged_hit(bytes: u64, read_ns: u64) -> bool {
    read_ns <= 50_000 + bytes / 4
}

/// A bank of mirrors fed the same requests, predicting with the one that has agreed
/// best with the judged reads ([`crate::bank_score`]): of one policy at several sizes
/// ([`MirrorBank::new`]), or of a model of a kernel timer at several phases
/// ([`MirrorBank::phases`]).
#[derive(Debug)]
pub struct MirrorBank {
    mirrors: Vec<Mirror>,
    scores: Scores,
    judge: Judge,
    /// Each in-service request's predictions (bit i: mirror i said hit), by job address.
    pending: HashMap<usize, u32>,
}

impl MirrorBank {
    /// Mirrors of `policy` around `size_bytes`, judged by their reads' own times.
    pub fn new(policy: &str, size_bytes: u64) -> Result<Self, ServeError> {
        let mirrors = FACTORS
            .iter()
            .map(|f| Mirror::new(policy, ((size_bytes as f64) * f) as u64))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::of(mirrors, GIVEN, Judge::Adaptive))
    }

    /// `count` mirrors of `spec` (a model with a timer, `linux:stats_ms=2000`) at
    /// `size_bytes`, their timers' phases spread over the period
    /// ([`phase_specs`]), judged as `judge` says; ties go to the first phase, as
    /// offline ([`crate::replay_bank::evaluate_bank`]).
    pub fn phases(
        spec: &str,
        size_bytes: u64,
        count: u64,
        judge: Judge,
    ) -> Result<Self, ServeError> {
        let period = stats_period(spec).ok_or_else(|| {
            ServeError::config(
                "mirror phases",
                format!("{spec} has no timer to phase (no stats_ms above 0)"),
            )
        })?;
        if count == 0 || count > MAX_MODELS as u64 {
            return Err(ServeError::config(
                "mirror phases",
                format!("1 to {MAX_MODELS} phases, not {count}"),
            ));
        }
        let mirrors = phase_specs(spec, period, count)
            .iter()
            .map(|s| Mirror::new(s, size_bytes))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::of(mirrors, 0, judge))
    }

    fn of(mirrors: Vec<Mirror>, preferred: usize, judge: Judge) -> Self {
        MirrorBank {
            scores: Scores::new(mirrors.len(), preferred),
            mirrors,
            judge,
            pending: HashMap::new(),
        }
    }

    /// The index of the mirror whose predictions are used now (its size factor in
    /// [`FACTORS`], or its phase's place in the period).
    pub fn active(&self) -> usize {
        self.scores.chosen()
    }

    /// The size factor of the mirror whose predictions are used now (a bank of sizes).
    pub fn active_factor(&self) -> f64 {
        FACTORS[self.active().min(FACTORS.len() - 1)]
    }

    fn key(job: &Job) -> usize {
        job as *const Job as usize
    }
}

impl Oracle for MirrorBank {
    fn predict(&mut self, job: &Job) -> Prediction {
        let active = self.active();
        self.mirrors[active].predict(job)
    }

    fn scheduled(&mut self, job: &Job) {
        let mut bits = 0u32;
        for (i, m) in self.mirrors.iter_mut().enumerate() {
            if m.predicts_hit(job) {
                bits |= 1 << i;
            }
            m.access(job);
        }
        self.pending.insert(Self::key(job), bits);
    }

    fn served(&mut self, job: &Job, times: ServiceTimes) {
        let Some(bits) = self.pending.remove(&Self::key(job)) else {
            return;
        };
        let hit = self.judge.hit(job.end - job.start, times);
        let before = self.active();
        self.scores.judged(bits, hit);
        if self.active() != before {
            tracing::debug!(
                from = before,
                to = self.active(),
                "mirror bank: another mirror predicts"
            );
        }
    }

    fn abandoned(&mut self, job: &Job) {
        self.pending.remove(&Self::key(job));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Source, PAGE_BYTES};
    use std::sync::Arc;

    fn job(inode: u64) -> Job {
        Job {
            path: std::path::Path::new("/x").into(),
            inode,
            start: 0,
            end: PAGE_BYTES,
            source: Source::Os(Arc::new(tempfile::tempfile().unwrap())),
        }
    }

    /// A read of `ns` (the span no longer).
    fn read(ns: u64) -> ServiceTimes {
        ServiceTimes {
            read_ns: ns,
            span_ns: ns,
        }
    }

    #[test]
    fn the_judge_separates_copies_from_device_reads() {
        assert!(judged_hit(8 << 10, 5_000));
        assert!(judged_hit(1 << 20, 250_000));
        assert!(!judged_hit(8 << 10, 200_000));
        assert!(!judged_hit(1 << 20, 4_000_000));
    }

    /// The estimate is 4 pages but the real cache holds 16: cycling over 12 one-page
    /// files, the real cache hits every time after the first round while the 4-page
    /// mirror (LRU) always misses. Reads timed as hits move the bank to a mirror of 16
    /// pages or more, whose predictions then say hit.
    #[test]
    fn an_estimate_too_small_grows_toward_the_observed_hits() {
        let mut bank = MirrorBank::new("lru", 4 * PAGE_BYTES).unwrap();
        assert_eq!(bank.active_factor(), 1.0);
        let jobs: Vec<Job> = (1..=12).map(job).collect();
        for round in 0..20 {
            for j in &jobs {
                bank.scheduled(j);
                // The real cache: a miss in the first round, hits after.
                bank.served(j, read(if round == 0 { 5_000_000 } else { 2_000 }));
            }
        }
        assert!(bank.active_factor() >= 4.0, "{}", bank.active_factor());
        assert_eq!(bank.predict(&jobs[0]), Prediction::Hit);
        assert!(bank.pending.is_empty());
    }

    /// Everything is slow (a cache too small for the loop): the bank settles on the
    /// smallest mirror that predicts misses, and a request that is never served leaves
    /// no record behind.
    #[test]
    fn an_estimate_too_large_shrinks_when_reads_are_slow() {
        let mut bank = MirrorBank::new("lru", 16 * PAGE_BYTES).unwrap();
        let jobs: Vec<Job> = (1..=12).map(job).collect();
        for _ in 0..20 {
            for j in &jobs {
                bank.scheduled(j);
                bank.served(j, read(5_000_000));
            }
        }
        assert!(bank.active_factor() <= 0.5, "{}", bank.active_factor());
        assert_eq!(bank.predict(&jobs[0]), Prediction::Miss);
        bank.scheduled(&jobs[0]);
        bank.abandoned(&jobs[0]);
        assert!(bank.pending.is_empty());
    }

    /// The offline bank's hand-worked sequence ([`crate::replay_bank`]'s test), live:
    /// two pages; a is asked every other time, between new files. LRU keeps a and is
    /// always right; FIFO evicts a at 3 (#3) and 5 (#7), so it calls a miss at #4 and
    /// #8. The bank [fifo, lru] starts on fifo (ties go to the first, as in the bank of
    /// phases); until #4 both agree with every judged read; #4's fast span (a hit fifo
    /// called a miss) moves it to lru, which is right at #8. The reads' own times are
    /// all fast: the judge by span does not look at them.
    #[test]
    fn a_bank_judged_by_span_moves_to_the_model_that_agrees() {
        let a = 1;
        let files = [a, 2, a, 3, a, 4, a, 5, a, 6];
        let jobs: Vec<Job> = files.iter().map(|&f| job(f)).collect();
        let mirrors = ["fifo", "lru"]
            .iter()
            .map(|p| Mirror::new(p, 2 * PAGE_BYTES).unwrap())
            .collect();
        let mut bank = MirrorBank::of(mirrors, 0, Judge::Within(1000));
        let mut said = Vec::new();
        for (n, j) in jobs.iter().enumerate() {
            said.push(bank.predict(j));
            bank.scheduled(j);
            let hit = files[n] == a && n > 0;
            let span_ns = if hit { 10_000 } else { 20_000_000 };
            bank.served(
                j,
                ServiceTimes {
                    read_ns: 10_000,
                    span_ns,
                },
            );
            assert_eq!(bank.active(), usize::from(n >= 4), "after #{n}");
        }
        use Prediction::{Hit, Miss};
        assert_eq!(
            said,
            [Miss, Miss, Hit, Miss, Miss, Miss, Hit, Miss, Hit, Miss],
            "fifo's wrong miss at #4, lru's right hit at #8"
        );
    }

    /// A bank of phases needs a timer and 1 to 32 mirrors; its phases split the period.
    #[test]
    fn a_bank_of_phases_is_built_from_a_timer() {
        let judge = Judge::Within(5000);
        let bank = MirrorBank::phases("linux:stats_ms=2000", 1 << 20, 8, judge).unwrap();
        assert_eq!((bank.mirrors.len(), bank.active()), (8, 0));
        assert!(MirrorBank::phases("linux", 1 << 20, 8, judge).is_err());
        assert!(MirrorBank::phases("linux:stats_ms=0", 1 << 20, 8, judge).is_err());
        assert!(MirrorBank::phases("linux:stats_ms=2000", 1 << 20, 0, judge).is_err());
        assert!(MirrorBank::phases("linux:stats_ms=2000", 1 << 20, 33, judge).is_err());
    }
}
