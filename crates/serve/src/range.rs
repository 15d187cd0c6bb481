//! The `Range` request header, one byte range at a time.
//!
//! RFC 9110 lets a server ignore a `Range` it does not support, and it must ignore one
//! that is syntactically invalid; both then get the whole file (200). Multiple ranges
//! (which would need `multipart/byteranges`) are ignored that way. A valid range that
//! does not overlap the file is `416` with `Content-Range: bytes */LEN`.

/// What a `Range` header asks of a file of a given length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeAnswer {
    /// Serve the whole file (no header, or one the server ignores).
    Whole,
    /// Serve bytes `start..end` (end exclusive, non-empty) as 206.
    Part {
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
    },
    /// The range lies outside the file: 416.
    Unsatisfiable,
}

/// Interpret `header` (the `Range` value, if any) for a file of `len` bytes.
pub fn interpret(header: Option<&str>, len: u64) -> RangeAnswer {
    let Some(h) = header else {
        return RangeAnswer::Whole;
    };
    let Some(spec) = h.trim().strip_prefix("bytes=") else {
        return RangeAnswer::Whole;
    };
    if spec.contains(',') {
        return RangeAnswer::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return RangeAnswer::Whole;
    };
    let number = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            s.parse().ok()
        }
    };
    match (first.trim(), last.trim()) {
        ("", suffix) => match number(suffix) {
            None => RangeAnswer::Whole,
            Some(0) => RangeAnswer::Unsatisfiable,
            Some(_) if len == 0 => RangeAnswer::Unsatisfiable,
            Some(n) => RangeAnswer::Part {
                start: len.saturating_sub(n),
                end: len,
            },
        },
        (a, "") => match number(a) {
            None => RangeAnswer::Whole,
            Some(start) if start >= len => RangeAnswer::Unsatisfiable,
            Some(start) => RangeAnswer::Part { start, end: len },
        },
        (a, b) => match (number(a), number(b)) {
            (Some(start), Some(last)) if start <= last => {
                if start >= len {
                    RangeAnswer::Unsatisfiable
                } else {
                    RangeAnswer::Part {
                        start,
                        end: last.saturating_add(1).min(len),
                    }
                }
            }
            _ => RangeAnswer::Whole,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RangeAnswer::*;

    #[test]
    fn ranges_of_a_ten_byte_file() {
        let r = |h: &str| interpret(Some(h), 10);
        assert_eq!(interpret(None, 10), Whole);
        assert_eq!(r("bytes=0-0"), Part { start: 0, end: 1 });
        assert_eq!(r("bytes=2-5"), Part { start: 2, end: 6 });
        assert_eq!(r("bytes=2-"), Part { start: 2, end: 10 });
        assert_eq!(r("bytes=-3"), Part { start: 7, end: 10 });
        assert_eq!(r("bytes=-30"), Part { start: 0, end: 10 });
        assert_eq!(r("bytes=5-99"), Part { start: 5, end: 10 });
        assert_eq!(r("bytes=10-"), Unsatisfiable);
        assert_eq!(r("bytes=10-12"), Unsatisfiable);
        assert_eq!(r("bytes=-0"), Unsatisfiable);
        // Ignored: invalid, reversed, multiple, other units.
        for h in [
            "bytes=5-2",
            "bytes=a-b",
            "bytes=0-1,3-4",
            "items=0-1",
            "bytes=-",
            "bytes=+1-2",
        ] {
            assert_eq!(r(h), Whole, "{h}");
        }
        assert_eq!(interpret(Some("bytes=-1"), 0), Unsatisfiable);
    }
}
