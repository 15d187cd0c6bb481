//! The request model, trace readers and writers, and seeded synthetic workloads.

/// What a request does to its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Op {
    /// Read the object.
    #[default]
    Read,
    /// Write (create or overwrite) the object.
    Write,
    /// Delete the object.
    Delete,
}

/// `next_access` value meaning never again, or unknown.
pub const NEVER: u64 = u64::MAX;

/// One request. Readers fill a request the caller owns, so reading allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Request {
    /// Timestamp in the trace's own unit (seconds for most formats), 0 if none.
    pub time: u64,
    /// Object identity (a page number for block traces).
    pub key: u64,
    /// Size in bytes.
    pub size: u32,
    /// Operation.
    pub op: Op,
    /// Index of the same key's next request in the trace, or [`NEVER`].
    pub next_access: u64,
    /// Issuing stream (process, volume, file), 0 when unknown.
    pub stream: u32,
}
