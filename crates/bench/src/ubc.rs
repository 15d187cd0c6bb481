//! Table 1 of the UBC paper (Silvers 2000) on real files of this machine: the `dd` series
//! — write a file several times larger than memory, overwrite it, read it back, then read
//! the first part (which fits in memory) five times — through four designs:
//!
//! * [`Design::RawDirect`]: `O_DIRECT` reads and writes, no cache at all (the paper's raw
//!   device row, for every step);
//! * [`Design::PageCache`]: buffered I/O through the OS page cache, bounded by a memory
//!   limit (a memory cgroup the caller provides, [`MemoryLimit`]); without one the page
//!   cache may use all free memory and the rows say so;
//! * [`Design::PoolDirect`]: the buffer pool over `O_DIRECT` with a capacity of the
//!   memory budget — unified: `read`/`write` and `pin` share one frame per page (UBC);
//! * [`Design::PoolBuffered`]: the pool over buffered I/O, inside the same memory limit as
//!   the page cache: the double caching of every database that does not use `O_DIRECT`.
//!   Pages held twice (in a pool frame *and* in the page cache) are counted page by page
//!   with `cachestat(2)`.
//!
//! Every step reports its wall time and the device bytes this process read and wrote
//! (`/proc/self/io`, `read_bytes` / `write_bytes`: what reached the storage layer, so
//! `O_DIRECT` counts and page-cache hits do not). Writing steps end with `fsync`, so their
//! device writes are in their own row. The file is dropped from the page cache before the
//! full read (`posix_fadvise(DONTNEED)`), as the paper's reads start non-resident.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use pool::{BufferPool, FileHandle, IoMode};

use crate::error::BenchError;

/// A memory limit the page-cache designs run under (a memory cgroup): the process enters
/// it before those designs and leaves it after, so only their page cache is charged.
pub trait MemoryLimit {
    /// Move this process into the limit.
    fn enter(&self) -> std::io::Result<()>;
    /// Move this process back where it was.
    fn leave(&self) -> std::io::Result<()>;
    /// Bytes the limit allows.
    fn limit_bytes(&self) -> u64;
}

/// The designs of the series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    /// `O_DIRECT`, no cache.
    RawDirect,
    /// The OS page cache (buffered I/O).
    PageCache,
    /// The pool over `O_DIRECT`: one copy per page.
    PoolDirect,
    /// The pool over buffered I/O: pages held by the pool and the page cache.
    PoolBuffered,
}

impl Design {
    /// Every design, in the order the series runs them.
    pub const ALL: [Design; 4] = [
        Design::RawDirect,
        Design::PageCache,
        Design::PoolDirect,
        Design::PoolBuffered,
    ];

    /// Short name for tables.
    pub fn label(self) -> &'static str {
        match self {
            Design::RawDirect => "raw-direct",
            Design::PageCache => "page-cache",
            Design::PoolDirect => "pool-direct",
            Design::PoolBuffered => "pool-buffered",
        }
    }

    fn uses_page_cache(self) -> bool {
        matches!(self, Design::PageCache | Design::PoolBuffered)
    }
}

/// The series' sizes.
#[derive(Clone, Debug)]
pub struct UbcOptions {
    /// Directory for the data file (on a file system that accepts `O_DIRECT`).
    pub dir: PathBuf,
    /// The memory budget: the pool's capacity and the page cache's limit.
    pub memory_bytes: u64,
    /// The file, several times the memory.
    pub file_bytes: u64,
    /// The first part read again and again (it fits in memory).
    pub first_bytes: u64,
    /// How many times the first part is read (the paper: five).
    pub first_reads: u32,
    /// Bytes per `read`/`write` call (`dd bs=`): 64 KiB.
    pub block_bytes: usize,
}

impl UbcOptions {
    /// The default scale: 64 MiB of memory, a 256 MiB file, its first 48 MiB read five
    /// times, 64 KiB blocks (the paper: 64 MB of memory, a 1 GB file, 50 MB).
    pub fn new(dir: PathBuf) -> UbcOptions {
        UbcOptions {
            dir,
            memory_bytes: 64 << 20,
            file_bytes: 256 << 20,
            first_bytes: 48 << 20,
            first_reads: 5,
            block_bytes: 64 << 10,
        }
    }
}

/// One step of one design.
#[derive(Clone, Debug, serde::Serialize)]
pub struct UbcRow {
    /// The design.
    pub design: Design,
    /// The step: `write`, `overwrite`, `read`, `first-1` .. `first-5`.
    pub step: String,
    /// Bytes transferred by the step.
    pub bytes: u64,
    /// Wall time of the step.
    pub seconds: f64,
    /// Bytes this process read from the device during the step.
    pub device_read_bytes: u64,
    /// Bytes this process wrote to the device during the step.
    pub device_write_bytes: u64,
    /// Pages of the first part in the page cache after the step (`cachestat`).
    pub page_cache_pages: u64,
    /// Pages of the first part held by the pool after the step.
    pub pool_pages: u64,
    /// Pages of the first part held both by the pool and by the page cache.
    pub held_twice_pages: u64,
    /// Whether the page cache was bounded by a memory limit (false: no cgroup).
    pub limited: bool,
}

/// This process's device bytes so far (`read_bytes`, `write_bytes` of `/proc/self/io`).
fn device_bytes() -> Result<(u64, u64), BenchError> {
    let text = std::fs::read_to_string("/proc/self/io")
        .map_err(|e| BenchError::io("cannot read /proc/self/io", e))?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok((field("read_bytes:"), field("write_bytes:")))
}

/// A design's way of doing the series' I/O.
enum Io {
    File {
        file: File,
        buf: Vec<u8>,
        offset: usize,
    },
    Pool {
        pool: BufferPool,
        f: FileHandle,
        buf: Vec<u8>,
    },
}

impl Io {
    fn open(design: Design, path: &Path, o: &UbcOptions) -> Result<Io, BenchError> {
        let fail = |e| BenchError::io(format!("cannot open {}", path.display()), e);
        match design {
            Design::RawDirect | Design::PageCache => {
                let mut opts = OpenOptions::new();
                opts.read(true).write(true).create(true);
                if design == Design::RawDirect {
                    opts.custom_flags(libc::O_DIRECT);
                }
                let file = opts.open(path).map_err(fail)?;
                // O_DIRECT needs an aligned buffer: take the aligned part of a larger one.
                let buf = vec![0u8; o.block_bytes + 4096];
                let offset = buf.as_ptr().align_offset(4096);
                Ok(Io::File { file, buf, offset })
            }
            Design::PoolDirect | Design::PoolBuffered => {
                let pool = BufferPool::builder()
                    .capacity_bytes(o.memory_bytes)
                    .io_mode(if design == Design::PoolDirect {
                        IoMode::Direct
                    } else {
                        IoMode::Buffered
                    })
                    .build()
                    .map_err(|e| BenchError::pool("cannot build the pool", e))?;
                let f = if path.exists() {
                    pool.open(path)
                } else {
                    pool.create(path)
                }
                .map_err(|e| BenchError::pool(format!("cannot open {}", path.display()), e))?;
                Ok(Io::Pool {
                    pool,
                    f,
                    buf: vec![0u8; o.block_bytes],
                })
            }
        }
    }

    fn write_all(&mut self, bytes: u64, block: usize) -> Result<(), BenchError> {
        let mut at = 0u64;
        while at < bytes {
            match self {
                Io::File { file, buf, offset } => {
                    let b = &mut buf[*offset..*offset + block];
                    b.fill((at / block as u64) as u8);
                    file.write_all_at(b, at)
                        .map_err(|e| BenchError::io("write", e))?;
                }
                Io::Pool { pool, f, buf } => {
                    buf.fill((at / block as u64) as u8);
                    pool.write(*f, at, buf)
                        .map_err(|e| BenchError::pool("pool write", e))?;
                }
            }
            at += block as u64;
        }
        match self {
            Io::File { file, .. } => file.sync_all().map_err(|e| BenchError::io("fsync", e)),
            Io::Pool { pool, f, .. } => pool
                .fsync(*f)
                .map_err(|e| BenchError::pool("pool fsync", e)),
        }
    }

    fn read_range(&mut self, bytes: u64, block: usize) -> Result<(), BenchError> {
        let mut at = 0u64;
        while at < bytes {
            let n = match self {
                Io::File { file, buf, offset } => file
                    .read_at(&mut buf[*offset..*offset + block], at)
                    .map_err(|e| BenchError::io("read", e))?,
                Io::Pool { pool, f, buf } => pool
                    .read(*f, at, buf)
                    .map_err(|e| BenchError::pool("pool read", e))?,
            };
            if n == 0 {
                break;
            }
            at += n as u64;
        }
        Ok(())
    }

    /// Pages of `[0, bytes)` the pool holds, and of those how many the page cache holds
    /// too, with the page cache's count of the range.
    fn residency(&self, path: &Path, bytes: u64) -> Result<(u64, u64, u64), BenchError> {
        let file = File::open(path).map_err(|e| BenchError::io("open for cachestat", e))?;
        let cached = |off: u64, len: u64| {
            linux::page_cache::cached_pages(&file, off, len)
                .map_err(|e| BenchError::io("cachestat", e))
        };
        let page_cache = cached(0, bytes)?;
        let Io::Pool { pool, f, .. } = self else {
            return Ok((page_cache, 0, 0));
        };
        let ps = pool.page_size() as u64;
        let resident = pool
            .resident(*f)
            .map_err(|e| BenchError::pool("resident", e))?;
        let (mut held, mut twice) = (0, 0);
        for p in resident.iter().take_while(|&p| p * ps < bytes) {
            held += 1;
            twice += u64::from(cached(p * ps, ps)? > 0);
        }
        Ok((page_cache, held, twice))
    }
}

/// Run the series for `designs`. The page-cache designs run inside `limit` when given.
pub fn run(
    o: &UbcOptions,
    designs: &[Design],
    limit: Option<&dyn MemoryLimit>,
) -> Result<Vec<UbcRow>, BenchError> {
    let mut rows = Vec::new();
    for &design in designs {
        let path = o.dir.join(format!("ubc-{}.dat", design.label()));
        let _ = std::fs::remove_file(&path);
        let mut io = Io::open(design, &path, o)?;
        // The pool's frames are allocated (and charged) before the process enters the
        // limit: only the page cache is charged to it.
        let limited = design.uses_page_cache() && limit.is_some();
        if let (true, Some(l)) = (limited, limit) {
            l.enter()
                .map_err(|e| BenchError::io("cannot enter the memory cgroup", e))?;
        }
        let result = series(o, design, &path, &mut io, limited, &mut rows);
        if let (true, Some(l)) = (limited, limit) {
            l.leave()
                .map_err(|e| BenchError::io("cannot leave the memory cgroup", e))?;
        }
        drop(io);
        let _ = std::fs::remove_file(&path);
        result?;
    }
    Ok(rows)
}

fn series(
    o: &UbcOptions,
    design: Design,
    path: &Path,
    io: &mut Io,
    limited: bool,
    rows: &mut Vec<UbcRow>,
) -> Result<(), BenchError> {
    let block = o.block_bytes;
    let mut step =
        |name: String, bytes: u64, io: &mut Io, op: &dyn Fn(&mut Io) -> Result<(), BenchError>| {
            let (r0, w0) = device_bytes()?;
            let start = Instant::now();
            op(io)?;
            let seconds = start.elapsed().as_secs_f64();
            let (r1, w1) = device_bytes()?;
            let (page_cache_pages, pool_pages, held_twice_pages) =
                io.residency(path, o.first_bytes)?;
            rows.push(UbcRow {
                design,
                step: name,
                bytes,
                seconds,
                device_read_bytes: r1 - r0,
                device_write_bytes: w1 - w0,
                page_cache_pages,
                pool_pages,
                held_twice_pages,
                limited,
            });
            Ok::<(), BenchError>(())
        };
    step("write".into(), o.file_bytes, io, &|io| {
        io.write_all(o.file_bytes, block)
    })?;
    step("overwrite".into(), o.file_bytes, io, &|io| {
        io.write_all(o.file_bytes, block)
    })?;
    // Start the full read non-resident, as the paper's did, in every cache: the page
    // cache (fadvise) and the pool (a close drops the file's pages).
    if let Io::Pool { pool, f, .. } = io {
        pool.close(*f).map_err(|e| BenchError::pool("close", e))?;
        *f = pool.open(path).map_err(|e| BenchError::pool("reopen", e))?;
    }
    crate::os::drop_from_page_cache(path)?;
    step("read".into(), o.file_bytes, io, &|io| {
        io.read_range(o.file_bytes, block)
    })?;
    for k in 1..=o.first_reads {
        step(format!("first-{k}"), o.first_bytes, io, &|io| {
            io.read_range(o.first_bytes, block)
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small series on real files (no memory limit): every step is there, the bytes
    /// add up, and the unified pool rereads the first part from memory after its first
    /// read while `O_DIRECT` goes to the device every time. Device counts need a file
    /// system that accepts `O_DIRECT` and a kernel that accounts I/O per process; on a
    /// tmpfs (which refuses `O_DIRECT`) the direct designs are skipped with a message.
    #[test]
    #[cfg_attr(miri, ignore = "real files and system calls")]
    fn a_small_series_has_every_step_and_the_pool_rereads_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let o = UbcOptions {
            dir: dir.path().to_path_buf(),
            memory_bytes: 4 << 20,
            file_bytes: 16 << 20,
            first_bytes: 2 << 20,
            first_reads: 3,
            block_bytes: 64 << 10,
        };
        let rows = run(&o, &[Design::PoolDirect, Design::PoolBuffered], None).unwrap();
        let steps: Vec<&str> = rows.iter().map(|r| r.step.as_str()).collect();
        assert_eq!(
            steps,
            [
                "write",
                "overwrite",
                "read",
                "first-1",
                "first-2",
                "first-3",
                "write",
                "overwrite",
                "read",
                "first-1",
                "first-2",
                "first-3"
            ]
        );
        for r in &rows {
            let expect = if r.step.starts_with("first") {
                o.first_bytes
            } else {
                o.file_bytes
            };
            assert_eq!(r.bytes, expect);
        }
        let direct: Vec<&UbcRow> = rows
            .iter()
            .filter(|r| r.design == Design::PoolDirect)
            .collect();
        // after the first read of the first part, the pool holds it: no device reads
        assert_eq!(
            direct[3].pool_pages, 512,
            "2 MiB of 4 KiB pages: {:?}",
            direct[3]
        );
        assert_eq!(direct[4].device_read_bytes, 0, "{:?}", direct[4]);
        assert_eq!(direct[4].held_twice_pages, 0, "O_DIRECT: one copy");
        let buffered: Vec<&UbcRow> = rows
            .iter()
            .filter(|r| r.design == Design::PoolBuffered)
            .collect();
        assert_eq!(buffered[5].pool_pages, 512);
        assert!(
            buffered[5].held_twice_pages > 0,
            "buffered I/O leaves copies in the page cache: {:?}",
            buffered[5]
        );
    }
}
