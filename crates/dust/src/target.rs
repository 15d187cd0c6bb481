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

    /// Remember the cache's whole state under `key`, to come back to it exactly with
    /// [`Target::restore`]; `false` when the target cannot. Only a target that would reach
    /// the same state again by the same reads may say yes (a simulated cache whose policy
    /// draws no random numbers); a real cache never can.
    fn save(&mut self, _key: u64) -> bool {
        false
    }

    /// Return exactly to the state saved under `key` (as if reset and set up again);
    /// `false` when there is none, and the caller does the set-up itself.
    fn restore(&mut self, _key: u64) -> bool {
        false
    }

    /// Whether reads carry a latency (so a timing judge can be calibrated).
    fn has_timing(&self) -> bool;

    /// Whether reads carry a ground-truth residency.
    fn has_oracle(&self) -> bool;
}

/// `name=value` pairs of a target string, in order.
pub(crate) type Pairs<'a> = Vec<(&'a str, &'a str)>;

/// A target string `KIND:POLICY[:name=value...]` taken apart (the form of `sim:` and
/// `pool:` targets): the policy's name and the `name=value` pairs in order, trimmed. The
/// target's own keys are picked out by the caller; the rest are the policy's parameters
/// (see [`policy_text`]).
pub(crate) fn split_spec<'a>(
    text: &'a str,
    kind: &str,
    size_key: &str,
) -> Result<(&'a str, Pairs<'a>), DustError> {
    let rest = text
        .strip_prefix(kind)
        .and_then(|r| r.strip_prefix(':'))
        .ok_or_else(|| bad_target(text, format!("this target starts with `{kind}:`")))?;
    let mut parts = rest.split(':');
    let name = parts.next().unwrap_or_default().trim();
    if name.is_empty() || name.contains('=') {
        return Err(bad_target(
            text,
            format!(
                "expected {kind}:POLICY[:param=value...]:{size_key}=N (policy names: `bufcache policies`)"
            ),
        ));
    }
    let pairs = parts
        .map(|part| {
            part.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| bad_target(text, format!("`{part}` should be `name=value`")))
        })
        .collect::<Result<_, _>>()?;
    Ok((name, pairs))
}

/// The policy spec for `bufcache policies`: the name and the parameters left over.
pub(crate) fn policy_text(name: &str, params: &[(&str, &str)]) -> String {
    params
        .iter()
        .fold(name.to_string(), |s, (k, v)| format!("{s}:{k}={v}"))
}

/// A switch value: on/off, true/false or 1/0.
pub(crate) fn on_off(text: &str, key: &str, v: &str) -> Result<bool, DustError> {
    match v {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(bad_target(text, format!("{key}={v}: expected on or off"))),
    }
}

/// A [`DustError::BadTarget`] for `text`.
pub(crate) fn bad_target(text: &str, why: String) -> DustError {
    DustError::BadTarget {
        target: text.to_string(),
        why,
    }
}

/// `block` must lie in a target of `blocks` blocks (the check every target's `read` and
/// `touch_range` make before touching anything).
#[inline]
pub(crate) fn check_block(block: u64, blocks: u64) -> Result<(), DustError> {
    if block >= blocks {
        return Err(DustError::OutOfRange { block, blocks });
    }
    Ok(())
}
