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

use hashbrown::{HashMap, HashSet};
use trace::{Op, Request, NEVER};

use crate::keytable::KeyTable;
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
///
/// Numbering is memory-bound on large traces (a million distinct keys fit in no cache, so
/// a request costs the cache misses of its lookup). So each key's id and largest size
/// live in one slot of a [`KeyTable`], a request touches that slot and nothing else, and
/// [`KeyNumbering::push_batch`] first touches the home slots of a whole batch so that
/// their misses overlap. Keys only ever deleted, rare in any trace, are tracked on the
/// side instead of by a flag beside every size.
#[derive(Debug, Default)]
pub struct KeyNumbering {
    summary: Summary,
    /// Original key -> its dense id and the largest size it was read or written with.
    ids: KeyTable,
    /// Dense ids whose keys so far were only deleted (not in the working set).
    only_deleted: HashSet<u32>,
    /// Dense id -> original key (prefetchers follow original key order).
    originals: Vec<u64>,
    /// What touching a batch's home slots read, kept so that the reads are made.
    touched: u64,
}

/// Requests whose home slots are touched before any of them is numbered: enough misses
/// in flight to cover the memory's latency, few enough lines (64 bytes each) that all of
/// them are still in the L1 and L2 caches when the batch is numbered.
const TOUCH_BATCH: usize = 256;

impl KeyNumbering {
    /// Counts `r` and returns its key's dense id, numbering it if new.
    #[inline]
    pub fn push(&mut self, r: &Request) -> u32 {
        let delete = r.op == Op::Delete;
        if delete {
            self.summary.deletes += 1;
        } else {
            self.summary.requests += 1;
            self.summary.bytes_requested += u64::from(r.size);
            if r.op == Op::Write {
                self.summary.writes += 1;
            } else {
                self.summary.reads += 1;
            }
        }
        let next_id = u32::try_from(self.originals.len())
            .ok()
            .filter(|&id| id < u32::MAX)
            .expect("a trace has fewer than 2^32 - 1 distinct keys");
        let size = if delete { 0 } else { r.size };
        let found = self.ids.upsert(r.key, next_id, size);
        if found.new {
            self.originals.push(r.key);
            if delete {
                self.only_deleted.insert(next_id);
            }
        } else if !delete && !self.only_deleted.is_empty() {
            self.only_deleted.remove(&found.id);
        }
        found.id
    }

    /// [`KeyNumbering::push`] for each of `requests` in order, handing each id to `id`:
    /// the same ids, faster on large traces (the batch's slots are touched first).
    pub fn push_batch(&mut self, requests: &[Request], mut id: impl FnMut(&Request, u32)) {
        for chunk in requests.chunks(TOUCH_BATCH) {
            let mut touched = self.touched;
            for r in chunk {
                touched = touched.wrapping_add(self.ids.touch(r.key));
            }
            self.touched = touched;
            for r in chunk {
                let n = self.push(r);
                id(r, n);
            }
        }
    }

    /// The dense id of a key already pushed.
    pub fn id(&self, key: u64) -> Option<u32> {
        self.ids.get(key)
    }

    /// Number of dense ids handed out.
    pub fn key_space(&self) -> usize {
        self.originals.len()
    }

    /// The original key of each dense id (a prefetcher's successors are found from them).
    pub fn originals(&self) -> &[u64] {
        &self.originals
    }

    /// The counts so far, with the working set (an object only ever deleted is not in it;
    /// its entry's size is 0, so the sum of sizes needs no exception for it).
    pub fn summary(&self) -> Summary {
        Summary {
            distinct_keys: (self.ids.len() - self.only_deleted.len()) as u64,
            footprint_bytes: self.ids.max_sizes().map(u64::from).sum(),
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
        let id = self.keys.push(r);
        append(&mut self.items, &mut self.deletes, r, id);
    }

    /// Append each of `requests` in order (as [`TraceBuilder::push`] does, faster on large
    /// traces: see [`KeyNumbering::push_batch`]).
    pub fn push_batch(&mut self, requests: &[Request]) {
        let (items, deletes) = (&mut self.items, &mut self.deletes);
        self.keys
            .push_batch(requests, |r, id| append(items, deletes, r, id));
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
            builder.push_batch(&batch[..n]);
        }
    }

    /// Load from any sequence of requests.
    pub fn from_requests<'a, I: IntoIterator<Item = &'a Request>>(requests: I) -> Self {
        let mut b = TraceBuilder::new();
        let mut batch = Vec::with_capacity(TOUCH_BATCH);
        for r in requests {
            batch.push(*r);
            if batch.len() == TOUCH_BATCH {
                b.push_batch(&batch);
                batch.clear();
            }
        }
        b.push_batch(&batch);
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

/// One numbered operation into a trace's arrays: its item under its dense id, and its
/// position among the deletes if it is one (shared by [`TraceBuilder::push`] and
/// [`TraceBuilder::push_batch`]).
#[inline]
fn append(items: &mut Vec<Item>, deletes: &mut Vec<usize>, r: &Request, id: u32) {
    if r.op == Op::Delete {
        deletes.push(items.len());
    }
    items.push(Item {
        key: u64::from(id),
        size: r.size,
        stream: r.stream,
    });
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

    #[test]
    fn keys_only_deleted_are_numbered_but_not_in_the_working_set() {
        let reqs = [
            req(7, 0, Op::Delete), // 7 numbered 0, only deleted so far
            req(8, 5, Op::Read),   // 8 numbered 1
            req(9, 0, Op::Delete), // 9 numbered 2, only ever deleted
            req(7, 0, Op::Read),   // 7 read at size 0: now in the working set
            req(8, 0, Op::Delete), // deleting a read key keeps it in
            req(8, 3, Op::Write),  // a smaller size keeps the largest
        ];
        let t = CompactTrace::from_requests(&reqs);
        assert_eq!(t.key_space(), 3);
        assert_eq!(t.originals(), &[7, 8, 9]);
        let s = t.summary();
        assert_eq!((s.distinct_keys, s.footprint_bytes), (2, 5));
        assert_eq!((s.requests, s.deletes, s.bytes_requested), (3, 3, 8));
        // the same counts when the only-deleted key is never requested at all
        let t = CompactTrace::from_requests(&reqs[..3]);
        assert_eq!(
            (t.summary().distinct_keys, t.summary().footprint_bytes),
            (1, 5)
        );
    }

    proptest::proptest! {
        /// Against the plain definition: ids in order of first appearance, and the working
        /// set as the keys read or written at least once, each at its largest size.
        #[test]
        fn numbering_equals_the_definition(
            ops in proptest::collection::vec((0u64..40, 0u32..100, 0u8..3), 0..700)
        ) {
            let reqs: Vec<Request> = ops
                .iter()
                .map(|&(k, size, op)| req(k, size, [Op::Read, Op::Write, Op::Delete][op as usize]))
                .collect();
            let t = CompactTrace::from_requests(&reqs);
            let mut first: Vec<u64> = Vec::new();
            let mut largest = std::collections::BTreeMap::new();
            for r in &reqs {
                if !first.contains(&r.key) {
                    first.push(r.key);
                }
                if r.op != Op::Delete {
                    let m = largest.entry(r.key).or_insert(0u64);
                    *m = (*m).max(u64::from(r.size));
                }
            }
            let ids: Vec<u64> = reqs
                .iter()
                .map(|r| first.iter().position(|&k| k == r.key).unwrap() as u64)
                .collect();
            proptest::prop_assert_eq!(t.items().iter().map(|i| i.key).collect::<Vec<_>>(), ids);
            proptest::prop_assert_eq!(t.originals(), &first[..]);
            proptest::prop_assert_eq!(t.summary().distinct_keys, largest.len() as u64);
            proptest::prop_assert_eq!(t.summary().footprint_bytes, largest.values().sum::<u64>());
            // one request at a time gives what a batch gives
            let mut one = TraceBuilder::new();
            for r in &reqs {
                one.push(r);
            }
            let one = one.finish();
            proptest::prop_assert_eq!(one.items(), t.items());
            proptest::prop_assert_eq!(one.deletes(), t.deletes());
            proptest::prop_assert_eq!(one.summary(), t.summary());
        }
    }
}
