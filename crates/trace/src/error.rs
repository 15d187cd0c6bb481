//! Typed errors for every reader and writer.
//!
//! Each variant carries what a user needs to fix the input without opening a debugger: the
//! path (as the user gave it), the 1-based line or 0-based record number, the byte offset
//! where it helps, what was expected and what was found.

use std::path::PathBuf;

/// An error while detecting, reading or writing a trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Opening, reading, writing or renaming a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The zstd decoder or encoder failed (corrupt frame, truncated stream, ...).
    #[error("{}: zstd error after {offset} decompressed bytes: {source}", path.display())]
    Zstd {
        /// The file involved.
        path: PathBuf,
        /// How many decompressed bytes had been produced before the failure.
        offset: u64,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The format was not given and could not be detected, or a format name is unknown.
    #[error("unknown trace format {name:?} (known: {known})")]
    UnknownFormat {
        /// The name or file name that was not recognised.
        name: String,
        /// The known format names.
        known: &'static str,
    },
    /// Standard input was given as the trace without a format.
    #[error("standard input (-) has no file name to tell the format by: give the format (--format text, csv, oracle, oraclezst or msr)")]
    StdinFormat,
    /// A binary file ended inside a fixed-size record.
    #[error("{}: record {record} at byte {offset}: truncated {format} record: expected {expected} bytes, found {found}", path.display())]
    TruncatedRecord {
        /// The file involved.
        path: PathBuf,
        /// 0-based index of the incomplete record.
        record: u64,
        /// Byte offset (in the decompressed stream) where the record starts.
        offset: u64,
        /// The format's name.
        format: &'static str,
        /// Record size in bytes.
        expected: usize,
        /// Bytes actually present.
        found: usize,
    },
    /// A binary record holds a value the format does not allow.
    #[error("{}: record {record} at byte {offset}: field {field}: {expected}, found {found}", path.display())]
    InvalidRecord {
        /// The file involved.
        path: PathBuf,
        /// 0-based record index.
        record: u64,
        /// Byte offset of the record.
        offset: u64,
        /// Field name.
        field: &'static str,
        /// What the field must satisfy.
        expected: &'static str,
        /// The offending value.
        found: i64,
    },
    /// A CSV row has fewer columns than the mapping needs.
    #[error("{}:{line}: short row: expected at least {expected} columns, found {found}", path.display())]
    ShortRow {
        /// The file involved.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// Columns the mapping needs.
        expected: usize,
        /// Columns present.
        found: usize,
    },
    /// A field (CSV column or text-trace token) could not be parsed.
    #[error("{}:{line}: column {column:?}: expected {expected}, found {found:?}", path.display())]
    BadField {
        /// The file involved.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// Column name (header name, `#index` or `key` for text traces).
        column: String,
        /// What was expected.
        expected: &'static str,
        /// The text found (lossily decoded, truncated to 64 bytes).
        found: String,
    },
    /// A value parsed but does not fit (a page number too large to combine with a disk
    /// number, a time too large for a 32-bit field, ...).
    #[error("{}:{line}: {what}", path.display())]
    OutOfRange {
        /// The file involved.
        path: PathBuf,
        /// 1-based line number for text/CSV, 0-based record number for binary output.
        line: u64,
        /// What does not fit, with the value.
        what: String,
    },
    /// A CSV mapping names a column the header does not have.
    #[error("{}: CSV header has no column {column:?} (header: {header})", path.display())]
    UnknownColumn {
        /// The file involved.
        path: PathBuf,
        /// The missing column.
        column: String,
        /// The header line found.
        header: String,
    },
    /// No CSV mapping was given and the first line matches no preset.
    #[error("{}: cannot detect the CSV layout from its first line {first_line:?}; expected the cloudphysics or MSR header, a 7-column MSR row, a header naming a key column (key, obj_id, id, ...) or an offset and a size, or one column of keys; give a column mapping such as `key=2,size=3` (--csv-columns on the command line)", path.display())]
    UndetectedCsv {
        /// The file involved.
        path: PathBuf,
        /// The first line (truncated to 200 bytes).
        first_line: String,
    },
    /// The CSV mapping itself is inconsistent (no key and no offset column, names without a
    /// header, ...).
    #[error("invalid CSV mapping: {0}")]
    BadMapping(String),
    /// A lower-level CSV error (I/O inside the CSV reader).
    #[error("{}:{line}: {source}", path.display())]
    Csv {
        /// The file involved.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The underlying error.
        source: csv::Error,
    },
    /// This format has no writer.
    #[error("cannot write format {0}: it is read-only")]
    ReadOnlyFormat(crate::Format),
    /// A synthetic workload spec could not be parsed or is invalid.
    #[error("bad workload: {0}")]
    BadWorkload(String),
}

/// Renders at most 64 bytes of a field for an error message.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(64)];
    String::from_utf8_lossy(cut).into_owned()
}
