//! Naming and building arbiters: [`ArbiterSpec`], its short names, and the typed errors
//! for a configuration that makes no sense.

use std::fmt;
use std::str::FromStr;

use crate::age::OldestPage;
use crate::balance::GhostBalance;
use crate::fixed::FixedSplit;
use crate::refault::RefaultCost;
use crate::regret::Regret;
use crate::{Arbiter, Kind};

/// The largest penalty accepted: one day. Nelson's Sprite used 20 minutes; a penalty
/// beyond a day is a unit mistake, not a policy.
pub const PENALTY_S_MAX: f64 = 86_400.0;

/// Which arbiter, with its parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "arbiter", rename_all = "lowercase")]
pub enum ArbiterSpec {
    /// `fixed:PAGES`: file consumers hold at most `file_pages` pages between them, memory
    /// consumers the rest.
    Fixed {
        /// Pages for file data.
        file_pages: u64,
    },
    /// `sprite` (penalty 0) or `penalty:SECONDS`: the oldest page goes, memory pages
    /// looking `penalty_s` younger than they are.
    Age {
        /// Seconds added to the reference time of memory pages.
        penalty_s: f64,
    },
    /// `refault`: Linux's refault distance and cost-split pressure.
    Refault {
        /// Linux's `vm.swappiness` (0-200): the weight of memory pages in the pressure
        /// split, files getting `200 - swappiness`. Linux's default is 60.
        swappiness: u32,
    },
    /// `balance`: ghost-driven balance, no parameter.
    Balance,
    /// `regret`: the consumer whose recent evictions cost least gives, no parameter.
    Regret,
}

/// An arbiter configuration that cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArbiterError {
    /// The name is not one of the arbiters.
    #[error("unknown arbiter {name:?}; valid: fixed:PAGES, sprite, penalty:SECONDS, refault[:SWAPPINESS], balance, regret")]
    UnknownName {
        /// What was given.
        name: String,
    },
    /// A parameter could not be read or is out of range.
    #[error("arbiter {arbiter}: parameter {value:?} {reason}")]
    BadParameter {
        /// The arbiter.
        arbiter: &'static str,
        /// The parameter as given.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A fixed split gives file data more pages than memory has, or none to processes.
    #[error("fixed split of {file_pages} file pages does not leave memory pages in a memory of {memory_pages} pages")]
    SplitTooLarge {
        /// Pages asked for file data.
        file_pages: u64,
        /// Pages of memory.
        memory_pages: u64,
    },
}

impl ArbiterSpec {
    /// Sprite without penalty.
    pub const SPRITE: ArbiterSpec = ArbiterSpec::Age { penalty_s: 0.0 };

    /// Linux's default swappiness.
    pub const LINUX: ArbiterSpec = ArbiterSpec::Refault { swappiness: 60 };

    /// Short name for reports and file names: `fixed-256`, `sprite`, `penalty-120`,
    /// `refault`, `balance`, `regret`.
    pub fn label(&self) -> String {
        match self {
            ArbiterSpec::Fixed { file_pages } => format!("fixed-{file_pages}"),
            ArbiterSpec::Age { penalty_s } if *penalty_s == 0.0 => "sprite".into(),
            ArbiterSpec::Age { penalty_s } => format!("penalty-{penalty_s}"),
            ArbiterSpec::Refault { swappiness: 60 } => "refault".into(),
            ArbiterSpec::Refault { swappiness } => format!("refault-{swappiness}"),
            ArbiterSpec::Balance => "balance".into(),
            ArbiterSpec::Regret => "regret".into(),
        }
    }

    /// Check the parameters against a memory of `memory_pages` pages.
    pub fn validate(&self, memory_pages: u64) -> Result<(), ArbiterError> {
        match *self {
            ArbiterSpec::Fixed { file_pages } if file_pages >= memory_pages => {
                Err(ArbiterError::SplitTooLarge {
                    file_pages,
                    memory_pages,
                })
            }
            ArbiterSpec::Age { penalty_s } => check_penalty(penalty_s, || penalty_s.to_string()),
            ArbiterSpec::Refault { swappiness } if swappiness > 200 => {
                Err(ArbiterError::BadParameter {
                    arbiter: "refault",
                    value: swappiness.to_string(),
                    reason: "is above 200 (swappiness is 0-200)",
                })
            }
            _ => Ok(()),
        }
    }

    /// Build the arbiter for consumers of the given kinds sharing `memory_pages` pages;
    /// ages are in ticks, `ticks_per_s` of them a second (the penalty's unit).
    pub fn build(
        &self,
        memory_pages: u64,
        kinds: &[Kind],
        ticks_per_s: u64,
    ) -> Result<Box<dyn Arbiter>, ArbiterError> {
        self.validate(memory_pages)?;
        Ok(match *self {
            ArbiterSpec::Fixed { file_pages } => {
                Box::new(FixedSplit::new(file_pages, memory_pages, kinds.to_vec()))
            }
            ArbiterSpec::Age { penalty_s } => Box::new(OldestPage::new(
                (penalty_s * ticks_per_s as f64).round() as u64,
            )),
            ArbiterSpec::Refault { swappiness } => {
                Box::new(RefaultCost::new(swappiness, memory_pages, kinds.to_vec()))
            }
            ArbiterSpec::Balance => Box::new(GhostBalance::new(memory_pages, kinds.len())),
            ArbiterSpec::Regret => Box::new(Regret::new(memory_pages, kinds.len())),
        })
    }
}

fn check_penalty(penalty_s: f64, shown: impl Fn() -> String) -> Result<(), ArbiterError> {
    let reason = if !penalty_s.is_finite() {
        "is not a finite number of seconds"
    } else if penalty_s < 0.0 {
        "is negative (a penalty makes memory pages look younger, never older)"
    } else if penalty_s > PENALTY_S_MAX {
        "is more than a day (86400 s)"
    } else {
        return Ok(());
    };
    Err(ArbiterError::BadParameter {
        arbiter: "penalty",
        value: shown(),
        reason,
    })
}

impl fmt::Display for ArbiterSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArbiterSpec::Fixed { file_pages } => write!(f, "fixed:{file_pages}"),
            ArbiterSpec::Age { penalty_s } if *penalty_s == 0.0 => f.write_str("sprite"),
            ArbiterSpec::Age { penalty_s } => write!(f, "penalty:{penalty_s}"),
            ArbiterSpec::Refault { swappiness } => write!(f, "refault:{swappiness}"),
            ArbiterSpec::Balance => f.write_str("balance"),
            ArbiterSpec::Regret => f.write_str("regret"),
        }
    }
}

impl FromStr for ArbiterSpec {
    type Err = ArbiterError;

    /// `fixed:PAGES`, `sprite`, `penalty:SECONDS`, `refault` or `refault:SWAPPINESS`,
    /// `balance`, `regret`. Ranges that depend on the memory size are checked by
    /// [`ArbiterSpec::validate`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, param) = match s.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (s, None),
        };
        let bad = |arbiter, reason| ArbiterError::BadParameter {
            arbiter,
            value: param.unwrap_or("").to_string(),
            reason,
        };
        let spec = match (name, param) {
            ("fixed", Some(p)) => ArbiterSpec::Fixed {
                file_pages: p
                    .parse()
                    .map_err(|_| bad("fixed", "is not a whole number of pages"))?,
            },
            ("fixed", None) => return Err(bad("fixed", "is missing (fixed:PAGES)")),
            ("sprite", None) => ArbiterSpec::SPRITE,
            ("penalty", Some(p)) => {
                let penalty_s: f64 = p
                    .parse()
                    .map_err(|_| bad("penalty", "is not a number of seconds"))?;
                check_penalty(penalty_s, || p.to_string())?;
                ArbiterSpec::Age { penalty_s }
            }
            ("penalty", None) => return Err(bad("penalty", "is missing (penalty:SECONDS)")),
            ("refault", None) => ArbiterSpec::LINUX,
            ("refault", Some(p)) => {
                let swappiness = p
                    .parse()
                    .map_err(|_| bad("refault", "is not a whole number"))?;
                let spec = ArbiterSpec::Refault { swappiness };
                spec.validate(u64::MAX)?;
                spec
            }
            ("balance", None) => ArbiterSpec::Balance,
            ("regret", None) => ArbiterSpec::Regret,
            _ => {
                return Err(ArbiterError::UnknownName {
                    name: s.to_string(),
                })
            }
        };
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in [
            "fixed:128",
            "sprite",
            "penalty:120",
            "refault:60",
            "balance",
            "regret",
        ] {
            let spec: ArbiterSpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
        }
        assert_eq!(
            "refault".parse::<ArbiterSpec>().unwrap(),
            ArbiterSpec::LINUX
        );
        assert_eq!(ArbiterSpec::Age { penalty_s: 120.0 }.label(), "penalty-120");
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        for s in [
            "penalty:-5",
            "penalty:1e9",
            "penalty:NaN",
            "penalty:x",
            "fixed:",
            "refault:300",
        ] {
            assert!(
                matches!(
                    s.parse::<ArbiterSpec>(),
                    Err(ArbiterError::BadParameter { .. })
                ),
                "{s}"
            );
        }
        assert!(matches!(
            "lru".parse::<ArbiterSpec>(),
            Err(ArbiterError::UnknownName { .. })
        ));
        assert_eq!(
            ArbiterSpec::Fixed { file_pages: 10 }
                .build(10, &[Kind::File, Kind::Memory], 1)
                .unwrap_err(),
            ArbiterError::SplitTooLarge {
                file_pages: 10,
                memory_pages: 10
            }
        );
    }
}
