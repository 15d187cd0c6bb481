//! A trace loaded once into memory in the compact form every replay shares.
//!
//! Each request keeps only what replay needs: the key (8 bytes), the size in bytes
//! (4 bytes) and the stream (4 bytes), 16 bytes in all. Delete operations are kept as a
//! sorted list of their positions instead of a per-request op field, so that the hot loop
//! reads one small struct per request and tests a single index against the next delete.
//! Next-access times (8 more bytes per request) exist only when a policy asks for them
//! ([`CompactTrace::next_access`]), computed once and then shared by every run.
//!
//! Next-access times are always computed here by one backward pass, even when the trace
//! file carried them (oracleGeneral does): the pass costs the same O(n) as checking the
//! file's values would, and only a value computed over *this* request sequence is sure to
//! be right after block requests are split into pages, and after deletes (an object that is
//! deleted before its next read is, for an offline policy, never needed again).

use std::sync::OnceLock;

use hashbrown::HashMap;
use trace::{Op, Request, NEVER};

use crate::size::WorkingSet;

/// One request as replay sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// Dense object id: objects are numbered `0, 1, 2, ...` in order of first appearance.
    /// Replay needs only identity, and dense ids let the driver find a key's frame by
    /// indexing an array ([`policy::DenseIndex`]) instead of hashing.
    pub key: u64,
    /// Size in bytes.
    pub size: u32,
    /// Issuing stream.
    pub stream: u32,
}

/// Request counts by operation and working-set size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Reads and writes (deletes are not requests, see [`crate::replay()`]).
    pub requests: u64,
    /// Read operations.
    pub reads: u64,
    /// Write operations.
    pub writes: u64,
    /// Delete operations.
    pub deletes: u64,
    /// Distinct keys among reads and writes.
    pub distinct_keys: u64,
    /// Summed size of the distinct keys, each counted at the largest size it was requested
    /// with (the room it needs at worst).
    pub footprint_bytes: u64,
    /// Summed size of every read and write.
    pub bytes_requested: u64,
}

/// A trace in memory. Build it with [`CompactTrace::from_requests`] or push requests one
/// by one through [`TraceBuilder`].
#[derive(Debug, Default)]
pub struct CompactTrace {
    items: Vec<Item>,
    deletes: Vec<usize>,
    summary: Summary,
    key_space: usize,
    /// Position of `items[0]` in the whole trace: 0, or where a streamed chunk starts.
    base: u64,
    next: OnceLock<Vec<u64>>,
    /// Dense id -> original key (empty for a streamed chunk).
    originals: Vec<u64>,
}

/// Numbers keys densely in order of first appearance and counts the working set: what
/// both the in-memory trace ([`TraceBuilder`]) and streaming replay's first pass
/// ([`crate::stream`]) need, in memory proportional to the distinct keys.
#[derive(Debug, Default)]
pub struct KeyNumbering {
    summary: Summary,
    /// Original key -> dense id.
    ids: HashMap<u64, u32>,
    /// Largest size each dense id was read or written with (`None`: only ever deleted).
    max_size: Vec<Option<u32>>,
    /// Dense id -> original key (prefetchers follow original key order).
    originals: Vec<u64>,
}

impl KeyNumbering {
    /// Counts `r` and returns its key's dense id, numbering it if new.
    pub fn push(&mut self, r: &Request) -> u32 {
        match r.op {
            Op::Delete => self.summary.deletes += 1,
            op => {
                self.summary.requests += 1;
                self.summary.bytes_requested += u64::from(r.size);
                if op == Op::Write {
                    self.summary.writes += 1;
                } else {
                    self.summary.reads += 1;
                }
            }
        }
        let next_id = self.ids.len() as u32;
        let id = *self.ids.entry(r.key).or_insert(next_id);
        if id == next_id {
            self.max_size.push(None);
            self.originals.push(r.key);
        }
        if r.op != Op::Delete {
            let m = &mut self.max_size[id as usize];
            *m = Some(m.unwrap_or(0).max(r.size));
        }
        id
    }

    /// The dense id of a key already pushed.
    pub fn id(&self, key: u64) -> Option<u32> {
        self.ids.get(&key).copied()
    }

    /// Number of dense ids handed out.
    pub fn key_space(&self) -> usize {
        self.max_size.len()
    }

    /// The original key of each dense id (a prefetcher's successors are found from them).
    pub fn originals(&self) -> &[u64] {
        &self.originals
    }

    /// The counts so far, with the working set (an object only ever deleted is not in it).
    pub fn summary(&self) -> Summary {
        Summary {
            distinct_keys: self.max_size.iter().flatten().count() as u64,
            footprint_bytes: self.max_size.iter().flatten().map(|&s| u64::from(s)).sum(),
            ..self.summary
        }
    }
}

/// Accumulates a [`CompactTrace`] from requests read one at a time.
#[derive(Debug, Default)]
pub struct TraceBuilder {
    items: Vec<Item>,
    deletes: Vec<usize>,
    keys: KeyNumbering,
}

impl TraceBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append one request.
    pub fn push(&mut self, r: &Request) {
        if r.op == Op::Delete {
            self.deletes.push(self.items.len());
        }
        let id = self.keys.push(r);
        self.items.push(Item {
            key: u64::from(id),
            size: r.size,
            stream: r.stream,
        });
    }

    /// Operations appended so far (deletes included): the next one's position.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True before the first operation.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Finish.
    pub fn finish(mut self) -> CompactTrace {
        self.items.shrink_to_fit();
        CompactTrace {
            items: self.items,
            deletes: self.deletes,
            summary: self.keys.summary(),
            key_space: self.keys.key_space(),
            base: 0,
            next: OnceLock::new(),
            originals: std::mem::take(&mut self.keys.originals),
        }
    }
}

impl CompactTrace {
    /// A piece of a streamed trace: `items` (dense ids from the whole trace's numbering,
    /// `key_space` of them), the positions among them that are deletes, and where the piece
    /// starts in the whole trace. Its summary is the whole trace's.
    pub fn chunk(
        items: Vec<Item>,
        deletes: Vec<usize>,
        summary: Summary,
        key_space: usize,
        base: u64,
    ) -> Self {
        CompactTrace {
            items,
            deletes,
            summary,
            key_space,
            base,
            next: OnceLock::new(),
            originals: Vec::new(),
        }
    }

    /// Position of the first item in the whole trace (0 unless this is a streamed chunk).
    pub fn base(&self) -> u64 {
        self.base
    }
}

impl CompactTrace {
    /// Load every request `reader` yields, a batch at a time (no `Request` kept beyond its
    /// batch). The CLI's `replay` and the sweep load traces through here.
    pub fn from_reader(reader: &mut dyn trace::TraceReader) -> Result<Self, trace::TraceError> {
        let mut builder = TraceBuilder::new();
        let mut batch = vec![Request::default(); 4096];
        loop {
            let n = reader.read_batch(&mut batch)?;
            if n == 0 {
                return Ok(builder.finish());
            }
            for r in &batch[..n] {
                builder.push(r);
            }
        }
    }

    /// Load from any sequence of requests.
    pub fn from_requests<'a, I: IntoIterator<Item = &'a Request>>(requests: I) -> Self {
        let mut b = TraceBuilder::new();
        for r in requests {
            b.push(r);
        }
        b.finish()
    }

    /// Every operation in trace order, deletes included (see [`CompactTrace::deletes`]).
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Positions in [`CompactTrace::items`] that are deletes, ascending.
    pub fn deletes(&self) -> &[usize] {
        &self.deletes
    }

    /// The original key of each dense id (empty for a streamed chunk).
    pub fn originals(&self) -> &[u64] {
        &self.originals
    }

    /// Number of dense ids: every [`Item::key`] is below it.
    pub fn key_space(&self) -> usize {
        self.key_space
    }

    /// A driver index sized for this trace's dense ids.
    pub fn dense_index(&self) -> policy::DenseIndex {
        policy::DenseIndex::new(self.key_space)
    }

    /// Counts and working set.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// What size fractions refer to.
    pub fn working_set(&self) -> WorkingSet {
        WorkingSet {
            objects: self.summary.distinct_keys,
            bytes: self.summary.footprint_bytes,
        }
    }

    /// Number of operations, deletes included.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are no operations.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// For each position, the position of the same key's next read or write, or [`NEVER`]
    /// when there is none or the key is deleted first. Computed on first use and shared.
    pub fn next_access(&self) -> &[u64] {
        self.next.get_or_init(|| {
            let mut next = vec![NEVER; self.items.len()];
            let mut seen: HashMap<u64, u64> = HashMap::new();
            let mut d = self.deletes.len();
            for i in (0..self.items.len()).rev() {
                let key = self.items[i].key;
                if d > 0 && self.deletes[d - 1] == i {
                    d -= 1;
                    seen.insert(key, NEVER);
                    continue;
                }
                next[i] = seen.insert(key, i as u64).unwrap_or(NEVER);
            }
            next
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: u64, size: u32, op: Op) -> Request {
        Request {
            key,
            size,
            op,
            ..Request::default()
        }
    }

    #[test]
    fn summary_and_next_access_by_hand() {
        let reqs = [
            req(1, 10, Op::Read),  // 0: next 2
            req(2, 20, Op::Write), // 1: next 5
            req(1, 30, Op::Read),  // 2: deleted at 3 before read at 4
            req(1, 0, Op::Delete), // 3
            req(1, 10, Op::Read),  // 4: never again
            req(2, 20, Op::Read),  // 5: never again
        ];
        let t = CompactTrace::from_requests(&reqs);
        assert_eq!(
            *t.summary(),
            Summary {
                requests: 5,
                reads: 4,
                writes: 1,
                deletes: 1,
                distinct_keys: 2,
                footprint_bytes: 50,
                bytes_requested: 90,
            }
        );
        assert_eq!(t.deletes(), &[3]);
        let ids: Vec<u64> = t.items().iter().map(|i| i.key).collect();
        assert_eq!(
            ids,
            [0, 1, 0, 0, 0, 1],
            "keys become dense ids in order of first use"
        );
        assert_eq!(t.next_access(), &[2, 5, NEVER, NEVER, NEVER, NEVER]);
    }
}
