//! The buffer cache on its own, on tiny hand-worked cases: a fake [`Env`] records the
//! disk requests and wake-ups, and the tests play the disks by completing requests.

use hashbrown::HashSet;

use super::*;
use crate::des::config::{Cleaner, SystemConfig, WritePolicy};

/// Block size. Every test uses file 0, whose block `b` has key `b` ([`block_key`]).
const B: u64 = 1024;

/// The rest of the simulator, played by hand: file 0 has `initial` blocks on disk.
#[derive(Debug, Default)]
pub(in crate::des::engine) struct Fake {
    pub now: VTime,
    on_disk: HashSet<BlockKey>,
    file_bytes: u64,
    /// Requests started and not yet completed: (block, write, buffer).
    pub io: Vec<(u64, bool, u32)>,
    /// Every request started, in order.
    pub log: Vec<(u64, bool)>,
    woken: Vec<u32>,
}

impl Fake {
    pub fn new(initial: u64) -> Self {
        Fake {
            on_disk: (0..initial).map(|b| block_key(0, b)).collect(),
            file_bytes: initial * B,
            ..Default::default()
        }
    }

    /// Complete every request in flight, oldest first.
    pub fn complete_all(&mut self, c: &mut BufferCache) {
        while !self.io.is_empty() {
            let (_, write, f) = self.io.remove(0);
            c.io_done(self, f, write);
        }
    }

    pub fn woken(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.woken)
    }
}

impl Env for Fake {
    fn now(&self) -> VTime {
        self.now
    }
    fn on_disk(&self, key: BlockKey) -> bool {
        self.on_disk.contains(&key)
    }
    fn file_bytes(&self, _file: FileId) -> u64 {
        self.file_bytes
    }
    fn submit(&mut self, key: BlockKey, write: bool, frame: u32) {
        if write {
            self.on_disk.insert(key);
        }
        self.io.push((key_block(key), write, frame));
        self.log.push((key_block(key), write));
    }
    fn wake(&mut self, pid: u32) {
        self.woken.push(pid);
    }
}

fn cache(buffers: u32, policy: &str, write: WritePolicy, cleaner: Cleaner) -> BufferCache {
    let mut cfg = SystemConfig::default();
    cfg.cache.block_bytes = B as u32;
    cfg.cache.buffers = buffers;
    cfg.cache.policy = policy.into();
    cfg.cache.write_policy = write;
    cfg.cache.cleaner = cleaner;
    BufferCache::new(&cfg, 2, 1, false, 1).unwrap()
}

fn lru(buffers: u32, write: WritePolicy) -> BufferCache {
    cache(buffers, "lru", write, Cleaner::Scan)
}

const W: Option<WriteTag> = Some(WriteTag::PLAIN);

/// Process 0 reads block `b` of file 0 whole, waiting for the disk if it must.
fn read(c: &mut BufferCache, env: &mut Fake, b: u64) -> bool {
    let done = c.ready(env, 0, b, B, None, true);
    if !done {
        env.complete_all(c);
        assert_eq!(env.woken(), [0]);
        assert!(c.ready(env, 0, b, B, None, false));
    }
    done
}

fn cached(c: &BufferCache, b: u64) -> bool {
    c.map.contains_key(&block_key(0, b))
}

fn dirty(c: &BufferCache, b: u64) -> bool {
    c.map
        .get(&block_key(0, b))
        .is_some_and(|&f| c.bufs[f as usize].dirty)
}

#[test]
fn a_miss_reads_the_block_once_and_the_next_access_hits() {
    let mut env = Fake::new(4);
    let mut c = lru(2, WritePolicy::WriteBack);
    // The miss starts a read and the process waits for it.
    assert!(!c.ready(&mut env, 0, 1, B, None, true));
    assert_eq!(env.io, [(1, false, 0)]);
    env.complete_all(&mut c);
    assert_eq!(env.woken(), [0]);
    // The retry is not counted again.
    assert!(c.ready(&mut env, 0, 1, B, None, false));
    assert!(c.ready(&mut env, 0, 1, B, None, true));
    assert_eq!((c.stats.hits, c.stats.misses), (1, 1));
    assert_eq!(env.log, [(1, false)]);
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn a_second_reader_waits_for_the_read_in_flight() {
    let mut env = Fake::new(4);
    let mut c = lru(2, WritePolicy::WriteBack);
    assert!(!c.ready(&mut env, 0, 0, B, None, true));
    // Process 1 finds the buffer being read: a hit, but it waits too.
    assert!(!c.ready(&mut env, 1, 0, B, None, true));
    env.complete_all(&mut c);
    assert_eq!(env.woken(), [0, 1]);
    assert_eq!((c.stats.hits, c.stats.misses), (1, 1));
    assert_eq!(env.log.len(), 1);
}

#[test]
fn writes_read_the_block_first_only_when_part_of_an_existing_block_is_written() {
    let mut env = Fake::new(2);
    let mut c = lru(4, WritePolicy::WriteBack);
    // Whole block 0, on disk: no read.
    assert!(c.ready(&mut env, 0, 0, B, W, true));
    // Part of block 3, never on disk: no read.
    assert!(c.ready(&mut env, 0, 3, 100, W, true));
    assert!(env.log.is_empty());
    // Part of block 1, on disk: read, then write into it.
    assert!(!c.ready(&mut env, 0, 1, 100, W, true));
    assert_eq!(env.log, [(1, false)]);
    env.complete_all(&mut c);
    assert!(c.ready(&mut env, 0, 1, 100, W, false));
    assert!(dirty(&c, 0) && dirty(&c, 1) && dirty(&c, 3));
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn lru_evicts_the_least_recently_used_clean_block() {
    let mut env = Fake::new(8);
    let mut c = lru(2, WritePolicy::WriteBack);
    read(&mut c, &mut env, 0);
    read(&mut c, &mut env, 1);
    read(&mut c, &mut env, 0);
    // 0 was used last: 1 goes.
    read(&mut c, &mut env, 2);
    assert!(cached(&c, 0) && !cached(&c, 1) && cached(&c, 2));
    assert_eq!((c.stats.hits, c.stats.misses), (1, 3));
    // Clean victims are never written.
    assert!(env.log.iter().all(|&(_, w)| !w));
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn the_scan_cleaner_writes_dirty_victims_and_passes_over_the_held_one() {
    let mut env = Fake::new(0);
    let mut c = lru(2, WritePolicy::WriteBack);
    assert!(c.ready(&mut env, 0, 0, B, W, true));
    assert!(c.ready(&mut env, 0, 1, B, W, true));
    // Block 2 needs a buffer: 0 is dirty (written, the process waits), 1 is dirty and
    // held by the process, so passed over.
    assert!(!c.ready(&mut env, 0, 2, B, W, true));
    assert_eq!(env.io, [(0, true, 0)]);
    assert_eq!(c.stats.cleaner_writes, 1);
    env.complete_all(&mut c);
    assert_eq!(env.woken(), [0]);
    // Block 0 is clean now: evicted, its buffer takes block 2.
    assert!(c.ready(&mut env, 0, 2, B, W, false));
    assert!(!cached(&c, 0) && dirty(&c, 1) && dirty(&c, 2));
    assert_eq!((c.stats.misses, c.stats.cleaner_writes), (3, 1));
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn the_sync_cleaner_writes_one_victim_per_try() {
    let mut env = Fake::new(0);
    let mut c = cache(3, "lru", WritePolicy::WriteBack, Cleaner::Sync);
    for b in 0..3 {
        assert!(c.ready(&mut env, 0, b, B, W, true));
    }
    // Process 1 needs a buffer: 0 and 1 are dirty and not held; one write per try.
    assert!(!c.ready(&mut env, 1, 5, B, None, true));
    assert_eq!(env.io, [(0, true, 0)]);
    let mut scan = cache(3, "lru", WritePolicy::WriteBack, Cleaner::Scan);
    let mut env2 = Fake::new(0);
    for b in 0..3 {
        assert!(scan.ready(&mut env2, 0, b, B, W, true));
    }
    assert!(!scan.ready(&mut env2, 1, 5, B, None, true));
    assert_eq!(env2.io, [(0, true, 0), (1, true, 1)]);
}

#[test]
fn writethru_writes_every_request_and_a_rewrite_waits_for_the_write() {
    let mut env = Fake::new(0);
    let mut c = lru(2, WritePolicy::WriteThru);
    assert!(c.ready(&mut env, 0, 0, 100, W, true));
    assert_eq!(env.io, [(0, true, 0)]);
    // Writing into the buffer being written waits for that write (B_BUSY).
    assert!(!c.ready(&mut env, 0, 0, 100, W, true));
    env.complete_all(&mut c);
    assert_eq!(env.woken(), [0]);
    assert!(c.ready(&mut env, 0, 0, 100, W, false));
    // Reading a buffer being written does not wait.
    assert!(c.ready(&mut env, 1, 0, B, None, true));
    assert_eq!(env.log, [(0, true), (0, true)]);
}

#[test]
fn writefull_writes_a_block_once_every_byte_was_written() {
    let mut env = Fake::new(0);
    let mut c = lru(2, WritePolicy::WriteFull);
    assert!(c.ready(&mut env, 0, 0, B / 2, W, true));
    assert!(env.log.is_empty() && dirty(&c, 0));
    assert!(c.ready(&mut env, 0, 0, B / 2, W, true));
    assert_eq!(env.log, [(0, true)]);
}

#[test]
fn writefree_writes_a_block_when_its_last_holder_moves_on() {
    let mut env = Fake::new(0);
    let mut c = lru(4, WritePolicy::WriteFree);
    assert!(c.ready(&mut env, 0, 0, 100, W, true));
    // Process 1 touches block 0 too: two holders.
    assert!(c.ready(&mut env, 1, 0, 100, W, true));
    assert!(c.ready(&mut env, 0, 1, 100, W, true));
    assert!(env.log.is_empty());
    // The last holder lets go (its process ends): written.
    c.release_held(&mut env, 1);
    assert_eq!(env.log, [(0, true)]);
}

#[test]
fn the_flusher_writes_buffers_dirty_for_the_flush_age() {
    let mut env = Fake::new(0);
    let mut c = lru(4, WritePolicy::Delayed);
    assert!(c.delays_writes());
    let age = c.flush_age;
    assert!(c.ready(&mut env, 0, 0, B, W, true));
    env.now = VTime::ZERO.later(age / 2);
    assert!(c.ready(&mut env, 0, 1, B, W, true));
    env.now = VTime::ZERO.later(age);
    c.flush(&mut env);
    // Only block 0 is old enough.
    assert_eq!(env.log, [(0, true)]);
    assert_eq!(c.stats.flusher_writes, 1);
    env.complete_all(&mut c);
    env.now = env.now.later(age / 2);
    c.flush(&mut env);
    assert_eq!(env.log, [(0, true), (1, true)]);
    assert_eq!(c.stats.flusher_writes, 2);
}

#[test]
fn the_daemon_refills_its_pool_and_a_hit_takes_a_buffer_back() {
    let mut env = Fake::new(16);
    // 4 buffers; pool between 1 and 2.
    let mut c = cache(4, "lru", WritePolicy::WriteBack, Cleaner::Daemon);
    for b in 0..4 {
        read(&mut c, &mut env, b);
    }
    // The pool is empty: the daemon evicts the two oldest (0, 1) into it, one is taken.
    read(&mut c, &mut env, 4);
    assert!(!cached(&c, 0) && cached(&c, 1) && cached(&c, 4));
    assert_eq!(c.pool.count, 1);
    assert!(c.bufs[c.map[&block_key(0, 1)] as usize].in_pool);
    // A hit on block 1 takes its buffer back out of the pool.
    assert!(c.ready(&mut env, 0, 1, B, None, true));
    assert_eq!(c.pool.count, 0);
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn the_daemon_cleans_dirty_victims_on_their_way_into_the_pool() {
    let mut env = Fake::new(0);
    let mut c = cache(4, "lru", WritePolicy::WriteBack, Cleaner::Daemon);
    for b in 0..4 {
        assert!(c.ready(&mut env, 0, b, B, W, true));
    }
    // Blocks 0 and 1 are dirty and not held: written; nothing is free until one lands.
    assert!(!c.ready(&mut env, 1, 9, B, None, true));
    assert_eq!(env.io, [(0, true, 0), (1, true, 1)]);
    assert_eq!((c.pool.cleaning, c.stats.cleaner_writes), (2, 2));
    env.complete_all(&mut c);
    assert_eq!(c.pool.count, 2);
    assert_eq!(env.woken(), [1]);
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn dropping_a_file_discards_its_dirty_blocks_and_frees_their_buffers() {
    let mut env = Fake::new(0);
    let mut c = lru(2, WritePolicy::WriteBack);
    assert!(c.ready(&mut env, 0, 0, B, W, true));
    assert!(c.ready(&mut env, 0, 1, B, W, true));
    // Keep block 0, drop block 1.
    c.drop_blocks(&mut env, 0, 1);
    assert!(dirty(&c, 0) && !cached(&c, 1));
    assert_eq!((c.stats.dirty_discarded, c.free.len()), (1, 1));
    // The freed buffer serves the next miss without any write.
    assert!(c.ready(&mut env, 1, 7, B, W, true));
    assert!(env.log.is_empty());
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn a_buffer_dropped_during_its_io_is_freed_when_the_io_completes() {
    let mut env = Fake::new(4);
    let mut c = lru(2, WritePolicy::WriteBack);
    assert!(!c.ready(&mut env, 0, 2, B, None, true));
    c.drop_blocks(&mut env, 0, 0);
    assert!(c.free.is_empty() && !cached(&c, 2));
    env.complete_all(&mut c);
    assert_eq!(c.free, [0]);
    assert_eq!(env.woken(), [0]);
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn sequential_reads_read_ahead_blocks_on_disk_and_not_cached() {
    let mut env = Fake::new(6);
    let mut cfg = SystemConfig::default();
    cfg.cache.block_bytes = B as u32;
    cfg.cache.buffers = 8;
    cfg.cache.read_ahead = 2;
    let mut c = BufferCache::new(&cfg, 1, 1, false, 1).unwrap();
    read(&mut c, &mut env, 0);
    assert_eq!(c.stats.readahead_reads, 0);
    // The second read is sequential: 2 and 3 are read ahead (asynchronously), started
    // before the demand read of 1.
    read(&mut c, &mut env, 1);
    assert_eq!(env.log, [(0, false), (2, false), (3, false), (1, false)]);
    assert_eq!(c.stats.readahead_reads, 2);
    // Blocks 2 and 3 were prefetched: hits, each reading ahead what is not cached yet
    // (4, then 5, the file's last block).
    read(&mut c, &mut env, 2);
    read(&mut c, &mut env, 3);
    assert_eq!(env.log[4..], [(4, false), (5, false)]);
    assert_eq!((c.stats.hits, c.stats.misses), (2, 2));
}

#[test]
fn with_every_buffer_held_and_dirty_the_held_ones_are_cleaned_last() {
    let mut env = Fake::new(0);
    let mut c = lru(2, WritePolicy::WriteBack);
    assert!(c.ready(&mut env, 0, 0, B, W, true));
    assert!(c.ready(&mut env, 1, 1, B, W, true));
    // Both dirty buffers are held and nothing is in flight: the scan cleans held ones
    // after all, in replacement order, and the process waits for one.
    assert!(!c.ready(&mut env, 0, 2, B, W, true));
    assert_eq!(env.io, [(0, true, 0), (1, true, 1)]);
    env.complete_all(&mut c);
    assert!(c.ready(&mut env, 0, 2, B, W, false));
    assert!(!cached(&c, 0) && cached(&c, 1));
}

impl BufferCache {
    /// [`BufferCache::access`] of a cache without an admission filter: true when done.
    fn ready<E: Env>(
        &mut self,
        env: &mut E,
        pid: u32,
        key: BlockKey,
        n: u64,
        write: Option<WriteTag>,
        first: bool,
    ) -> bool {
        match self.access(env, pid, key, n, write, first) {
            Served::Ready => true,
            Served::Wait => false,
            Served::Uncached => panic!("block {key} refused by a cache with no filter"),
        }
    }
}

fn with_modules(buffers: u32, admission: Option<&str>, prefetch: Option<&str>) -> BufferCache {
    let mut cfg = SystemConfig::default();
    cfg.cache.block_bytes = B as u32;
    cfg.cache.buffers = buffers;
    cfg.cache.admission = admission.map(str::to_string);
    cfg.cache.prefetch = prefetch.map(str::to_string);
    BufferCache::new(&cfg, 2, 1, false, 1).unwrap()
}

#[test]
fn a_refused_block_takes_no_buffer_and_evicts_nothing() {
    // LRU of 2 behind secondhit; process 0 reads 1 2 1 3 1 2 3, all on disk:
    // 1 refused, 2 refused, 1 admitted (read), 3 refused, 1 hit, 2 admitted (read),
    // 3 admitted (read; evicts 1) — the sequence `Cache` gives (policy::admit's test).
    let mut env = Fake::new(4);
    let mut c = with_modules(2, Some("secondhit"), None);
    let mut served = Vec::new();
    for b in [1, 2, 1, 3, 1, 2, 3] {
        let s = c.access(&mut env, 0, b, B, None, true);
        if s == Served::Wait {
            env.complete_all(&mut c);
            assert_eq!(env.woken(), [0]);
            assert_eq!(c.access(&mut env, 0, b, B, None, false), Served::Ready);
        }
        served.push(s);
    }
    use Served::{Ready, Uncached, Wait};
    assert_eq!(
        served,
        [Uncached, Uncached, Wait, Uncached, Ready, Wait, Wait]
    );
    // The cache read only the admitted blocks; the refused ones are the process's to read.
    assert_eq!(env.log, [(1, false), (2, false), (3, false)]);
    assert!(!cached(&c, 1) && cached(&c, 2) && cached(&c, 3));
    let s = c.stats;
    assert_eq!((s.hits, s.misses, s.admission_refused), (1, 6, 3));
    assert_eq!(c.invariants(), Ok(()));
}

#[test]
fn prefetched_blocks_are_read_asynchronously_and_counted_when_used() {
    // OBL over 4 buffers; process 0 reads 0 1 2. Reading 1 after 0 prefetches 2 (its read
    // queued behind the demand read of 1); reading 2 hits it and prefetches 3.
    let mut env = Fake::new(8);
    let mut c = with_modules(4, None, Some("obl"));
    assert!(!read(&mut c, &mut env, 0));
    assert!(!read(&mut c, &mut env, 1));
    assert!(read(&mut c, &mut env, 2));
    assert_eq!(env.log, [(0, false), (1, false), (2, false), (3, false)]);
    // The read of 3 is still in flight: the buffer is busy, not yet used.
    assert_eq!(env.io, [(3, false, 3)]);
    let s = c.stats;
    assert_eq!((s.hits, s.misses), (1, 2));
    assert_eq!((s.prefetch_reads, s.prefetch_used), (2, 1));
    assert_eq!(c.invariants(), Ok(()));
}
