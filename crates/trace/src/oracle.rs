//! libCacheSim's `oracleGeneral` binary format, plain and zstd-compressed.
//!
//! Each record is 24 bytes, little-endian, no header:
//!
//! | bytes | field | meaning |
//! |---|---|---|
//! | 0..4 | `u32 clock_time` | timestamp (seconds) -> [`Request::time`] |
//! | 4..12 | `u64 obj_id` | object id -> [`Request::key`] |
//! | 12..16 | `u32 obj_size` | bytes -> [`Request::size`] |
//! | 16..24 | `i64 next_access_vtime` | 1-based position of the same object's next request, `-1` = never |
//!
//! The public files count virtual time from 1 (checked on `cloudPhysicsIO.oracleGeneral.bin`:
//! every `next_access_vtime` equals the 0-based index of the next request of the same
//! object plus one). [`Request::next_access`] is a 0-based index, so the reader subtracts
//! one and the writer adds it back. A value that cannot be a later position (0, or not
//! greater than the record's own 1-based position, or negative other than -1) is an
//! [`TraceError::InvalidRecord`]: it means the file uses another convention and silently
//! shifting it would corrupt Belady/OPT results. Every request is a [`Op::Read`]: the
//! format has no operation field.
//!
//! Speed: the reader pulls 1 MiB chunks and decodes records from slices with
//! `from_le_bytes`; there is no system call per record.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::{Op, Request, TraceError, TraceReader, NEVER};

/// Size of one record in bytes.
pub const RECORD_BYTES: usize = 24;
/// Chunk size: a multiple of the record size, large enough that refills are rare.
const CHUNK_BYTES: usize = RECORD_BYTES * 43_690; // just under 1 MiB

/// Streaming `oracleGeneral` reader over any byte source.
pub struct OracleGeneralReader<R> {
    src: R,
    path: PathBuf,
    zstd: bool,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    eof: bool,
    record: u64,
}

impl<R: Read + Send> OracleGeneralReader<R> {
    /// Reads records from `src`; `path` only names the source in errors.
    pub fn new(src: R, path: &Path) -> Self {
        OracleGeneralReader {
            src,
            path: path.to_path_buf(),
            zstd: false,
            buf: vec![0u8; CHUNK_BYTES].into_boxed_slice(),
            pos: 0,
            len: 0,
            eof: false,
            record: 0,
        }
    }

    /// Moves the partial record to the front and reads until the buffer is full or the
    /// source ends.
    fn refill(&mut self) -> Result<(), TraceError> {
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        while !self.eof && self.len < self.buf.len() {
            match self.src.read(&mut self.buf[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    let path = self.path.clone();
                    return Err(if self.zstd {
                        TraceError::Zstd {
                            path,
                            offset: self.record * RECORD_BYTES as u64 + self.len as u64,
                            source,
                        }
                    } else {
                        TraceError::Io { path, source }
                    });
                }
            }
        }
        Ok(())
    }

    /// Ensures a whole record is buffered; `Ok(false)` at a clean end.
    #[inline]
    fn ensure(&mut self) -> Result<bool, TraceError> {
        if self.len - self.pos >= RECORD_BYTES {
            return Ok(true);
        }
        self.refill()?;
        match self.len - self.pos {
            0 => Ok(false),
            n if n < RECORD_BYTES => Err(TraceError::TruncatedRecord {
                path: self.path.clone(),
                record: self.record,
                offset: self.record * RECORD_BYTES as u64,
                format: "oracleGeneral",
                expected: RECORD_BYTES,
                found: n,
            }),
            _ => Ok(true),
        }
    }

    #[inline]
    fn decode(&self, rec: &[u8], record: u64, req: &mut Request) -> Result<(), TraceError> {
        let (t, rest) = rec.split_at(4);
        let (id, rest) = rest.split_at(8);
        let (sz, nx) = rest.split_at(4);
        // The splits above make each slice exactly the right length, so the conversions
        // cannot fail.
        req.time = u32::from_le_bytes(t.try_into().expect("4 bytes")) as u64;
        req.key = u64::from_le_bytes(id.try_into().expect("8 bytes"));
        req.size = u32::from_le_bytes(sz.try_into().expect("4 bytes"));
        let v = i64::from_le_bytes(nx.try_into().expect("8 bytes"));
        req.op = Op::Read;
        req.stream = 0;
        req.next_access = if v == -1 {
            NEVER
        } else if v > 0 && (v as u64) > record + 1 {
            v as u64 - 1
        } else {
            return Err(TraceError::InvalidRecord {
                path: self.path.clone(),
                record,
                offset: record * RECORD_BYTES as u64,
                field: "next_access_vtime",
                expected: "expected -1 or a 1-based position after this record",
                found: v,
            });
        };
        Ok(())
    }
}

impl<R: Read> OracleGeneralReader<zstd::stream::read::Decoder<'static, io::BufReader<R>>>
where
    R: Send,
{
    /// Reads zstd-compressed records, decompressing as it goes (bounded memory).
    pub fn new_zstd(src: R, path: &Path) -> Result<Self, TraceError> {
        let dec = zstd::stream::read::Decoder::new(src).map_err(|source| TraceError::Zstd {
            path: path.to_path_buf(),
            offset: 0,
            source,
        })?;
        let mut r = OracleGeneralReader::new(dec, path);
        r.zstd = true;
        Ok(r)
    }
}

impl<R: Read + Send> TraceReader for OracleGeneralReader<R> {
    #[inline]
    fn read_into(&mut self, req: &mut Request) -> Result<bool, TraceError> {
        if !self.ensure()? {
            return Ok(false);
        }
        let start = self.pos;
        self.pos += RECORD_BYTES;
        let record = self.record;
        self.record += 1;
        // Borrow split: decode only reads `buf` and `path`.
        let rec = &self.buf[start..start + RECORD_BYTES];
        self.decode(rec, record, req)?;
        Ok(true)
    }

    fn read_batch(&mut self, out: &mut [Request]) -> Result<usize, TraceError> {
        if out.is_empty() || !self.ensure()? {
            return Ok(0);
        }
        let avail = (self.len - self.pos) / RECORD_BYTES;
        let n = avail.min(out.len());
        let bytes = &self.buf[self.pos..self.pos + n * RECORD_BYTES];
        for (i, (rec, req)) in bytes
            .chunks_exact(RECORD_BYTES)
            .zip(out.iter_mut())
            .enumerate()
        {
            self.decode(rec, self.record + i as u64, req)?;
        }
        self.pos += n * RECORD_BYTES;
        self.record += n as u64;
        Ok(n)
    }
}

enum Sink<W: Write> {
    Plain(W),
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

/// Writes `oracleGeneral` records, plain or zstd-compressed.
///
/// `time` must fit in 32 bits and `next_access` (if not [`NEVER`]) in a positive `i64`
/// after the +1 shift; otherwise [`TraceError::OutOfRange`] names the record.
pub struct OracleGeneralWriter<W: Write> {
    sink: Sink<W>,
    path: PathBuf,
    buf: Vec<u8>,
    record: u64,
}

impl<W: Write> OracleGeneralWriter<W> {
    /// Plain records into `w`; `path` only names the destination in errors.
    pub fn new(w: W, path: &Path) -> Self {
        Self::with_sink(Sink::Plain(w), path)
    }

    /// zstd-compressed records (`level` 1..=22; 3 is zstd's default).
    pub fn new_zstd(w: W, path: &Path, level: i32) -> Result<Self, TraceError> {
        let enc =
            zstd::stream::write::Encoder::new(w, level).map_err(|source| TraceError::Zstd {
                path: path.to_path_buf(),
                offset: 0,
                source,
            })?;
        Ok(Self::with_sink(Sink::Zstd(enc), path))
    }

    fn with_sink(sink: Sink<W>, path: &Path) -> Self {
        OracleGeneralWriter {
            sink,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(64 * 1024),
            record: 0,
        }
    }

    /// Appends one record.
    pub fn write(&mut self, req: &Request) -> Result<(), TraceError> {
        let out_of_range = |what: String| TraceError::OutOfRange {
            path: self.path.clone(),
            line: self.record,
            what,
        };
        let time = u32::try_from(req.time)
            .map_err(|_| out_of_range(format!("time {} does not fit in u32", req.time)))?;
        let next: i64 = if req.next_access == NEVER {
            -1
        } else {
            i64::try_from(req.next_access)
                .ok()
                .and_then(|v| v.checked_add(1))
                .ok_or_else(|| {
                    out_of_range(format!("next_access {} does not fit", req.next_access))
                })?
        };
        self.buf.extend_from_slice(&time.to_le_bytes());
        self.buf.extend_from_slice(&req.key.to_le_bytes());
        self.buf.extend_from_slice(&req.size.to_le_bytes());
        self.buf.extend_from_slice(&next.to_le_bytes());
        self.record += 1;
        if self.buf.len() >= 64 * 1024 - RECORD_BYTES {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> Result<(), TraceError> {
        let res = match &mut self.sink {
            Sink::Plain(w) => w.write_all(&self.buf),
            Sink::Zstd(w) => w.write_all(&self.buf),
        };
        self.buf.clear();
        res.map_err(|source| self.io_err(source))
    }

    fn io_err(&self, source: io::Error) -> TraceError {
        match self.sink {
            Sink::Plain(_) => TraceError::Io {
                path: self.path.clone(),
                source,
            },
            Sink::Zstd(_) => TraceError::Zstd {
                path: self.path.clone(),
                offset: self.record * RECORD_BYTES as u64,
                source,
            },
        }
    }

    /// Flushes everything (ends the zstd frame) and returns the inner writer.
    pub fn finish(mut self) -> Result<W, TraceError> {
        self.flush_buf()?;
        let path = self.path.clone();
        match self.sink {
            Sink::Plain(mut w) => {
                w.flush()
                    .map_err(|source| TraceError::Io { path, source })?;
                Ok(w)
            }
            Sink::Zstd(enc) => {
                let offset = self.record * RECORD_BYTES as u64;
                let mut w = enc.finish().map_err(|source| TraceError::Zstd {
                    path: path.clone(),
                    offset,
                    source,
                })?;
                w.flush()
                    .map_err(|source| TraceError::Io { path, source })?;
                Ok(w)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u32, id: u64, sz: u32, nx: i64) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&t.to_le_bytes());
        v.extend_from_slice(&id.to_le_bytes());
        v.extend_from_slice(&sz.to_le_bytes());
        v.extend_from_slice(&nx.to_le_bytes());
        v
    }

    fn read(bytes: &[u8]) -> Result<Vec<Request>, TraceError> {
        let r = OracleGeneralReader::new(bytes, Path::new("t.oracleGeneral"));
        crate::Requests::new(r).collect()
    }

    #[test]
    fn decodes_exact_records() {
        let mut b = rec(7, 42, 4096, 3); // next request of 42 is index 2 (1-based 3)
        b.extend(rec(8, 5, 512, -1));
        b.extend(rec(9, 42, 4096, -1));
        let got = read(&b).unwrap();
        let want = [
            Request {
                time: 7,
                key: 42,
                size: 4096,
                op: Op::Read,
                next_access: 2,
                stream: 0,
            },
            Request {
                time: 8,
                key: 5,
                size: 512,
                op: Op::Read,
                next_access: NEVER,
                stream: 0,
            },
            Request {
                time: 9,
                key: 42,
                size: 4096,
                op: Op::Read,
                next_access: NEVER,
                stream: 0,
            },
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn truncated_record_names_record_and_offset() {
        let mut b = rec(1, 1, 1, -1);
        b.extend(rec(2, 2, 2, -1));
        b.truncate(24 + 10);
        let e = read(&b).unwrap_err();
        match &e {
            TraceError::TruncatedRecord {
                record,
                offset,
                found,
                ..
            } => {
                assert_eq!((*record, *offset, *found), (1, 24, 10));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            e.to_string(),
            "t.oracleGeneral: record 1 at byte 24: truncated oracleGeneral record: expected 24 bytes, found 10"
        );
    }

    #[test]
    fn next_access_not_after_record_is_invalid() {
        // Record 1 (1-based position 2) claims its next access is position 2: itself.
        let mut b = rec(1, 1, 1, -1);
        b.extend(rec(2, 2, 2, 2));
        match read(&b).unwrap_err() {
            TraceError::InvalidRecord {
                record: 1,
                offset: 24,
                found: 2,
                ..
            } => {}
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            read(&rec(1, 1, 1, 0)),
            Err(TraceError::InvalidRecord { .. })
        ));
        assert!(matches!(
            read(&rec(1, 1, 1, -2)),
            Err(TraceError::InvalidRecord { .. })
        ));
    }

    #[test]
    fn empty_input_is_empty_trace() {
        assert_eq!(read(&[]).unwrap(), []);
    }

    #[test]
    fn batch_reads_across_chunk_boundaries() {
        // More records than one chunk holds, so refill moves a partial record.
        let n = CHUNK_BYTES / RECORD_BYTES * 2 + 5;
        let mut w = OracleGeneralWriter::new(Vec::new(), Path::new("m"));
        for i in 0..n as u64 {
            let q = Request {
                time: i % 1000,
                key: i * 3,
                size: 1,
                next_access: NEVER,
                ..Default::default()
            };
            w.write(&q).unwrap();
        }
        let bytes = w.finish().unwrap();
        // A source that returns odd-sized pieces, to exercise partial records in refill.
        struct Dribble<'a>(&'a [u8]);
        impl Read for Dribble<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = out.len().min(self.0.len()).min(1000);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut r = OracleGeneralReader::new(Dribble(&bytes), Path::new("m"));
        let mut out = vec![Request::default(); 777];
        let mut seen = 0u64;
        loop {
            let k = r.read_batch(&mut out).unwrap();
            if k == 0 {
                break;
            }
            for q in &out[..k] {
                assert_eq!(q.key, seen * 3);
                seen += 1;
            }
        }
        assert_eq!(seen, n as u64);
    }

    #[test]
    fn zstd_round_trip_and_corruption() {
        let reqs: Vec<Request> = (0..1000u64)
            .map(|i| Request {
                time: i,
                key: i % 17,
                size: 4096,
                ..Default::default()
            })
            .collect();
        let mut reqs = reqs;
        crate::fill_next_access(&mut reqs);
        let mut w = OracleGeneralWriter::new_zstd(Vec::new(), Path::new("z"), 3).unwrap();
        for r in &reqs {
            w.write(r).unwrap();
        }
        let bytes = w.finish().unwrap();
        let r = OracleGeneralReader::new_zstd(&bytes[..], Path::new("z")).unwrap();
        let got: Vec<Request> = crate::Requests::new(r).collect::<Result<_, _>>().unwrap();
        assert_eq!(got, reqs);
        // Not a zstd frame at all.
        let r = OracleGeneralReader::new_zstd(&b"definitely not zstd data"[..], Path::new("z"))
            .unwrap();
        let e = crate::Requests::new(r).find_map(|r| r.err()).unwrap();
        assert!(matches!(e, TraceError::Zstd { .. }), "{e:?}");
        // A truncated frame.
        let r = OracleGeneralReader::new_zstd(&bytes[..bytes.len() / 2], Path::new("z")).unwrap();
        let e = crate::Requests::new(r).find_map(|r| r.err()).unwrap();
        assert!(
            matches!(
                e,
                TraceError::Zstd { .. } | TraceError::TruncatedRecord { .. }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn writer_rejects_out_of_range() {
        let mut w = OracleGeneralWriter::new(Vec::new(), Path::new("o"));
        let e = w
            .write(&Request {
                time: 1 << 40,
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(e.to_string(), "o:0: time 1099511627776 does not fit in u32");
    }
}
