//! Plain text traces: one key per line.
//!
//! Accepted per line, after trimming ASCII whitespace:
//!
//! * empty lines and lines starting with `#` are skipped (comments);
//! * a decimal `u64` (`12345`), or hexadecimal with a `0x`/`0X` prefix (`0x3039`);
//! * anything else is an error ([`TraceError::BadField`] with column `key`) unless
//!   [`TextReader::hash_strings`] is on, in which case the whole trimmed line is hashed
//!   with XXH3-64 ([`crate::keyhash`]: stable across runs and platforms, so the same file
//!   always gives the same keys; distinct strings may collide with probability about
//!   n²/2⁶⁵).
//!
//! Only the first whitespace-separated token is the key; further tokens are ignored, so a
//! line `42 some comment` is key 42. Every request is a [`Op::Read`] of `size_bytes`
//! (the page size) at time 0 with unknown next access.

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use crate::error::excerpt;
use crate::keyhash::key_hash;
use crate::{Op, Request, TraceError, TraceReader, NEVER};

/// Streaming reader of one-key-per-line text.
pub struct TextReader<R> {
    src: R,
    path: PathBuf,
    line: Vec<u8>,
    line_no: u64,
    size_bytes: u32,
    hash_strings: bool,
    /// Some key so far was a string, hashed.
    hashed: bool,
}

impl<R: BufRead + Send> TextReader<R> {
    /// Reads keys from `src`; every request gets `size_bytes`. `path` names the source in
    /// errors.
    pub fn new(src: R, path: &Path, size_bytes: u32) -> Self {
        TextReader {
            src,
            path: path.to_path_buf(),
            line: Vec::with_capacity(128),
            line_no: 0,
            size_bytes,
            hash_strings: false,
            hashed: false,
        }
    }

    /// Accept non-numeric keys by hashing them ([`key_hash`]) instead of failing.
    pub fn hash_strings(mut self, on: bool) -> Self {
        self.hash_strings = on;
        self
    }
}

/// Parses a decimal or `0x` hexadecimal `u64` without allocating.
pub(crate) fn parse_u64(tok: &[u8]) -> Option<u64> {
    let (digits, radix) = match tok {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16),
        _ => (tok, 10),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = (c as char).to_digit(radix)? as u64;
        v = v.checked_mul(radix as u64)?.checked_add(d)?;
    }
    Some(v)
}

impl<R: BufRead + Send> TraceReader for TextReader<R> {
    fn read_into(&mut self, req: &mut Request) -> Result<bool, TraceError> {
        loop {
            self.line.clear();
            let n = self
                .src
                .read_until(b'\n', &mut self.line)
                .map_err(|source| TraceError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            if n == 0 {
                return Ok(false);
            }
            self.line_no += 1;
            let t = self.line.trim_ascii();
            if t.is_empty() || t[0] == b'#' {
                continue;
            }
            let tok = t.split(|c| c.is_ascii_whitespace()).next().unwrap_or(t);
            let key = match parse_u64(tok) {
                Some(k) => k,
                None if self.hash_strings => {
                    self.hashed = true;
                    key_hash(t)
                }
                None => {
                    return Err(TraceError::BadField {
                        path: self.path.clone(),
                        line: self.line_no,
                        column: "key".into(),
                        expected: "an unsigned integer (decimal or 0x hex)",
                        found: excerpt(tok),
                    })
                }
            };
            *req = Request {
                time: 0,
                key,
                size: self.size_bytes,
                op: Op::Read,
                next_access: NEVER,
                stream: 0,
            };
            return Ok(true);
        }
    }

    fn keys_hashed(&self) -> bool {
        self.hashed
    }
}

/// Writes one decimal key per line.
pub struct TextWriter<W: Write> {
    w: io::BufWriter<W>,
    path: PathBuf,
}

impl<W: Write> TextWriter<W> {
    /// Writes to `w`; `path` names it in errors.
    pub fn new(w: W, path: &Path) -> Self {
        TextWriter {
            w: io::BufWriter::with_capacity(64 * 1024, w),
            path: path.to_path_buf(),
        }
    }

    /// Appends one request's key.
    pub fn write(&mut self, req: &Request) -> Result<(), TraceError> {
        writeln!(self.w, "{}", req.key).map_err(|source| TraceError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Flushes and returns the inner writer.
    pub fn finish(self) -> Result<W, TraceError> {
        let path = self.path;
        self.w.into_inner().map_err(|e| TraceError::Io {
            path,
            source: e.into_error(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(s: &str) -> Result<Vec<u64>, TraceError> {
        let r = TextReader::new(s.as_bytes(), Path::new("k.txt"), 4096);
        crate::Requests::new(r).map(|r| r.map(|q| q.key)).collect()
    }

    #[test]
    fn reads_keys_skipping_blanks_and_comments() {
        assert_eq!(
            keys("1\n\n# c\n  7  \n0x10\r\n42 trailing\n18446744073709551615").unwrap(),
            [1, 7, 16, 42, u64::MAX]
        );
        let r = TextReader::new(&b"5\n"[..], Path::new("k"), 512);
        let got: Vec<Request> = crate::Requests::new(r).collect::<Result<_, _>>().unwrap();
        assert_eq!(
            got,
            [Request {
                time: 0,
                key: 5,
                size: 512,
                op: Op::Read,
                next_access: NEVER,
                stream: 0
            }]
        );
    }

    #[test]
    fn bad_token_names_line() {
        let e = keys("1\n2\n\nabc\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "k.txt:4: column \"key\": expected an unsigned integer (decimal or 0x hex), found \"abc\""
        );
        assert!(matches!(
            keys("18446744073709551616"),
            Err(TraceError::BadField { line: 1, .. })
        ));
        assert!(matches!(
            keys("-1"),
            Err(TraceError::BadField { line: 1, .. })
        ));
        assert!(matches!(
            keys("0x"),
            Err(TraceError::BadField { line: 1, .. })
        ));
    }

    #[test]
    fn hashes_strings_when_asked() {
        let r = TextReader::new(&b"/etc/passwd\n12\n/etc/passwd\n"[..], Path::new("k"), 1)
            .hash_strings(true);
        let k: Vec<u64> = crate::Requests::new(r).map(|r| r.unwrap().key).collect();
        assert_eq!(k, [key_hash(b"/etc/passwd"), 12, key_hash(b"/etc/passwd")]);
    }
}
