//! How a bank of mirrors judges a completed read and chooses the mirror it predicts
//! with: one code for the live banks ([`crate::adaptive`]) and the offline one
//! ([`crate::replay_bank`]).
//!
//! Why shared: the offline bank's score is only worth something as a forecast of the
//! live bank's, so the two must judge a read and move between mirrors identically; a
//! second copy would drift.

use crate::adaptive::judged_hit;

/// Weight kept by the old score at each judgement: scores reflect the last ~200 reads.
pub const DECAY: f64 = 0.995;

/// At most this many mirrors in a bank (their predictions are bits of a word).
pub const MAX_MODELS: usize = 32;

/// The two times a server sees of one served request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceTimes {
    /// The read alone (the bytes' copy, or the device's read).
    pub read_ns: u64,
    /// From the slot granted to the read's end: what a request log records
    /// (`start_us`..`end_us`), the ground-truth check included.
    pub span_ns: u64,
}

/// How a served request is judged a hit or a miss (only from its times, which the
/// server sees).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judge {
    /// As the adaptive mirror judges a read ([`judged_hit`]: 50 µs plus a copy at
    /// 4 GB/s), on the read's own time. A request log has only the span, which holds
    /// more than the read (here a cached 1 MiB took 0.5-1 ms), so offline on a loaded
    /// machine this calls nearly everything a miss.
    Adaptive,
    /// A hit when the span is at most this many µs.
    Within(u64),
}

impl Judge {
    /// Whether the request of `bytes`, served in `times`, was a hit.
    pub fn hit(self, bytes: u64, times: ServiceTimes) -> bool {
        match self {
            Judge::Adaptive => judged_hit(bytes, times.read_ns),
            Judge::Within(us) => times.span_ns <= us.saturating_mul(1000),
        }
    }
}

/// Each mirror's decayed count of agreements with the judged reads, and the mirror
/// chosen from them.
#[derive(Clone, Debug)]
pub struct Scores {
    scores: Vec<f64>,
    /// Ties go to the mirror nearest this one (and between two as near, the later).
    preferred: usize,
    chosen: usize,
}

impl Scores {
    /// `count` mirrors, none judged yet: `preferred` is chosen.
    pub fn new(count: usize, preferred: usize) -> Self {
        Scores {
            scores: vec![0.0; count],
            preferred,
            chosen: preferred,
        }
    }

    /// The mirror whose predictions are used now.
    pub fn chosen(&self) -> usize {
        self.chosen
    }

    /// A read was judged `hit`; `said_hit` has bit k set where mirror k predicted a hit
    /// for it when it was scheduled. Rescores every mirror and chooses again.
    pub fn judged(&mut self, said_hit: u32, hit: bool) {
        for (k, s) in self.scores.iter_mut().enumerate() {
            let agreed = (said_hit >> k & 1 == 1) == hit;
            *s = *s * DECAY + f64::from(u8::from(agreed));
        }
        let distance = |k: usize| k.abs_diff(self.preferred);
        self.chosen = (0..self.scores.len())
            .max_by(|&a, &b| {
                self.scores[a]
                    .total_cmp(&self.scores[b])
                    .then(distance(b).cmp(&distance(a)))
            })
            .unwrap_or(self.preferred);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judges_time_what_they_say() {
        let t = |read_ns, span_ns| ServiceTimes { read_ns, span_ns };
        // A 1 MiB copy in 0.2 ms inside a 3 ms span: a hit by the read, and by 5 ms.
        assert!(Judge::Adaptive.hit(1 << 20, t(200_000, 3_000_000)));
        assert!(Judge::Within(5000).hit(1 << 20, t(200_000, 3_000_000)));
        assert!(!Judge::Within(2000).hit(1 << 20, t(200_000, 3_000_000)));
        assert!(Judge::Within(5000).hit(1 << 20, t(5_000_000, 5_000_000)));
        assert!(!Judge::Adaptive.hit(1 << 20, t(4_000_000, 4_000_000)));
    }

    /// Three mirrors preferring the first: ties go to the preferred, then the nearer;
    /// the one that agreed most is chosen.
    #[test]
    fn the_best_agreeing_mirror_is_chosen() {
        let mut s = Scores::new(3, 0);
        assert_eq!(s.chosen(), 0);
        s.judged(0b111, true);
        assert_eq!(s.chosen(), 0, "all agreed: the preferred");
        s.judged(0b110, true);
        assert_eq!(s.chosen(), 1, "1 and 2 lead; 1 is nearer");
        s.judged(0b100, true);
        assert_eq!(s.chosen(), 2, "only 2 agreed");
        let mut middle = Scores::new(3, 1);
        middle.judged(0b101, true);
        assert_eq!(middle.chosen(), 2, "0 and 2 as near: the later");
    }
}
