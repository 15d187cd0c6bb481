//! The memory simulator's event loop: processes on one CPU (round robin), the two memory
//! consumers (file cache and virtual memory) in one physical memory, the arbiter between
//! them, and the remote server (one FIFO queue) that serves file blocks and swap pages.
//!
//! A process runs its script in [`Machine::run`] until it must wait: for the CPU (it
//! accumulates the CPU time of what it did and pays it in quanta), for the server (a fault
//! or a file miss), or for a timer (sleep). Hits cost only CPU time, so events scale with
//! misses and quanta, not with accesses. A page's frame is taken when the fault's CPU
//! work is done; the page joins its consumer's replacement order when its data arrives
//! (until then it is *in flight*, held by nobody the arbiter can ask). A dirty victim is
//! written to the server before the read that reuses its frame (FIFO), so the faulting
//! process waits for both.

use std::collections::{HashMap, VecDeque};

use arbiter::{Arbiter, ConsumerView, Kind, Negotiations};

use super::super::event::EventQueue;
use super::super::time::{Nanos, VTime};
use super::config::{MemoryConfig, MemoryConfigError, Times};
use super::filecache::{block_key, FileCache};
use super::report::{MemReport, MemRunError};
use super::vm::{page_key, Source, Vm};
use super::workload::{FileNo, MemOp, MemWorkload};

/// The file cache's consumer id for the arbiter.
pub(super) const FILE: usize = 0;
/// The virtual memory's consumer id.
pub(super) const VM: usize = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The running process's CPU slice ended.
    Cpu(u32),
    /// The server finished the last transfer a process waits for.
    Io(u32),
    /// A sleeping process wakes.
    Wake(u32),
    /// The delayed-write flusher.
    Flusher,
}

/// What a process does once it has paid its CPU time.
#[derive(Clone, Copy, Debug)]
enum Pending {
    /// Take a frame and read a page in.
    Fault {
        image: u32,
        page: u32,
        write: bool,
        source: Source,
    },
    /// Take a frame and read a file block in.
    FileRead { key: u64 },
    /// Take a frame for a whole-block write.
    FileWrite { key: u64 },
}

/// What arrives when the server is done.
#[derive(Clone, Copy, Debug)]
enum Arrival {
    Page { image: u32, page: u32, write: bool },
    Block { key: u64, write: bool },
}

#[derive(Debug, Default)]
struct Proc {
    pc: usize,
    step: u32,
    image: Option<u32>,
    owed: Nanos,
    cpu_need: Nanos,
    slice: Nanos,
    pending: Option<Pending>,
    arrival: Option<Arrival>,
    timed_start: Option<VTime>,
    done: bool,
}

/// One run. Build with [`Machine::new`], then [`Machine::run_to_end`].
pub(super) struct Machine<'w> {
    now: VTime,
    queue: EventQueue<Ev>,
    times: Times,
    min_file_pages: u64,
    workload: &'w MemWorkload,
    procs: Vec<Proc>,
    foreground_left: usize,
    free_pages: u64,
    in_flight: u64,
    vm: Vm,
    files: FileCache,
    file_blocks: HashMap<FileNo, u32>,
    arbiter: Box<dyn Arbiter>,
    cpu_queue: VecDeque<u32>,
    cpu_busy: bool,
    server_free_at: VTime,
    pub(super) report: MemReport,
    negotiations: Negotiations,
    events: u64,
}

impl std::fmt::Debug for Machine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Machine")
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl<'w> Machine<'w> {
    /// A machine ready to run `workload`.
    pub fn new(config: &MemoryConfig, workload: &'w MemWorkload) -> Result<Self, MemRunError> {
        let times = config.times()?;
        let problems = workload.problems();
        if !problems.is_empty() {
            return Err(MemRunError::Workload(problems.join("; ")));
        }
        let memory = u64::from(config.memory_pages);
        let arbiter = config
            .arbiter
            .build(memory, &[Kind::File, Kind::Memory], 1_000_000_000)
            .map_err(MemoryConfigError::from)?;
        Ok(Machine {
            now: VTime::ZERO,
            queue: EventQueue::new(),
            times,
            min_file_pages: u64::from(config.min_file_pages),
            workload,
            procs: workload.processes.iter().map(|_| Proc::default()).collect(),
            foreground_left: workload.processes.iter().filter(|p| !p.background).count(),
            free_pages: memory,
            in_flight: 0,
            vm: Vm::default(),
            files: FileCache::default(),
            file_blocks: HashMap::new(),
            arbiter,
            cpu_queue: VecDeque::new(),
            cpu_busy: false,
            server_free_at: VTime::ZERO,
            report: MemReport::new(config),
            negotiations: Negotiations::new(2),
            events: 0,
        })
    }

    /// Run until every foreground process has finished (or the time limit).
    pub fn run_to_end(mut self) -> Result<MemReport, MemRunError> {
        for pid in 0..self.procs.len() {
            self.queue.push(VTime::ZERO, Ev::Wake(pid as u32));
        }
        self.queue
            .push(VTime::ZERO.later(self.times.flush_interval), Ev::Flusher);
        let limit = VTime::ZERO.later(self.times.limit);
        while self.foreground_left > 0 {
            let Some((t, ev)) = self.queue.pop() else {
                return Err(MemRunError::Stuck {
                    time_s: self.now.as_secs_f64(),
                });
            };
            if t > limit {
                self.now = limit;
                self.report.finished = false;
                break;
            }
            self.now = t;
            self.events += 1;
            match ev {
                Ev::Cpu(pid) => self.cpu_slice_done(pid)?,
                Ev::Io(pid) => self.arrived(pid)?,
                Ev::Wake(pid) => self.run(pid)?,
                Ev::Flusher => self.flush(),
            }
        }
        let mut r = self.report;
        r.elapsed_s = self.now.as_secs_f64();
        r.events = self.events;
        r.fs_asks_vm = self.negotiations.asked(FILE, VM);
        r.fs_satisfied = self.negotiations.satisfied(FILE, VM);
        r.vm_asks_fs = self.negotiations.asked(VM, FILE);
        r.vm_satisfied = self.negotiations.satisfied(VM, FILE);
        Ok(r)
    }

    /// Run process `pid` until it waits.
    fn run(&mut self, pid: u32) -> Result<(), MemRunError> {
        let workload: &'w MemWorkload = self.workload;
        let script = &workload.processes[pid as usize];
        loop {
            let p = &mut self.procs[pid as usize];
            if p.done {
                return Ok(());
            }
            if p.owed >= self.times.quantum || (p.pending.is_some() && p.owed > 0) {
                self.request_cpu(pid);
                return Ok(());
            }
            if let Some(pending) = p.pending.take() {
                if self.start_io(pid, pending)? {
                    return Ok(());
                }
                continue;
            }
            let Some(op) = script.ops.get(p.pc) else {
                if p.owed > 0 {
                    self.request_cpu(pid);
                    return Ok(());
                }
                if script.background && self.foreground_left > 0 {
                    p.pc = script.repeat_from;
                    continue;
                }
                self.finish(pid);
                return Ok(());
            };
            match *op {
                MemOp::Exec { pages } => {
                    if let Some(old) = p.image.take() {
                        self.free_pages += self.vm.drop_image(old);
                    }
                    let p = &mut self.procs[pid as usize];
                    p.image = Some(self.vm.new_image(pages));
                    p.pc += 1;
                }
                MemOp::Touch {
                    first,
                    count,
                    dirty_every,
                    cpu_ns_per_page,
                    timed,
                } => {
                    let image = p.image.expect("validated: exec before touch");
                    if timed && p.timed_start.is_none() {
                        p.timed_start = Some(self.now);
                    }
                    while p.step < count && p.owed < self.times.quantum {
                        let page = first + p.step;
                        let write = dirty_every > 0 && p.step.is_multiple_of(dirty_every);
                        match self.vm.touch(image, page, write, self.now) {
                            Ok(()) => {
                                p.owed += cpu_ns_per_page;
                                p.step += 1;
                            }
                            Err(source) => {
                                p.owed += cpu_ns_per_page + self.times.transfer_cpu;
                                p.pending = Some(Pending::Fault {
                                    image,
                                    page,
                                    write,
                                    source,
                                });
                                break;
                            }
                        }
                    }
                    if p.pending.is_some() {
                        let key = page_key(image, first + p.step);
                        if self.vm.was_resident(image, first + p.step) {
                            self.report.vm_refaults += 1;
                        }
                        let views = self.views();
                        self.arbiter.note_miss(VM, key, &views);
                        continue;
                    }
                    if p.step == count {
                        if p.owed > 0 {
                            self.request_cpu(pid);
                            return Ok(());
                        }
                        if let Some(start) = p.timed_start.take() {
                            self.report
                                .responses_s
                                .push(self.now.since(start) as f64 / 1e9);
                            self.report.response_starts_s.push(start.as_secs_f64());
                        }
                        p.step = 0;
                        p.pc += 1;
                    }
                }
                MemOp::Read { file, first, count } | MemOp::Write { file, first, count } => {
                    let write = matches!(op, MemOp::Write { .. });
                    let end = self.file_blocks.entry(file).or_insert(0);
                    *end = (*end).max(first + count);
                    while p.step < count && p.owed < self.times.quantum {
                        let key = block_key(file, first + p.step);
                        p.owed += self.times.copy_cpu;
                        if self.files.access(key, write, self.now) {
                            self.report.fs_hits += 1;
                            p.step += 1;
                            continue;
                        }
                        self.report.fs_misses += 1;
                        p.pending = Some(if write {
                            Pending::FileWrite { key }
                        } else {
                            p.owed += self.times.transfer_cpu;
                            Pending::FileRead { key }
                        });
                        break;
                    }
                    if let Some(Pending::FileRead { key } | Pending::FileWrite { key }) = p.pending
                    {
                        if self.files.was_cached(key) {
                            self.report.fs_refaults += 1;
                        }
                        let views = self.views();
                        self.arbiter.note_miss(FILE, key, &views);
                        continue;
                    }
                    if p.step == count {
                        p.step = 0;
                        p.pc += 1;
                    }
                }
                MemOp::Delete { file } => {
                    let blocks = self.file_blocks.remove(&file).unwrap_or(0);
                    let (dropped, dirty) = self.files.delete(file, blocks);
                    self.free_pages += dropped;
                    self.report.dirty_discarded += dirty;
                    self.procs[pid as usize].pc += 1;
                }
                MemOp::Compute(ns) => {
                    p.owed += ns;
                    p.pc += 1;
                }
                MemOp::Sleep(ns) => {
                    if p.owed > 0 {
                        self.request_cpu(pid);
                        return Ok(());
                    }
                    p.pc += 1;
                    self.queue.push(self.now.later(ns), Ev::Wake(pid));
                    return Ok(());
                }
            }
        }
    }

    /// Take a frame for `pending` and start its transfer; true when the process must wait.
    fn start_io(&mut self, pid: u32, pending: Pending) -> Result<bool, MemRunError> {
        let (consumer, transfer) = match pending {
            Pending::Fault { .. } | Pending::FileRead { .. } => (
                if matches!(pending, Pending::Fault { .. }) {
                    VM
                } else {
                    FILE
                },
                true,
            ),
            Pending::FileWrite { .. } => (FILE, false),
        };
        let writeback = self.take_frame(consumer)?;
        let arrival = match pending {
            Pending::Fault {
                image,
                page,
                write,
                source,
            } => {
                match source {
                    Source::Swap => self.report.page_ins += 1,
                    Source::Executable => self.report.vm_loads += 1,
                }
                Arrival::Page { image, page, write }
            }
            Pending::FileRead { key } => {
                self.report.fs_reads += 1;
                Arrival::Block { key, write: false }
            }
            Pending::FileWrite { key } => Arrival::Block { key, write: true },
        };
        let done = if transfer {
            Some(self.submit())
        } else {
            writeback
        };
        match done {
            Some(at) => {
                self.in_flight += 1;
                self.note_file_size();
                self.procs[pid as usize].arrival = Some(arrival);
                self.queue.push(at, Ev::Io(pid));
                Ok(true)
            }
            None => {
                self.in_flight += 1;
                self.procs[pid as usize].arrival = Some(arrival);
                self.install(pid);
                Ok(false)
            }
        }
    }

    /// The data a process waited for is here.
    fn arrived(&mut self, pid: u32) -> Result<(), MemRunError> {
        self.install(pid);
        self.run(pid)
    }

    fn install(&mut self, pid: u32) {
        self.in_flight -= 1;
        let p = &mut self.procs[pid as usize];
        match p.arrival.take().expect("a process waits for an arrival") {
            Arrival::Page { image, page, write } => self.vm.install(image, page, write, self.now),
            Arrival::Block { key, write } => {
                if self.files.access(key, write, self.now) {
                    // Another process brought the block in meanwhile: one copy only.
                    self.free_pages += 1;
                } else {
                    self.files.insert(key, write, self.now);
                }
            }
        }
        p.step += 1;
        self.note_file_size();
    }

    /// A free frame for `consumer`, or one given up by the consumer the arbiter names;
    /// the time the victim's write-back completes, if it was dirty.
    fn take_frame(&mut self, consumer: usize) -> Result<Option<VTime>, MemRunError> {
        let views = self.views();
        if self.free_pages > 0 && self.arbiter.may_grow(consumer, &views) {
            self.free_pages -= 1;
            return Ok(None);
        }
        let victim = self
            .arbiter
            .pick(consumer, &views)
            .ok_or(MemRunError::NoVictim {
                time_s: self.now.as_secs_f64(),
            })?;
        if self.free_pages == 0 {
            self.negotiations.record(consumer, victim);
        }
        let (key, dirty) = if victim == VM {
            let e = self.vm.evict().expect("the VM said it could give a page");
            if e.dirty {
                self.report.page_outs += 1;
            }
            (e.key, e.dirty)
        } else {
            let (key, dirty) = self
                .files
                .evict()
                .expect("the file cache said it could give");
            if dirty {
                self.report.fs_writes += 1;
            }
            (key, dirty)
        };
        self.arbiter.note_eviction(victim, key, dirty, &views);
        Ok(dirty.then(|| self.submit()))
    }

    /// Both consumers as the arbiter sees them now (moves the VM's clock hand to its next
    /// victim).
    fn views(&mut self) -> [ConsumerView; 2] {
        let file_resident = self.files.resident();
        [
            ConsumerView {
                kind: Kind::File,
                resident_pages: file_resident,
                oldest_idle: if file_resident > self.min_file_pages {
                    self.files.oldest_idle(self.now)
                } else {
                    None
                },
            },
            ConsumerView {
                kind: Kind::Memory,
                resident_pages: self.vm.resident(),
                oldest_idle: self.vm.oldest_idle(self.now),
            },
        ]
    }

    /// Queue one page transfer at the server; when it will be done.
    fn submit(&mut self) -> VTime {
        let start = self.server_free_at.max(self.now);
        self.server_free_at = start.later(self.times.server_page);
        self.report.server_busy_s += self.times.server_page as f64 / 1e9;
        self.server_free_at
    }

    fn request_cpu(&mut self, pid: u32) {
        let p = &mut self.procs[pid as usize];
        p.cpu_need = std::mem::take(&mut p.owed);
        self.cpu_queue.push_back(pid);
        self.dispatch();
    }

    fn dispatch(&mut self) {
        if self.cpu_busy {
            return;
        }
        if let Some(pid) = self.cpu_queue.pop_front() {
            let p = &mut self.procs[pid as usize];
            p.slice = p.cpu_need.min(self.times.quantum);
            self.cpu_busy = true;
            self.report.cpu_busy_s += p.slice as f64 / 1e9;
            self.queue.push(self.now.later(p.slice), Ev::Cpu(pid));
        }
    }

    fn cpu_slice_done(&mut self, pid: u32) -> Result<(), MemRunError> {
        self.cpu_busy = false;
        let p = &mut self.procs[pid as usize];
        p.cpu_need -= p.slice;
        if p.cpu_need > 0 {
            self.cpu_queue.push_back(pid);
            self.dispatch();
            return Ok(());
        }
        let r = self.run(pid);
        self.dispatch();
        r
    }

    fn finish(&mut self, pid: u32) {
        let p = &mut self.procs[pid as usize];
        p.done = true;
        if let Some(image) = p.image.take() {
            self.free_pages += self.vm.drop_image(image);
        }
        let script = &self.workload.processes[pid as usize];
        self.report
            .process_done_s
            .push((script.name.clone(), self.now.as_secs_f64()));
        if !script.background {
            self.foreground_left -= 1;
        }
    }

    fn flush(&mut self) {
        let cutoff = VTime::from_ns(self.now.as_ns().saturating_sub(self.times.flush_age));
        for _ in self.files.flush_older_than(cutoff) {
            self.report.fs_writes += 1;
            self.submit();
        }
        self.queue
            .push(self.now.later(self.times.flush_interval), Ev::Flusher);
    }

    fn note_file_size(&mut self) {
        let n = self.files.resident();
        let r = &mut self.report;
        r.file_pages_max = r.file_pages_max.max(n);
        if n >= self.min_file_pages {
            r.reached_min = true;
        }
        if r.reached_min {
            r.file_pages_min = r.file_pages_min.min(n);
        }
        debug_assert_eq!(
            self.free_pages + self.in_flight + n + self.vm.resident(),
            u64::from(r.memory_pages),
            "every page is free, in flight, or held by one consumer"
        );
    }
}
