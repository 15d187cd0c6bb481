//! Trace format names, parsing and detection from file names.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::TraceError;

/// A trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// One key per line (see [`crate::text`]).
    Text,
    /// CSV block or object trace with a column mapping (see [`crate::csvtrace`]); MSR
    /// Cambridge files are detected by content when no mapping is given.
    Csv,
    /// libCacheSim `oracleGeneral`: 24-byte little-endian records.
    OracleGeneral,
    /// `oracleGeneral` compressed with zstd.
    OracleGeneralZst,
    /// MSR Cambridge CSV, forced (no detection): the [`crate::CsvMapping::msr`] preset.
    Msr,
}

/// The names [`Format::from_str`] accepts, for error messages and `--help`.
pub const KNOWN_FORMATS: &str = "text, csv, oracle (oraclegeneral), oraclezst, msr";

impl Format {
    /// Every format, in a stable order.
    pub const ALL: [Format; 5] = [
        Format::Text,
        Format::Csv,
        Format::OracleGeneral,
        Format::OracleGeneralZst,
        Format::Msr,
    ];

    /// The canonical short name (what [`fmt::Display`] prints and `from_str` accepts).
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Csv => "csv",
            Format::OracleGeneral => "oracle",
            Format::OracleGeneralZst => "oraclezst",
            Format::Msr => "msr",
        }
    }

    /// Guesses the format from the file name (case-insensitive suffixes):
    ///
    /// | suffix | format |
    /// |---|---|
    /// | `.oracleGeneral`, `.oracleGeneral.bin` | `OracleGeneral` |
    /// | `.oracleGeneral.zst`, `.oracleGeneral.bin.zst` | `OracleGeneralZst` |
    /// | `.csv` | `Csv` (MSR files are CSV too; the CSV reader tells them apart by content) |
    /// | `.txt`, `.trace` | `Text` |
    ///
    /// Only the oracleGeneral format has a zstd variant here: a `.csv.zst` or `.txt.zst` is
    /// not recognised (returns `None`) rather than silently read as plain text.
    pub fn from_path(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let ends = |s: &str| name.ends_with(s);
        if ends(".oraclegeneral") || ends(".oraclegeneral.bin") {
            Some(Format::OracleGeneral)
        } else if ends(".oraclegeneral.zst") || ends(".oraclegeneral.bin.zst") {
            Some(Format::OracleGeneralZst)
        } else if ends(".csv") {
            Some(Format::Csv)
        } else if ends(".txt") || ends(".trace") {
            Some(Format::Text)
        } else {
            None
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "text" | "txt" => Ok(Format::Text),
            "csv" => Ok(Format::Csv),
            "oracle" | "oraclegeneral" => Ok(Format::OracleGeneral),
            "oraclezst" | "oraclegeneralzst" => Ok(Format::OracleGeneralZst),
            "msr" => Ok(Format::Msr),
            _ => Err(TraceError::UnknownFormat {
                name: s.to_string(),
                known: KNOWN_FORMATS,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!(
            "OracleGeneral".parse::<Format>().unwrap(),
            Format::OracleGeneral
        );
        let err = "parquet".parse::<Format>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown trace format \"parquet\" (known: text, csv, oracle (oraclegeneral), oraclezst, msr)"
        );
    }

    #[test]
    fn detects_from_path() {
        let f = |s: &str| Format::from_path(Path::new(s));
        assert_eq!(f("a/b.oracleGeneral"), Some(Format::OracleGeneral));
        assert_eq!(
            f("cloudPhysicsIO.oracleGeneral.bin"),
            Some(Format::OracleGeneral)
        );
        assert_eq!(f("x.oracleGeneral.zst"), Some(Format::OracleGeneralZst));
        assert_eq!(f("x.oracleGeneral.bin.zst"), Some(Format::OracleGeneralZst));
        assert_eq!(f("hm_0.CSV"), Some(Format::Csv));
        assert_eq!(f("keys.txt"), Some(Format::Text));
        assert_eq!(f("keys.txt.zst"), None);
        assert_eq!(f("data.bin"), None);
        assert_eq!(f("noext"), None);
    }
}
