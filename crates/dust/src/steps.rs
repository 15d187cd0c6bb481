//! Steps 2–4: the access patterns of the thesis's figures 2.2, 2.3 and 2.7, and the probes.
//!
//! Every step starts from an empty cache ([`Target::reset`]), the use-bit step then sets
//! half of the use bits (section 2.3.3), and each performs its pattern, and probes the test region 20 times, spaced `region/20`
//! apart from a random start in the first half of the first stripe (section 2.2.2.3). An
//! *iteration* runs the three steps once each; many iterations with different random
//! starts sample the whole region.
//!
//! File layout for an estimated cache size `E` (pages):
//!
//! ```text
//! short-term:  [0, R) test region (10 stripes)   [R, R+V) eviction scan   [R+V, ..) warm-up
//! history:     [0, H/2) hot   [H/2, H) cold   [E, 2E) evict1   [2E, 3.4E-H) evict2
//! ```
//!
//! with `R = 10·floor(0.9E/10)`, `V = (E − R) + E/2` (footnote 1 of section 2.2.2.2) and
//! `H = 2·floor(0.3E)`. The thesis makes the history regions the whole test region (0.9E);
//! with an estimate 10% high 2Q then forgets the hot pages before they are re-read (see
//! [`Layout::history_pages`]). 0.6E keeps the step valid from estimates 20% low to 11%
//! high (the fit check in [`crate::report`] guarantees the latter).

use rand::Rng;
use serde::Serialize;

use crate::judge::Judge;
use crate::target::Target;
use crate::DustError;

/// Number of stripes in the test region (section 2.2.2.1).
pub const STRIPES: u64 = 10;
/// Probes per step and iteration (section 2.2.2.3: two per stripe).
pub const PROBES: u64 = 20;
/// How often each page of the short-term eviction scan is read: `freqleft · 1.5` of
/// figure 2.3, where `freqleft` is 6 after the stripe loop — above every test stripe's
/// left-side count, so frequency-based policies evict the test region and not the scan.
pub const EVICT_REPEAT: u32 = 9;
/// Reads per page of the history step's final eviction region (figure 2.7).
pub const EVICT2_REPEAT: u32 = 7;

/// Which step a probe belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Short-term fingerprint after setting every use bit (U = 1).
    ShortTerm,
    /// Short-term fingerprint after setting half of the use bits (U = 0.5).
    UseBits,
    /// History fingerprint (figure 2.7), after setting every use bit.
    History,
    /// 2Q's long-term queue (figure 2.12c): a region moved into Am, given the stripes'
    /// attributes there, half of it evicted from Am. Run only when the verdict is 2Q.
    LongTerm,
}

impl Step {
    /// The name used in CSV files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Step::ShortTerm => "short_term",
            Step::UseBits => "use_bits",
            Step::History => "history",
            Step::LongTerm => "long_term",
        }
    }
}

/// One probe read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// The step.
    pub step: Step,
    /// Iteration number, from 0.
    pub iteration: u32,
    /// Block offset within the test region.
    pub offset: u64,
    /// Whether the read was judged a hit.
    pub hit: bool,
    /// Its latency, if the target times reads.
    pub latency_ns: Option<u64>,
    /// Its ground truth, if the target has one.
    pub resident: Option<bool>,
}

/// Region sizes derived from the cache size estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Layout {
    /// The cache size Dust believes in (measured or hinted), in pages.
    pub estimate_pages: u64,
    /// Pages per stripe.
    pub stripe_pages: u64,
    /// Test region: `STRIPES` stripes, about 90% of the estimate.
    pub region_pages: u64,
    /// History step's hot plus cold regions: `2·floor(0.3E)`. Smaller than the thesis's
    /// `0.9E` so that 2Q's ghost list (half the cache) still remembers every hot page
    /// after evict1 when the estimate is up to 11% high; with a larger hot region the
    /// overflow pushes the first hot ghosts out, and because hot is re-read in order each
    /// re-read miss then pushes out the next remembered hot page before it is reached.
    pub history_pages: u64,
    /// Short-term eviction scan: `(estimate − region) + estimate/2` pages.
    pub evict_pages: u64,
    /// Warm-up region that sets the use bits: `E + E/9 + 1`, so that it fills the cache even
    /// when the estimate is 10% low (otherwise the extra pages would not make the hand
    /// sweep, and no use bit would be cleared).
    pub warmup_pages: u64,
    /// Extra warm-up pages that make the hand sweep once (half-set use bits).
    pub warmup_extra_pages: u64,
}

impl Layout {
    /// The layout for a cache of `estimate_pages` pages (at least 20, so that every stripe
    /// has a page and the two probes of each stripe are distinct).
    pub fn new(estimate_pages: u64) -> Result<Self, DustError> {
        if estimate_pages < 20 {
            return Err(DustError::Config(format!(
                "a cache of {estimate_pages} pages is too small to fingerprint (at least 20)"
            )));
        }
        let stripe_pages = estimate_pages * 9 / 10 / STRIPES;
        let region_pages = stripe_pages * STRIPES;
        Ok(Layout {
            estimate_pages,
            stripe_pages,
            region_pages,
            history_pages: estimate_pages * 3 / 10 * 2,
            evict_pages: (estimate_pages - region_pages) + estimate_pages / 2,
            warmup_pages: estimate_pages + estimate_pages / 9 + 1,
            warmup_extra_pages: estimate_pages / 100 + 1,
        })
    }

    fn warmup_len(&self) -> u64 {
        self.warmup_pages + self.warmup_extra_pages
    }

    /// The long-term step's layout: the same estimate, a test region of `0.3E` in the
    /// usual ten stripes (see [`Step::LongTerm`]).
    pub fn long_term(&self) -> Layout {
        let stripe_pages = (self.estimate_pages * 3 / 10 / STRIPES).max(1);
        Layout {
            stripe_pages,
            region_pages: stripe_pages * STRIPES,
            ..*self
        }
    }

    /// First block of the history step's `evict1` region.
    pub fn evict1_start(&self) -> u64 {
        self.estimate_pages
    }

    /// First block of `evict2`.
    pub fn evict2_start(&self) -> u64 {
        2 * self.estimate_pages
    }

    /// Pages of `evict2`: `1.4E − H`, so that hot, cold and evict2 together overflow the
    /// cache by between 12% (estimate 20% low) and 55% (10% high) and part of the cold
    /// region survives a recency policy throughout (figure 2.7 has `0.9E + 0.6E`).
    pub fn evict2_pages(&self) -> u64 {
        self.estimate_pages * 14 / 10 - self.history_pages
    }

    /// Blocks the whole fingerprint needs in the target.
    pub fn blocks_needed(&self) -> u64 {
        let short = self.region_pages + self.evict_pages + self.warmup_len();
        let history = self.evict2_start() + self.evict2_pages();
        short.max(history)
    }

    /// Stripe of a test-region offset (0..10).
    pub fn stripe_of(&self, offset: u64) -> u64 {
        (offset / self.stripe_pages).min(STRIPES - 1)
    }

    /// Where the use-bit step's warm-up region starts: after the eviction scan.
    fn warmup_start(&self) -> u64 {
        self.region_pages + self.evict_pages
    }
}

/// Set half of the use bits (section 2.3.3): fill the cache with a warm-up region and
/// touch it again so every frame's bit is set, allocate a few more pages (the hand sweeps
/// the whole cache clearing bits to find a victim) and touch a random half of the warm-up
/// pages again.
///
/// The other steps start from an empty cache instead of the thesis's all-bits-set warm-up:
/// for Clock both give the FIFO fingerprint (U = 0 and U = 1 behave alike, section
/// 2.3.3), but a warm-up read twice leaves pages of frequency 2 that an in-cache LFU never
/// evicts for the test region's frequency-1 pages, which would erase LFU's fingerprint.
fn warm_up(
    target: &mut dyn Target,
    layout: &Layout,
    start: u64,
    rng: &mut impl Rng,
) -> Result<(), DustError> {
    let end = start + layout.warmup_pages;
    target.touch_range(start..end, 1)?;
    target.touch_range(start..end, 1)?;
    target.touch_range(end..end + layout.warmup_extra_pages, 1)?;
    for b in start..end {
        if rng.gen_bool(0.5) {
            target.touch_range(b..b + 1, 1)?;
        }
    }
    Ok(())
}

/// Does the test region fit? Start empty, perform figure 2.2's pattern without the eviction
/// scan, and probe 20 pages per round: returns the fraction that hit. A region that fits is
/// entirely resident (nothing was evicted from a cache that never filled).
pub fn region_hit_fraction(
    target: &mut dyn Target,
    judge: &Judge,
    layout: &Layout,
    rounds: u32,
    rng: &mut impl Rng,
) -> Result<f64, DustError> {
    let mut hits = 0u32;
    let mut total = 0u32;
    for _ in 0..rounds {
        target.reset()?;
        set_attributes(target, layout)?;
        for offset in probe_offsets(layout.region_pages, rng) {
            hits += u32::from(judge.is_hit(&target.read(offset)?)?);
            total += 1;
        }
    }
    Ok(if total == 0 {
        1.0
    } else {
        f64::from(hits) / f64::from(total)
    })
}

/// Figure 2.2 (after the warm-up): the initial scan, then the left/right stripe pattern.
/// Left stripe `k` (0..5) is read `k + 1` times, right stripe `5 + k` is read `10 − k` times,
/// alternating L0 R5 L1 R6 … L4 R9.
fn set_attributes(target: &mut dyn Target, layout: &Layout) -> Result<(), DustError> {
    let s = layout.stripe_pages;
    target.touch_range(0..layout.region_pages, 1)?;
    for k in 0..STRIPES / 2 {
        let left = k * s..(k + 1) * s;
        for _ in 0..=k {
            target.touch_range(left.clone(), 1)?;
        }
        let right = (STRIPES / 2 + k) * s..(STRIPES / 2 + k + 1) * s;
        for _ in 0..(STRIPES - k) {
            target.touch_range(right.clone(), 1)?;
        }
    }
    Ok(())
}

/// Figure 2.7's pattern over hot, cold, evict1 and evict2.
fn set_history(target: &mut dyn Target, layout: &Layout) -> Result<(), DustError> {
    let region = layout.history_pages;
    let hot = 0..region / 2;
    let cold = region / 2..region;
    let e = layout.estimate_pages;
    target.touch_range(hot.clone(), 1)?;
    target.touch_range(layout.evict1_start()..layout.evict1_start() + e, 2)?;
    target.touch_range(0..region, 3)?;
    target.touch_range(cold, 2)?;
    target.touch_range(hot, 1)?;
    target.touch_range(0..region, 1)?;
    let ev2 = layout.evict2_start();
    target.touch_range(ev2..ev2 + layout.evict2_pages(), EVICT2_REPEAT)?;
    Ok(())
}

/// Figure 2.12c's set-up for 2Q (the thesis does not describe it; this is ours, for 2Q with
/// its usual `Kin = E/4` and `Kout = E/2`). The test region R (`0.3E`, from
/// [`Layout::long_term`]) is read once (into A1in), pushed out to A1out by `1.1E` new
/// pages, and read again, which moves it into Am in stripe order; then the short-term
/// step's stripe passes give its stripes their recency and frequency inside Am. New pages
/// never evict from Am: 2Q takes victims from A1in while A1in holds more than Kin, and a
/// miss lands in A1in. Only pages promoted from A1out grow Am, so two rounds of `0.3E`
/// pages each go in (A1in), out (to A1out, pushed by as many pages as A1in holds) and in
/// again (into Am): the first round shrinks A1in from `0.7E` to `0.4E`, the second to
/// Kin and then evicts `0.15E` pages — half of R — from Am's end. If Am is LRU the
/// survivors are R's most recent stripes, FIFO its last re-read, LFU its most read.
fn set_long_term(target: &mut dyn Target, layout: &Layout) -> Result<(), DustError> {
    let e = layout.estimate_pages;
    let r = layout.region_pages;
    let filler = e * 11 / 10;
    let round = e * 3 / 10;
    let needed = r + filler + 2 * round + (e - r) + (e - r - round);
    if target.blocks() < needed {
        return Err(DustError::TooSmall {
            blocks: target.blocks(),
            needed,
            pages: e,
        });
    }
    target.touch_range(0..r, 1)?;
    target.touch_range(r..r + filler, 1)?;
    set_attributes(target, layout)?;
    let mut next = r + filler;
    for a1in in [e - r, e - r - round] {
        let promoted = next..next + round;
        target.touch_range(promoted.clone(), 1)?;
        let pushers = promoted.end..promoted.end + a1in;
        target.touch_range(pushers.clone(), 1)?;
        target.touch_range(promoted, 1)?;
        next = pushers.end;
    }
    Ok(())
}

/// The 20 probe offsets of one iteration over a region of `region` pages: a random start
/// in the first half of the first stripe, then every `region/20` pages.
pub fn probe_offsets(region: u64, rng: &mut impl Rng) -> [u64; PROBES as usize] {
    let first = rng.gen_range(0..(region / PROBES).max(1));
    let mut out = [0; PROBES as usize];
    for (k, o) in out.iter_mut().enumerate() {
        *o = (first + k as u64 * region / PROBES).min(region - 1);
    }
    out
}

/// Run one step of one iteration and append its 20 probes to `out`.
pub fn run_step(
    target: &mut dyn Target,
    judge: &Judge,
    layout: &Layout,
    step: Step,
    iteration: u32,
    rng: &mut impl Rng,
    out: &mut Vec<Probe>,
) -> Result<(), DustError> {
    let needed = layout.blocks_needed();
    if target.blocks() < needed {
        return Err(DustError::TooSmall {
            blocks: target.blocks(),
            needed,
            pages: layout.estimate_pages,
        });
    }
    // The set-up reads of the short-term and history steps are the same in every
    // iteration (only the probes' start is drawn), so a target that can return exactly to
    // a saved state does them once. The use-bit step's warm-up is drawn per iteration.
    let saved = (step != Step::UseBits).then(|| {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (step, layout).hash(&mut h);
        h.finish()
    });
    if !saved.is_some_and(|key| target.restore(key)) {
        target.reset()?;
        if step == Step::UseBits {
            warm_up(target, layout, layout.warmup_start(), rng)?;
        }
        match step {
            Step::ShortTerm | Step::UseBits => {
                set_attributes(target, layout)?;
                let r = layout.region_pages;
                target.touch_range(r..r + layout.evict_pages, EVICT_REPEAT)?;
            }
            Step::History => set_history(target, layout)?,
            Step::LongTerm => set_long_term(target, layout)?,
        }
        if let Some(key) = saved {
            target.save(key);
        }
    }
    let probed = match step {
        Step::History => layout.history_pages,
        _ => layout.region_pages,
    };
    for offset in probe_offsets(probed, rng) {
        let read = target.read(offset)?;
        out.push(Probe {
            step,
            iteration,
            offset,
            hit: judge.is_hit(&read)?,
            latency_ns: read.latency_ns,
            resident: read.resident,
        });
    }
    Ok(())
}

/// Recency rank of each stripe after figure 2.2 (0 = least recent): L0 R5 L1 R6 … L4 R9.
pub const RECENCY_RANK: [u64; STRIPES as usize] = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];
/// Reads of each stripe in the short-term step, the initial scan included (figure 2.4).
pub const FREQUENCY: [u64; STRIPES as usize] = [2, 3, 4, 5, 6, 11, 10, 9, 8, 7];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimTarget;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn layout_of_the_thesis_cache() {
        // 20,000 pages: stripes of 1,800 pages, region 18,000, scan 2,000 + 10,000.
        let l = Layout::new(20_000).unwrap();
        assert_eq!(l.stripe_pages, 1_800);
        assert_eq!(l.region_pages, 18_000);
        assert_eq!(l.evict_pages, 12_000);
        assert_eq!(l.history_pages, 12_000);
        assert_eq!(l.evict2_pages(), 16_000);
        // Short-term: 30,000 + warm-up 22,223 + 201 extra; history: evict2 ends at 56,000.
        assert_eq!(l.blocks_needed(), 56_000);
        // 1,234 pages: stripes of 111 (0.9 · 1234 = 1110.6), region 1,110.
        let l = Layout::new(1_234).unwrap();
        assert_eq!(
            (l.stripe_pages, l.region_pages, l.evict_pages),
            (111, 1_110, 741)
        );
        assert!(Layout::new(19).is_err());
    }

    #[test]
    fn probes_are_spread_over_the_region() {
        let l = Layout::new(1_000).unwrap(); // region 900, spacing 45
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for _ in 0..100 {
            let p = probe_offsets(l.region_pages, &mut rng);
            assert!(p[0] < 45);
            for k in 1..20 {
                assert_eq!(p[k] - p[0], 45 * k as u64);
            }
            // Two probes per stripe.
            for s in 0..10 {
                assert_eq!(p.iter().filter(|&&o| l.stripe_of(o) == s).count(), 2);
            }
        }
    }

    #[test]
    fn lru_keeps_exactly_the_most_recent_stripes() {
        // Exact LRU at the true size: the last 0.4·E pages read survive, i.e. after the
        // eviction scan (600 pages of a 1,000-page cache) the 400 most recent test pages:
        // stripes R9, L4, R8, L3 by figure 2.2's order, 90 pages each = 360, plus the last
        // 40 pages of R7. Each probe that misses evicts the least recent page, the first
        // survivor of R7, so the boundary moves by up to 12 pages (the probes below it).
        let mut t = SimTarget::parse("sim:lru:pages=1000", 3).unwrap();
        let l = Layout::new(1_000).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut out = Vec::new();
        for i in 0..50 {
            run_step(
                &mut t,
                &Judge::Oracle,
                &l,
                Step::ShortTerm,
                i,
                &mut rng,
                &mut out,
            )
            .unwrap();
        }
        for p in &out {
            let s = l.stripe_of(p.offset);
            let within = p.offset % l.stripe_pages;
            if s == 7 && (50..62).contains(&within) {
                continue;
            }
            let expect = matches!(s, 3 | 4 | 8 | 9) || (s == 7 && within >= 62);
            assert_eq!(p.hit, expect, "offset {}", p.offset);
        }
    }
}
