//! Hill climbing on the hit rate: the controller that sizes W-TinyLFU's window.
//!
//! Einziger, Eytan, Friedman, Manes, "Adaptive Software Cache Management" (Middleware
//! 2018) and Caffeine's `BoundedLocalCache` size the admission window by trial: every
//! sample period the hit rate is compared with the previous period's; if it improved, the
//! window keeps moving in the same direction, otherwise it turns round. Each step is a
//! fraction of the capacity that shrinks geometrically while the hit rate is stable, so
//! the window settles, and jumps back to full size when the hit rate changes by more than
//! a threshold (a new phase of the workload), so it can move again.
//!
//! **Periods by trace time** ([`HillClimber::pace_by_trace`]). A miniature simulation
//! (`sim::mrc::minisim`) runs the policy on a spatial sample of the trace in a cache `R`
//! times smaller. Counted in its own requests, a miniature's period of `10 C'` sampled
//! requests stands for `10 C` requests of the trace only on average: the sample's share
//! of the requests depends on which hot keys it holds, and varies along the trace, so its
//! periods drift against the workload's phases (a scan every so many requests) while
//! the full cache's periods fall at fixed places. Paced by the trace instead, a period
//! ends where the full cache's does (every `period` requests of the whole trace), and
//! the climber compares hit rates measured over the same stretches of the trace as the
//! full cache. Fed every request of a trace in order (positions 0, 1, 2, ...), it
//! decides exactly when, and exactly as, counting does.

/// The climber's state; [`HillClimber::record`] feeds it one request at a time.
#[derive(Clone, Debug)]
pub struct HillClimber {
    sample: u64,
    hits: u64,
    requests: u64,
    previous_hit_rate: f64,
    /// Signed step in units: positive grows the window.
    step: f64,
    full_step: f64,
    /// Sample periods completed (steps taken).
    periods: u64,
    /// `Some` when periods end by the trace's clock rather than by counted requests.
    trace: Option<TracePeriods>,
}

/// Periods of a fixed number of the trace's requests (see the module docs).
#[derive(Clone, Copy, Debug)]
struct TracePeriods {
    /// Requests of the trace in a period.
    length: u64,
    /// The trace position (0-based) at which the period under way ends, exclusive.
    end: u64,
}

/// A step is this fraction of the capacity when it (re)starts (Caffeine's 6.25%).
const STEP_FRACTION: f64 = 0.0625;
/// Each period without a large change multiplies the step by this (Caffeine's 0.98).
const STEP_DECAY: f64 = 0.98;
/// A hit-rate change of at least this much (absolute) restarts the step at full size.
const RESTART_THRESHOLD: f64 = 0.05;

impl HillClimber {
    /// A climber for a cache of `capacity` units deciding every `sample` requests. The
    /// first step shrinks the window, as Caffeine's does; a worse hit rate reverses it.
    pub fn new(capacity: u64, sample: u64) -> Self {
        let full_step = STEP_FRACTION * capacity as f64;
        HillClimber {
            sample: sample.max(1),
            hits: 0,
            requests: 0,
            previous_hit_rate: 0.0,
            step: -full_step,
            full_step,
            periods: 0,
            trace: None,
        }
    }

    /// End periods by the trace's clock: every `length` requests of the whole trace,
    /// counted from position 0, whichever of them this climber sees
    /// ([`HillClimber::record_at`]).
    pub fn pace_by_trace(&mut self, length: u64) {
        let length = length.max(1);
        self.trace = Some(TracePeriods {
            length,
            end: length,
        });
    }

    /// Steps taken so far (0: the window is still where it started).
    pub fn periods(&self) -> u64 {
        self.periods
    }

    /// The cache now has `capacity` units and the climber decides every `sample`
    /// requests. Steps are a fraction of the capacity, so the full step is recomputed and
    /// the current step keeps its direction and its decay (the same fraction of the new
    /// full step); the period under way and the last hit rate are kept. A climber paced
    /// by the trace keeps its periods' length and end (the caller paces it anew if the
    /// trace time its capacity stands for changed).
    pub fn resize(&mut self, capacity: u64, sample: u64) {
        let full_step = STEP_FRACTION * capacity as f64;
        let fraction = if self.full_step > 0.0 {
            self.step / self.full_step
        } else {
            -1.0
        };
        self.step = fraction * full_step;
        self.full_step = full_step;
        self.sample = sample.max(1);
    }

    /// Count one request; at the end of a sample period, the change of the window size
    /// (in units, signed) to apply now.
    #[inline]
    pub fn record(&mut self, hit: bool) -> Option<f64> {
        self.hits += u64::from(hit);
        self.requests += 1;
        if self.requests < self.sample {
            return None;
        }
        Some(self.decide())
    }

    /// Count one request at trace position `position` (0-based, increasing) on a climber
    /// paced by the trace ([`HillClimber::pace_by_trace`]; otherwise the same as
    /// [`HillClimber::record`]), and return the change of the window to apply now.
    ///
    /// A period ends with the request at its last position; when the climber did not see
    /// that one (a sample skips most positions), it ends at the first request past it,
    /// before that request is counted, and the periods the climber saw no request of are
    /// skipped (no hit rate to compare).
    #[inline]
    pub fn record_at(&mut self, hit: bool, position: u64) -> Option<f64> {
        let Some(mut trace) = self.trace else {
            return self.record(hit);
        };
        let mut change = None;
        if position >= trace.end {
            if self.requests > 0 {
                change = Some(self.decide());
            }
            trace.end += (position - trace.end) / trace.length * trace.length + trace.length;
        }
        self.hits += u64::from(hit);
        self.requests += 1;
        if position + 1 >= trace.end {
            let step = self.decide();
            change = Some(change.unwrap_or(0.0) + step);
            trace.end += trace.length;
        }
        self.trace = Some(trace);
        change
    }

    /// End the period under way: the step to take, and the next one.
    fn decide(&mut self) -> f64 {
        let hit_rate = self.hits as f64 / self.requests as f64;
        let change = hit_rate - self.previous_hit_rate;
        let amount = if change >= 0.0 { self.step } else { -self.step };
        self.step = if change.abs() >= RESTART_THRESHOLD {
            self.full_step.copysign(amount)
        } else {
            STEP_DECAY * amount
        };
        self.previous_hit_rate = hit_rate;
        self.hits = 0;
        self.requests = 0;
        self.periods += 1;
        amount
    }
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::HillClimber;

    /// Feed one period with `hits` hits out of `n`.
    fn period(c: &mut HillClimber, n: u64, hits: u64) -> f64 {
        for i in 0..n - 1 {
            assert_eq!(c.record(i < hits), None);
        }
        c.record(hits == n).unwrap()
    }

    #[test]
    fn keeps_direction_while_improving_and_turns_when_worse() {
        // capacity 160: full step 10 units; sample 10 requests.
        let mut c = HillClimber::new(160, 10);
        // hit rate 0 -> 0.5: improved (and by >= 0.05): take the step as set (-10), the
        // next restarts at full size in the same direction.
        assert_eq!(period(&mut c, 10, 5), -10.0);
        // 0.5 -> 0.6: improved by 0.1: -10 again, restart at full size.
        assert_eq!(period(&mut c, 10, 6), -10.0);
        // 0.6 -> 0.4: worse by 0.2: reverse (+10); restart at +10.
        assert_eq!(period(&mut c, 10, 4), 10.0);
        // 0.4 -> 0.4: no change (counts as improved): +10, then decay to 9.8.
        assert_eq!(period(&mut c, 10, 4), 10.0);
        assert_eq!(period(&mut c, 10, 4), 9.8);
        assert!((period(&mut c, 10, 4) - 9.604).abs() < 1e-9);
        assert_eq!(c.periods(), 6);
    }

    #[test]
    fn a_resize_scales_the_step_and_keeps_its_direction() {
        let mut c = HillClimber::new(160, 10);
        assert_eq!(period(&mut c, 10, 5), -10.0); // step now -10 (full)
        assert_eq!(period(&mut c, 10, 5), -10.0); // no change: decays to -9.8
                                                  // 320 units, sampling every 20: full step 20, the step -9.8/10 of it
        c.resize(320, 20);
        assert!((period(&mut c, 20, 10) + 19.6).abs() < 1e-9);
        // a fresh climber resized before any request is a fresh one at the new size
        let mut r = HillClimber::new(32, 10);
        r.resize(64, 20);
        let mut f = HillClimber::new(64, 20);
        assert_eq!(period(&mut r, 20, 3), period(&mut f, 20, 3));
    }

    #[test]
    fn trace_periods_end_at_the_trace_positions_hand_worked() {
        // capacity 160 (full step 10), periods of 10 trace requests: [0, 10), [10, 20)...
        let mut c = HillClimber::new(160, 4);
        c.pace_by_trace(10);
        // Period [0, 10): a hit at 2, a miss at 5; 9 is not seen, so it stays open.
        assert_eq!(c.record_at(true, 2), None);
        assert_eq!(c.record_at(false, 5), None);
        // 13 closes it first (hit rate 0.5 against 0: improved by >= 0.05, so the step as
        // set, -10, and a restart at -10), then counts in [10, 20). The count-based sample
        // of 4 plays no part.
        assert_eq!(c.record_at(true, 13), Some(-10.0));
        // 19 is the period's last position: counted, then the period ends (1.0 against
        // 0.5: improved, -10 again).
        assert_eq!(c.record_at(true, 19), Some(-10.0));
        // Nothing in [20, 30) nor [30, 40): those periods are skipped without a decision;
        // 45 opens [40, 50) and 49 ends it (0.0 against 1.0: worse, reverse to +10).
        assert_eq!(c.record_at(false, 45), None);
        assert_eq!(c.periods(), 2);
        assert_eq!(c.record_at(false, 49), Some(10.0));
        assert_eq!(c.periods(), 3);
    }

    #[test]
    fn paced_by_every_position_it_decides_as_counting_does() {
        testutil::explore(|seed| {
            let mut rng = seed.rng();
            let mut counted = HillClimber::new(640, 40);
            let mut paced = HillClimber::new(640, 40);
            paced.pace_by_trace(40);
            for position in 0..20_000u64 {
                // Hit rates that drift and jump, so steps restart and decay.
                let p = 0.3 + 0.4 * ((position / 3_000) % 2) as f64;
                let hit = rng.gen_bool(p);
                assert_eq!(
                    paced.record_at(hit, position),
                    counted.record(hit),
                    "{seed}: request {position}"
                );
            }
            assert_eq!(paced.periods(), 500);
        });
    }
}
