//! CSV traces: block traces split into pages, or object traces with a key column.
//!
//! A [`CsvMapping`] says which column holds what. Columns are picked by header name or by
//! 0-based index ([`Column`]). Two ways to get a key:
//!
//! * **block mode** (an `offset` column): the row is a block request covering bytes
//!   `[offset × offset_unit, offset × offset_unit + size × size_unit)`. It is split into
//!   fixed-size pages of `page_size` bytes and yields one [`Request`] per page touched, in
//!   ascending order, with `key` = page number and `size` = `page_size`. A row of size 0
//!   touches no page and yields nothing. The split is lazy: the reader keeps the row as a
//!   page range and yields one page per call, so memory does not grow with a request's
//!   size (a 48-byte file asking for 1 TiB is 2²⁸ pages of 4 KiB, read one at a time). If `stream_in_key` is set (MSR: the disk number),
//!   the key is `stream << 40 | page`: page numbers below 2⁴⁰ (4 PiB of 4 KiB pages) and
//!   streams below 2²⁴ never collide, and anything larger is a
//!   [`TraceError::OutOfRange`] rather than a silent collision.
//! * **key mode** (a `key` column, no `offset`): one request per row, `key` parsed as an
//!   unsigned integer, `size` from the size column or `page_size`.
//!
//! Numbers are decimal (or `0x` hex); fields are trimmed of ASCII spaces. Times are kept
//! in the trace's own unit (seconds for CloudPhysics, 100 ns Windows ticks for MSR).
//!
//! # Presets
//!
//! * [`CsvMapping::cloudphysics`]: header `version,time,op,size,lbn`; `lbn` in 512-byte
//!   sectors, `size` in bytes; `op` is a SCSI opcode in hex: READ(6/10/12/16) = `08`, `28`,
//!   `a8`, `88` -> Read; WRITE(6/10/12/16) = `0a`, `2a`, `aa`, `8a` -> Write; any other
//!   opcode (TEST UNIT READY, SYNCHRONIZE CACHE, ...) moves no data, so its row is skipped.
//! * [`CsvMapping::msr`]: MSR Cambridge, no header, 7 columns
//!   `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`; offset and size in
//!   bytes; `Type` is `Read`/`Write`; the disk number is the stream and goes into the key.
//!   The host name is ignored: MSR files hold one host each (`hm_0.csv`, ...).
//! * [`CsvMapping::keyed`]: a header naming a `key` column, and optionally `time`, `op`
//!   (`read`/`write`/`delete`), `size`, `stream`: what [`CsvWriter`] writes.
//!
//! # Detection
//!
//! With no mapping, the first line decides: exactly the CloudPhysics header -> cloudphysics;
//! 7 fields whose 4th is `Read` or `Write` (any case) and whose 1st, 3rd, 5th and 6th are
//! integers -> msr (the line is data); a header with a `key` column -> keyed. Otherwise
//! [`TraceError::UndetectedCsv`].

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use csv::ByteRecord;

use crate::error::excerpt;
use crate::keyhash::key_hash;
use crate::text::parse_u64;
use crate::{Op, Request, TraceError, TraceReader, NEVER};

/// Bits of the page number below the stream number in block-mode keys.
pub const STREAM_SHIFT: u32 = 40;

/// A column by header name (needs a header) or by 0-based index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Column {
    /// Header name, matched case-insensitively after trimming.
    Name(String),
    /// 0-based position.
    Index(usize),
}

impl From<&str> for Column {
    /// `"3"` is an index, anything else a name.
    fn from(s: &str) -> Self {
        match s.parse::<usize>() {
            Ok(i) => Column::Index(i),
            Err(_) => Column::Name(s.to_string()),
        }
    }
}

/// How key-mode key fields become keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KeyType {
    /// Decided by the first data row: a number there makes every key a number (a later
    /// non-number is an error); anything else makes every key a string.
    #[default]
    Auto,
    /// Decimal or `0x` hex unsigned integers.
    Number,
    /// Strings (`user:42`, URLs, hashes), each hashed to 64 bits ([`crate::keyhash`]),
    /// numeric-looking ones too, so that `42` and `042` stay two objects.
    String,
}

/// What to do with an op value that `op_values` does not list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownOp {
    /// Drop the row.
    Skip,
    /// Fail with [`TraceError::BadField`].
    Error,
    /// Treat it as this op.
    As(Op),
}

/// How to read a CSV trace. See the module docs for the two modes and the presets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvMapping {
    /// Whether the first line is a header (required for [`Column::Name`]).
    pub has_header: bool,
    /// Field delimiter.
    pub delimiter: u8,
    /// Timestamp column (time 0 if none).
    pub time: Option<Column>,
    /// Key column (key mode).
    pub key: Option<Column>,
    /// Offset column (block mode; takes precedence over `key`).
    pub offset: Option<Column>,
    /// Bytes per offset unit (512 for sector numbers, 1 for byte offsets).
    pub offset_unit_bytes: u64,
    /// Size column (block mode: required; key mode: `page_size` if none).
    pub size: Option<Column>,
    /// Bytes per size unit.
    pub size_unit_bytes: u64,
    /// Operation column (everything is a read if none).
    pub op: Option<Column>,
    /// Op field values (case-insensitive) and what they mean.
    pub op_values: Vec<(String, Op)>,
    /// Values not in `op_values`.
    pub unknown_op: UnknownOp,
    /// Stream column (process, volume, disk).
    pub stream: Option<Column>,
    /// Block mode: put the stream into the key (`stream << 40 | page`).
    pub stream_in_key: bool,
    /// Key mode: numbers or hashed strings.
    pub key_type: KeyType,
}

impl CsvMapping {
    /// CloudPhysics block traces (`version,time,op,size,lbn`).
    pub fn cloudphysics() -> Self {
        let ops = [
            ("08", Op::Read),
            ("28", Op::Read),
            ("a8", Op::Read),
            ("88", Op::Read),
            ("0a", Op::Write),
            ("2a", Op::Write),
            ("aa", Op::Write),
            ("8a", Op::Write),
        ];
        CsvMapping {
            has_header: true,
            delimiter: b',',
            time: Some("time".into()),
            key: None,
            offset: Some("lbn".into()),
            offset_unit_bytes: 512,
            size: Some("size".into()),
            size_unit_bytes: 1,
            op: Some("op".into()),
            op_values: ops.iter().map(|(s, o)| (s.to_string(), *o)).collect(),
            unknown_op: UnknownOp::Skip,
            stream: None,
            stream_in_key: false,
            key_type: KeyType::Number,
        }
    }

    /// MSR Cambridge block traces (no header, 7 columns).
    pub fn msr() -> Self {
        CsvMapping {
            has_header: false,
            delimiter: b',',
            time: Some(Column::Index(0)),
            key: None,
            offset: Some(Column::Index(4)),
            offset_unit_bytes: 1,
            size: Some(Column::Index(5)),
            size_unit_bytes: 1,
            op: Some(Column::Index(3)),
            op_values: vec![("Read".into(), Op::Read), ("Write".into(), Op::Write)],
            unknown_op: UnknownOp::Error,
            stream: Some(Column::Index(2)),
            stream_in_key: true,
            key_type: KeyType::Number,
        }
    }

    /// Object traces with a header `time,key,op,size,stream` (any subset containing `key`,
    /// any order).
    pub fn keyed() -> Self {
        CsvMapping {
            has_header: true,
            delimiter: b',',
            time: Some("time".into()),
            key: Some("key".into()),
            offset: None,
            offset_unit_bytes: 1,
            size: Some("size".into()),
            size_unit_bytes: 1,
            op: Some("op".into()),
            op_values: names::common_ops(),
            unknown_op: UnknownOp::Error,
            stream: Some("stream".into()),
            stream_in_key: false,
            key_type: KeyType::Auto,
        }
    }

    /// A preset by name: `cloudphysics`, `msr`, `keyed`.
    pub fn preset(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "cloudphysics" => Some(Self::cloudphysics()),
            "msr" => Some(Self::msr()),
            "keyed" => Some(Self::keyed()),
            _ => None,
        }
    }

    /// Checks the mapping is usable on its own (before seeing a header).
    pub fn validate(&self) -> Result<(), TraceError> {
        let bad = |m: &str| Err(TraceError::BadMapping(m.to_string()));
        if self.offset.is_none() && self.key.is_none() {
            return bad("needs an offset column (block mode) or a key column (key mode)");
        }
        if self.offset.is_some() && self.size.is_none() {
            return bad("block mode (offset column) needs a size column");
        }
        if self.offset_unit_bytes == 0 || self.size_unit_bytes == 0 {
            return bad("units must be at least 1 byte");
        }
        let cols = [
            &self.time,
            &self.key,
            &self.offset,
            &self.size,
            &self.op,
            &self.stream,
        ];
        if !self.has_header && cols.iter().any(|c| matches!(c, Some(Column::Name(_)))) {
            return bad("columns by name need has_header = true");
        }
        Ok(())
    }
}

/// A column resolved to an index, with a label for messages.
#[derive(Clone, Debug)]
struct Col {
    idx: usize,
    label: String,
}

#[derive(Clone, Debug, Default)]
struct Resolved {
    time: Option<Col>,
    key: Option<Col>,
    offset: Option<Col>,
    size: Option<Col>,
    op: Option<Col>,
    stream: Option<Col>,
    min_fields: usize,
}

fn resolve(
    m: &CsvMapping,
    header: Option<&ByteRecord>,
    path: &Path,
) -> Result<Resolved, TraceError> {
    let header_text = || {
        header
            .map(|h| h.iter().map(excerpt).collect::<Vec<_>>().join(","))
            .unwrap_or_default()
    };
    let one = |c: &Option<Column>, default_label: &str| -> Result<Option<Col>, TraceError> {
        match c {
            None => Ok(None),
            Some(Column::Index(i)) => Ok(Some(Col {
                idx: *i,
                label: header
                    .and_then(|h| h.get(*i))
                    .map(|f| excerpt(f.trim_ascii()))
                    .unwrap_or_else(|| format!("{default_label} (#{i})")),
            })),
            Some(Column::Name(n)) => {
                let pos = header.and_then(|h| {
                    h.iter()
                        .position(|f| f.trim_ascii().eq_ignore_ascii_case(n.as_bytes()))
                });
                match pos {
                    Some(idx) => Ok(Some(Col {
                        idx,
                        label: n.clone(),
                    })),
                    None => Err(TraceError::UnknownColumn {
                        path: path.to_path_buf(),
                        column: n.clone(),
                        header: header_text(),
                    }),
                }
            }
        }
    };
    let r = Resolved {
        time: one(&m.time, "time")?,
        key: one(&m.key, "key")?,
        offset: one(&m.offset, "offset")?,
        size: one(&m.size, "size")?,
        op: one(&m.op, "op")?,
        stream: one(&m.stream, "stream")?,
        min_fields: 0,
    };
    let min_fields = [&r.time, &r.key, &r.offset, &r.size, &r.op, &r.stream]
        .iter()
        .filter_map(|c| c.as_ref().map(|c| c.idx + 1))
        .max()
        .unwrap_or(0);
    Ok(Resolved { min_fields, ..r })
}

/// Streaming CSV reader that splits block requests into pages.
pub struct CsvReader<R: BufRead> {
    rdr: csv::Reader<R>,
    rec: ByteRecord,
    path: PathBuf,
    map: CsvMapping,
    cols: Resolved,
    page_size: u64,
    /// The first record was read for detection and is data, not a header.
    pending: bool,
    /// Pages still to emit from the current row: `[next_page, end_page)`.
    next_page: u64,
    end_page: u64,
    stream_prefix: u64,
    template: Request,
    /// How keys are read; `Auto` until the first data row decides.
    keys: KeyType,
}

/// The mapping a CSV source's first line implies, and its name for reports: `cloudphysics`
/// (its exact header), `msr` (its header, or a 7-field row whose 4th field is `Read` or
/// `Write`), `header` (a header naming a key column, or an offset and a size; see
/// [`names`]), `keys` (one field and no header: a bare list of keys). `delimiter` is the
/// one the line was split with.
pub fn detect(first: &ByteRecord, delimiter: u8) -> Option<(&'static str, CsvMapping)> {
    let f: Vec<&[u8]> = first.iter().map(|x| x.trim_ascii()).collect();
    let lower: Vec<String> = f.iter().map(|x| excerpt(x).to_ascii_lowercase()).collect();
    let with = |m: CsvMapping| CsvMapping { delimiter, ..m };
    if lower == ["version", "time", "op", "size", "lbn"] {
        return Some(("cloudphysics", with(CsvMapping::cloudphysics())));
    }
    if names::is_msr_header(&lower) {
        let m = CsvMapping {
            has_header: true,
            ..CsvMapping::msr()
        };
        return Some(("msr", with(m)));
    }
    if f.len() == 7
        && (f[3].eq_ignore_ascii_case(b"read") || f[3].eq_ignore_ascii_case(b"write"))
        && [0, 2, 4, 5].iter().all(|&i| parse_u64(f[i]).is_some())
    {
        return Some(("msr", with(CsvMapping::msr())));
    }
    if let Some(m) = names::from_header(&lower, delimiter) {
        return Some(("header", m));
    }
    if f.len() == 1 && !f[0].is_empty() {
        let m = CsvMapping {
            has_header: false,
            key: Some(Column::Index(0)),
            time: None,
            size: None,
            op: None,
            stream: None,
            ..CsvMapping::keyed()
        };
        return Some(("keys", with(m)));
    }
    None
}

/// The delimiter of a file without a mapping: a tab when its first line has tabs and no
/// comma, a comma otherwise.
fn sniff_delimiter(first_bytes: &[u8]) -> u8 {
    let line = first_bytes.split(|&b| b == b'\n').next().unwrap_or(&[]);
    if line.contains(&b'\t') && !line.contains(&b',') {
        b'\t'
    } else {
        b','
    }
}

impl<R: BufRead + Send> CsvReader<R> {
    /// Reads CSV from `src`; `mapping` None means detect from the first line. `path`
    /// names the source in errors.
    pub fn new(
        mut src: R,
        path: &Path,
        mapping: Option<&CsvMapping>,
        page_size: u32,
    ) -> Result<Self, TraceError> {
        if page_size == 0 {
            return Err(TraceError::BadMapping(
                "page size must be at least 1".into(),
            ));
        }
        if let Some(m) = mapping {
            m.validate()?;
        }
        let delimiter = match mapping {
            Some(m) => m.delimiter,
            None => sniff_delimiter(src.fill_buf().map_err(|source| TraceError::Io {
                path: path.to_path_buf(),
                source,
            })?),
        };
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(delimiter)
            .from_reader(src);
        let mut rec = ByteRecord::new();
        let got = rdr
            .read_byte_record(&mut rec)
            .map_err(|source| TraceError::Csv {
                path: path.to_path_buf(),
                line: 1,
                source,
            })?;
        let map = match mapping {
            Some(m) => m.clone(),
            None if !got => CsvMapping::keyed(), // empty file: empty trace
            None => match detect(&rec, delimiter) {
                Some((_, m)) => m,
                None => {
                    let line = rec.iter().map(excerpt).collect::<Vec<_>>().join(",");
                    return Err(TraceError::UndetectedCsv {
                        path: path.to_path_buf(),
                        first_line: line.chars().take(200).collect(),
                    });
                }
            },
        };
        let header = (map.has_header && got).then_some(&rec);
        // An empty file is an empty trace, whatever the mapping names.
        let cols = if got {
            resolve(&map, header, path)?
        } else {
            Resolved::default()
        };
        Ok(CsvReader {
            rdr,
            pending: got && !map.has_header,
            keys: map.key_type,
            rec,
            path: path.to_path_buf(),
            map,
            cols,
            page_size: page_size as u64,
            next_page: 0,
            end_page: 0,
            stream_prefix: 0,
            template: Request::default(),
        })
    }

    /// The mapping in use (detected or given).
    pub fn mapping(&self) -> &CsvMapping {
        &self.map
    }

    fn line(&self) -> u64 {
        self.rec.position().map_or(0, |p| p.line())
    }

    fn field(&self, c: &Col) -> &[u8] {
        self.rec.get(c.idx).unwrap_or(&[]).trim_ascii()
    }

    fn num(&self, c: &Option<Col>) -> Result<Option<u64>, TraceError> {
        let Some(c) = c else { return Ok(None) };
        let f = self.field(c);
        parse_u64(f).map(Some).ok_or_else(|| TraceError::BadField {
            path: self.path.clone(),
            line: self.line(),
            column: c.label.clone(),
            expected: "an unsigned integer",
            found: excerpt(f),
        })
    }

    /// The key of the current row in key mode, a number or a hashed string as
    /// [`KeyType`] says (deciding `Auto` on the first row).
    fn key(&mut self) -> Result<u64, TraceError> {
        let Some(c) = &self.cols.key else {
            return Ok(0);
        };
        let f = self.rec.get(c.idx).unwrap_or(&[]).trim_ascii();
        if self.keys == KeyType::Auto {
            self.keys = if parse_u64(f).is_some() {
                KeyType::Number
            } else {
                KeyType::String
            };
        }
        let bad = |expected| TraceError::BadField {
            path: self.path.clone(),
            line: self.line(),
            column: c.label.clone(),
            expected,
            found: excerpt(f),
        };
        match self.keys {
            KeyType::String if f.is_empty() => Err(bad("a non-empty key")),
            KeyType::String => Ok(key_hash(f)),
            _ => parse_u64(f).ok_or_else(|| {
                bad("an unsigned integer key, as on the first row (keys=string in the mapping hashes every key)")
            }),
        }
    }

    fn range_err(&self, what: String) -> TraceError {
        TraceError::OutOfRange {
            path: self.path.clone(),
            line: self.line(),
            what,
        }
    }

    /// Parses the current record into the pending page range (block mode) or straight
    /// into `req` (key mode). Returns false if the row yields no request.
    fn parse_row(&mut self, req: &mut Request) -> Result<bool, TraceError> {
        if self.rec.len() < self.cols.min_fields {
            return Err(TraceError::ShortRow {
                path: self.path.clone(),
                line: self.line(),
                expected: self.cols.min_fields,
                found: self.rec.len(),
            });
        }
        let op = match &self.cols.op {
            None => Op::Read,
            Some(c) => {
                let f = self.field(c);
                let known = self
                    .map
                    .op_values
                    .iter()
                    .find(|(v, _)| v.as_bytes().eq_ignore_ascii_case(f));
                match (known, self.map.unknown_op) {
                    (Some((_, op)), _) => *op,
                    (None, UnknownOp::Skip) => return Ok(false),
                    (None, UnknownOp::As(op)) => op,
                    (None, UnknownOp::Error) => {
                        return Err(TraceError::BadField {
                            path: self.path.clone(),
                            line: self.line(),
                            column: c.label.clone(),
                            expected: "a known operation",
                            found: excerpt(f),
                        })
                    }
                }
            }
        };
        let time = self.num(&self.cols.time.clone())?.unwrap_or(0);
        let stream64 = self.num(&self.cols.stream.clone())?.unwrap_or(0);
        let stream = u32::try_from(stream64)
            .map_err(|_| self.range_err(format!("stream {stream64} does not fit in u32")))?;
        let size_units = self.num(&self.cols.size.clone())?;
        if self.cols.offset.is_some() {
            let off = self.num(&self.cols.offset.clone())?.unwrap_or(0);
            let size = size_units.unwrap_or(0);
            let start = off
                .checked_mul(self.map.offset_unit_bytes)
                .ok_or_else(|| self.range_err(format!("offset {off} overflows bytes")))?;
            let len = size
                .checked_mul(self.map.size_unit_bytes)
                .ok_or_else(|| self.range_err(format!("size {size} overflows bytes")))?;
            let end = start
                .checked_add(len)
                .ok_or_else(|| self.range_err("offset + size overflows u64".into()))?;
            if len == 0 {
                return Ok(false);
            }
            self.next_page = start / self.page_size;
            self.end_page = (end - 1) / self.page_size + 1;
            self.stream_prefix = 0;
            if self.map.stream_in_key {
                if self.end_page > 1 << STREAM_SHIFT {
                    return Err(self.range_err(format!(
                        "page {} does not fit in {STREAM_SHIFT} bits next to the stream",
                        self.end_page - 1
                    )));
                }
                if stream64 >= 1 << (64 - STREAM_SHIFT) {
                    return Err(self.range_err(format!(
                        "stream {stream64} does not fit in {} bits of the key",
                        64 - STREAM_SHIFT
                    )));
                }
                self.stream_prefix = stream64 << STREAM_SHIFT;
            }
            self.template = Request {
                time,
                key: 0,
                size: self.page_size as u32,
                op,
                next_access: NEVER,
                stream,
            };
            Ok(false)
        } else {
            let key = self.key()?;
            let size = match size_units {
                None => self.page_size,
                Some(s) => s
                    .checked_mul(self.map.size_unit_bytes)
                    .ok_or_else(|| self.range_err(format!("size {s} overflows bytes")))?,
            };
            let size = u32::try_from(size)
                .map_err(|_| self.range_err(format!("size {size} does not fit in u32")))?;
            *req = Request {
                time,
                key,
                size,
                op,
                next_access: NEVER,
                stream,
            };
            Ok(true)
        }
    }
}

impl<R: BufRead + Send> TraceReader for CsvReader<R> {
    fn read_into(&mut self, req: &mut Request) -> Result<bool, TraceError> {
        loop {
            if self.next_page < self.end_page {
                *req = self.template;
                req.key = self.stream_prefix | self.next_page;
                self.next_page += 1;
                return Ok(true);
            }
            if self.pending {
                self.pending = false;
            } else {
                let got =
                    self.rdr
                        .read_byte_record(&mut self.rec)
                        .map_err(|source| TraceError::Csv {
                            path: self.path.clone(),
                            line: source.position().map_or(0, |p| p.line()),
                            source,
                        })?;
                if !got {
                    return Ok(false);
                }
            }
            if self.parse_row(req)? {
                return Ok(true);
            }
        }
    }

    fn keys_hashed(&self) -> bool {
        self.keys_are_strings()
    }
}

/// Writes the keyed CSV layout `time,key,op,size,stream` (readable back by detection).
pub struct CsvWriter<W: Write> {
    w: io::BufWriter<W>,
    path: PathBuf,
    header_done: bool,
}

impl<W: Write> CsvWriter<W> {
    /// Writes to `w`; `path` names it in errors.
    pub fn new(w: W, path: &Path) -> Self {
        CsvWriter {
            w: io::BufWriter::with_capacity(64 * 1024, w),
            path: path.to_path_buf(),
            header_done: false,
        }
    }

    fn io(&self, source: io::Error) -> TraceError {
        TraceError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn header(&mut self) -> Result<(), TraceError> {
        if !self.header_done {
            self.header_done = true;
            writeln!(self.w, "time,key,op,size,stream").map_err(|e| self.io(e))?;
        }
        Ok(())
    }

    /// Appends one row.
    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        self.header()?;
        let op = match r.op {
            Op::Read => "read",
            Op::Write => "write",
            Op::Delete => "delete",
        };
        writeln!(
            self.w,
            "{},{},{},{},{}",
            r.time, r.key, op, r.size, r.stream
        )
        .map_err(|e| self.io(e))
    }

    /// Flushes (writing the header even for an empty trace) and returns the writer.
    pub fn finish(mut self) -> Result<W, TraceError> {
        self.header()?;
        let path = self.path;
        self.w.into_inner().map_err(|e| TraceError::Io {
            path,
            source: e.into_error(),
        })
    }
}

impl<R: BufRead + Send> CsvReader<R> {
    /// Whether keys are hashed strings (known after the first data row).
    pub fn keys_are_strings(&self) -> bool {
        self.keys == KeyType::String
    }
}

pub mod names;
mod spec;

#[cfg(test)]
mod tests;
