//! Cache sizes as users write them: a count of units, a byte quantity, or a fraction.
//!
//! * `1000` — 1000 capacity units: objects in unit mode (`ignore_size`), bytes in byte mode.
//! * `64MiB`, `4GB`, `512KiB`, `100B` — bytes. Binary suffixes (`KiB`, `MiB`, `GiB`, `TiB`)
//!   are powers of 1024, and so are `KB`, `MB`, `GB`, `TB` (as in libCacheSim's cachesim,
//!   where `16mb` is 16 MiB); a decimal
//!   mantissa (`1.5GiB`) is allowed and rounded to the nearest byte. Byte quantities are
//!   only accepted in byte mode: in unit mode every object counts as one unit whatever its
//!   size, so there is no honest way to turn bytes into a number of objects (dividing by a
//!   page size would silently assume every object is one page). The error says so.
//! * `0.1` — a fraction in `(0, 1]` of the trace's distinct objects (unit mode) or of its
//!   footprint, the summed size of its distinct objects (byte mode). A number with a decimal
//!   point is always a fraction, so `1.0` is the whole working set while `1` is one unit.
//!
//! A fraction is truncated to whole units, as libCacheSim does (`(uint64_t)(wss * f)`), so
//! that sizes given as fractions name the same capacities in both tools; a fraction that
//! truncates to zero units is an error ([`SizeError::TruncatesToZero`]).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Why a cache size could not be parsed or resolved.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SizeError {
    /// The text is not a size.
    #[error("bad cache size `{text}`: expected a count (1000), a byte size (64MiB, 4GB) or a fraction of the working set (0.1)")]
    Syntax {
        /// What was written.
        text: String,
    },
    /// A fraction outside `(0, 1]`.
    #[error("bad cache size `{text}`: a fraction must be greater than 0 and at most 1")]
    FractionRange {
        /// What was written.
        text: String,
    },
    /// Zero capacity.
    #[error("bad cache size `{text}`: the cache must hold at least one unit")]
    Zero {
        /// What was written.
        text: String,
    },
    /// A fraction of the working set that truncates to nothing (`0.1` of 3 objects, or of
    /// an empty trace): a cache of zero units would report a miss ratio of 1 that means
    /// nothing.
    #[error("cache size `{text}` of a working set of {total} {unit} truncates to 0 {unit}: give a larger fraction or a count")]
    TruncatesToZero {
        /// What was written.
        text: String,
        /// The working set it is a fraction of.
        total: u64,
        /// `objects` or `bytes`.
        unit: &'static str,
    },
    /// A byte size given while every object counts as one unit.
    #[error("cache size `{text}` is in bytes, but sizes are ignored (every object is one unit): give a count of objects or a fraction, or replay in byte mode")]
    BytesInUnitMode {
        /// What was written.
        text: String,
    },
    /// The value does not fit in 64 bits.
    #[error("bad cache size `{text}`: too large")]
    Overflow {
        /// What was written.
        text: String,
    },
}

/// The quantity a [`CacheSize`] denotes before it is resolved against a trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeKind {
    /// A number of capacity units.
    Units(u64),
    /// A number of bytes.
    Bytes(u64),
    /// A fraction of the working set.
    Fraction(f64),
}

/// A cache size with the user's own spelling kept for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheSize {
    /// What it denotes.
    pub kind: SizeKind,
    /// As written.
    pub text: String,
}

/// What a fraction is a fraction of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkingSet {
    /// Distinct objects.
    pub objects: u64,
    /// Summed size of the distinct objects in bytes.
    pub bytes: u64,
}

const SUFFIXES: &[(&str, u64)] = &[
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
    // As in libCacheSim's cachesim, where `16mb` is 16 MiB: users of both tools expect the
    // same capacity from the same spelling.
    ("kb", 1 << 10),
    ("mb", 1 << 20),
    ("gb", 1 << 30),
    ("tb", 1 << 40),
    ("k", 1 << 10),
    ("m", 1 << 20),
    ("g", 1 << 30),
    ("t", 1 << 40),
    ("b", 1),
];

impl CacheSize {
    /// Parse a size as documented in the [module docs](self).
    pub fn parse(text: &str) -> Result<Self, SizeError> {
        let t = text.trim();
        let syntax = || SizeError::Syntax {
            text: text.to_string(),
        };
        if t.is_empty() {
            return Err(syntax());
        }
        let lower = t.to_ascii_lowercase();
        let kind = if let Some((mantissa, scale)) = SUFFIXES
            .iter()
            .find_map(|&(s, m)| lower.strip_suffix(s).map(|rest| (rest.trim(), m)))
        {
            let value: f64 = parse_number(mantissa).ok_or_else(syntax)?;
            let bytes = (value * scale as f64).round();
            if bytes >= u64::MAX as f64 {
                return Err(SizeError::Overflow {
                    text: text.to_string(),
                });
            }
            SizeKind::Bytes(bytes as u64)
        } else if lower.contains('.') || lower.contains('e') {
            let f = parse_number(&lower).ok_or_else(syntax)?;
            if !(f > 0.0 && f <= 1.0) {
                return Err(SizeError::FractionRange {
                    text: text.to_string(),
                });
            }
            SizeKind::Fraction(f)
        } else {
            if !lower.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            let n: u64 = lower.parse().map_err(|e: std::num::ParseIntError| {
                if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) {
                    SizeError::Overflow {
                        text: text.to_string(),
                    }
                } else {
                    syntax()
                }
            })?;
            SizeKind::Units(n)
        };
        if matches!(kind, SizeKind::Units(0) | SizeKind::Bytes(0)) {
            return Err(SizeError::Zero {
                text: text.to_string(),
            });
        }
        Ok(CacheSize {
            kind,
            text: t.to_string(),
        })
    }

    /// A size of `n` units, spelled as the number.
    pub fn units(n: u64) -> Self {
        CacheSize {
            kind: SizeKind::Units(n),
            text: n.to_string(),
        }
    }

    /// The capacity in units for a replay over `working_set`, in unit mode
    /// (`ignore_size`) or byte mode.
    pub fn resolve(&self, ignore_size: bool, working_set: WorkingSet) -> Result<u64, SizeError> {
        let units = match self.kind {
            SizeKind::Units(n) => n,
            SizeKind::Bytes(_) if ignore_size => {
                return Err(SizeError::BytesInUnitMode {
                    text: self.text.clone(),
                })
            }
            SizeKind::Bytes(b) => b,
            SizeKind::Fraction(f) => {
                let total = if ignore_size {
                    working_set.objects
                } else {
                    working_set.bytes
                };
                // truncation, libCacheSim's convention (see the module documentation)
                let units = (f * total as f64) as u64;
                if units == 0 {
                    return Err(SizeError::TruncatesToZero {
                        text: self.text.clone(),
                        total,
                        unit: if ignore_size { "objects" } else { "bytes" },
                    });
                }
                units
            }
        };
        if units == 0 {
            return Err(SizeError::Zero {
                text: self.text.clone(),
            });
        }
        Ok(units)
    }
}

/// A plain decimal number, refusing `inf`, `nan` and signs that `f64::from_str` accepts.
fn parse_number(s: &str) -> Option<f64> {
    if s.is_empty() || !s.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

impl FromStr for CacheSize {
    type Err = SizeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CacheSize::parse(s)
    }
}

impl fmt::Display for CacheSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WS: WorkingSet = WorkingSet {
        objects: 1000,
        bytes: 4_096_000,
    };

    fn kind(s: &str) -> SizeKind {
        CacheSize::parse(s).unwrap().kind
    }

    #[test]
    fn parses_each_spelling() {
        assert_eq!(kind("1000"), SizeKind::Units(1000));
        assert_eq!(kind("64MiB"), SizeKind::Bytes(64 << 20));
        assert_eq!(kind("4GB"), SizeKind::Bytes(4 << 30));
        assert_eq!(kind("16mb"), SizeKind::Bytes(16 << 20), "as in cachesim");
        assert_eq!(kind("512KiB"), SizeKind::Bytes(512 * 1024));
        assert_eq!(kind("512k"), SizeKind::Bytes(512 * 1024));
        assert_eq!(kind("100B"), SizeKind::Bytes(100));
        assert_eq!(kind("1.5 KiB"), SizeKind::Bytes(1536));
        assert_eq!(kind("0.1"), SizeKind::Fraction(0.1));
        assert_eq!(kind("1.0"), SizeKind::Fraction(1.0));
        assert_eq!(kind("1"), SizeKind::Units(1));
        assert_eq!(CacheSize::parse(" 64MiB ").unwrap().text, "64MiB");
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "",
            "abc",
            "-1",
            "1.2.3",
            "MiB",
            "nanMiB",
            "infGB",
            "10 parsecs",
            "+5",
        ] {
            assert!(
                matches!(CacheSize::parse(bad), Err(SizeError::Syntax { .. })),
                "{bad} parsed"
            );
        }
        assert!(matches!(
            CacheSize::parse("1.5"),
            Err(SizeError::FractionRange { .. })
        ));
        assert!(matches!(
            CacheSize::parse("0.0"),
            Err(SizeError::FractionRange { .. })
        ));
        assert!(matches!(CacheSize::parse("0"), Err(SizeError::Zero { .. })));
        assert!(matches!(
            CacheSize::parse("0KiB"),
            Err(SizeError::Zero { .. })
        ));
        assert!(matches!(
            CacheSize::parse("99999999999999999999"),
            Err(SizeError::Overflow { .. })
        ));
        assert!(matches!(
            CacheSize::parse("99999999999TiB"),
            Err(SizeError::Overflow { .. })
        ));
    }

    #[test]
    fn resolves_against_the_working_set() {
        let r = |s: &str, unit| CacheSize::parse(s).unwrap().resolve(unit, WS);
        assert_eq!(r("0.1", true), Ok(100));
        assert_eq!(r("0.1", false), Ok(409_600));
        assert_eq!(r("1.0", true), Ok(1000));
        assert_eq!(
            r("0.0001", true),
            Err(SizeError::TruncatesToZero {
                text: "0.0001".into(),
                total: 1000,
                unit: "objects"
            }),
            "0.1 of 1000 objects is 0"
        );
        assert_eq!(r("250", true), Ok(250));
        assert_eq!(r("250", false), Ok(250));
        assert_eq!(r("1MiB", false), Ok(1 << 20));
        assert!(matches!(
            r("1MiB", true),
            Err(SizeError::BytesInUnitMode { .. })
        ));
    }

    #[test]
    fn fractions_truncate_like_libcachesim() {
        // the shared CloudPhysics trace's 48,974 objects: libCacheSim's `(uint64_t)(wss * f)`
        let ws = WorkingSet {
            objects: 48_974,
            bytes: 0,
        };
        let r = |s: &str| CacheSize::parse(s).unwrap().resolve(true, ws).unwrap();
        assert_eq!(r("0.05"), 2448, "2448.7 truncates");
        assert_eq!(r("0.2"), 9794, "9794.8 truncates");
        assert_eq!(r("0.4"), 19589, "19589.6 truncates");
        assert_eq!(r("1.0"), 48_974);
    }
}
