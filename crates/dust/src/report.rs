//! A whole Dust run: judge, size, the three steps for many iterations, features, verdict.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::classify::{classify, features, step_features, Features, StepFeatures, Verdict, STRONG};
use crate::judge::{calibrate, Calibration, Judge};
use crate::size::{estimate_size, SizeEstimate, SizeOptions};
use crate::steps::{region_hit_fraction, run_step, Layout, Probe, Step};
use crate::target::Target;
use crate::DustError;

/// How to decide hits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeChoice {
    /// Timing when the target times reads (calibrated), otherwise its oracle.
    #[default]
    Auto,
    /// Always the oracle.
    Oracle,
    /// Always timing.
    Timing,
}

/// What a run does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DustConfig {
    /// Iterations of the three steps (the thesis ran at least 300 on real systems).
    pub iterations: u32,
    /// Root seed: probe starts and the half-use-bit choice.
    pub seed: u64,
    /// Use this cache size instead of measuring it.
    pub size_hint: Option<u64>,
    /// How hits are judged.
    pub judge: JudgeChoice,
    /// Knobs of the size estimate.
    pub size_options: SizeOptions,
    /// Blocks read cold and hot to calibrate a timing judge.
    pub calibration_samples: usize,
}

impl Default for DustConfig {
    fn default() -> Self {
        DustConfig {
            iterations: 300,
            seed: 42,
            size_hint: None,
            judge: JudgeChoice::Auto,
            size_options: SizeOptions::default(),
            calibration_samples: 256,
        }
    }
}

/// Rounds of 20 probes in a fit check.
pub const FIT_ROUNDS: u32 = 5;
/// A test region fits when at least this fraction of its probes hit (a few misjudged reads
/// allowed).
pub const FIT_MIN_HITS: f64 = 0.97;
/// At most this many 10% reductions of the estimate.
pub const FIT_MAX_SHRINKS: usize = 4;

/// One check that the test region fits in the cache.
///
/// A size estimate that is too high makes the test region (90% of it) overflow the cache
/// while its attributes are being set; the initial-access order is then scrambled and FIFO
/// looks like Segmented FIFO (both keep the pages missed last). The thesis relied on a good
/// estimate; Dust checks it: figure 2.2's pattern without the eviction scan, from an empty
/// cache, must leave every probed page resident. If it does not, the estimate shrinks by
/// 10% and the check repeats.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FitCheck {
    /// The estimate checked.
    pub estimate_pages: u64,
    /// Fraction of the probes that hit.
    pub hit_fraction: f64,
}

/// Everything a run found, data first.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The target's description.
    pub target: String,
    /// The configuration.
    pub config: DustConfig,
    /// How hits were judged.
    pub judge: Judge,
    /// The timing calibration, when timing was used.
    pub calibration: Option<Calibration>,
    /// The cache size used.
    pub size: SizeEstimate,
    /// Test-region fit checks, in order; the last one's estimate is the layout's.
    pub fit_checks: Vec<FitCheck>,
    /// Regions derived from the (checked) estimate.
    pub layout: Layout,
    /// Every probe.
    pub probes: Vec<Probe>,
    /// Fraction of timed probes whose judgement agreed with the ground truth, when both
    /// were available.
    pub judge_agreement: Option<f64>,
    /// Features computed from the probes.
    pub features: Features,
    /// The conclusion.
    pub verdict: Verdict,
    /// 2Q's long-term queue (thesis figure 2.12c), when the verdict is 2Q: its probes are
    /// in `probes` under the `long_term` step.
    pub long_term: Option<LongTermQueue>,
}

/// What the long-term step found: which stripes of a region placed in 2Q's main queue (Am)
/// survived evictions from Am, and the order that explains it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LongTermQueue {
    /// The step's layout (a `0.3E` region in ten stripes).
    pub layout: Layout,
    /// Order scores and stripe profile of the step's probes.
    pub features: StepFeatures,
    /// `lru`, `fifo` or `lfu` when recency, initial access or frequency orders survival
    /// (score at least [`STRONG`]; recency first), else `unknown`.
    pub order: &'static str,
}

impl LongTermQueue {
    fn from_probes(probes: &[Probe], layout: Layout) -> Self {
        let mine: Vec<Probe> = probes
            .iter()
            .filter(|p| p.step == Step::LongTerm)
            .copied()
            .collect();
        let features = step_features(&mine, &layout);
        let order = if features.recency >= STRONG {
            "lru"
        } else if features.initial >= STRONG {
            "fifo"
        } else if features.frequency >= STRONG {
            "lfu"
        } else {
            "unknown"
        };
        LongTermQueue {
            layout,
            features,
            order,
        }
    }
}

/// Run Dust against `target`.
pub fn fingerprint(target: &mut dyn Target, config: &DustConfig) -> Result<Report, DustError> {
    fingerprint_with_progress(target, config, &mut |_| {})
}

/// [`fingerprint`], calling `progress(i)` after each of the `config.iterations`
/// iterations (a real target can take minutes per iteration).
pub fn fingerprint_with_progress(
    target: &mut dyn Target,
    config: &DustConfig,
    progress: &mut dyn FnMut(u32),
) -> Result<Report, DustError> {
    if config.iterations == 0 {
        return Err(DustError::Config("iterations must be at least 1".into()));
    }
    let use_timing = match config.judge {
        JudgeChoice::Oracle => false,
        JudgeChoice::Timing => true,
        JudgeChoice::Auto => target.has_timing(),
    };
    if !use_timing && !target.has_oracle() {
        return Err(DustError::Judge(
            "the target has no oracle; judge by timing".into(),
        ));
    }
    let (judge, calibration) = if use_timing {
        let region = 0..target.blocks().min(1 << 16);
        let cal = calibrate(target, region, config.calibration_samples)?;
        (
            Judge::Timing {
                threshold_ns: cal.threshold_ns,
            },
            Some(cal),
        )
    } else {
        (Judge::Oracle, None)
    };
    let size = match config.size_hint {
        Some(pages) => SizeEstimate::hint(pages),
        None => {
            // A real machine misjudges more hits than the 1% allowance (a preempted read
            // of a cached page looks like a miss): tell the estimator the rate at which
            // known-hot calibration reads were misjudged.
            let mut opts = config.size_options;
            if let Some(cal) = &calibration {
                opts.noise_rate = (cal.hot_misjudged as f64 / cal.samples as f64).min(0.1);
            }
            estimate_size(target, &judge, &opts)?
        }
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed);
    // Check that the test region fits; shrink the estimate by 10% while it does not.
    let mut estimate = size.pages;
    let mut fit_checks = Vec::new();
    let layout = loop {
        let layout = Layout::new(estimate)?;
        let needed = layout.blocks_needed();
        if target.blocks() < needed {
            return Err(DustError::TooSmall {
                blocks: target.blocks(),
                needed,
                pages: estimate,
            });
        }
        let fraction = region_hit_fraction(target, &judge, &layout, FIT_ROUNDS, &mut rng)?;
        fit_checks.push(FitCheck {
            estimate_pages: estimate,
            hit_fraction: fraction,
        });
        if fraction >= FIT_MIN_HITS || fit_checks.len() > FIT_MAX_SHRINKS {
            break layout;
        }
        estimate = estimate * 9 / 10;
    };
    let mut probes = Vec::with_capacity(config.iterations as usize * 60);
    for i in 0..config.iterations {
        for step in [Step::ShortTerm, Step::UseBits, Step::History] {
            run_step(target, &judge, &layout, step, i, &mut rng, &mut probes)?;
        }
        progress(i + 1);
    }
    target.reset()?;
    let judged: Vec<&Probe> = probes
        .iter()
        .filter(|p| p.resident.is_some() && p.latency_ns.is_some())
        .collect();
    let judge_agreement = (use_timing && !judged.is_empty()).then(|| {
        judged.iter().filter(|p| p.resident == Some(p.hit)).count() as f64 / judged.len() as f64
    });
    let features = features(&probes, &layout);
    let verdict = classify(&features);
    // 2Q's main queue can only be probed once 2Q is known (the set-up is 2Q-specific).
    let long_term = if verdict.verdict == "twoq" {
        let lt = layout.long_term();
        for i in 0..config.iterations {
            run_step(
                target,
                &judge,
                &lt,
                Step::LongTerm,
                i,
                &mut rng,
                &mut probes,
            )?;
        }
        target.reset()?;
        Some(LongTermQueue::from_probes(&probes, lt))
    } else {
        None
    };
    Ok(Report {
        target: target.describe(),
        config: config.clone(),
        judge,
        calibration,
        size,
        fit_checks,
        layout,
        probes,
        judge_agreement,
        features,
        verdict,
        long_term,
    })
}
