//! W-TinyLFU's frequency sketch: a count-min sketch of 4-bit counters with periodic
//! halving, optionally behind a doorkeeper (see `wtinylfu.rs` for the policy, and
//! docs/policies.md).

use crate::doorkeeper::Doorkeeper;
use crate::wtinylfu::mix;

/// A count-min sketch of 4-bit counters with periodic halving, optionally behind a
/// [`Doorkeeper`].
#[derive(Clone, Debug)]
pub struct FrequencySketch {
    words: Vec<u64>,
    words_per_row: usize,
    mask: u64,
    /// 0 when a row is `mask + 1` counters wide (a power of two, indexed by masking the
    /// hash); otherwise the row's width, indexed by the hash's high bits
    /// ([`FrequencySketch::set_width`]: a miniature's sketch).
    range: u64,
    seeds: [u64; 4],
    additions: u64,
    sample_size: u64,
    doorkeeper: Option<Doorkeeper>,
    /// `Some` when the sketch halves by the trace's clock ([`FrequencySketch::pace_by_trace`]).
    trace: Option<TracePace>,
}

/// A sketch's reset period in requests of the whole trace, for a miniature cache.
#[derive(Clone, Copy, Debug)]
struct TracePace {
    /// Requests of the trace between halvings (as `sample_size` counts them at full size).
    period: u64,
    /// Trace requests accounted for so far (the position after the last one counted).
    seen: u64,
}

/// A sketch row's width for about `entries` keys: a power of two, 64 to 2^26 counters.
pub(crate) fn sketch_width(entries: usize) -> usize {
    entries.clamp(64, 1 << 26).next_power_of_two()
}

/// The word and bit shift of counter `idx` of `row`, sixteen 4-bit counters a word.
#[inline]
fn counter_at(words_per_row: usize, row: usize, idx: usize) -> (usize, u32) {
    (row * words_per_row + (idx >> 4), ((idx & 15) * 4) as u32)
}

impl FrequencySketch {
    /// A sketch for about `entries` distinct hot keys, halving after `sample_size`
    /// increments, with hashes derived from `seed`.
    pub fn new(entries: usize, sample_size: u64, seed: u64) -> Self {
        let width = sketch_width(entries);
        let words_per_row = width / 16;
        let mut seeds = [0; 4];
        for (i, s) in seeds.iter_mut().enumerate() {
            *s = mix(seed ^ mix(i as u64 + 1)) | 1;
        }
        FrequencySketch {
            words: vec![0; 4 * words_per_row],
            words_per_row,
            mask: width as u64 - 1,
            range: 0,
            seeds,
            additions: 0,
            sample_size: sample_size.max(1),
            doorkeeper: None,
            trace: None,
        }
    }

    /// Rows of `width` counters (at least 16) instead of the power of two `new` chose,
    /// before anything is counted. A miniature cache of `R C` objects stands for a full
    /// cache of `C`, whose sketch rows are `next_pow2(C)` wide; the sample holds `R`
    /// times the keys, so rows `R next_pow2(C)` wide give each counter the same expected
    /// load, and the same collisions, as the full sketch's (the miniature's own
    /// `next_pow2(R C)` would give it between half and twice as many counters per key,
    /// and its estimates fewer or more collisions). A width that is not a power of two
    /// maps a hash to a counter by its high bits (`hash x width / 2^64`); a power of two
    /// keeps the mask, so a width equal to `new`'s changes nothing.
    pub fn set_width(&mut self, width: usize) {
        debug_assert_eq!(self.additions, 0, "the sketch has counted already");
        let width = width.clamp(16, 1 << 26);
        self.words_per_row = width.div_ceil(16);
        self.words = vec![0; 4 * self.words_per_row];
        if width.is_power_of_two() {
            self.mask = width as u64 - 1;
            self.range = 0;
        } else {
            self.range = width as u64;
        }
    }

    /// Halve by the trace's clock: after `period` requests of the whole trace, counted by
    /// [`FrequencySketch::increment_at`]. A sampled key's requests are all in the sample,
    /// so with the full cache's period in trace requests each of its counters ages as it
    /// does in the full cache's sketch; counted in sampled requests instead, the period
    /// would stretch or shrink with the sample's share of the requests. The doorkeeper
    /// keeps its size (it holds the sample's keys).
    pub fn pace_by_trace(&mut self, period: u64) {
        self.trace = Some(TracePace {
            period: period.max(1),
            seen: 0,
        });
    }

    /// Resize for `entries` keys and a period of `sample_size` increments, as
    /// [`FrequencySketch::new`] sizes it, keeping what has been counted (a cache that
    /// is resized keeps its history of frequencies).
    ///
    /// A key's counter in a row is its hash masked to the row's power-of-two width, so
    /// the counter a key uses in a narrower row gathers the counters of the wider row
    /// that agree on the low bits: shrinking adds them up (saturating at 15), which is
    /// what the narrower sketch would have counted. Growing cannot split a count
    /// between the keys that shared it, so each new counter starts at the count of the
    /// one it comes from: estimates never fall below what was counted, as a count-min
    /// sketch promises, and the extra collisions wash out with the following halvings.
    /// A period that the new sample size has already passed ends now (one halving).
    /// The doorkeeper is resized the same way ([`Doorkeeper::resize`]). A sketch given
    /// its width by [`FrequencySketch::set_width`] (a miniature's, sized for the full
    /// cache it stands for) keeps it.
    pub fn resize(&mut self, entries: usize, sample_size: u64) {
        let width = sketch_width(entries);
        let old_width = (self.mask + 1) as usize;
        if width != old_width && self.range == 0 {
            let words_per_row = width / 16;
            let mut words = vec![0u64; 4 * words_per_row];
            for row in 0..4 {
                for idx in 0..width.max(old_width) {
                    let (from_w, from_sh) = counter_at(self.words_per_row, row, idx % old_width);
                    let (to_w, to_sh) = counter_at(words_per_row, row, idx % width);
                    let count = (self.words[from_w] >> from_sh) & 15;
                    let sum = (((words[to_w] >> to_sh) & 15) + count).min(15);
                    words[to_w] = (words[to_w] & !(15 << to_sh)) | (sum << to_sh);
                }
            }
            self.words = words;
            self.words_per_row = words_per_row;
            self.mask = width as u64 - 1;
        }
        self.sample_size = sample_size.max(1);
        if let Some(d) = &mut self.doorkeeper {
            d.resize(usize::try_from(self.sample_size).unwrap_or(usize::MAX));
        }
        if self.additions >= self.sample_size {
            self.halve();
        }
    }

    /// The same sketch with a doorkeeper sized for `sample_size` keys: a key's first access
    /// after each reset sets the filter's bits, later ones count in the sketch.
    pub fn with_doorkeeper(mut self, seed: u64) -> Self {
        let keys = usize::try_from(self.sample_size).unwrap_or(usize::MAX);
        self.doorkeeper = Some(Doorkeeper::new(keys, seed));
        self
    }

    #[inline]
    fn slot(&self, row: usize, key: u64) -> (usize, u32) {
        let hash = mix(key.wrapping_mul(self.seeds[row]));
        let idx = if self.range == 0 {
            hash & self.mask
        } else {
            ((u128::from(hash) * u128::from(self.range)) >> 64) as u64
        };
        counter_at(self.words_per_row, row, idx as usize)
    }

    /// Estimated recent frequency of `key` (0..=15, 0..=16 with a doorkeeper).
    #[inline]
    pub fn estimate(&self, key: u64) -> u8 {
        let counted = (0..4)
            .map(|r| {
                let (w, sh) = self.slot(r, key);
                ((self.words[w] >> sh) & 15) as u8
            })
            .min()
            .unwrap_or(0);
        let admitted = self.doorkeeper.as_ref().is_some_and(|d| d.contains(key));
        counted + u8::from(admitted)
    }

    /// Increments between halvings when counted one by one (its reset period).
    pub fn sample_size(&self) -> u64 {
        self.sample_size
    }

    /// Count one access to `key`.
    #[inline]
    pub fn increment(&mut self, key: u64) {
        self.add(key, 1, self.sample_size);
    }

    /// Count one access to `key` at the whole trace's request `position` (0-based). On a
    /// sketch paced by the trace it stands for the trace's requests since the last one
    /// counted, towards the next halving; otherwise it is [`FrequencySketch::increment`].
    #[inline]
    pub fn increment_at(&mut self, key: u64, position: u64) {
        match &mut self.trace {
            Some(t) => {
                let weight = (position + 1).saturating_sub(t.seen).max(1);
                t.seen = t.seen.max(position + 1);
                let period = t.period;
                self.add(key, weight, period);
            }
            None => self.increment(key),
        }
    }

    /// Count `key`, with `weight` requests towards a halving every `period`.
    #[inline]
    fn add(&mut self, key: u64, weight: u64, period: u64) {
        let first = match &mut self.doorkeeper {
            Some(d) => !d.insert(key),
            None => false,
        };
        if !first {
            self.count(key);
        }
        self.additions += weight;
        if self.additions >= period {
            self.halve();
        }
    }

    #[inline]
    fn count(&mut self, key: u64) {
        for r in 0..4 {
            let (w, sh) = self.slot(r, key);
            if (self.words[w] >> sh) & 15 < 15 {
                self.words[w] += 1 << sh;
            }
        }
    }

    fn halve(&mut self) {
        for w in &mut self.words {
            *w = (*w >> 1) & 0x7777_7777_7777_7777;
        }
        self.additions /= 2;
        if let Some(d) = &mut self.doorkeeper {
            d.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FrequencySketch;

    #[test]
    fn sketch_counts_saturate_and_halve() {
        let mut s = FrequencySketch::new(64, 1000, 3);
        for _ in 0..20 {
            s.increment(7);
        }
        assert_eq!(s.estimate(7), 15);
        assert!(s.estimate(8) <= 15);
        let mut s = FrequencySketch::new(64, 10, 3);
        for _ in 0..9 {
            s.increment(7);
        }
        assert_eq!(s.estimate(7), 9);
        s.increment(7); // tenth addition: 10 halves to 5
        assert_eq!(s.estimate(7), 5);
    }

    #[test]
    fn a_resized_sketch_folds_and_copies_its_counts() {
        // 200 keys, each counted (key % 3) + 1 times, into a sketch 256 counters wide (no
        // counter reaches 15) and one 64 wide (where some saturate, as the fold must too).
        let mut wide = FrequencySketch::new(256, 10_000, 3);
        let mut narrow = FrequencySketch::new(64, 10_000, 3);
        for k in 0..200u64 {
            for _ in 0..=(k % 3) {
                wide.increment(k);
                narrow.increment(k);
            }
        }
        let mut folded = wide.clone();
        folded.resize(64, 10_000);
        assert_eq!(
            folded.words, narrow.words,
            "shrinking gives the narrow sketch"
        );
        // Growing back: every key's estimate is still at least what was counted.
        folded.resize(256, 10_000);
        assert_eq!(folded.words.len(), wide.words.len());
        assert!((0..200u64).all(|k| folded.estimate(k) >= wide.estimate(k)));
        // A period that has already passed at the new sample size ends at once: 8
        // additions against a sample of 8 halve the count of 8.
        let mut s = FrequencySketch::new(64, 10_000, 3);
        for _ in 0..8 {
            s.increment(7);
        }
        s.resize(64, 8);
        assert_eq!(s.estimate(7), 4);
    }

    #[test]
    fn doorkeeper_takes_the_first_access_and_clears_on_reset() {
        // sample 10: the tenth addition halves the counters and clears the filter.
        let mut s = FrequencySketch::new(64, 10, 3).with_doorkeeper(3);
        s.increment(7); // first access: only the filter
        assert_eq!(s.estimate(7), 1);
        s.increment(7); // now counted: 1 + 1
        assert_eq!(s.estimate(7), 2);
        for _ in 0..7 {
            s.increment(7);
        }
        assert_eq!(s.estimate(7), 9); // 8 counted + the filter
        s.increment(7); // tenth: 9 counted, halved to 4; filter cleared
        assert_eq!(s.estimate(7), 4);
    }

    #[test]
    fn a_sketch_paced_by_the_trace_halves_after_the_trace_period() {
        // Halving every 100 requests of the trace; this sketch sees key 7 at positions 9,
        // 49 and 99 only: they stand for 10, 40 and 50 trace requests, so the third one
        // completes the period and halves the counts (3 to 1), as a full sketch with
        // sample size 100 does after its hundredth increment.
        let mut s = FrequencySketch::new(64, 1_000, 3);
        s.pace_by_trace(100);
        s.increment_at(7, 9);
        s.increment_at(7, 49);
        assert_eq!(s.estimate(7), 2);
        s.increment_at(7, 99);
        assert_eq!(s.estimate(7), 1);
        // The count-based sample size (1,000) plays no part; the next halving comes after
        // another half period (the additions are halved, as at full size): 50 requests.
        s.increment_at(7, 148);
        assert_eq!(s.estimate(7), 2);
        s.increment_at(7, 149);
        assert_eq!(s.estimate(7), 1);
        // Fed every position, it is the count-based sketch exactly.
        let mut paced = FrequencySketch::new(64, 10, 3).with_doorkeeper(3);
        paced.pace_by_trace(10);
        let mut counted = FrequencySketch::new(64, 10, 3).with_doorkeeper(3);
        for position in 0..95u64 {
            let key = position % 7;
            paced.increment_at(key, position);
            counted.increment(key);
            assert_eq!(paced.estimate(key), counted.estimate(key), "at {position}");
        }
        assert_eq!(paced.words, counted.words);
    }

    #[test]
    fn a_set_width_is_the_rows_width() {
        // A power of two keeps masking: the same sketch as `new`'s of that width.
        let mut set = FrequencySketch::new(64, 1_000, 3);
        set.set_width(256);
        let mut built = FrequencySketch::new(256, 1_000, 3);
        for k in 0..300u64 {
            set.increment(k);
            built.increment(k);
        }
        assert_eq!(set.words, built.words);
        // Any other width: rows of exactly that many counters (100: 7 words of 16, the
        // last 4 counters of the seventh unused), each key in one of them, so the 4 rows
        // hold 4 counts per increment and nothing lands past counter 99.
        let mut s = FrequencySketch::new(64, 1_000, 3);
        s.set_width(100);
        assert_eq!(s.words.len(), 4 * 7);
        for k in 0..10u64 {
            s.increment(k);
        }
        let total: u64 = s
            .words
            .iter()
            .map(|w| (0..16).map(|i| (w >> (4 * i)) & 15).sum::<u64>())
            .sum();
        assert_eq!(total, 40);
        for row in 0..4 {
            assert_eq!(s.words[row * 7 + 6] >> 16, 0, "row {row} past its width");
        }
        assert!((0..10u64).all(|k| s.estimate(k) >= 1));
        // Resizing keeps a set width (a miniature's, sized for the cache it stands for).
        s.resize(4_096, 1_000);
        assert_eq!(s.words.len(), 4 * 7);
    }
}
