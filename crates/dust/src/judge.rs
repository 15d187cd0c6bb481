//! Deciding whether a read hit: believe an oracle, or split latencies at a calibrated
//! threshold.
//!
//! The threshold is never a constant: hit and miss times differ by orders of magnitude
//! between a simulated disk, an SSD, a virtual disk backed by the host's cache and a
//! spinning disk. [`calibrate`] empties the cache, reads a spread of blocks once (known
//! cold) and again (known hot), and splits the pooled latencies where Otsu's method puts
//! the boundary of the two modes in log-time (the classes are far apart multiplicatively,
//! not additively). The calibration fails loudly when the two sets are not separated, rather
//! than guessing.

use serde::Serialize;

use crate::target::{Read, Target};
use crate::DustError;

/// How a read is judged a hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Judge {
    /// Believe the target's residency report.
    Oracle,
    /// A read faster than the threshold hit.
    Timing {
        /// Boundary between hit and miss latencies.
        threshold_ns: u64,
    },
}

impl Judge {
    /// Whether `read` hit. Errors when the read lacks what this judge needs.
    #[inline]
    pub fn is_hit(&self, read: &Read) -> Result<bool, DustError> {
        match self {
            Judge::Oracle => read
                .resident
                .ok_or_else(|| DustError::Judge("the target has no oracle".into())),
            Judge::Timing { threshold_ns } => read
                .latency_ns
                .map(|t| t < *threshold_ns)
                .ok_or_else(|| DustError::Judge("the target does not time reads".into())),
        }
    }
}

/// The outcome of a timing calibration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// The threshold found.
    pub threshold_ns: u64,
    /// Median latency of the known-hot reads.
    pub hot_median_ns: u64,
    /// Median latency of the known-cold reads.
    pub cold_median_ns: u64,
    /// Known-hot reads judged misses by the threshold.
    pub hot_misjudged: usize,
    /// Known-cold reads judged hits by the threshold.
    pub cold_misjudged: usize,
    /// Reads of each kind.
    pub samples: usize,
}

/// Otsu's threshold on log-latencies: the cut that maximises the variance between the two
/// classes. Returns a latency strictly above every value of the low class and at most the
/// smallest value of the high class (their geometric midpoint), or `None` when all values
/// are equal.
pub fn otsu_threshold(latencies_ns: &[u64]) -> Option<u64> {
    // Ties are told on the integers, not on their logarithms: `ln`'s rounding is not
    // specified and may differ from one call to the next (Miri varies it), so equal
    // latencies need not give equal logs.
    let mut sorted: Vec<u64> = latencies_ns.iter().map(|&t| t.max(1)).collect();
    sorted.sort_unstable();
    let n = sorted.len();
    if n < 2 || sorted[0] == sorted[n - 1] {
        return None;
    }
    let logs: Vec<f64> = sorted.iter().map(|&t| (t as f64).ln()).collect();
    let total: f64 = logs.iter().sum();
    let mut prefix = 0.0;
    let mut best = (f64::NEG_INFINITY, 0usize);
    for i in 1..n {
        prefix += logs[i - 1];
        if sorted[i] == sorted[i - 1] {
            continue; // cut only between distinct values
        }
        let w0 = i as f64 / n as f64;
        let w1 = 1.0 - w0;
        let m0 = prefix / i as f64;
        let m1 = (total - prefix) / (n - i) as f64;
        let between = w0 * w1 * (m0 - m1) * (m0 - m1);
        if between > best.0 {
            best = (between, i);
        }
    }
    let i = best.1;
    let cut = ((logs[i - 1] + logs[i]) / 2.0).exp();
    // Keep the cut strictly above the low class even after rounding.
    Some((cut.round() as u64).max(sorted[i - 1] + 1))
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Calibrate a timing judge on `samples` blocks spread over `region` (which must not be
/// needed warm afterwards: the cache is reset first and left holding those blocks).
///
/// Blocks are spaced evenly over the region so that read-ahead of one cold block does not
/// make the next one a hit. The calibration is accepted only when at most 10% of either
/// kind of read falls on the wrong side of the threshold.
pub fn calibrate(
    target: &mut dyn Target,
    region: std::ops::Range<u64>,
    samples: usize,
) -> Result<Calibration, DustError> {
    if !target.has_timing() {
        return Err(DustError::Judge("the target does not time reads".into()));
    }
    let len = region.end.saturating_sub(region.start);
    let samples = samples.min(len as usize);
    if samples < 4 {
        return Err(DustError::Judge(format!(
            "calibration needs at least 4 blocks, the region has {len}"
        )));
    }
    let stride = len / samples as u64;
    let blocks: Vec<u64> = (0..samples as u64)
        .map(|i| region.start + i * stride)
        .collect();
    target.reset()?;
    let mut cold = Vec::with_capacity(samples);
    for &b in &blocks {
        cold.push(target.read(b)?.latency_ns.unwrap_or(0));
    }
    let mut hot = Vec::with_capacity(samples);
    for &b in &blocks {
        hot.push(target.read(b)?.latency_ns.unwrap_or(0));
    }
    let pooled: Vec<u64> = cold.iter().chain(&hot).copied().collect();
    let threshold_ns = otsu_threshold(&pooled)
        .ok_or_else(|| DustError::Judge("every calibration read took the same time".into()))?;
    let hot_misjudged = hot.iter().filter(|&&t| t >= threshold_ns).count();
    let cold_misjudged = cold.iter().filter(|&&t| t < threshold_ns).count();
    let cal = Calibration {
        threshold_ns,
        hot_median_ns: median(&mut hot),
        cold_median_ns: median(&mut cold),
        hot_misjudged,
        cold_misjudged,
        samples,
    };
    if hot_misjudged * 10 > samples || cold_misjudged * 10 > samples {
        return Err(DustError::Judge(format!(
            "cold and hot reads are not separated by time (hot median {} ns, cold median {} ns, \
             threshold {} ns: {} hot and {} cold reads on the wrong side of {})",
            cal.hot_median_ns,
            cal.cold_median_ns,
            threshold_ns,
            hot_misjudged,
            cold_misjudged,
            samples
        )));
    }
    Ok(cal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn otsu_splits_two_modes() {
        // Three hits around 2 µs, three misses around 5 ms: the cut lies between them at
        // their geometric midpoint exp((ln 2500 + ln 1e6)/2) = 50_000.
        let t = otsu_threshold(&[2_000, 2_500, 2_100, 1_000_000, 9_000_000, 5_000_000]).unwrap();
        assert_eq!(t, 50_000);
        assert_eq!(otsu_threshold(&[7, 7, 7]), None);
        assert_eq!(otsu_threshold(&[1, 2]), Some(2));
    }

    #[test]
    fn judge_needs_its_evidence() {
        let r = Read {
            latency_ns: Some(10),
            resident: None,
        };
        assert!(Judge::Oracle.is_hit(&r).is_err());
        assert!(Judge::Timing { threshold_ns: 11 }.is_hit(&r).unwrap());
        assert!(!Judge::Timing { threshold_ns: 10 }.is_hit(&r).unwrap());
    }
}
