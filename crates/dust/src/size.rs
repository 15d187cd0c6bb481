//! Step 1: how many pages does the cache hold? (thesis section 2.2.1, figure 2.1)
//!
//! The thesis reads ever larger prefixes of a file twice and stops when the second pass
//! becomes slow. Two changes make that practical and robust:
//!
//! * **Cold start per trial.** Each trial empties the cache first ([`Target::reset`]).
//!   Otherwise blocks left over from a larger earlier trial can push the prefix out (under
//!   FIFO a re-read block keeps its old, early position) and a prefix that fits would look
//!   as if it did not.
//! * **Doubling, then bisection.** Growing by one block per trial costs O(size²) reads;
//!   doubling brackets the size in O(log size) trials, each of 2·prefix reads, and
//!   bisection then narrows the bracket to `tolerance` (0.2% by default, exact for caches
//!   under 500 pages).
//!
//! A prefix *fits* when its second pass has at most `max(min_slow, slow_fraction · prefix)`
//! slow reads, plus, when hits are judged by timing, the misjudged hits expected from the
//! calibration's error rate and four standard deviations of them. A prefix that fits is read back with no misses at all, while one block too
//! many already costs at least one miss under every demand-paging policy (and a whole pass
//! under LRU, FIFO and Clock); the allowance only absorbs misjudged reads (a hit delayed by
//! the scheduler, the 0.1% hiccups of the simulated latency model). The estimate may
//! therefore overshoot by up to `slow_fraction` under policies that keep most of a looping
//! prefix (Random, MRU, scan-resistant ones); 1% keeps that well inside Dust's tolerance.

use serde::Serialize;

use crate::judge::Judge;
use crate::target::Target;
use crate::DustError;

/// Knobs of the size estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SizeOptions {
    /// First prefix tried, in pages.
    pub start_pages: u64,
    /// Stop bisecting when the bracket is narrower than this fraction of its low end.
    pub tolerance: f64,
    /// Slow reads allowed in a fitting prefix, as a fraction of it.
    pub slow_fraction: f64,
    /// Slow reads always allowed (absorbs noise on small prefixes).
    pub min_slow: u64,
    /// Probability that a hit is misjudged a miss, as measured by a timing calibration
    /// (0 for an oracle). A prefix of `n` pages is then allowed `n·p + 4·sqrt(n·p)` more
    /// slow reads: the expected number of misjudged hits plus four standard deviations,
    /// so that one of the ~20 trials fails by noise alone with odds of about 1 in 1,000.
    pub noise_rate: f64,
}

impl Default for SizeOptions {
    fn default() -> Self {
        SizeOptions {
            start_pages: 64,
            tolerance: 0.002,
            slow_fraction: 0.01,
            min_slow: 2,
            noise_rate: 0.0,
        }
    }
}

/// One prefix tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SizeTrial {
    /// Prefix length in pages.
    pub prefix_pages: u64,
    /// Slow (missed) reads in the second pass.
    pub slow: u64,
    /// Whether the prefix was judged to fit.
    pub fits: bool,
}

/// The cache size and how it was found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizeEstimate {
    /// The estimate in pages: the largest prefix that fitted.
    pub pages: u64,
    /// `measured` or `hint`.
    pub source: &'static str,
    /// Every prefix tried, in order.
    pub trials: Vec<SizeTrial>,
}

impl SizeEstimate {
    /// An estimate given by the user rather than measured.
    pub fn hint(pages: u64) -> Self {
        SizeEstimate {
            pages,
            source: "hint",
            trials: Vec::new(),
        }
    }
}

/// Read `0..n` cold, then again, counting slow reads in the second pass.
fn trial(
    target: &mut dyn Target,
    judge: &Judge,
    n: u64,
    opts: &SizeOptions,
) -> Result<SizeTrial, DustError> {
    target.reset()?;
    target.touch_range(0..n, 1)?;
    let mut slow = 0;
    for b in 0..n {
        if !judge.is_hit(&target.read(b)?)? {
            slow += 1;
        }
    }
    let expected_noise = opts.noise_rate * n as f64;
    let allowed = opts.min_slow.max(
        (opts.slow_fraction * n as f64 + expected_noise + 4.0 * expected_noise.sqrt()).floor()
            as u64,
    );
    Ok(SizeTrial {
        prefix_pages: n,
        slow,
        fits: slow <= allowed,
    })
}

/// Measure the cache size of `target` (figure 2.1 with a cold start per trial, doubling
/// and bisection).
pub fn estimate_size(
    target: &mut dyn Target,
    judge: &Judge,
    opts: &SizeOptions,
) -> Result<SizeEstimate, DustError> {
    if !(0.0..0.5).contains(&opts.slow_fraction)
        || !(0.0..1.0).contains(&opts.tolerance)
        || !(0.0..0.2).contains(&opts.noise_rate)
    {
        return Err(DustError::Config(
            "size options: slow_fraction must be in [0, 0.5), tolerance in [0, 1) and \
             noise_rate in [0, 0.2)"
                .into(),
        ));
    }
    let blocks = target.blocks();
    let mut trials = Vec::new();
    let mut lo = 0u64; // largest prefix known to fit
    let mut n = opts.start_pages.clamp(1, blocks.max(1));
    // Doubling: find a prefix that does not fit.
    let hi = loop {
        let t = trial(target, judge, n, opts)?;
        trials.push(t);
        if !t.fits {
            break n;
        }
        lo = n;
        if n >= blocks {
            return Err(DustError::SizeNotFound { tried: n, blocks });
        }
        n = n.saturating_mul(2).min(blocks);
    };
    // Bisection between lo (fits) and hi (does not).
    let mut hi = hi;
    while hi - lo > 1 && (hi - lo) as f64 > opts.tolerance * lo as f64 {
        let mid = lo + (hi - lo) / 2;
        let t = trial(target, judge, mid, opts)?;
        trials.push(t);
        if t.fits {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if lo == 0 {
        return Err(DustError::Judge(
            "not even one block stays cached: every second read is slow".into(),
        ));
    }
    target.reset()?;
    Ok(SizeEstimate {
        pages: lo,
        source: "measured",
        trials,
    })
}
