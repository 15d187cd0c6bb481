//! Processes: each runs its script, one operation after another, until it must wait.
//!
//! [`Processes`] owns every process's place in its script, its transfer in progress
//! (a read or write, block by block), its fixed delays, its uncached I/O and its `fsync`
//! in progress, plus the shared record counters and the CPU costs. A process acts on the
//! cache (or, with no cache, on the disks directly) and on storage; it waits by simply
//! returning, and runs again when an event for it comes up: its compute delay ended, or
//! the cache or a disk woke it. Nothing calls back into a process, so there is no
//! re-entrancy to reason about.

use super::super::config::SystemConfig;
use super::super::event::Event;
use super::super::ops::{FileId, Op, Workload};
use super::super::time::Nanos;
use super::cache::{Served, WriteTag};
use super::storage::{block_key, Requester};
use super::{Cache, World};

/// A read or write in progress, block by block.
#[derive(Clone, Copy, Debug)]
struct Transfer {
    file: FileId,
    pos: u64,
    end: u64,
    write: bool,
    /// The ordering's tag for a write ([`WriteTag::PLAIN`] for reads).
    tag: WriteTag,
    blocks: u64,
    /// Compute for the next delay once done (shared-record loops).
    then_compute: bool,
}

/// Where a process's uncached I/O of its current block stands (no cache, or a block the
/// admission filter refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direct {
    Idle,
    Reading,
    ReadDone,
    Writing,
    WriteDone,
}

#[derive(Clone, Debug)]
struct Proc {
    pc: usize,
    transfer: Option<Transfer>,
    delay_next: usize,
    /// Hit/miss of the current block already counted and shown to the policy.
    counted: bool,
    direct: Direct,
    /// Logical writes recorded before the current `fsync` began.
    sync_mark: Option<u32>,
    done: bool,
}

/// Every process of a run.
#[derive(Debug)]
pub(super) struct Processes<'w> {
    workload: &'w Workload,
    procs: Vec<Proc>,
    live: usize,
    counters: Vec<u64>,
    block_bytes: u64,
    syscall_ns: Nanos,
    block_ns: Nanos,
    /// Block accesses made with no cache (each one a miss).
    pub direct_misses: u64,
}

impl<'w> Processes<'w> {
    /// The processes of `workload`, none started yet.
    pub fn new(cfg: &SystemConfig, workload: &'w Workload) -> Self {
        let procs = workload
            .scripts
            .iter()
            .map(|_| Proc {
                pc: 0,
                transfer: None,
                delay_next: 0,
                counted: false,
                direct: Direct::Idle,
                sync_mark: None,
                done: false,
            })
            .collect();
        Processes {
            workload,
            procs,
            live: workload.scripts.len(),
            counters: vec![0; workload.counters as usize],
            block_bytes: u64::from(cfg.cache.block_bytes),
            syscall_ns: super::super::config::us_to_ns(cfg.cache.syscall_us),
            block_ns: super::super::config::us_to_ns(cfg.cache.block_us),
            direct_misses: 0,
        }
    }

    /// Processes in the run.
    pub fn count(&self) -> usize {
        self.procs.len()
    }

    /// Processes that have not finished their scripts.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Run process `pid` until it waits or ends. True if it was the last to end.
    pub fn run(&mut self, pid: u32, cache: &mut Cache, world: &mut World) -> bool {
        let p = pid as usize;
        if self.procs[p].done {
            return false;
        }
        loop {
            if let Some(mut t) = self.procs[p].transfer {
                let done = self.continue_transfer(pid, &mut t, cache, world);
                if !done {
                    self.procs[p].transfer = Some(t);
                    return false;
                }
                self.procs[p].transfer = None;
                // Saturating: a cost past the clock's end makes the event due at the end
                // of time, which stops the run.
                let mut cost = self.syscall_ns;
                if matches!(cache, Cache::On(_)) {
                    cost = cost.saturating_add(t.blocks.saturating_mul(self.block_ns));
                }
                if t.then_compute {
                    cost = cost.saturating_add(self.next_delay(p));
                }
                if cost > 0 {
                    world.queue.push(world.now.later(cost), Event::Process(pid));
                    return false;
                }
                continue;
            }
            let script = &self.workload.scripts[p];
            let Some(&op) = script.ops.get(self.procs[p].pc) else {
                return self.process_done(pid, cache, world);
            };
            let mut delay = self.syscall_ns;
            match op {
                Op::Open(_) | Op::Close(_) => {}
                Op::Read { file, offset, len } => {
                    // A read stops at the end of the file (check_workload bounds the rest).
                    let end = offset
                        .saturating_add(len)
                        .min(world.storage.file_bytes(file));
                    self.begin(p, file, offset, end.max(offset), None, false);
                    continue;
                }
                Op::Write { file, offset, len } => {
                    let tag = cache.begin_write(file, None);
                    self.begin(p, file, offset, offset + len, Some(tag), false);
                    continue;
                }
                Op::GraphWrite {
                    file,
                    offset,
                    len,
                    id,
                    deps_start,
                    deps_len,
                } => {
                    let deps = &self.workload.deps[deps_start as usize..][..deps_len as usize];
                    let tag = cache.begin_write(file, Some((id, deps)));
                    self.begin(p, file, offset, offset + len, Some(tag), false);
                    continue;
                }
                Op::Barrier => cache.barrier(),
                Op::Delete(file) => drop_blocks(cache, world, file, 0),
                Op::Truncate { file, len } => drop_blocks(cache, world, file, len),
                Op::Compute(ns) => delay = ns,
                Op::ComputeNext => delay = self.next_delay(p),
                Op::Sync(file) => {
                    let synced = match cache {
                        Cache::On(c) => c.sync(world, pid, file, &mut self.procs[p].sync_mark),
                        Cache::Off => true,
                    };
                    if !synced {
                        return false;
                    }
                }
                Op::SharedRecords {
                    counter,
                    file,
                    record_bytes,
                    total_bytes,
                    write,
                    compute,
                } => {
                    let i = self.counters[counter as usize];
                    let start = i * record_bytes;
                    if start < total_bytes {
                        self.counters[counter as usize] += 1;
                        let end = start.saturating_add(record_bytes).min(total_bytes);
                        let tag = write.then(|| cache.begin_write(file, None));
                        // The loop op stays current until the counter runs out.
                        self.begin(p, file, start, end, tag, compute);
                        self.procs[p].pc -= 1;
                        continue;
                    }
                    delay = 0;
                }
            }
            self.procs[p].pc += 1;
            if delay > 0 {
                world
                    .queue
                    .push(world.now.later(delay), Event::Process(pid));
                return false;
            }
        }
    }

    /// Start a transfer of bytes `start..end` of `file`; `write` carries a write's tag.
    fn begin(
        &mut self,
        p: usize,
        file: FileId,
        start: u64,
        end: u64,
        write: Option<WriteTag>,
        then_compute: bool,
    ) {
        let proc = &mut self.procs[p];
        debug_assert!(
            proc.transfer.is_none(),
            "process {p} is already transferring"
        );
        proc.pc += 1;
        proc.counted = false;
        proc.transfer = Some(Transfer {
            file,
            pos: start,
            end,
            write: write.is_some(),
            tag: write.unwrap_or(WriteTag::PLAIN),
            blocks: 0,
            then_compute,
        });
    }

    fn next_delay(&mut self, p: usize) -> Nanos {
        let delays = &self.workload.scripts[p].delays;
        let i = self.procs[p].delay_next;
        self.procs[p].delay_next += 1;
        delays.get(i).copied().unwrap_or(0)
    }

    fn process_done(&mut self, pid: u32, cache: &mut Cache, world: &mut World) -> bool {
        let p = pid as usize;
        self.procs[p].done = true;
        if let Cache::On(c) = cache {
            c.release_held(world, p);
        }
        self.live -= 1;
        self.live == 0
    }

    /// Move transfer `t` on; false if the process now waits.
    fn continue_transfer(
        &mut self,
        pid: u32,
        t: &mut Transfer,
        cache: &mut Cache,
        world: &mut World,
    ) -> bool {
        let p = pid as usize;
        while t.pos < t.end {
            let block = t.pos / self.block_bytes;
            let offset = t.pos % self.block_bytes;
            let n = (self.block_bytes - offset).min(t.end - t.pos);
            let first = !self.procs[p].counted;
            self.procs[p].counted = true;
            let ready = match cache {
                // A block the admission filter refused is moved by uncached I/O until done.
                Cache::On(_) if self.procs[p].direct != Direct::Idle => {
                    self.direct_block(pid, t.file, block, n, t.write, world)
                }
                Cache::On(c) => {
                    let write = t.write.then_some(t.tag);
                    match c.access(world, pid, block_key(t.file, block), n, write, first) {
                        Served::Ready => true,
                        Served::Wait => false,
                        Served::Uncached => {
                            self.direct_block(pid, t.file, block, n, t.write, world)
                        }
                    }
                }
                Cache::Off => {
                    if first {
                        self.direct_misses += 1;
                    }
                    self.direct_block(pid, t.file, block, n, t.write, world)
                }
            };
            if !ready {
                return false;
            }
            t.pos += n;
            t.blocks += 1;
            if t.write {
                world.storage.extend(t.file, t.pos);
            }
            self.procs[p].counted = false;
        }
        true
    }

    /// Uncached I/O of one block; true when done.
    fn direct_block(
        &mut self,
        pid: u32,
        file: FileId,
        block: u64,
        n: u64,
        write: bool,
        world: &mut World,
    ) -> bool {
        let key = block_key(file, block);
        let requester = Requester::Process(pid);
        let proc = &mut self.procs[pid as usize];
        match proc.direct {
            Direct::Idle => {
                let on_disk = world.storage.on_disk(key);
                let needs_read = on_disk && (!write || n < self.block_bytes);
                if needs_read {
                    proc.direct = Direct::Reading;
                    world.submit(key, false, requester);
                    false
                } else if write {
                    proc.direct = Direct::Writing;
                    world.submit(key, true, requester);
                    false
                } else {
                    true
                }
            }
            Direct::ReadDone if write => {
                proc.direct = Direct::Writing;
                world.submit(key, true, requester);
                false
            }
            Direct::ReadDone | Direct::WriteDone => {
                proc.direct = Direct::Idle;
                true
            }
            Direct::Reading | Direct::Writing => false,
        }
    }

    /// The uncached read or write process `pid` waited for completed.
    pub fn direct_done(&mut self, pid: u32, write: bool) {
        let proc = &mut self.procs[pid as usize];
        debug_assert_eq!(
            proc.direct,
            if write {
                Direct::Writing
            } else {
                Direct::Reading
            }
        );
        proc.direct = if write {
            Direct::WriteDone
        } else {
            Direct::ReadDone
        };
    }
}

/// `delete` / `truncate`: drop `file`'s blocks from byte `from_bytes` on, on disk and in
/// the cache.
fn drop_blocks(cache: &mut Cache, world: &mut World, file: FileId, from_bytes: u64) {
    let first = world.storage.truncate(file, from_bytes);
    if let Cache::On(c) = cache {
        c.drop_blocks(world, file, first);
    }
}

#[cfg(test)]
mod tests {
    use super::super::storage::Storage;
    use super::*;
    use crate::des::disk::ServiceTime;
    use crate::des::event::EventQueue;
    use crate::des::ops::{FileSpec, Script};
    use crate::des::time::VTime;

    const B: u64 = 1024;
    const MS: u64 = 1_000_000;

    /// No cache, one disk of 1 ms requests, 10 µs per call; file 0 of 4 blocks, 1 on disk.
    fn setup(scripts: Vec<Vec<Op>>, counters: u16) -> (SystemConfig, Workload) {
        let mut cfg = SystemConfig::default();
        cfg.cache.block_bytes = B as u32;
        cfg.cache.buffers = 0;
        cfg.cache.syscall_us = 10.0;
        cfg.disks.service = ServiceTime::Constant { ms: 1.0 };
        let workload = Workload {
            files: vec![FileSpec {
                initial_bytes: B,
                max_bytes: 4 * B,
            }],
            scripts: scripts
                .into_iter()
                .map(|ops| Script {
                    ops,
                    delays: vec![7, 9],
                })
                .collect(),
            counters,
            deps: Vec::new(),
        };
        (cfg, workload)
    }

    /// Play the engine's part by hand: run processes as their events come up, complete
    /// disk requests; the events seen, in order.
    fn play(procs: &mut Processes, storage: &mut Storage) -> Vec<(VTime, Event)> {
        let mut queue = EventQueue::new();
        let mut cache = Cache::Off;
        for pid in 0..procs.count() as u32 {
            queue.push(VTime::ZERO, Event::Process(pid));
        }
        let mut seen = Vec::new();
        let mut lasts = 0;
        while let Some((now, event)) = queue.pop() {
            seen.push((now, event));
            match event {
                Event::Process(pid) => {
                    let mut world = World {
                        now,
                        queue: &mut queue,
                        storage,
                    };
                    if procs.run(pid, &mut cache, &mut world) {
                        assert_eq!(procs.live(), 0);
                        lasts += 1;
                    }
                }
                Event::DiskDone(d) => {
                    let done = storage.complete(d, now);
                    if let Some(t) = done.next {
                        queue.push(t, Event::DiskDone(d));
                    }
                    let Requester::Process(pid) = done.requester else {
                        panic!("no cache, yet a buffer did I/O");
                    };
                    procs.direct_done(pid, done.write);
                    queue.push(now, Event::Process(pid));
                }
                Event::Flusher => unreachable!("no cache, no flusher"),
            }
        }
        assert_eq!(lasts, 1, "one process ends last");
        seen
    }

    #[test]
    fn an_uncached_partial_write_reads_modifies_and_writes() {
        let write = Op::Write {
            file: 0,
            offset: 10,
            len: 100,
        };
        let (cfg, w) = setup(vec![vec![write]], 0);
        let mut procs = Processes::new(&cfg, &w);
        let mut storage = Storage::new(&cfg, &w);
        let seen = play(&mut procs, &mut storage);
        let t = VTime::from_ns;
        assert_eq!(
            seen,
            [
                (t(0), Event::Process(0)),
                // The read, then the write, of block 0.
                (t(MS), Event::DiskDone(0)),
                (t(MS), Event::Process(0)),
                (t(2 * MS), Event::DiskDone(0)),
                (t(2 * MS), Event::Process(0)),
                // The call's CPU cost (no per-block cost without a cache).
                (t(2 * MS + 10_000), Event::Process(0)),
            ]
        );
        assert_eq!((storage.reads, storage.writes), (1, 1));
        assert_eq!((procs.direct_misses, procs.live()), (1, 0));
    }

    #[test]
    fn a_read_stops_at_the_end_of_the_file() {
        let read = Op::Read {
            file: 0,
            offset: 0,
            len: 10 * B,
        };
        // Block 1 is not on disk: writing it whole needs no read; it extends the file.
        let grow = Op::Write {
            file: 0,
            offset: B,
            len: B,
        };
        let (cfg, w) = setup(vec![vec![grow, read]], 0);
        let mut procs = Processes::new(&cfg, &w);
        let mut storage = Storage::new(&cfg, &w);
        play(&mut procs, &mut storage);
        assert_eq!(storage.file_bytes(0), 2 * B);
        // The write of block 1, then reads of blocks 0 and 1 and no further.
        assert_eq!((storage.reads, storage.writes), (2, 1));
        assert_eq!(procs.direct_misses, 3);
    }

    #[test]
    fn computes_take_their_delays_and_shared_records_are_dealt_out_once() {
        let shared = Op::SharedRecords {
            counter: 0,
            file: 0,
            record_bytes: B,
            total_bytes: 3 * B,
            write: true,
            compute: true,
        };
        let (cfg, w) = setup(vec![vec![Op::Compute(5), shared], vec![shared]], 1);
        let mut procs = Processes::new(&cfg, &w);
        let mut storage = Storage::new(&cfg, &w);
        let seen = play(&mut procs, &mut storage);
        // Three records in all, each written once, whoever took it.
        assert_eq!((storage.writes, procs.counters[0]), (3, 3));
        let t = VTime::from_ns;
        assert_eq!(
            seen[..3],
            [
                (t(0), Event::Process(0)),
                (t(0), Event::Process(1)),
                (t(5), Event::Process(0)),
            ]
        );
        assert_eq!(procs.live(), 0);
    }
}
