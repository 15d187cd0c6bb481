//! Storage: where each file's blocks lie on the disks, which blocks exist on disk, and
//! the disks themselves.
//!
//! It owns the files' sizes and layout, the set of blocks written during the run, the
//! [`Disk`]s and the disk-traffic counts. It knows nothing of buffers or processes: a
//! request carries a [`Requester`], given back when the request completes, and the
//! engine turns completion times into events. Keeping this apart lets the buffer cache
//! and the uncached path share one notion of "on disk" and one block layout.

use hashbrown::HashSet;

use super::super::config::{Layout, SystemConfig};
use super::super::disk::Disk;
use super::super::ops::{FileId, Workload};
use super::super::time::VTime;
use super::DiskReport;

/// A block's name: its file in the high 32 bits, its number in the file in the low 32.
pub(super) type BlockKey = u64;

/// No block (an empty buffer, no block held).
pub(super) const NO_KEY: BlockKey = u64::MAX;

/// Blocks a file may have: a block's key keeps 32 bits for its number ([`block_key`]).
pub(super) const MAX_FILE_BLOCKS: u64 = 1 << 32;

/// The key of `file`'s block number `block`.
#[inline]
pub(super) fn block_key(file: FileId, block: u64) -> BlockKey {
    (u64::from(file) << 32) | block
}

/// The file a key names.
#[inline]
pub(super) fn key_file(key: BlockKey) -> FileId {
    (key >> 32) as FileId
}

/// The block number in its file a key names.
#[inline]
pub(super) fn key_block(key: BlockKey) -> u64 {
    key & 0xffff_ffff
}

/// Who waits for a disk request: a buffer of the cache, or a process doing uncached I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Requester {
    /// The cache's buffer (frame) number.
    Buffer(u32),
    /// A process reading or writing around the cache.
    Process(u32),
}

/// Disk-request tokens with this bit name a process, not a buffer.
const PROCESS_BIT: u32 = 1 << 31;

/// Processes a run may have: their number must fit beside [`PROCESS_BIT`].
pub(super) const MAX_PROCESSES: usize = PROCESS_BIT as usize;

impl Requester {
    fn token(self) -> u32 {
        match self {
            Requester::Buffer(f) => {
                debug_assert!(f & PROCESS_BIT == 0, "buffer {f} out of range");
                f
            }
            Requester::Process(pid) => {
                debug_assert!(pid & PROCESS_BIT == 0, "process {pid} out of range");
                PROCESS_BIT | pid
            }
        }
    }

    fn from_token(token: u32) -> Self {
        if token & PROCESS_BIT != 0 {
            Requester::Process(token & !PROCESS_BIT)
        } else {
            Requester::Buffer(token)
        }
    }
}

/// A finished disk request, as [`Storage::complete`] returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Completion {
    /// Whose request it was.
    pub requester: Requester,
    /// A write (true) or a read.
    pub write: bool,
    /// When the request the disk started next completes, if it started one.
    pub next: Option<VTime>,
}

#[derive(Clone, Copy, Debug)]
struct FileState {
    size: u64,
    /// Blocks on disk at the start that were not dropped since.
    initial_blocks: u64,
    /// First block of the file in its disk space (see [`Layout`]).
    base: u64,
    disk: u16,
}

/// Files, disks and what reached them.
#[derive(Debug)]
pub(super) struct Storage {
    block_bytes: u64,
    layout: Layout,
    files: Vec<FileState>,
    disks: Vec<Disk>,
    /// Blocks written to disk during the run (and not dropped since).
    on_disk: HashSet<BlockKey, bufcache_core::FixedState>,
    /// Disk reads started, demand and read-ahead.
    pub reads: u64,
    /// Disk writes started.
    pub writes: u64,
    /// Disk writes of a block already written during the run.
    pub rewrites: u64,
}

impl Storage {
    /// The files of `workload` laid out on the disks of `cfg`.
    pub fn new(cfg: &SystemConfig, workload: &Workload) -> Self {
        let block_bytes = u64::from(cfg.cache.block_bytes);
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
        Storage {
            block_bytes,
            layout: cfg.disks.layout,
            files,
            disks: (0..cfg.disks.count)
                .map(|_| Disk::new(cfg.disks.scheduler, cfg.disks.service))
                .collect(),
            on_disk: HashSet::default(),
            reads: 0,
            writes: 0,
            rewrites: 0,
        }
    }

    /// The size of `file` in bytes.
    #[inline]
    pub fn file_bytes(&self, file: FileId) -> u64 {
        self.files[file as usize].size
    }

    /// A write reached byte `end` of `file`: the file is at least that long now.
    #[inline]
    pub fn extend(&mut self, file: FileId, end: u64) {
        let f = &mut self.files[file as usize];
        f.size = f.size.max(end);
    }

    /// Whether the block has data on disk: it was there at the start, or was written.
    #[inline]
    pub fn on_disk(&self, key: BlockKey) -> bool {
        key_block(key) < self.files[key_file(key) as usize].initial_blocks
            || self.on_disk.contains(&key)
    }

    /// Drop `file`'s blocks from byte `from_bytes` on (a delete drops everything): the
    /// file shrinks and those blocks are no longer on disk. Returns the first dropped
    /// block, for the cache to drop its copies.
    pub fn truncate(&mut self, file: FileId, from_bytes: u64) -> u64 {
        let first = from_bytes.div_ceil(self.block_bytes);
        let fs = &mut self.files[file as usize];
        let old_blocks = fs.size.div_ceil(self.block_bytes).max(fs.initial_blocks);
        fs.size = fs.size.min(from_bytes);
        fs.initial_blocks = fs.initial_blocks.min(first);
        for b in first..old_blocks {
            self.on_disk.remove(&block_key(file, b));
        }
        first
    }

    /// Queue a read or write of a block at `now`. Returns the disk and completion time if
    /// the disk was idle and started it (the caller schedules the completion event).
    pub fn submit(
        &mut self,
        now: VTime,
        key: BlockKey,
        write: bool,
        requester: Requester,
    ) -> Option<(u16, VTime)> {
        let fs = self.files[key_file(key) as usize];
        let block = key_block(key);
        let n = self.disks.len() as u64;
        let (disk, pos) = match self.layout {
            Layout::Interleaved => {
                let g = fs.base + block;
                ((g % n) as usize, g / n)
            }
            Layout::PerFile => (fs.disk as usize, fs.base + block),
        };
        if write {
            self.writes += 1;
            if !self.on_disk.insert(key) {
                self.rewrites += 1;
            }
        } else {
            self.reads += 1;
        }
        self.disks[disk]
            .submit(now, pos, write, requester.token(), key)
            .map(|done| (disk as u16, done))
    }

    /// Disk `d` finished its request at `now`.
    pub fn complete(&mut self, d: u16, now: VTime) -> Completion {
        let (req, next) = self.disks[d as usize].complete(now);
        Completion {
            requester: Requester::from_token(req.token),
            write: req.write,
            next,
        }
    }

    /// Per-disk counts and utilization over a run that ended at `end`.
    pub fn reports(&self, end: VTime) -> Vec<DiskReport> {
        self.disks
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
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::des::disk::ServiceTime;
    use crate::des::ops::FileSpec;

    fn storage(layout: Layout, disks: u16, files: &[(u64, u64)]) -> Storage {
        let mut cfg = SystemConfig::default();
        cfg.cache.block_bytes = 1024;
        cfg.disks.count = disks;
        cfg.disks.layout = layout;
        cfg.disks.service = ServiceTime::Constant { ms: 1.0 };
        let workload = Workload {
            files: files
                .iter()
                .map(|&(initial_bytes, max_bytes)| FileSpec {
                    initial_bytes,
                    max_bytes,
                })
                .collect(),
            ..Default::default()
        };
        Storage::new(&cfg, &workload)
    }

    #[test]
    fn keys_name_file_and_block() {
        let k = block_key(7, 0xffff_fffe);
        assert_eq!((key_file(k), key_block(k)), (7, 0xffff_fffe));
        assert_ne!(k, NO_KEY);
        for r in [
            Requester::Buffer(0),
            Requester::Buffer(5),
            Requester::Process(3),
        ] {
            assert_eq!(Requester::from_token(r.token()), r);
        }
    }

    #[test]
    fn interleaved_files_lie_back_to_back_round_robin() {
        // File 0: 3 blocks (0..3), file 1 starts at logical block 3; 2 disks.
        let mut s = storage(Layout::Interleaved, 2, &[(0, 3 * 1024), (0, 1024)]);
        let t0 = VTime::ZERO;
        // Logical block 3 is disk 1, position 1.
        let (d, done) = s
            .submit(t0, block_key(1, 0), true, Requester::Buffer(0))
            .unwrap();
        assert_eq!((d, done), (1, VTime::from_ns(1_000_000)));
        // Logical block 2: disk 0, idle, starts at once.
        let (d, _) = s
            .submit(t0, block_key(0, 2), false, Requester::Process(4))
            .unwrap();
        assert_eq!(d, 0);
        let c = s.complete(0, VTime::from_ns(1_000_000));
        assert_eq!(
            c,
            Completion {
                requester: Requester::Process(4),
                write: false,
                next: None
            }
        );
        assert_eq!((s.reads, s.writes, s.rewrites), (1, 1, 0));
    }

    #[test]
    fn on_disk_means_initial_or_written_and_truncate_drops_both() {
        let mut s = storage(Layout::PerFile, 1, &[(2048, 8192)]);
        assert!(s.on_disk(block_key(0, 1)));
        assert!(!s.on_disk(block_key(0, 2)));
        s.submit(VTime::ZERO, block_key(0, 3), true, Requester::Buffer(0));
        s.extend(0, 4096);
        assert!(s.on_disk(block_key(0, 3)));
        assert_eq!(s.file_bytes(0), 4096);
        // Writing block 3 again is a rewrite.
        s.submit(VTime::ZERO, block_key(0, 3), true, Requester::Buffer(0));
        assert_eq!(s.rewrites, 1);
        // Keep the first 1000 bytes: block 0 stays, blocks 1.. go.
        assert_eq!(s.truncate(0, 1000), 1);
        assert_eq!(s.file_bytes(0), 1000);
        assert!(s.on_disk(block_key(0, 0)));
        assert!(!s.on_disk(block_key(0, 1)));
        assert!(!s.on_disk(block_key(0, 3)));
    }
}
