//! The reader trait every format implements, and an iterator adapter over it.

use crate::{Request, TraceError};

/// A streaming trace reader.
///
/// Readers fill a [`Request`] the caller owns, so a replay loop reads millions of requests
/// without allocating; each reader keeps a bounded buffer (a few MiB at most) whatever the
/// trace size.
pub trait TraceReader: Send {
    /// Reads the next request into `req`. Returns `Ok(false)` at the end of the trace, in
    /// which case `req` is left unspecified.
    fn read_into(&mut self, req: &mut Request) -> Result<bool, TraceError>;

    /// Fills as much of `out` as the trace allows and returns how many were filled (0 only
    /// at the end). Formats with fixed-size records override it to decode a whole chunk
    /// without a dynamic call per request.
    fn read_batch(&mut self, out: &mut [Request]) -> Result<usize, TraceError> {
        let mut n = 0;
        while n < out.len() && self.read_into(&mut out[n])? {
            n += 1;
        }
        Ok(n)
    }

    /// Whether some keys so far were strings hashed to 64 bits ([`crate::keyhash`]), so
    /// that distinct objects may (rarely) share a key. Reports say so.
    fn keys_hashed(&self) -> bool {
        false
    }
}

impl<R: TraceReader + ?Sized> TraceReader for Box<R> {
    fn read_into(&mut self, req: &mut Request) -> Result<bool, TraceError> {
        (**self).read_into(req)
    }
    fn read_batch(&mut self, out: &mut [Request]) -> Result<usize, TraceError> {
        (**self).read_batch(out)
    }
    fn keys_hashed(&self) -> bool {
        (**self).keys_hashed()
    }
}

impl<R: TraceReader + ?Sized> TraceReader for &mut R {
    fn read_into(&mut self, req: &mut Request) -> Result<bool, TraceError> {
        (**self).read_into(req)
    }
    fn read_batch(&mut self, out: &mut [Request]) -> Result<usize, TraceError> {
        (**self).read_batch(out)
    }
    fn keys_hashed(&self) -> bool {
        (**self).keys_hashed()
    }
}

/// Iterator over a reader's requests: `Some(Ok(req))` per request, `Some(Err(e))` once on
/// an error (then `None`), `None` at the end.
///
/// ```
/// use trace::{Requests, text::TextReader};
/// let r = TextReader::new(&b"1\n2\n"[..], "mem.txt".as_ref(), 4096);
/// let keys: Vec<u64> = Requests::new(r).map(|r| r.unwrap().key).collect();
/// assert_eq!(keys, [1, 2]);
/// ```
pub struct Requests<R> {
    reader: R,
    done: bool,
}

impl<R: TraceReader> Requests<R> {
    /// Wraps a reader (also `&mut reader` or a `Box<dyn TraceReader>`).
    pub fn new(reader: R) -> Self {
        Requests {
            reader,
            done: false,
        }
    }

    /// Gives the reader back.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

impl<R: TraceReader> Iterator for Requests<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut req = Request::default();
        match self.reader.read_into(&mut req) {
            Ok(true) => Some(Ok(req)),
            Ok(false) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
