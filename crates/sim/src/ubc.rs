//! One copy or two: the split buffer cache + page cache of NetBSD before UBC against the
//! unified page cache of UBC (Silvers 2000), as a counting model.
//!
//! * **Split**: `read`/`write` go through a *buffer cache* of a fixed number of pages
//!   (sized at boot); mapped access goes through the *page cache*, which takes what memory
//!   is left. A mapped page that is not in the page cache is read through the buffer cache
//!   and copied from it — so a file used both ways is cached twice, and every such fault
//!   costs a copy. (A dirty mapped page would be copied back the same way; the `dd` series
//!   maps nothing dirty, so that path is not modelled.)
//! * **Unified**: one page cache for both; `read`/`write` copy between it and the user's
//!   buffer, mapped access uses its pages directly (no copy).
//!
//! Both caches are exact LRU ([`crate::des::memory::filecache::FileCache`], the same code
//! as the memory simulator's file cache); dirty pages are written when evicted, and the
//! dirty pages left at the end of a step are written then (`dd` ends with the file closed
//! and, in the paper's timing, flushed). Time is a model: device transfers at a sequential
//! bandwidth, copies at a memory bandwidth, one after the other.

use serde::Serialize;

use crate::des::memory::filecache::{block_key, FileCache};
use crate::des::time::VTime;

/// Which cache design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// A fixed buffer cache for `read`/`write` plus a page cache for mappings.
    Split {
        /// Pages in the buffer cache.
        buffer_pages: u64,
    },
    /// One page cache for everything (UBC).
    Unified,
}

/// The machine: memory for file data, page size, device and copy bandwidths.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct UbcMachine {
    /// Pages of memory file data may use (both caches together).
    pub memory_pages: u64,
    /// Bytes per page.
    pub page_bytes: u64,
    /// Sequential device bandwidth, MB/s.
    pub device_mb_s: f64,
    /// Memory copy bandwidth, MB/s.
    pub copy_mb_s: f64,
}

/// What a step did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct StepCounts {
    /// Pages read from the device.
    pub device_reads: u64,
    /// Pages written to the device.
    pub device_writes: u64,
    /// Pages copied in memory (user ↔ cache, buffer cache → page cache).
    pub copies: u64,
    /// Pages of file data held at the end of the step, both caches together.
    pub held_pages: u64,
    /// Pages held in both caches at the end of the step.
    pub held_twice: u64,
    /// Modelled run time, s.
    pub time_s: f64,
}

/// A cache design on a machine, run step by step.
#[derive(Debug)]
pub struct UbcCache {
    layout: Layout,
    machine: UbcMachine,
    /// `read`/`write` data: the buffer cache (split) or the page cache (unified).
    io: FileCache,
    /// Mapped data (split only).
    mapped: FileCache,
    clock: u64,
    step: StepCounts,
}

impl UbcCache {
    /// Empty caches.
    pub fn new(layout: Layout, machine: UbcMachine) -> Self {
        UbcCache {
            layout,
            machine,
            io: FileCache::default(),
            mapped: FileCache::default(),
            clock: 0,
            step: StepCounts::default(),
        }
    }

    fn tick(&mut self) -> VTime {
        self.clock += 1;
        VTime::from_ns(self.clock)
    }

    fn io_capacity(&self) -> u64 {
        match self.layout {
            Layout::Split { buffer_pages } => buffer_pages,
            Layout::Unified => self.machine.memory_pages,
        }
    }

    /// Make room for one page in the `read`/`write` cache.
    fn room_in_io(&mut self) {
        while self.io.resident() + self.mapped.resident() >= self.machine.memory_pages
            || self.io.resident() >= self.io_capacity()
        {
            if self.io.resident() >= self.io_capacity() || self.mapped.resident() == 0 {
                let (_, dirty) = self.io.evict().expect("a full cache has a victim");
                self.step.device_writes += u64::from(dirty);
            } else {
                self.mapped.evict();
            }
        }
    }

    /// `read` of one page through the `read`/`write` cache (without the copy to the user).
    fn fill_io(&mut self, key: u64) {
        let now = self.tick();
        if !self.io.access(key, false, now) {
            self.room_in_io();
            self.io.insert(key, false, now);
            self.step.device_reads += 1;
        }
    }

    /// `read(2)` of pages `first..first + count` of `file`.
    pub fn read(&mut self, file: u32, first: u32, count: u32) {
        for b in first..first + count {
            self.fill_io(block_key(file, b));
            self.step.copies += 1;
        }
    }

    /// `write(2)` of whole pages `first..first + count` of `file` (no read needed).
    pub fn write(&mut self, file: u32, first: u32, count: u32) {
        for b in first..first + count {
            let key = block_key(file, b);
            let now = self.tick();
            if !self.io.access(key, true, now) {
                self.room_in_io();
                self.io.insert(key, true, now);
            }
            self.step.copies += 1;
        }
    }

    /// Touch mapped pages `first..first + count` of `file` (`mmap` and read them).
    pub fn touch_mapped(&mut self, file: u32, first: u32, count: u32) {
        for b in first..first + count {
            let key = block_key(file, b);
            match self.layout {
                Layout::Unified => self.fill_io(key),
                Layout::Split { .. } => {
                    let now = self.tick();
                    if self.mapped.access(key, false, now) {
                        continue;
                    }
                    // The page comes from the buffer cache (read in there if needed) and
                    // is copied into a page-cache page.
                    self.fill_io(key);
                    while self.io.resident() + self.mapped.resident() >= self.machine.memory_pages {
                        self.mapped.evict();
                    }
                    let now = self.tick();
                    self.mapped.insert(key, false, now);
                    self.step.copies += 1;
                }
            }
        }
    }

    /// A raw-device read of `count` pages: straight to the user, no cache, no copy.
    pub fn raw_read(&mut self, count: u32) {
        self.step.device_reads += u64::from(count);
    }

    /// Finish a step: write what is dirty (the file is closed and flushed), count what is
    /// held, and return the step's counts.
    pub fn end_step(&mut self) -> StepCounts {
        let dirty = self.io.flush_older_than(VTime::END);
        self.step.device_writes += dirty.len() as u64;
        let mut s = std::mem::take(&mut self.step);
        s.held_pages = self.io.resident() + self.mapped.resident();
        s.held_twice = match self.layout {
            Layout::Unified => 0,
            Layout::Split { .. } => self.twice(),
        };
        let mb = |pages: u64| pages as f64 * self.machine.page_bytes as f64 / 1_048_576.0;
        s.time_s = mb(s.device_reads + s.device_writes) / self.machine.device_mb_s
            + mb(s.copies) / self.machine.copy_mb_s;
        s
    }

    fn twice(&self) -> u64 {
        self.mapped.keys().filter(|k| self.io.contains(*k)).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MACHINE: UbcMachine = UbcMachine {
        memory_pages: 10,
        page_bytes: 1_048_576,
        device_mb_s: 10.0,
        copy_mb_s: 100.0,
    };

    #[test]
    fn split_caches_a_file_used_both_ways_twice_unified_once() {
        let mut split = UbcCache::new(Layout::Split { buffer_pages: 4 }, MACHINE);
        split.read(0, 0, 3);
        let s = split.end_step();
        assert_eq!((s.device_reads, s.copies, s.held_pages), (3, 3, 3));
        assert!((s.time_s - (0.3 + 0.03)).abs() < 1e-9);
        // Mapping the same 3 pages: copied from the buffer cache, held twice.
        split.touch_mapped(0, 0, 3);
        let s = split.end_step();
        assert_eq!(
            (s.device_reads, s.copies, s.held_pages, s.held_twice),
            (0, 3, 6, 3)
        );

        let mut unified = UbcCache::new(Layout::Unified, MACHINE);
        unified.read(0, 0, 3);
        unified.end_step();
        unified.touch_mapped(0, 0, 3);
        let s = unified.end_step();
        assert_eq!(
            (s.device_reads, s.copies, s.held_pages, s.held_twice),
            (0, 0, 3, 0)
        );
    }

    #[test]
    fn a_fixed_buffer_cache_rereads_what_the_unified_cache_keeps() {
        for (layout, rereads) in [(Layout::Split { buffer_pages: 4 }, 6), (Layout::Unified, 0)] {
            let mut c = UbcCache::new(layout, MACHINE);
            c.read(0, 0, 6);
            c.end_step();
            c.read(0, 0, 6);
            assert_eq!(c.end_step().device_reads, rereads, "{layout:?}");
        }
    }

    #[test]
    fn writes_reach_the_device_once_each() {
        let mut c = UbcCache::new(Layout::Unified, MACHINE);
        c.write(0, 0, 25);
        let s = c.end_step();
        assert_eq!((s.device_writes, s.copies, s.held_pages), (25, 25, 10));
    }
}
