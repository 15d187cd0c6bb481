//! The one small interface Dust probes a cache through.
//!
//! Dust needs very little from a cache: read a block, and say whether that read was served
//! from the cache. A simulated cache knows the answer exactly (an *oracle*); a real one is
//! judged by timing, and may also have a ground truth that does not disturb it (`mincore`
//! on Linux). A [`Read`] therefore carries both, each optional, and the [`crate::Judge`]
//! decides which one to believe.
//!
//! Adding a target (the real `bufcache-pool`, a remote appliance) means implementing
//! [`Target`]: `blocks`, `read`, `reset` and `describe` are required; the batch
//! [`Target::touch_range`] has a default built on `read` and exists only so simulated
//! targets can skip a virtual call per block.

use crate::DustError;

/// What one read observed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// How long the read took, in nanoseconds (wall-clock for real targets, virtual for
    /// simulated ones with a latency model). `None` when the target does not time reads.
    pub latency_ns: Option<u64>,
    /// Whether the block was resident just before the read, when the target knows without
    /// disturbing the cache (a simulator's oracle, `mincore`). `None` when it cannot tell.
    pub resident: Option<bool>,
}

/// A cache that Dust can probe: a file (or a simulated one) of `blocks()` blocks read
/// through the cache under test.
pub trait Target {
    /// One line saying what is being probed, for reports.
    fn describe(&self) -> String;

    /// Number of addressable blocks (the file's length in blocks). Dust's regions must fit.
    fn blocks(&self) -> u64;

    /// Read block `block` through the cache and report what was observed.
    fn read(&mut self, block: u64) -> Result<Read, DustError>;

    /// Empty the cache of this target's blocks (start cold), so that every step and
    /// iteration begins from the same state.
    fn reset(&mut self) -> Result<(), DustError>;

    /// Read every block of `blocks` in order, each `repeat` times in a row, without
    /// measuring (the set-up reads of the thesis's figures 2.2, 2.3 and 2.7).
    fn touch_range(&mut self, blocks: std::ops::Range<u64>, repeat: u32) -> Result<(), DustError> {
        for b in blocks {
            for _ in 0..repeat {
                self.read(b)?;
            }
        }
        Ok(())
    }

    /// Whether reads carry a latency (so a timing judge can be calibrated).
    fn has_timing(&self) -> bool;

    /// Whether reads carry a ground-truth residency.
    fn has_oracle(&self) -> bool;
}
