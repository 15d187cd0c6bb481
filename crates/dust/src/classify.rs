//! From probes to a verdict.
//!
//! # Features
//!
//! For each short-term step Dust knows, for every page of the test region, the three
//! attributes it set itself (figure 2.4): the order of initial access (the page's offset),
//! its recency (figure 2.2's stripe order L0 R5 L1 R6 … L4 R9, then offset) and its frequency
//! (reads per stripe: 2 3 4 5 6 11 10 9 8 7). A policy that keeps pages by one attribute
//! keeps the pages that rank high on it. [`order_score`] measures that as the probability
//! that a surviving probe outranks an evicted one (the area under the ROC curve; ties count
//! half): 1.0 when the attribute separates survivors from victims perfectly, 0.5 when it
//! says nothing.
//!
//! *Mixedness* measures whether the same page survives in every iteration: probes are
//! grouped in bins of a quarter stripe and each bin's survival rate `p` contributes
//! `4p(1 − p)` (0 when a bin always or never survives, 1 for a coin flip). Deterministic
//! policies score near 0 (only the bins across a boundary are mixed); Random scores near 1.
//!
//! The history step gives the survival rates of the hot and the cold half, and their
//! relative difference, the [`history_preference`].
//!
//! The survival profile (rate per stripe) of the all-use-bits and half-use-bits steps are
//! compared: a policy with use bits changes its fingerprint when only half the bits are set
//! (Clock goes from FIFO to LRU, section 2.3.3); one without does not.
//!
//! # Rules
//!
//! See `docs/dust.md` for the thresholds, the fingerprints they were read from, and why.

use serde::Serialize;

use crate::steps::{Layout, Probe, Step, FREQUENCY, RECENCY_RANK, STRIPES};

/// An attribute a replacement policy may use (section 2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Attribute {
    /// Order of first access (FIFO).
    InitialAccess,
    /// Recency of access (LRU).
    Recency,
    /// Frequency of access (LFU).
    Frequency,
    /// Memory of pages evicted earlier (2Q, LRU-K).
    History,
    /// Per-frame use (reference) bits (Clock).
    UseBits,
}

impl Attribute {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Attribute::InitialAccess => "initial_access",
            Attribute::Recency => "recency",
            Attribute::Frequency => "frequency",
            Attribute::History => "history",
            Attribute::UseBits => "use_bits",
        }
    }
}

/// What one short-term step shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepFeatures {
    /// Probes taken.
    pub probes: usize,
    /// Fraction of probes that hit.
    pub survival: f64,
    /// Order score of the initial-access attribute.
    pub initial: f64,
    /// Order score of recency.
    pub recency: f64,
    /// Order score of frequency.
    pub frequency: f64,
    /// 0 when every position always or never survives, 1 for coin flips.
    pub mixedness: f64,
    /// Survival rate per stripe.
    pub profile: Vec<f64>,
}

/// Everything the classifier looks at.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Features {
    /// After setting every use bit.
    pub short_term: StepFeatures,
    /// After setting half of the use bits.
    pub use_bits: StepFeatures,
    /// Mean absolute difference between the two steps' stripe profiles.
    pub use_bit_shift: f64,
    /// Survival rate of hot-region probes in the history step.
    pub hot_survival: f64,
    /// Survival rate of cold-region probes in the history step.
    pub cold_survival: f64,
    /// History probes.
    pub history_probes: usize,
}

/// The conclusion.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// A policy's short name as in `bufcache policies`, or `unknown`.
    pub verdict: &'static str,
    /// Attributes the policy evidently uses.
    pub attributes: Vec<Attribute>,
    /// 0–1: how clearly the deciding features passed their thresholds.
    pub confidence: f64,
    /// One line per rule that decided, for people.
    pub reasons: Vec<String>,
}

/// Probability that a random survivor's key exceeds a random victim's (ties count half),
/// from `(key, survived)` pairs; 0.5 when either group is empty.
pub fn order_score(samples: &mut [(f64, bool)]) -> f64 {
    let survivors = samples.iter().filter(|s| s.1).count();
    let victims = samples.len() - survivors;
    if survivors == 0 || victims == 0 {
        return 0.5;
    }
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Mann–Whitney: sum of the survivors' (tie-averaged) ranks.
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < samples.len() {
        let mut j = i;
        while j < samples.len() && samples[j].0 == samples[i].0 {
            j += 1;
        }
        let avg_rank = (i + 1 + j) as f64 / 2.0; // ranks i+1..=j
        rank_sum += avg_rank * samples[i..j].iter().filter(|s| s.1).count() as f64;
        i = j;
    }
    let s = survivors as f64;
    (rank_sum - s * (s + 1.0) / 2.0) / (s * victims as f64)
}

/// Features of one short-term step.
pub fn step_features(probes: &[Probe], layout: &Layout) -> StepFeatures {
    let stripe = layout.stripe_pages;
    let key = |p: &Probe, f: &dyn Fn(u64, u64) -> f64| {
        let s = layout.stripe_of(p.offset);
        (f(s, p.offset - s * stripe), p.hit)
    };
    let mut v: Vec<(f64, bool)> = probes.iter().map(|p| (p.offset as f64, p.hit)).collect();
    let initial = order_score(&mut v);
    let mut v: Vec<(f64, bool)> = probes
        .iter()
        .map(|p| key(p, &|s, w| (RECENCY_RANK[s as usize] * stripe + w) as f64))
        .collect();
    let recency = order_score(&mut v);
    let mut v: Vec<(f64, bool)> = probes
        .iter()
        .map(|p| key(p, &|s, _| FREQUENCY[s as usize] as f64))
        .collect();
    let frequency = order_score(&mut v);
    // Quarter-stripe bins.
    let bins = (STRIPES * 4) as usize;
    let bin_of = |o: u64| ((o * bins as u64) / layout.region_pages).min(bins as u64 - 1) as usize;
    let mut count = vec![0u32; bins];
    let mut hits = vec![0u32; bins];
    let mut stripe_count = vec![0u32; STRIPES as usize];
    let mut stripe_hits = vec![0u32; STRIPES as usize];
    for p in probes {
        let b = bin_of(p.offset);
        count[b] += 1;
        hits[b] += u32::from(p.hit);
        let s = layout.stripe_of(p.offset) as usize;
        stripe_count[s] += 1;
        stripe_hits[s] += u32::from(p.hit);
    }
    let mut mixed = 0.0;
    let mut weight = 0.0;
    for b in 0..bins {
        if count[b] >= 2 {
            let p = f64::from(hits[b]) / f64::from(count[b]);
            mixed += 4.0 * p * (1.0 - p) * f64::from(count[b]);
            weight += f64::from(count[b]);
        }
    }
    let survival = if probes.is_empty() {
        0.0
    } else {
        probes.iter().filter(|p| p.hit).count() as f64 / probes.len() as f64
    };
    StepFeatures {
        probes: probes.len(),
        survival,
        initial,
        recency,
        frequency,
        mixedness: if weight > 0.0 { mixed / weight } else { 0.0 },
        profile: stripe_count
            .iter()
            .zip(&stripe_hits)
            .map(|(&c, &h)| {
                if c == 0 {
                    0.0
                } else {
                    f64::from(h) / f64::from(c)
                }
            })
            .collect(),
    }
}

/// Compute every feature from all probes of a run.
pub fn features(probes: &[Probe], layout: &Layout) -> Features {
    let of =
        |step: Step| -> Vec<Probe> { probes.iter().filter(|p| p.step == step).copied().collect() };
    let short_term = step_features(&of(Step::ShortTerm), layout);
    let use_bits = step_features(&of(Step::UseBits), layout);
    let use_bit_shift = short_term
        .profile
        .iter()
        .zip(&use_bits.profile)
        .map(|(a, b)| (a - b).abs())
        .sum::<f64>()
        / STRIPES as f64;
    let history = of(Step::History);
    let half = layout.history_pages / 2;
    let rate = |hot: bool| {
        let (n, h) = history
            .iter()
            .filter(|p| (p.offset < half) == hot)
            .fold((0u32, 0u32), |(n, h), p| (n + 1, h + u32::from(p.hit)));
        if n == 0 {
            0.0
        } else {
            f64::from(h) / f64::from(n)
        }
    };
    Features {
        short_term,
        use_bits,
        use_bit_shift,
        hot_survival: rate(true),
        cold_survival: rate(false),
        history_probes: history.len(),
    }
}

/// Order score at or above which one attribute explains a step's survivors.
pub const STRONG: f64 = 0.95;
/// Order scores at or below which Segmented FIFO's inverted initial-access and frequency
/// orders are recognised.
pub const INVERTED: f64 = 0.35;
/// Normalised mixedness at or above which survival is a coin flip (Random).
pub const MIXED: f64 = 0.6;
/// History preference (see [`history_preference`]) at or above which history is used.
pub const HISTORY: f64 = 0.3;

/// How much the history step's survivors prefer hot over cold: `(hot − cold) /
/// max(hot, cold)`, from −1 (only cold survives) to +1 (only hot). Relative rather than a
/// plain difference because the step's evictions grow with the estimate: at an estimate
/// 10% high LRU-2 keeps 37% of hot and none of cold, a difference of only 0.37 but a
/// preference of 1. 0 when under 10% of either region survives (no information).
pub fn history_preference(f: &Features) -> f64 {
    let top = f.hot_survival.max(f.cold_survival);
    if top < 0.1 {
        0.0
    } else {
        (f.hot_survival - f.cold_survival) / top
    }
}
/// Profile shift at or above which the use-bit step changed the fingerprint.
pub const SHIFT: f64 = 0.2;
/// Frequency score of the use-bit step at or above which a changed fingerprint is LFU's
/// rather than Clock's.
pub const UB_FREQUENCY: f64 = 0.6;
/// Initial-access score of the use-bit step below which Clock's FIFO order is broken.
pub const UB_BROKEN: f64 = 0.9;

/// Mixedness divided by what it would be if every probe were an independent coin flip with
/// the step's survival rate: 1 for Random whatever fraction survives.
pub fn normalised_mixedness(f: &StepFeatures) -> f64 {
    let s = f.survival;
    let coin = 4.0 * s * (1.0 - s);
    if coin < 0.05 {
        0.0
    } else {
        (f.mixedness / coin).min(1.0)
    }
}

/// How clearly `value` passed `threshold` on the way to `ideal`: 0.5 at the threshold, 1 at
/// the ideal (clamped).
fn margin(value: f64, threshold: f64, ideal: f64) -> f64 {
    if (ideal - threshold).abs() < f64::EPSILON {
        return 1.0;
    }
    (0.5 + 0.5 * (value - threshold) / (ideal - threshold)).clamp(0.0, 1.0)
}

/// Name the policy from its features (rules and thresholds: `docs/dust.md`).
///
/// In order: Random (coin-flip survival in both short-term steps); then history (hot
/// beats cold) with a FIFO short-term order for 2Q or an LRU one for LRU-2; then, without
/// history, the short-term step's dominant order — FIFO (then the use-bit step decides
/// between FIFO, Clock and LFU), LFU, LRU, or Segmented FIFO's inverted orders.
pub fn classify(f: &Features) -> Verdict {
    use Attribute::*;
    let st = &f.short_term;
    let ub = &f.use_bits;
    let mut reasons = Vec::new();
    let mix_st = normalised_mixedness(st);
    let mix_ub = normalised_mixedness(ub);
    let best_st = st.initial.max(st.recency).max(st.frequency);
    let history = history_preference(f);
    let fifo_like = st.initial >= STRONG;
    let lru_like = st.recency >= STRONG;
    let lfu_like = st.frequency >= STRONG && !fifo_like;
    let sfifo_like = st.initial <= INVERTED
        && st.frequency <= INVERTED
        && st.recency > INVERTED
        && f.use_bit_shift < SHIFT;
    let named = |verdict: &'static str, attributes: Vec<Attribute>, conf: f64, reasons| Verdict {
        verdict,
        attributes,
        confidence: (conf * 100.0).round() / 100.0,
        reasons,
    };

    if mix_st >= MIXED && mix_ub >= MIXED && best_st < 0.75 {
        reasons.push(format!(
            "survival is a coin flip at each position (normalised mixedness {mix_st:.2} and \
             {mix_ub:.2} >= {MIXED}) and no attribute orders it (best score {best_st:.2} < 0.75)"
        ));
        let c = margin(mix_st.min(mix_ub), MIXED, 1.0).min(margin(best_st, 0.75, 0.5));
        return named("random", Vec::new(), c, reasons);
    }
    if history >= HISTORY {
        reasons.push(format!(
            "history: hot pages survive {:.2}, cold {:.2} (preference {history:.2} >= {HISTORY})",
            f.hot_survival, f.cold_survival
        ));
        let ch = margin(history, HISTORY, 1.0);
        if fifo_like {
            reasons.push(format!(
                "short-term order is FIFO (initial-access score {:.2} >= {STRONG})",
                st.initial
            ));
            let c = ch.min(margin(st.initial, STRONG, 1.0));
            return named("twoq", vec![InitialAccess, Recency, History], c, reasons);
        }
        if lru_like {
            reasons.push(format!(
                "short-term order is LRU (recency score {:.2} >= {STRONG})",
                st.recency
            ));
            let c = ch.min(margin(st.recency, STRONG, 1.0));
            return named("lruk", vec![Recency, Frequency, History], c, reasons);
        }
        reasons.push("short-term order is neither FIFO nor LRU".into());
        let mut attrs = evident(f);
        if !attrs.contains(&History) {
            attrs.push(History);
        }
        attrs.sort();
        return named("unknown", attrs, 1.0 - ch / 2.0, reasons);
    }
    if fifo_like {
        reasons.push(format!(
            "short-term order is FIFO (initial-access score {:.2} >= {STRONG})",
            st.initial
        ));
        let ci = margin(st.initial, STRONG, 1.0);
        if f.use_bit_shift < SHIFT {
            reasons.push(format!(
                "setting half the use bits changes nothing (shift {:.2} < {SHIFT})",
                f.use_bit_shift
            ));
            let c = ci.min(margin(f.use_bit_shift, SHIFT, 0.0));
            return named("fifo", vec![InitialAccess], c, reasons);
        }
        reasons.push(format!(
            "setting half the use bits changes the fingerprint (shift {:.2} >= {SHIFT})",
            f.use_bit_shift
        ));
        let cs = margin(f.use_bit_shift, SHIFT, 0.5);
        if ub.frequency >= UB_FREQUENCY && ub.initial < STRONG {
            reasons.push(format!(
                "after the warm-up, survivors follow frequency (score {:.2} >= {UB_FREQUENCY})",
                ub.frequency
            ));
            let c = ci.min(cs).min(margin(ub.frequency, UB_FREQUENCY, 1.0));
            return named("lfu", vec![Frequency], c, reasons);
        }
        if ub.initial < UB_BROKEN {
            reasons.push(format!(
                "with half the use bits set the FIFO order breaks (initial-access score {:.2} < {UB_BROKEN})",
                ub.initial
            ));
            let c = ci.min(cs).min(margin(ub.initial, UB_BROKEN, 0.5));
            return named("clock", vec![Recency, UseBits], c, reasons);
        }
        reasons.push("the use-bit fingerprint matches no known policy".into());
        return named("unknown", evident(f), 0.5, reasons);
    }
    if lfu_like {
        reasons.push(format!(
            "short-term order is LFU (frequency score {:.2} >= {STRONG}, initial-access {:.2} < {STRONG})",
            st.frequency, st.initial
        ));
        let c = margin(st.frequency, STRONG, 1.0).min(margin(st.initial, STRONG, 0.5));
        return named("lfu", vec![Frequency], c, reasons);
    }
    if lru_like && f.use_bit_shift < SHIFT {
        reasons.push(format!(
            "short-term order is LRU (recency score {:.2} >= {STRONG}), unchanged by use bits",
            st.recency
        ));
        let c = margin(st.recency, STRONG, 1.0).min(margin(f.use_bit_shift, SHIFT, 0.0));
        return named("lru", vec![Recency], c, reasons);
    }
    if sfifo_like {
        reasons.push(format!(
            "initial-access and frequency orders are inverted (scores {:.2}, {:.2} <= {INVERTED}): \
             the left half, re-read last, survives as in Segmented FIFO",
            st.initial, st.frequency
        ));
        let c = margin(st.initial.max(st.frequency), INVERTED, 0.0);
        return named("sfifo", vec![InitialAccess, Recency], c, reasons);
    }
    reasons.push("no rule matched".into());
    let attrs = evident(f);
    let c = 1.0 - best_st.max(0.5);
    named("unknown", attrs, 0.5 + c, reasons)
}

/// The attributes the features show, whatever the verdict (used for `unknown`).
pub fn evident(f: &Features) -> Vec<Attribute> {
    let mut out = Vec::new();
    let st = &f.short_term;
    let ub = &f.use_bits;
    if st.initial >= STRONG {
        out.push(Attribute::InitialAccess);
    }
    if st.recency >= STRONG || ub.recency >= STRONG {
        out.push(Attribute::Recency);
    }
    if (st.frequency >= STRONG && st.initial < STRONG) || ub.frequency >= STRONG {
        out.push(Attribute::Frequency);
    }
    if history_preference(f) >= HISTORY {
        out.push(Attribute::History);
    }
    if f.use_bit_shift >= SHIFT {
        out.push(Attribute::UseBits);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(initial: f64, recency: f64, frequency: f64, survival: f64, mixed: f64) -> StepFeatures {
        StepFeatures {
            probes: 600,
            survival,
            initial,
            recency,
            frequency,
            mixedness: mixed,
            profile: vec![survival; STRIPES as usize],
        }
    }

    fn features(st: StepFeatures, ub: StepFeatures, shift: f64, hot: f64, cold: f64) -> Features {
        Features {
            short_term: st,
            use_bits: ub,
            use_bit_shift: shift,
            hot_survival: hot,
            cold_survival: cold,
            history_probes: 600,
        }
    }

    #[test]
    fn order_score_by_hand() {
        // Survivors 3 and 4, victims 1 and 2: perfectly separated.
        let mut v = vec![(1.0, false), (3.0, true), (2.0, false), (4.0, true)];
        assert_eq!(order_score(&mut v), 1.0);
        // Reversed: 0.
        let mut v = vec![(1.0, true), (2.0, false)];
        assert_eq!(order_score(&mut v), 0.0);
        // All tied: one half.
        let mut v = vec![(5.0, true), (5.0, false), (5.0, true)];
        assert_eq!(order_score(&mut v), 0.5);
        // Survivor 2 beats victim 1, ties victim 2 (half), loses to victim 3: 1.5/3.
        let mut v = vec![(2.0, true), (1.0, false), (2.0, false), (3.0, false)];
        assert_eq!(order_score(&mut v), 0.5);
        // Survivor 3 beats 1 and 2: with survivor 0 beating none: (2 + 0) / 4.
        let mut v = vec![(3.0, true), (0.0, true), (1.0, false), (2.0, false)];
        assert_eq!(order_score(&mut v), 0.5);
        // Nobody evicted: no information.
        let mut v = vec![(1.0, true), (2.0, true)];
        assert_eq!(order_score(&mut v), 0.5);
    }

    #[test]
    fn thesis_fingerprints_by_hand() {
        // Scores as Dust measures them at the true size (see docs/dust.md).
        let fifo = step(1.0, 0.70, 0.89, 0.43, 0.02);
        let lru = step(0.78, 1.0, 0.53, 0.43, 0.02);
        let lfu = step(0.90, 0.50, 1.0, 0.44, 0.02);
        let sfifo = step(0.10, 0.51, 0.10, 0.44, 0.02);
        let coin = step(0.50, 0.52, 0.49, 0.5, 0.95);
        let v = |f: Features| classify(&f).verdict;
        assert_eq!(
            v(features(fifo.clone(), fifo.clone(), 0.0, 0.0, 0.9)),
            "fifo"
        );
        assert_eq!(v(features(lru.clone(), lru.clone(), 0.0, 0.0, 0.9)), "lru");
        assert_eq!(v(features(lfu.clone(), lfu.clone(), 0.0, 0.0, 0.9)), "lfu");
        assert_eq!(
            v(features(sfifo.clone(), sfifo.clone(), 0.0, 0.0, 0.9)),
            "sfifo"
        );
        assert_eq!(
            v(features(coin.clone(), coin.clone(), 0.1, 0.5, 0.5)),
            "random"
        );
        // Clock: FIFO with uniform bits, order broken with half of them set.
        let broken = step(0.48, 0.67, 0.27, 0.43, 0.08);
        let clock = classify(&features(fifo.clone(), broken, 0.55, 0.0, 0.9));
        assert_eq!(clock.verdict, "clock");
        assert_eq!(
            clock.attributes,
            vec![Attribute::Recency, Attribute::UseBits]
        );
        assert_eq!(clock.confidence, 1.0);
        // LFU at a low estimate looks like FIFO in the short-term step; the warm-up's
        // frequency-2 pages then decide.
        let warm = step(0.56, 0.11, 1.0, 0.10, 0.0);
        assert_eq!(v(features(fifo.clone(), warm, 0.62, 0.4, 1.0)), "lfu");
        // History with FIFO order is 2Q, with LRU order LRU-2.
        assert_eq!(
            v(features(fifo.clone(), fifo.clone(), 0.0, 1.0, 0.0)),
            "twoq"
        );
        assert_eq!(v(features(lru.clone(), lru.clone(), 0.0, 1.0, 0.0)), "lruk");
        // History with neither order: unknown, with the evidence.
        let odd = step(0.6, 0.6, 0.6, 0.5, 0.05);
        let u = classify(&features(odd.clone(), odd, 0.0, 1.0, 0.2));
        assert_eq!(u.verdict, "unknown");
        assert_eq!(u.attributes, vec![Attribute::History]);
    }

    #[test]
    fn history_preference_by_hand() {
        let st = step(1.0, 0.7, 0.89, 0.43, 0.02);
        let h = |hot, cold| history_preference(&features(st.clone(), st.clone(), 0.0, hot, cold));
        assert_eq!(h(0.37, 0.0), 1.0);
        assert_eq!(h(0.0, 0.34), -1.0);
        assert_eq!(h(1.0, 0.5), 0.5);
        assert_eq!(h(0.5, 1.0), -0.5);
        assert_eq!(h(0.05, 0.09), 0.0); // too few survivors to tell
        assert!((h(0.43, 0.44) + 0.01 / 0.44).abs() < 1e-12);
        // LRU-2 at an estimate 10% high: little of hot survives, none of cold.
        let lru = step(0.8, 1.0, 0.55, 0.34, 0.02);
        assert_eq!(
            classify(&features(lru.clone(), lru, 0.0, 0.37, 0.0)).verdict,
            "lruk"
        );
    }

    #[test]
    fn confidence_grows_with_the_margin() {
        let sharp = step(1.0, 0.7, 0.89, 0.43, 0.02);
        let blunt = step(0.96, 0.7, 0.89, 0.43, 0.02);
        let a = classify(&features(sharp.clone(), sharp, 0.0, 0.0, 0.9));
        let b = classify(&features(blunt.clone(), blunt, 0.0, 0.0, 0.9));
        assert_eq!((a.verdict, b.verdict), ("fifo", "fifo"));
        assert_eq!(a.confidence, 1.0);
        // (0.96 - 0.95) / (1 - 0.95) = 0.2 of the way: 0.5 + 0.1.
        assert_eq!(b.confidence, 0.6);
        assert_eq!(margin(0.95, 0.95, 1.0), 0.5);
    }
}
