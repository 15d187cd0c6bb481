//! The simulator proper: processes running scripts against a buffer cache over disks.
//!
//! One [`Engine::run`] loop pops events in (time, sequence) order and handles each with
//! one `match`. A process runs its script until it must wait (for a buffer, for a disk, for
//! its compute delay); the cache and the disks never call back into processes except by
//! scheduling an event, so there is no re-entrancy to reason about.
//!
//! # The buffer cache model
//!
//! * A block's buffer is *busy* while a disk read or write of it is in flight. A process
//!   that needs the data of a buffer being read waits for the read; a process that wants to
//!   write into a buffer being written waits for the write (the classic `B_BUSY` rule —
//!   which is what makes WriteThru's rewrite mistakes cost time). Reads of a buffer being
//!   written proceed.
//! * A write of part of a block that exists on disk and is not cached reads the block
//!   first; a write that covers the whole block, or a block that was never on disk, does
//!   not.
//! * Each process has a *held* buffer: the block it touched last. A buffer no process holds
//!   is *replaceable*, which is what triggers WriteFree. (Toss-immediately keeps the same
//!   notion inside the policy.)
//! * Replacement asks the policy crate's [`Policy`] for victims among buffers that are not
//!   busy; the [`Cleaner`] decides what happens when they are dirty.
//! * Hits and misses are counted once per block access (a process that waits and retries
//!   is not counted twice), and the policy sees each block access exactly once.

use hashbrown::HashSet;
use policy::keymap::FixedHashMap;
use policy::{Access, AnyPolicy, BuildContext, FrameId, Policy, PolicySpec, NEVER};
use serde::Serialize;

use super::config::{s_to_ns, us_to_ns, Cleaner, Layout, SystemConfig, WritePolicy};
use super::disk::Disk;
use super::event::{Event, EventQueue};
use super::ops::{FileId, Op, Workload};
use super::ordering::{Checker, Epochs, Graph};
use super::time::{Nanos, VTime};

mod ordered;

const NONE: u32 = u32::MAX;
const NO_KEY: u64 = u64::MAX;
/// Disk-request tokens with this bit name a process doing uncached I/O, not a buffer.
const DIRECT: u32 = 1 << 31;
/// The stream id read-ahead uses with the policy, so that prefetched blocks are nobody's
/// most recently used block.
const PREFETCH_STREAM: u32 = u32::MAX - 1;

/// Blocks a file may have: a block's key keeps 32 bits for its number ([`block_key`]).
const MAX_FILE_BLOCKS: u64 = 1 << 32;

fn block_key(file: FileId, block: u64) -> u64 {
    (u64::from(file) << 32) | block
}

fn key_file(key: u64) -> FileId {
    (key >> 32) as FileId
}

fn key_block(key: u64) -> u64 {
    key & 0xffff_ffff
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Io {
    Idle,
    Reading,
    Writing,
}

#[derive(Clone, Copy, Debug)]
struct Buffer {
    key: u64,
    io: Io,
    dirty: bool,
    /// Bytes written since the buffer was last clean (WriteFull's "full" test).
    filled: u64,
    dirty_since: VTime,
    holders: u32,
    in_policy: bool,
    in_pool: bool,
    pool_gen: u32,
    /// The block's file was deleted while I/O was in flight: free the buffer afterwards.
    doomed: bool,
    /// Daemon cleaning: enter the free pool when the write completes.
    to_pool: bool,
    wait_head: u32,
    wait_tail: u32,
    /// Write ordering: the barrier epoch the dirty data belongs to, and its graph node.
    epoch: u64,
    node: u32,
    /// An old version kept for ordering (not in the cache's map or capacity): written
    /// once, then released.
    dup: bool,
    /// Order in which writes were started (to wait on the latest).
    write_seq: u64,
}

impl Buffer {
    const EMPTY: Buffer = Buffer {
        key: NO_KEY,
        io: Io::Idle,
        dirty: false,
        filled: 0,
        dirty_since: VTime::ZERO,
        holders: 0,
        in_policy: false,
        in_pool: false,
        pool_gen: 0,
        doomed: false,
        to_pool: false,
        wait_head: NONE,
        wait_tail: NONE,
        epoch: 0,
        node: NONE,
        dup: false,
        write_seq: 0,
    };
}

#[derive(Clone, Copy, Debug)]
struct Transfer {
    file: FileId,
    pos: u64,
    end: u64,
    write: bool,
    blocks: u64,
    /// Compute for the next delay once done (shared-record loops).
    then_compute: bool,
    /// The checker's number for this logical write.
    logical: u32,
    /// Graph node of a `graphwrite` (NONE for a plain write).
    node: u32,
}

#[derive(Clone, Debug)]
struct Proc {
    pc: usize,
    transfer: Option<Transfer>,
    delay_next: usize,
    /// (buffer, key) of the block this process touched last.
    held: (u32, u64),
    next_waiter: u32,
    /// Hit/miss of the current block already counted and shown to the policy.
    counted: bool,
    /// Uncached I/O phase: 0 idle, 1 reading, 2 read done, 3 writing, 4 write done.
    direct_phase: u8,
    /// The block this process would read next if it reads sequentially.
    sequential_next: u64,
    /// Logical writes recorded before the current `fsync` began.
    sync_mark: Option<u32>,
    done: bool,
}

#[derive(Clone, Copy, Debug)]
struct FileState {
    size: u64,
    initial_blocks: u64,
    base: u64,
    disk: u16,
}

/// Per-disk results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiskReport {
    /// Reads served.
    pub reads: u64,
    /// Writes served.
    pub writes: u64,
    /// Fraction of the run the disk was busy.
    pub utilization: f64,
}

/// What a run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// When the last process finished and (with `final_sync`) the disks went idle.
    pub time_s: f64,
    /// When the last process finished its script.
    pub processes_done_s: f64,
    /// Events handled.
    pub events: u64,
    /// Block accesses found in the cache.
    pub hits: u64,
    /// Block accesses not found in the cache (every access when the cache is off).
    pub misses: u64,
    /// Disk reads, demand and read-ahead.
    pub disk_reads: u64,
    /// Disk writes.
    pub disk_writes: u64,
    /// Disk writes of a block that had already been written to disk during the run.
    pub rewrite_mistakes: u64,
    /// Disk reads started by read-ahead.
    pub readahead_reads: u64,
    /// Disk writes started by the delayed-write flusher.
    pub flusher_writes: u64,
    /// Disk writes started to make room (scan, sync or daemon cleaning).
    pub cleaner_writes: u64,
    /// Dirty blocks dropped because their file was deleted or truncated.
    pub dirty_discarded: u64,
    /// Buffers copied to keep an old version in its place in the write order.
    pub duplicates: u64,
    /// Ordering constraints broken by what reached the disk (must be 0).
    pub violations: u64,
    /// The first broken constraint, described.
    pub first_violation: Option<String>,
    /// Per-disk counts and utilization.
    pub disks: Vec<DiskReport>,
}

/// A run that cannot start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The system configuration is invalid.
    #[error(transparent)]
    Config(#[from] super::config::ConfigProblem),
    /// The workload refers to something that does not exist.
    #[error("workload: {0}")]
    Workload(String),
    /// Processes wait for buffers that nothing will free (too few buffers for the
    /// processes, each holding its current block).
    #[error("at {time_s:.3} s, {processes} processes wait for buffers that nothing will free; give the cache more buffers than processes")]
    Stuck {
        /// Virtual time when the last event ran.
        time_s: f64,
        /// Processes still waiting.
        processes: usize,
    },
    /// An event fell due at or past the end of the clock (2^64 ns), where adding time would
    /// wrap into the past.
    #[error("at {time_s:.3} s, an event would fall due 2^64 ns or more after the start, past the end of the simulator's clock (about 584 years); shorten the compute or service times")]
    TimeOverflow {
        /// Virtual time when the last event ran.
        time_s: f64,
    },
}

/// One simulation run: build with [`Engine::new`], then [`Engine::run`].
pub struct Engine<'w> {
    cfg: SystemConfig,
    workload: &'w Workload,
    now: VTime,
    queue: EventQueue,
    procs: Vec<Proc>,
    live: usize,
    files: Vec<FileState>,
    counters: Vec<u64>,
    // The cache.
    block_bytes: u64,
    bufs: Vec<Buffer>,
    map: FixedHashMap<u32>,
    policy: Option<AnyPolicy>,
    free: Vec<u32>,
    pool: std::collections::VecDeque<(u32, u32)>,
    pool_count: u32,
    cleaning: u32,
    pool_low: u32,
    pool_high: u32,
    buffer_wait_head: u32,
    buffer_wait_tail: u32,
    /// Buffers with a disk read or write in flight.
    buffers_busy: u32,
    /// Reused by the scan cleaner's walks.
    victims_scratch: Vec<FrameId>,
    access_clock: u64,
    // Disks and what reached them.
    disks: Vec<Disk>,
    on_disk: HashSet<u64, std::hash::BuildHasherDefault<policy::keymap::MixHasher>>,
    syscall_ns: Nanos,
    block_ns: Nanos,
    flush_interval_ns: Nanos,
    flush_age_ns: Nanos,
    processes_done: VTime,
    /// Time of the last process step or disk completion (a flusher wake-up with nothing
    /// left to do does not lengthen the run).
    end: VTime,
    stats: Report,
    /// Cache buffers handed out so far (indices `0..issued`; duplicates live above
    /// `buffers`).
    issued: u32,
    // Write ordering (see `ordered.rs`); idle unless the workload syncs, uses barriers or
    // graph writes.
    ordering: bool,
    epochs: Epochs,
    graph: Graph,
    checker: Checker,
    /// Logical writes carried by each buffer's dirty data, and by its write in flight.
    carried: Vec<Vec<u32>>,
    in_flight: Vec<Vec<u32>>,
    /// Buffers holding each file's blocks (may hold stale entries; checked on use).
    file_frames: Vec<Vec<u32>>,
    /// Released duplicate buffers, for reuse.
    dup_free: Vec<u32>,
    /// Duplicates waiting for their dependencies before they can be written.
    deferred: Vec<u32>,
    write_seq: u64,
    /// Final sync in progress: each time the disks go idle, write what ordering allows.
    final_flush: bool,
}

impl<'w> Engine<'w> {
    /// Prepare a run of `workload` on the system `cfg`; `seed` feeds the policy's random
    /// numbers (the workload carries its own).
    pub fn new(cfg: &SystemConfig, workload: &'w Workload, seed: u64) -> Result<Self, RunError> {
        cfg.validate()?;
        check_workload(workload, u64::from(cfg.cache.block_bytes))?;
        let c = &cfg.cache;
        let buffers = c.buffers as usize;
        let policy = if buffers > 0 {
            let spec = PolicySpec::parse(&c.policy).map_err(|e| super::config::ConfigProblem {
                key: "cache.policy".into(),
                message: e.to_string(),
            })?;
            Some(
                spec.build(&BuildContext::new(u64::from(c.buffers), seed))
                    .map_err(|e| super::config::ConfigProblem {
                        key: "cache.policy".into(),
                        message: e.to_string(),
                    })?,
            )
        } else {
            None
        };
        let block_bytes = u64::from(c.block_bytes);
        let disk_count = u64::from(cfg.disks.count);
        let mut files = Vec::with_capacity(workload.files.len());
        let mut next_base = vec![0u64; cfg.disks.count as usize];
        let mut global_base = 0;
        for (i, spec) in workload.files.iter().enumerate() {
            let blocks = spec.max_bytes.max(spec.initial_bytes).div_ceil(block_bytes);
            let (base, disk) = match cfg.disks.layout {
                Layout::Interleaved => {
                    let b = global_base;
                    global_base += blocks;
                    (b, 0)
                }
                Layout::PerFile => {
                    let d = (i as u64 % disk_count) as usize;
                    let b = next_base[d];
                    next_base[d] += blocks;
                    (b, d as u16)
                }
            };
            files.push(FileState {
                size: spec.initial_bytes,
                initial_blocks: spec.initial_bytes.div_ceil(block_bytes),
                base,
                disk,
            });
        }
        let (pool_low, pool_high) = cfg.pool_watermarks();
        let procs = workload
            .scripts
            .iter()
            .map(|_| Proc {
                pc: 0,
                transfer: None,
                delay_next: 0,
                held: (NONE, NO_KEY),
                next_waiter: NONE,
                counted: false,
                direct_phase: 0,
                sequential_next: NO_KEY,
                sync_mark: None,
                done: false,
            })
            .collect();
        Ok(Engine {
            cfg: cfg.clone(),
            workload,
            now: VTime::ZERO,
            queue: EventQueue::new(),
            procs,
            live: workload.scripts.len(),
            files,
            counters: vec![0; workload.counters as usize],
            block_bytes,
            bufs: Vec::with_capacity(buffers),
            map: FixedHashMap::with_capacity_and_hasher(buffers, Default::default()),
            policy,
            free: Vec::new(),
            pool: std::collections::VecDeque::new(),
            pool_count: 0,
            cleaning: 0,
            pool_low,
            pool_high,
            buffer_wait_head: NONE,
            buffer_wait_tail: NONE,
            buffers_busy: 0,
            victims_scratch: Vec::new(),
            access_clock: 0,
            disks: (0..cfg.disks.count)
                .map(|_| Disk::new(cfg.disks.scheduler, cfg.disks.service))
                .collect(),
            on_disk: HashSet::default(),
            syscall_ns: us_to_ns(c.syscall_us),
            block_ns: us_to_ns(c.block_us),
            flush_interval_ns: s_to_ns(c.flush_interval_s),
            flush_age_ns: s_to_ns(c.flush_age_s),
            processes_done: VTime::ZERO,
            end: VTime::ZERO,
            stats: Report {
                time_s: 0.0,
                processes_done_s: 0.0,
                events: 0,
                hits: 0,
                misses: 0,
                disk_reads: 0,
                disk_writes: 0,
                rewrite_mistakes: 0,
                readahead_reads: 0,
                flusher_writes: 0,
                cleaner_writes: 0,
                dirty_discarded: 0,
                duplicates: 0,
                violations: 0,
                first_violation: None,
                disks: Vec::new(),
            },
            issued: 0,
            ordering: workload.uses_ordering(),
            epochs: Epochs::default(),
            graph: Graph::default(),
            checker: Checker::new(workload.files.len()),
            carried: Vec::new(),
            in_flight: Vec::new(),
            file_frames: vec![Vec::new(); workload.files.len()],
            dup_free: Vec::new(),
            deferred: Vec::new(),
            write_seq: 0,
            final_flush: false,
        })
    }

    /// Run to completion and report. Fails only if processes are left waiting with nothing
    /// in flight that could wake them (every buffer held by a process, say).
    pub fn run(mut self) -> Result<Report, RunError> {
        for pid in 0..self.procs.len() as u32 {
            self.queue.push(VTime::ZERO, Event::Process(pid));
        }
        if self.live == 0 {
            self.all_processes_done();
        }
        if self.policy.is_some() && self.cfg.cache.write_policy == WritePolicy::Delayed {
            self.queue
                .push(VTime::ZERO.later(self.flush_interval_ns), Event::Flusher);
        }
        while let Some((t, event)) = self.queue.pop() {
            debug_assert!(t >= self.now, "time went backwards");
            if t.is_end() {
                // A flusher wake-up there could start nothing that ends in time: drop it
                // (the run ends, or reports the processes stuck). Anything else would run
                // at a time the clock cannot hold.
                if event == Event::Flusher {
                    continue;
                }
                return Err(RunError::TimeOverflow {
                    time_s: self.now.as_secs_f64(),
                });
            }
            self.now = t;
            self.stats.events += 1;
            match event {
                Event::Process(pid) => {
                    self.end = t;
                    self.run_process(pid)
                }
                Event::DiskDone(d) => {
                    self.end = t;
                    self.disk_done(d)
                }
                Event::Flusher => self.flush(),
            }
        }
        if self.live > 0 {
            return Err(RunError::Stuck {
                time_s: self.now.as_secs_f64(),
                processes: self.live,
            });
        }
        Ok(self.finish())
    }

    fn finish(mut self) -> Report {
        let end = self.end.max(self.processes_done);
        self.stats.time_s = end.as_secs_f64();
        self.stats.processes_done_s = self.processes_done.as_secs_f64();
        self.stats.violations = self.checker.violations();
        self.stats.first_violation = self.checker.first_violation().map(str::to_string);
        self.stats.disks = self
            .disks
            .iter()
            .map(|d| DiskReport {
                reads: d.reads,
                writes: d.writes,
                utilization: if end == VTime::ZERO {
                    0.0
                } else {
                    d.busy_ns() as f64 / end.as_ns() as f64
                },
            })
            .collect();
        self.stats
    }

    // ----- processes -------------------------------------------------------------------

    fn run_process(&mut self, pid: u32) {
        let p = pid as usize;
        if self.procs[p].done {
            return;
        }
        loop {
            if self.procs[p].transfer.is_some() {
                if !self.continue_transfer(pid) {
                    return;
                }
                let t = self.procs[p].transfer.take().expect("transfer present");
                // Saturating: a cost past the clock's end makes the event due at
                // the end of time, which stops the run.
                let mut cost = self.syscall_ns;
                if self.policy.is_some() {
                    cost = cost.saturating_add(t.blocks.saturating_mul(self.block_ns));
                }
                if t.then_compute {
                    cost = cost.saturating_add(self.next_delay(p));
                }
                if cost > 0 {
                    self.queue.push(self.now.later(cost), Event::Process(pid));
                    return;
                }
                continue;
            }
            let script = &self.workload.scripts[p];
            let Some(&op) = script.ops.get(self.procs[p].pc) else {
                self.process_done(pid);
                return;
            };
            let mut delay = self.syscall_ns;
            match op {
                Op::Open(_) | Op::Close(_) => {}
                Op::Read { file, offset, len } => {
                    // A read stops at the end of the file (check_workload bounds the rest).
                    let end = offset
                        .saturating_add(len)
                        .min(self.files[file as usize].size);
                    self.begin(p, file, offset, end.max(offset), false, false);
                    continue;
                }
                Op::Write { file, offset, len } => {
                    self.begin(p, file, offset, offset + len, true, false);
                    self.begin_write(p, None);
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
                    self.begin(p, file, offset, offset + len, true, false);
                    let deps = &self.workload.deps[deps_start as usize..][..deps_len as usize];
                    self.begin_write(p, Some((id, deps)));
                    continue;
                }
                Op::Barrier => self.epochs.barrier(),
                Op::Delete(file) => self.drop_blocks(file, 0),
                Op::Truncate { file, len } => self.drop_blocks(file, len),
                Op::Compute(ns) => delay = ns,
                Op::ComputeNext => delay = self.next_delay(p),
                Op::Sync(file) => {
                    if !self.sync(pid, file) {
                        return;
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
                        // The loop op stays current until the counter runs out.
                        self.begin(p, file, start, end, write, compute);
                        if write {
                            self.begin_write(p, None);
                        }
                        self.procs[p].pc -= 1;
                        continue;
                    }
                    delay = 0;
                }
            }
            self.procs[p].pc += 1;
            if delay > 0 {
                self.queue.push(self.now.later(delay), Event::Process(pid));
                return;
            }
        }
    }

    fn begin(
        &mut self,
        p: usize,
        file: FileId,
        start: u64,
        end: u64,
        write: bool,
        then_compute: bool,
    ) {
        let proc = &mut self.procs[p];
        proc.pc += 1;
        proc.counted = false;
        proc.transfer = Some(Transfer {
            file,
            pos: start,
            end,
            write,
            blocks: 0,
            then_compute,
            logical: NONE,
            node: NONE,
        });
    }

    fn next_delay(&mut self, p: usize) -> Nanos {
        let delays = &self.workload.scripts[p].delays;
        let i = self.procs[p].delay_next;
        self.procs[p].delay_next += 1;
        delays.get(i).copied().unwrap_or(0)
    }

    fn process_done(&mut self, pid: u32) {
        let p = pid as usize;
        self.procs[p].done = true;
        self.release_held(p);
        self.live -= 1;
        if self.live == 0 {
            self.all_processes_done();
        }
    }

    fn all_processes_done(&mut self) {
        self.processes_done = self.now;
        if self.cfg.final_sync && self.policy.is_some() {
            self.flush_everything();
        }
    }

    /// Move the current transfer on; false if the process now waits.
    fn continue_transfer(&mut self, pid: u32) -> bool {
        let p = pid as usize;
        loop {
            let t = self.procs[p].transfer.expect("transfer in progress");
            if t.pos >= t.end {
                return true;
            }
            let block = t.pos / self.block_bytes;
            let offset = t.pos % self.block_bytes;
            let n = (self.block_bytes - offset).min(t.end - t.pos);
            let ready = if self.policy.is_some() {
                self.cached_block(pid, t.file, block, n, t.write)
            } else {
                self.direct_block(pid, t.file, block, n, t.write)
            };
            if !ready {
                return false;
            }
            let t = self.procs[p]
                .transfer
                .as_mut()
                .expect("transfer in progress");
            t.pos += n;
            t.blocks += 1;
            if t.write {
                let f = &mut self.files[t.file as usize];
                f.size = f.size.max(t.pos);
            }
            self.procs[p].counted = false;
        }
    }

    fn block_on_disk(&self, file: FileId, block: u64) -> bool {
        block < self.files[file as usize].initial_blocks
            || self.on_disk.contains(&block_key(file, block))
    }

    /// Uncached I/O of one block; true when done.
    fn direct_block(&mut self, pid: u32, file: FileId, block: u64, n: u64, write: bool) -> bool {
        let p = pid as usize;
        if !self.procs[p].counted {
            self.procs[p].counted = true;
            self.stats.misses += 1;
        }
        let token = DIRECT | pid;
        match self.procs[p].direct_phase {
            0 => {
                let needs_read = if write {
                    n < self.block_bytes && self.block_on_disk(file, block)
                } else {
                    self.block_on_disk(file, block)
                };
                if needs_read {
                    self.procs[p].direct_phase = 1;
                    self.submit(file, block, false, token);
                    false
                } else if write {
                    self.procs[p].direct_phase = 3;
                    self.submit(file, block, true, token);
                    false
                } else {
                    true
                }
            }
            2 if write => {
                self.procs[p].direct_phase = 3;
                self.submit(file, block, true, token);
                false
            }
            2 | 4 => {
                self.procs[p].direct_phase = 0;
                true
            }
            _ => false,
        }
    }

    /// Cached access to one block; true when the data was copied.
    fn cached_block(&mut self, pid: u32, file: FileId, block: u64, n: u64, write: bool) -> bool {
        let p = pid as usize;
        let key = block_key(file, block);
        let first = !self.procs[p].counted;
        self.procs[p].counted = true;
        self.access_clock += 1;
        let access = Access {
            key,
            size: 1,
            time: self.access_clock,
            next_access: NEVER,
            stream: pid,
        };
        if let Some(&f) = self.map.get(&key) {
            if first {
                self.stats.hits += 1;
            }
            let b = self.bufs[f as usize];
            if b.in_pool {
                self.take_from_pool(f);
                self.policy_mut().on_insert(FrameId(f), &access);
                self.bufs[f as usize].in_policy = true;
            } else if first && b.in_policy {
                self.policy_mut().on_hit(FrameId(f), &access);
            }
            if first && !write {
                self.read_ahead(p, file, block);
            }
            if b.io == Io::Reading || (write && b.io == Io::Writing) {
                self.wait_on_buffer(pid, f);
                return false;
            }
            self.apply(p, f, n, write);
            return true;
        }
        if first {
            self.stats.misses += 1;
        }
        let Some(f) = self.allocate(Some(pid), &access) else {
            return false;
        };
        self.install(f, key, &access);
        if !write {
            self.read_ahead(p, file, block);
        }
        let needs_read = self.block_on_disk(file, block) && !(write && n == self.block_bytes);
        if needs_read {
            self.start_read(f);
            self.wait_on_buffer(pid, f);
            return false;
        }
        self.apply(p, f, n, write);
        true
    }

    fn policy_mut(&mut self) -> &mut AnyPolicy {
        self.policy.as_mut().expect("cache enabled")
    }

    fn install(&mut self, f: u32, key: u64, access: &Access) {
        self.map.insert(key, f);
        let b = &mut self.bufs[f as usize];
        b.key = key;
        b.dirty = false;
        b.filled = 0;
        b.holders = 0;
        b.doomed = false;
        b.in_policy = true;
        self.policy_mut().on_insert(FrameId(f), access);
        if self.ordering {
            self.file_frames[key_file(key) as usize].push(f);
        }
    }

    /// Copy into or out of a valid, non-busy buffer and apply the write policy.
    fn apply(&mut self, p: usize, f: u32, n: u64, write: bool) {
        if write && self.ordering {
            let t = self.procs[p].transfer.expect("a write is a transfer");
            self.order_write(f, t.logical, t.node);
        }
        if write {
            let now = self.now;
            let b = &mut self.bufs[f as usize];
            if !b.dirty {
                b.dirty = true;
                b.dirty_since = now;
            }
            b.filled += n;
            let full = b.filled >= self.block_bytes;
            let write_now = match self.cfg.cache.write_policy {
                WritePolicy::WriteThru => true,
                WritePolicy::WriteFull => full,
                _ => false,
            };
            if write_now && self.may_write(f) {
                self.start_write(f);
            }
        }
        self.hold(p, f);
    }

    fn hold(&mut self, p: usize, f: u32) {
        let key = self.bufs[f as usize].key;
        if self.procs[p].held == (f, key) {
            return;
        }
        self.release_held(p);
        self.procs[p].held = (f, key);
        self.bufs[f as usize].holders += 1;
    }

    fn release_held(&mut self, p: usize) {
        let (old, old_key) = self.procs[p].held;
        self.procs[p].held = (NONE, NO_KEY);
        if old == NONE || self.bufs[old as usize].key != old_key {
            return;
        }
        let b = &mut self.bufs[old as usize];
        b.holders = b.holders.saturating_sub(1);
        if b.holders == 0
            && b.dirty
            && b.io == Io::Idle
            && self.cfg.cache.write_policy == WritePolicy::WriteFree
            && self.may_write(old)
        {
            self.start_write(old);
        }
    }

    fn read_ahead(&mut self, p: usize, file: FileId, block: u64) {
        let depth = u64::from(self.cfg.cache.read_ahead);
        let sequential = self.procs[p].sequential_next == block_key(file, block);
        self.procs[p].sequential_next = block_key(file, block + 1);
        if depth == 0 || !sequential {
            return;
        }
        let file_blocks = self.files[file as usize].size.div_ceil(self.block_bytes);
        for b in block + 1..=(block + depth).min(file_blocks.saturating_sub(1)) {
            let key = block_key(file, b);
            if self.map.contains_key(&key) || !self.block_on_disk(file, b) {
                continue;
            }
            self.access_clock += 1;
            let access = Access {
                key,
                size: 1,
                time: self.access_clock,
                next_access: NEVER,
                stream: PREFETCH_STREAM,
            };
            let Some(f) = self.allocate(None, &access) else {
                break;
            };
            self.install(f, key, &access);
            self.stats.readahead_reads += 1;
            self.start_read(f);
        }
    }

    // ----- buffers ---------------------------------------------------------------------

    /// A buffer for a new block, or `None` (the process, if any, now waits for one).
    fn allocate(&mut self, waiter: Option<u32>, incoming: &Access) -> Option<u32> {
        if let Some(f) = self.free.pop() {
            return Some(f);
        }
        if self.issued < self.cfg.cache.buffers {
            let f = self.issued;
            self.issued += 1;
            if self.bufs.len() <= f as usize {
                self.bufs.push(Buffer::EMPTY);
            }
            return Some(f);
        }
        let got = match self.cfg.cache.cleaner {
            Cleaner::Daemon => self.allocate_from_pool(),
            Cleaner::Scan => self.allocate_scanning(incoming, usize::MAX),
            Cleaner::Sync => self.allocate_scanning(incoming, 1),
        };
        let got = match got {
            None if self.ordering && self.buffers_busy == 0 => {
                // Every victim is dirty behind an ordering constraint: write what may be
                // written (the safe epoch, or a graph leaf) and wait for it.
                self.force_progress();
                None
            }
            other => other,
        };
        match got {
            Some(f) => {
                self.unmap(f);
                Some(f)
            }
            None => {
                if let Some(pid) = waiter {
                    self.wait_for_any_buffer(pid);
                }
                None
            }
        }
    }

    /// Walk the victims in replacement order, starting writes of dirty ones, and evict the
    /// first clean one. `max_writes` bounds how many dirty victims are written per call
    /// (1 for the sync cleaner). A dirty buffer that some process holds (the block it is
    /// writing) is passed over, as a kernel passes over a buffer in use, unless nothing else
    /// is left and no I/O in flight will free a buffer: cleaning it early would write a
    /// half-filled block.
    fn allocate_scanning(&mut self, incoming: &Access, max_writes: usize) -> Option<u32> {
        match self.scan_pass(incoming, max_writes, false) {
            (Some(f), _) => Some(f),
            // Only when no I/O in flight will free a buffer: held buffers are next.
            (None, 0) if self.buffers_busy == 0 => self.scan_pass(incoming, max_writes, true).0,
            (None, _) => None,
        }
    }

    /// One walk; returns the buffer taken, if any, and how many candidates it saw.
    fn scan_pass(
        &mut self,
        incoming: &Access,
        max_writes: usize,
        allow_held: bool,
    ) -> (Option<u32>, usize) {
        let mut written = 0;
        // Usually the first victim is clean: start small, grow geometrically.
        let mut want = 2usize;
        let mut victims = std::mem::take(&mut self.victims_scratch);
        let result = 'walk: loop {
            victims.clear();
            {
                let bufs = &self.bufs;
                let (epochs, graph) = (&self.epochs, &self.graph);
                let strict = self.ordering && !self.cfg.cache.ignore_ordering;
                let ok = |f: FrameId| {
                    let b = &bufs[f.index()];
                    candidate(b, allow_held) && (!strict || ordered::writable(b, epochs, graph))
                };
                self.policy
                    .as_ref()
                    .expect("cache enabled")
                    .victims(want, &ok, &mut victims);
            }
            let seen = victims.len() + written;
            for &v in &victims {
                if !self.bufs[v.index()].dirty {
                    let got = self.evict_where(incoming, |b, f| f == v && candidate(b, allow_held));
                    debug_assert_eq!(got, Some(v));
                    break 'walk (got.map(|f| f.0), seen);
                }
                if written == max_writes {
                    break 'walk (None, seen);
                }
                self.start_write(v.0);
                self.stats.cleaner_writes += 1;
                written += 1;
            }
            if victims.len() < want {
                break 'walk (None, seen);
            }
            want = want.saturating_mul(8);
        };
        self.victims_scratch = victims;
        result
    }

    /// Ask the policy to evict a frame whose buffer satisfies `allow`.
    fn evict_where(
        &mut self,
        incoming: &Access,
        allow: impl Fn(&Buffer, FrameId) -> bool,
    ) -> Option<FrameId> {
        let bufs = &self.bufs;
        let evictable = |f: FrameId| allow(&bufs[f.index()], f);
        let got = self
            .policy
            .as_mut()
            .expect("cache enabled")
            .evict(incoming, &evictable);
        if let Some(f) = got {
            self.bufs[f.index()].in_policy = false;
        }
        got
    }

    fn allocate_from_pool(&mut self) -> Option<u32> {
        if self.pool_count == 0 {
            self.run_daemon();
        }
        let f = self.pop_pool()?;
        if self.pool_count + self.cleaning < self.pool_low {
            self.run_daemon();
        }
        Some(f)
    }

    fn pop_pool(&mut self) -> Option<u32> {
        while let Some((f, gen)) = self.pool.pop_front() {
            let b = &mut self.bufs[f as usize];
            if b.in_pool && b.pool_gen == gen {
                b.in_pool = false;
                self.pool_count -= 1;
                return Some(f);
            }
        }
        None
    }

    fn push_pool(&mut self, f: u32) {
        let b = &mut self.bufs[f as usize];
        debug_assert!(!b.dirty && b.io == Io::Idle);
        b.in_pool = true;
        b.pool_gen = b.pool_gen.wrapping_add(1);
        self.pool.push_back((f, b.pool_gen));
        self.pool_count += 1;
        self.wake_buffer_waiters();
    }

    fn take_from_pool(&mut self, f: u32) {
        let b = &mut self.bufs[f as usize];
        b.in_pool = false;
        self.pool_count -= 1;
    }

    /// XMF's clock daemon: evict until the free pool (plus buffers being cleaned for it)
    /// reaches the high watermark.
    fn run_daemon(&mut self) {
        let phantom = Access::phantom();
        while self.pool_count + self.cleaning < self.pool_high {
            let got = self
                .evict_where(&phantom, |b, _| {
                    b.io == Io::Idle && (!b.dirty || b.holders == 0)
                })
                .or_else(|| {
                    if self.buffers_busy == 0 {
                        self.evict_where(&phantom, |b, _| b.io == Io::Idle)
                    } else {
                        None
                    }
                });
            let Some(f) = got else { break };
            if self.bufs[f.index()].dirty {
                self.bufs[f.index()].to_pool = true;
                self.cleaning += 1;
                self.start_write(f.0);
                self.stats.cleaner_writes += 1;
            } else {
                self.push_pool(f.0);
            }
        }
    }

    /// Forget the block a reused buffer held.
    fn unmap(&mut self, f: u32) {
        let b = &mut self.bufs[f as usize];
        if b.key != NO_KEY {
            self.map.remove(&b.key);
        }
        *b = Buffer {
            pool_gen: b.pool_gen,
            wait_head: b.wait_head,
            wait_tail: b.wait_tail,
            ..Buffer::EMPTY
        };
    }

    /// Drop a file's blocks from `from_bytes` on, cached and on disk (a delete drops
    /// everything).
    fn drop_blocks(&mut self, file: FileId, from_bytes: u64) {
        let first = from_bytes.div_ceil(self.block_bytes);
        let fs = &mut self.files[file as usize];
        let old_blocks = fs.size.div_ceil(self.block_bytes).max(fs.initial_blocks);
        fs.size = fs.size.min(from_bytes);
        fs.initial_blocks = fs.initial_blocks.min(first);
        for b in first..old_blocks {
            self.on_disk.remove(&block_key(file, b));
        }
        for f in 0..self.bufs.len() as u32 {
            let b = self.bufs[f as usize];
            if b.key == NO_KEY || key_file(b.key) != file || key_block(b.key) < first {
                continue;
            }
            self.map.remove(&b.key);
            if b.dirty {
                self.stats.dirty_discarded += 1;
                if self.ordering {
                    self.forget_dirty(f);
                }
            }
            if b.in_policy {
                self.policy_mut().remove(FrameId(f));
            }
            if b.in_pool {
                self.take_from_pool(f);
            }
            let buf = &mut self.bufs[f as usize];
            buf.in_policy = false;
            buf.dirty = false;
            buf.key = NO_KEY;
            if b.io == Io::Idle {
                self.free.push(f);
                self.wake_buffer_waiters();
            } else {
                buf.doomed = true;
            }
        }
    }

    // ----- disk I/O --------------------------------------------------------------------

    fn submit(&mut self, file: FileId, block: u64, write: bool, token: u32) {
        let fs = self.files[file as usize];
        let n = u64::from(self.cfg.disks.count);
        let (disk, pos) = match self.cfg.disks.layout {
            Layout::Interleaved => {
                let g = fs.base + block;
                ((g % n) as usize, g / n)
            }
            Layout::PerFile => (fs.disk as usize, fs.base + block),
        };
        let key = block_key(file, block);
        if write {
            self.stats.disk_writes += 1;
            if !self.on_disk.insert(key) {
                self.stats.rewrite_mistakes += 1;
            }
        } else {
            self.stats.disk_reads += 1;
        }
        if let Some(done) = self.disks[disk].submit(self.now, pos, write, token, key) {
            self.queue.push(done, Event::DiskDone(disk as u16));
        }
    }

    fn start_read(&mut self, f: u32) {
        let key = self.bufs[f as usize].key;
        self.bufs[f as usize].io = Io::Reading;
        self.buffers_busy += 1;
        self.submit(key_file(key), key_block(key), false, f);
    }

    fn start_write(&mut self, f: u32) {
        let b = &mut self.bufs[f as usize];
        assert!(
            b.dirty && b.io == Io::Idle,
            "only an idle dirty buffer is written"
        );
        b.io = Io::Writing;
        self.buffers_busy += 1;
        b.dirty = false;
        b.filled = 0;
        let key = b.key;
        if self.ordering {
            self.on_write_start(f);
        }
        self.submit(key_file(key), key_block(key), true, f);
    }

    fn disk_done(&mut self, d: u16) {
        let (req, next) = self.disks[d as usize].complete(self.now);
        if let Some(t) = next {
            self.queue.push(t, Event::DiskDone(d));
        }
        if req.token & DIRECT != 0 {
            let pid = req.token & !DIRECT;
            let proc = &mut self.procs[pid as usize];
            proc.direct_phase = if req.write { 4 } else { 2 };
            self.queue.push(self.now, Event::Process(pid));
            return;
        }
        let f = req.token;
        self.buffers_busy -= 1;
        self.bufs[f as usize].io = Io::Idle;
        if req.write && self.ordering {
            self.on_write_done(f);
        }
        if self.bufs[f as usize].dup {
            // A duplicate's one write is done: release it.
            let b = &mut self.bufs[f as usize];
            *b = Buffer {
                wait_head: b.wait_head,
                wait_tail: b.wait_tail,
                ..Buffer::EMPTY
            };
            self.dup_free.push(f);
            self.wake_buffer_waiters_of(f);
            self.wake_buffer_waiters();
            return;
        }
        let b = &mut self.bufs[f as usize];
        let doomed = b.doomed;
        let to_pool = b.to_pool;
        b.to_pool = false;
        if to_pool {
            self.cleaning -= 1;
        }
        self.wake_buffer_waiters_of(f);
        if doomed {
            self.bufs[f as usize].doomed = false;
            self.free.push(f);
            self.wake_buffer_waiters();
        } else if to_pool && !self.bufs[f as usize].dirty {
            self.push_pool(f);
        } else {
            self.wake_buffer_waiters();
        }
    }

    fn flush(&mut self) {
        if self.live == 0 {
            return;
        }
        for f in 0..self.bufs.len() as u32 {
            let b = &self.bufs[f as usize];
            if b.dirty
                && b.io == Io::Idle
                && self.now.since(b.dirty_since) >= self.flush_age_ns
                && self.may_write(f)
            {
                self.start_write(f);
                self.stats.flusher_writes += 1;
            }
        }
        self.queue
            .push(self.now.later(self.flush_interval_ns), Event::Flusher);
    }

    // ----- waiting ---------------------------------------------------------------------

    fn wait_on_buffer(&mut self, pid: u32, f: u32) {
        self.procs[pid as usize].next_waiter = NONE;
        let b = &mut self.bufs[f as usize];
        if b.wait_tail == NONE {
            b.wait_head = pid;
        } else {
            self.procs[b.wait_tail as usize].next_waiter = pid;
        }
        b.wait_tail = pid;
    }

    fn wait_for_any_buffer(&mut self, pid: u32) {
        self.procs[pid as usize].next_waiter = NONE;
        if self.buffer_wait_tail == NONE {
            self.buffer_wait_head = pid;
        } else {
            self.procs[self.buffer_wait_tail as usize].next_waiter = pid;
        }
        self.buffer_wait_tail = pid;
    }

    fn wake_buffer_waiters_of(&mut self, f: u32) {
        let b = &mut self.bufs[f as usize];
        let mut pid = b.wait_head;
        b.wait_head = NONE;
        b.wait_tail = NONE;
        while pid != NONE {
            let next = self.procs[pid as usize].next_waiter;
            self.queue.push(self.now, Event::Process(pid));
            pid = next;
        }
    }

    fn wake_buffer_waiters(&mut self) {
        let mut pid = self.buffer_wait_head;
        self.buffer_wait_head = NONE;
        self.buffer_wait_tail = NONE;
        while pid != NONE {
            let next = self.procs[pid as usize].next_waiter;
            self.queue.push(self.now, Event::Process(pid));
            pid = next;
        }
    }
}

/// Whether the scan may take or clean a buffer.
fn candidate(b: &Buffer, allow_held: bool) -> bool {
    b.io == Io::Idle && (allow_held || !b.dirty || b.holders == 0)
}

fn check_workload(w: &Workload, block_bytes: u64) -> Result<(), RunError> {
    let files = w.files.len();
    if files > u32::MAX as usize / 2 {
        return Err(RunError::Workload(format!(
            "{files} files; at most 2^31 are supported"
        )));
    }
    // Past MAX_FILE_BLOCKS, block keys would collide (and a run would take for ever).
    let too_big = |bytes: u64| bytes.div_ceil(block_bytes) > MAX_FILE_BLOCKS;
    for (f, spec) in w.files.iter().enumerate() {
        let bytes = spec.max_bytes.max(spec.initial_bytes);
        if too_big(bytes) {
            return Err(RunError::Workload(format!(
                "file {f}: {bytes} bytes; a file may have at most {MAX_FILE_BLOCKS} blocks of {block_bytes} bytes"
            )));
        }
    }
    if w.scripts.len() >= (DIRECT as usize) {
        return Err(RunError::Workload("too many processes".into()));
    }
    for (p, s) in w.scripts.iter().enumerate() {
        for (i, op) in s.ops.iter().enumerate() {
            // Bytes a transfer may reach: writes extend their file, and shared records are
            // transferred up to their total whatever the file's size. (A read stops at the
            // end of its file.)
            let reach = match *op {
                Op::Write { offset, len, .. } | Op::GraphWrite { offset, len, .. } => {
                    Some((offset, len))
                }
                Op::SharedRecords { total_bytes, .. } => Some((0, total_bytes)),
                _ => None,
            };
            if let Some((offset, len)) = reach {
                match offset.checked_add(len) {
                    Some(end) if !too_big(end) => {}
                    _ => {
                        return Err(RunError::Workload(format!(
                            "process {p}, op {i}: {len} bytes at {offset} reach past the {MAX_FILE_BLOCKS} blocks of {block_bytes} bytes a file may have"
                        )))
                    }
                }
            }
            let file = match *op {
                Op::Open(f) | Op::Close(f) | Op::Delete(f) | Op::Sync(Some(f)) => Some(f),
                Op::Read { file, .. } | Op::Write { file, .. } | Op::Truncate { file, .. } => {
                    Some(file)
                }
                Op::SharedRecords {
                    file,
                    counter,
                    record_bytes,
                    ..
                } => {
                    if counter >= w.counters {
                        return Err(RunError::Workload(format!(
                            "process {p}, op {i}: counter {counter} but the workload declares {}",
                            w.counters
                        )));
                    }
                    if record_bytes == 0 {
                        return Err(RunError::Workload(format!(
                            "process {p}, op {i}: record size 0"
                        )));
                    }
                    Some(file)
                }
                Op::GraphWrite {
                    file,
                    deps_start,
                    deps_len,
                    ..
                } => {
                    let end = deps_start as usize + deps_len as usize;
                    if end > w.deps.len() {
                        return Err(RunError::Workload(format!(
                            "process {p}, op {i}: dependencies {deps_start}..{end} but the workload lists {}",
                            w.deps.len()
                        )));
                    }
                    Some(file)
                }
                Op::Compute(_) | Op::ComputeNext | Op::Sync(None) | Op::Barrier => None,
            };
            if let Some(f) = file {
                if f as usize >= files {
                    return Err(RunError::Workload(format!(
                        "process {p}, op {i}: file {f} but the workload declares {files} files"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Run `workload` on `cfg` (convenience for [`Engine::new`] + [`Engine::run`]).
pub fn simulate(cfg: &SystemConfig, workload: &Workload, seed: u64) -> Result<Report, RunError> {
    Engine::new(cfg, workload, seed)?.run()
}
