//! Opening traces by path and writing them atomically.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use crate::compress::Compression;
use crate::csvtrace::{CsvMapping, CsvReader, CsvWriter};
use crate::oracle::{OracleGeneralReader, OracleGeneralWriter};
use crate::output::Output;
use crate::text::{TextReader, TextWriter};
use crate::{Format, Request, TraceError, TraceReader};

/// How to read a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Page size in bytes: block traces are split into pages of this size, and formats
    /// without sizes (text) give every request this size. Default 4096.
    pub page_size: u32,
    /// CSV column mapping; `None` detects a preset from the first line (see
    /// [`crate::csvtrace`]). Ignored by other formats. ([`Format::Msr`] always uses
    /// [`CsvMapping::msr`].)
    pub csv: Option<CsvMapping>,
    /// Text traces: hash non-numeric keys (FNV-1a) instead of failing.
    pub hash_strings: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            page_size: 4096,
            csv: None,
            hash_strings: false,
        }
    }
}

/// Read buffer for text and CSV: large enough that reads are rare, small enough to stay
/// bounded.
const BUF_BYTES: usize = 256 * 1024;

/// Opens a trace: a file, or standard input when `path` is `-`. `format` None detects it
/// from the file name ([`Format::from_path`], after any compression suffix) and fails with
/// [`TraceError::UnknownFormat`] if it cannot; standard input needs a format. Files ending
/// in `.gz`, `.zst` or `.xz`, and compressed standard input, are decompressed as they are
/// read ([`crate::compress`]).
pub fn open(
    path: &Path,
    format: Option<Format>,
    opts: &ReadOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let stdin = path.as_os_str() == "-";
    let io_err = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Open first: a missing file is the more useful error than an undetectable format.
    let (compression, inner, src): (Compression, String, Box<dyn Read + Send>) = if stdin {
        let (c, src) = crate::compress::stdin_source().map_err(io_err)?;
        (c, String::new(), src)
    } else {
        let file = File::open(path).map_err(io_err)?;
        let (c, inner) = Compression::from_path(path);
        (c, inner, Box::new(file))
    };
    let format = match format
        .or_else(|| Format::from_path(path))
        .or_else(|| Format::from_path(Path::new(&inner)))
    {
        Some(f) => f,
        None if stdin => return Err(TraceError::StdinFormat),
        None => {
            return Err(TraceError::UnknownFormat {
                name: path.display().to_string(),
                known: crate::format::KNOWN_FORMATS,
            })
        }
    };
    // oracleGeneral's zstd reader reports decoder errors with the decompressed offset.
    let (format, compression) = match (format, compression) {
        (Format::OracleGeneral, Compression::Zstd) => (Format::OracleGeneralZst, Compression::None),
        (Format::OracleGeneralZst, _) => (format, Compression::None),
        other => other,
    };
    let src = compression.decoder(src, path)?;
    let buffered = |src| BufReader::with_capacity(BUF_BYTES, src);
    Ok(match format {
        Format::Text => Box::new(
            TextReader::new(buffered(src), path, opts.page_size).hash_strings(opts.hash_strings),
        ),
        Format::Csv => Box::new(CsvReader::new(
            buffered(src),
            path,
            opts.csv.as_ref(),
            opts.page_size,
        )?),
        Format::Msr => Box::new(CsvReader::new(
            buffered(src),
            path,
            Some(&CsvMapping::msr()),
            opts.page_size,
        )?),
        // The reader already reads in 1 MiB chunks; another buffer would only copy.
        Format::OracleGeneral => Box::new(OracleGeneralReader::new(src, path)),
        Format::OracleGeneralZst => Box::new(OracleGeneralReader::new_zstd(src, path)?),
    })
}

/// Reads a whole trace into memory (as read: `next_access` is filled only by formats
/// that carry it; see [`crate::fill_next_access`]).
pub fn read_all(
    path: &Path,
    format: Option<Format>,
    opts: &ReadOptions,
) -> Result<Vec<Request>, TraceError> {
    let mut r = open(path, format, opts)?;
    let mut out = Vec::new();
    let mut chunk = vec![Request::default(); 4096];
    loop {
        let n = r.read_batch(&mut chunk)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// A writer for any writable format.
pub enum TraceWriter<W: Write> {
    /// One key per line.
    Text(TextWriter<W>),
    /// Keyed CSV.
    Csv(CsvWriter<W>),
    /// oracleGeneral, plain or zstd.
    Oracle(OracleGeneralWriter<W>),
}

impl<W: Write> TraceWriter<W> {
    /// A writer of `format` into `w` (`path` names it in errors). zstd uses level 3.
    pub fn new(w: W, path: &Path, format: Format) -> Result<Self, TraceError> {
        Ok(match format {
            Format::Text => TraceWriter::Text(TextWriter::new(w, path)),
            Format::Csv => TraceWriter::Csv(CsvWriter::new(w, path)),
            Format::OracleGeneral => TraceWriter::Oracle(OracleGeneralWriter::new(w, path)),
            Format::OracleGeneralZst => {
                TraceWriter::Oracle(OracleGeneralWriter::new_zstd(w, path, 3)?)
            }
            Format::Msr => return Err(TraceError::ReadOnlyFormat(format)),
        })
    }

    /// Appends one request.
    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        match self {
            TraceWriter::Text(w) => w.write(r),
            TraceWriter::Csv(w) => w.write(r),
            TraceWriter::Oracle(w) => w.write(r),
        }
    }

    /// Flushes everything and returns the inner writer.
    pub fn finish(self) -> Result<W, TraceError> {
        match self {
            TraceWriter::Text(w) => w.finish(),
            TraceWriter::Csv(w) => w.finish(),
            TraceWriter::Oracle(w) => w.finish(),
        }
    }
}

/// Writes `requests` to `path` in `format` by the rules of [`Output`]: all or nothing for a
/// regular file or a new path (a temporary file in the same directory, synced, renamed into
/// place; on any error, including one yielded by `requests`, it is removed and `path` is
/// untouched), written through for a FIFO or a device, `-` for standard output. Returns
/// the number of requests written.
pub fn write_trace<I>(path: &Path, format: Format, requests: I) -> Result<u64, TraceError>
where
    I: IntoIterator<Item = Result<Request, TraceError>>,
{
    if format == Format::Msr {
        return Err(TraceError::ReadOnlyFormat(format));
    }
    let io_err = |source: io::Error| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let out = Output::create(path).map_err(io_err)?;
    let mut w = TraceWriter::new(out, path, format)?;
    let mut n = 0u64;
    for r in requests {
        w.write(&r?)?;
        n += 1;
    }
    // an error above drops `w` and with it the uncommitted temporary file
    w.finish()?.commit().map_err(io_err)?;
    Ok(n)
}
