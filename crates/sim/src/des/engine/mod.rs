//! The simulator proper: processes running scripts against a buffer cache over disks.
//!
//! [`Engine::run`] calls `step` until no event is left; each step pops the earliest
//! event (in (time, sequence) order) and hands it to the part it concerns. The parts, each
//! in its own (private) module and owning its own state:
//!
//! * `process` — the processes: scripts, transfers, uncached I/O, CPU costs;
//! * `cache` — the `BufferCache`: buffers, block map, replacement policy, write policy,
//!   read-ahead, the flusher's pass (the buffer rules are documented there);
//! * `cleaner` — finding a buffer for a new block: free list, scan, sync and daemon
//!   cleaners, the daemon's free pool;
//! * `ordered` — write ordering in the cache: epochs, graph nodes, duplicates, `fsync`,
//!   and the checker;
//! * `waiters` — processes waiting for a buffer's I/O or for any buffer;
//! * `storage` — the files' layout on the disks, what is on disk, the disks;
//! * `check` — workloads refused before a run starts.
//!
//! A run has a cache or not (the enum `Cache`: `Off` or `On`); the processes, the cache
//! and the disks never call back into one another except by scheduling an event, so there
//! is no re-entrancy to reason about. The cache reaches the clock, the queue and storage
//! only through its `Env` trait, which the engine implements for each event with a
//! `World` made of its own fields; the cache's unit tests implement it by hand.

use serde::Serialize;

use super::config::{s_to_ns, SystemConfig};
use super::event::{Event, EventQueue};
use super::ops::{FileId, Workload};
use super::time::{Nanos, VTime};

mod cache;
mod check;
mod cleaner;
mod ordered;
mod process;
mod storage;
mod waiters;

use cache::{BufferCache, CacheStats, Env, WriteTag};
use process::Processes;
use storage::{BlockKey, Requester, Storage};

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
    /// Missed block accesses the admission filter refused (served by uncached I/O; part
    /// of `misses`).
    pub admission_refused: u64,
    /// Disk reads started by the prefetcher.
    pub prefetch_reads: u64,
    /// Prefetched blocks that a later access found in the cache (counted once each).
    pub prefetch_used: u64,
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

/// Whether a run has a buffer cache: with none (`buffers = 0`) every block access goes
/// to disk, and partial writes read, modify and write the block.
#[derive(Debug)]
enum Cache {
    /// No cache.
    Off,
    /// The buffer cache.
    On(Box<BufferCache>),
}

impl Cache {
    /// A `write` or `graphwrite` of `file` starts: the ordering's tag for it.
    fn begin_write(&mut self, file: FileId, graph: Option<(u32, &[u32])>) -> WriteTag {
        match self {
            Cache::On(c) => c.order.begin_write(file, graph),
            Cache::Off => WriteTag::PLAIN,
        }
    }

    /// `barrier()`: later writes go to a new epoch.
    fn barrier(&mut self) {
        if let Cache::On(c) = self {
            c.order.barrier();
        }
    }
}

/// What the cache and the processes act on besides themselves: the clock, the event
/// queue and storage. Made afresh for each event from the engine's fields.
#[derive(Debug)]
struct World<'a> {
    now: VTime,
    queue: &'a mut EventQueue,
    storage: &'a mut Storage,
}

impl World<'_> {
    /// Start a disk request; if the disk was idle, schedule its completion.
    fn submit(&mut self, key: BlockKey, write: bool, requester: Requester) {
        if let Some((d, done)) = self.storage.submit(self.now, key, write, requester) {
            self.queue.push(done, Event::DiskDone(d));
        }
    }
}

impl Env for World<'_> {
    #[inline]
    fn now(&self) -> VTime {
        self.now
    }

    #[inline]
    fn on_disk(&self, key: BlockKey) -> bool {
        self.storage.on_disk(key)
    }

    #[inline]
    fn file_bytes(&self, file: FileId) -> u64 {
        self.storage.file_bytes(file)
    }

    #[inline]
    fn submit(&mut self, key: BlockKey, write: bool, frame: u32) {
        World::submit(self, key, write, Requester::Buffer(frame));
    }

    #[inline]
    fn wake(&mut self, pid: u32) {
        self.queue.push(self.now, Event::Process(pid));
    }
}

/// One simulation run: build with [`Engine::new`], then [`Engine::run`].
#[derive(Debug)]
pub struct Engine<'w> {
    now: VTime,
    queue: EventQueue,
    procs: Processes<'w>,
    cache: Cache,
    storage: Storage,
    final_sync: bool,
    flush_interval: Nanos,
    /// When the last process finished its script.
    processes_done: VTime,
    /// Time of the last process step or disk completion (a flusher wake-up with nothing
    /// left to do does not lengthen the run).
    end: VTime,
    events: u64,
}

impl<'w> Engine<'w> {
    /// Prepare a run of `workload` on the system `cfg`; `seed` feeds the policy's random
    /// numbers (the workload carries its own).
    pub fn new(cfg: &SystemConfig, workload: &'w Workload, seed: u64) -> Result<Self, RunError> {
        cfg.validate()?;
        check::check_workload(workload, u64::from(cfg.cache.block_bytes))?;
        if workload.uses_ordering() && cfg.cache.buffers > 0 && cfg.cache.admission.is_some() {
            // A refused write would reach the disk by uncached I/O, outside the ordering's
            // view (epochs, graph nodes, the checker).
            return Err(RunError::Config(super::config::ConfigProblem {
                key: "cache.admission".into(),
                message: "a workload that orders its writes (fsync, barrier, graphwrite) needs every write in the cache; drop the admission filter".into(),
            }));
        }
        let cache = if cfg.cache.buffers > 0 {
            Cache::On(Box::new(BufferCache::new(
                cfg,
                workload.scripts.len(),
                workload.files.len(),
                workload.uses_ordering(),
                seed,
            )?))
        } else {
            Cache::Off
        };
        Ok(Engine {
            now: VTime::ZERO,
            queue: EventQueue::new(),
            procs: Processes::new(cfg, workload),
            cache,
            storage: Storage::new(cfg, workload),
            final_sync: cfg.final_sync,
            flush_interval: s_to_ns(cfg.cache.flush_interval_s),
            processes_done: VTime::ZERO,
            end: VTime::ZERO,
            events: 0,
        })
    }

    /// Run to completion and report. Fails only if processes are left waiting with nothing
    /// in flight that could wake them (every buffer held by a process, say), or if time
    /// runs past the end of the clock.
    pub fn run(mut self) -> Result<Report, RunError> {
        for pid in 0..self.procs.count() as u32 {
            self.queue.push(VTime::ZERO, Event::Process(pid));
        }
        if self.procs.live() == 0 {
            self.all_processes_done();
        }
        if let Cache::On(c) = &self.cache {
            if c.delays_writes() {
                self.queue
                    .push(VTime::ZERO.later(self.flush_interval), Event::Flusher);
            }
        }
        while self.step()? {}
        if self.procs.live() > 0 {
            return Err(RunError::Stuck {
                time_s: self.now.as_secs_f64(),
                processes: self.procs.live(),
            });
        }
        Ok(self.finish())
    }

    /// Handle the earliest pending event; false when none is left.
    fn step(&mut self) -> Result<bool, RunError> {
        let Some((t, event)) = self.queue.pop() else {
            return Ok(false);
        };
        debug_assert!(t >= self.now, "time went backwards");
        if t.is_end() {
            // A flusher wake-up there could start nothing that ends in time: drop it
            // (the run ends, or reports the processes stuck). Anything else would run
            // at a time the clock cannot hold.
            if event == Event::Flusher {
                return Ok(true);
            }
            return Err(RunError::TimeOverflow {
                time_s: self.now.as_secs_f64(),
            });
        }
        self.now = t;
        self.events += 1;
        match event {
            Event::Process(pid) => {
                self.end = t;
                let mut world = World {
                    now: t,
                    queue: &mut self.queue,
                    storage: &mut self.storage,
                };
                if self.procs.run(pid, &mut self.cache, &mut world) {
                    self.all_processes_done();
                }
            }
            Event::DiskDone(d) => {
                self.end = t;
                self.disk_done(d);
            }
            Event::Flusher => self.flush(),
        }
        Ok(true)
    }

    fn world(&mut self) -> (&mut Cache, World<'_>) {
        (
            &mut self.cache,
            World {
                now: self.now,
                queue: &mut self.queue,
                storage: &mut self.storage,
            },
        )
    }

    fn disk_done(&mut self, d: u16) {
        let done = self.storage.complete(d, self.now);
        if let Some(t) = done.next {
            self.queue.push(t, Event::DiskDone(d));
        }
        match done.requester {
            Requester::Process(pid) => {
                self.procs.direct_done(pid, done.write);
                self.queue.push(self.now, Event::Process(pid));
            }
            Requester::Buffer(f) => match self.world() {
                (Cache::On(c), mut world) => c.io_done(&mut world, f, done.write),
                (Cache::Off, _) => unreachable!("no cache, yet buffer {f} did I/O"),
            },
        }
    }

    /// The delayed-write flusher wakes up: a pass over the cache, then the next wake-up
    /// (none once every process is done).
    fn flush(&mut self) {
        if self.procs.live() == 0 {
            return;
        }
        if let (Cache::On(c), mut world) = self.world() {
            c.flush(&mut world);
            let next = self.now.later(self.flush_interval);
            self.queue.push(next, Event::Flusher);
        }
    }

    fn all_processes_done(&mut self) {
        self.processes_done = self.now;
        if self.final_sync {
            if let (Cache::On(c), mut world) = self.world() {
                c.flush_everything(&mut world);
            }
        }
    }

    fn finish(self) -> Report {
        let end = self.end.max(self.processes_done);
        let (stats, (violations, first_violation)) = match &self.cache {
            Cache::On(c) => {
                debug_assert_eq!(c.invariants(), Ok(()));
                (c.stats, c.order.violations())
            }
            Cache::Off => (CacheStats::default(), (0, None)),
        };
        Report {
            time_s: end.as_secs_f64(),
            processes_done_s: self.processes_done.as_secs_f64(),
            events: self.events,
            hits: stats.hits,
            misses: stats.misses + self.procs.direct_misses,
            disk_reads: self.storage.reads,
            disk_writes: self.storage.writes,
            rewrite_mistakes: self.storage.rewrites,
            readahead_reads: stats.readahead_reads,
            admission_refused: stats.admission_refused,
            prefetch_reads: stats.prefetch_reads,
            prefetch_used: stats.prefetch_used,
            flusher_writes: stats.flusher_writes,
            cleaner_writes: stats.cleaner_writes,
            dirty_discarded: stats.dirty_discarded,
            duplicates: stats.duplicates,
            violations,
            first_violation,
            disks: self.storage.reports(end),
        }
    }
}

/// Run `workload` on `cfg` (convenience for [`Engine::new`] + [`Engine::run`]).
pub fn simulate(cfg: &SystemConfig, workload: &Workload, seed: u64) -> Result<Report, RunError> {
    Engine::new(cfg, workload, seed)?.run()
}
