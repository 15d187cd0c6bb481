//! The real buffer pool (`bufcache-pool`) as a Dust target.
//!
//! Target string: `pool:POLICY[:param=value...]:frames=N[:blocks=M][:file=PATH]
//! [:lookup=mapped|hashed][:reserve=R][:timing=on]`. `POLICY` and its parameters are those of `bufcache policies`
//! (any policy the pool can run concurrently), `frames` is the pool's capacity (`pages` is
//! accepted too, as in `sim:` targets). Without `file` the pool reads a virtual file of
//! `blocks` pages (default `8 * frames`) whose reads cost a page of zeros and no memory,
//! so the pool's own behaviour is all that is measured; with `file=PATH` it reads that
//! file (buffered I/O), whose length sets the block count.
//!
//! What a read reports: the oracle is [`BufferPool::is_resident`] asked just before the
//! read (it neither pins nor counts, so it disturbs nothing), and with `timing=on` also
//! the wall time of reading one byte through the pool. Timing is off by default, so Dust
//! judges by the oracle: without a device behind it a miss costs the pool a microsecond
//! or two and a hit a few hundred nanoseconds when its frame header is not in the CPU
//! cache, too close for a threshold (at 20 000 frames the calibrated threshold was 243 ns
//! and verdicts were wrong). With `file=PATH` on a cold file, timing works as on Linux. Read-ahead is off: Dust reads long
//! sequential runs, and read-ahead would load pages the policy never chose. `reset` closes
//! the file (which drops its pages from the pool and the policy) and opens it again under
//! a new generation, like `posix_fadvise(DONTNEED)` on the Linux target: the pool is not
//! rebuilt, so a policy's adaptive state (ARC's target, a clock hand) carries over.
//!
//! The pool's reserve of free frames, which its flusher refills in the background, is off
//! (`reserve=0`) unless asked for: with it, which pages are resident at a probe depends on
//! when the flusher thread last ran, and Dust's size estimate wandered from run to run
//! (767 to 1000 pages at 1,000 frames, turning one Segmented FIFO in twelve into FIFO).
//! `reserve=R` keeps R free frames (the pool's default is `frames / 64`).
//!
//! What differs from a `sim:` target with the same policy, by design of the pool:
//! clock-like policies see hits as saturating per-frame counters fed at eviction time;
//! order-sensitive ones (LRU, 2Q, LRU-K, ...) see hits queued and applied in order before
//! each eviction batch; and eviction takes batches of victims at once (`frames / 32`, at
//! most 256). `docs/dust.md` shows what Dust reports for each.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use pool::{BufferPool, FileHandle, FileStorage, Lookup, OpenMode, Storage, StorageFile};

use crate::target::{bad_target, check_block, on_off, policy_text, split_spec, Read, Target};
use crate::DustError;

/// Page size of the pool under test (the pool's default and smallest).
const PAGE_BYTES: u64 = 4096;

/// The pool over one file, probed page by page.
pub struct PoolTarget {
    pool: BufferPool,
    file: FileHandle,
    path: PathBuf,
    blocks: u64,
    frames: usize,
    label: String,
    timing: bool,
}

/// A file of zeros that exists only as a length: the pool reads it without a device or
/// memory behind it, so a 640 000-block target costs nothing.
#[derive(Clone, Copy, Debug)]
struct VirtualStorage {
    blocks: u64,
}

struct VirtualFile {
    len: u64,
}

impl Storage for VirtualStorage {
    fn open(&self, _path: &Path, _mode: OpenMode) -> io::Result<Arc<dyn StorageFile>> {
        Ok(Arc::new(VirtualFile {
            len: self.blocks * PAGE_BYTES,
        }))
    }
}

impl StorageFile for VirtualFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = self.len.saturating_sub(offset).min(buf.len() as u64) as usize;
        buf[..n].fill(0);
        Ok(n)
    }

    fn write_at(&self, _buf: &[u8], _offset: u64) -> io::Result<usize> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "Dust's virtual file is read-only",
        ))
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.len)
    }

    fn set_len(&self, _len: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "Dust's virtual file is read-only",
        ))
    }
}

/// What a `pool:` string asks for.
struct PoolSpec {
    policy: String,
    frames: usize,
    blocks: Option<u64>,
    file: Option<PathBuf>,
    lookup: Lookup,
    timing: bool,
    reserve: usize,
}

fn parse_spec(text: &str) -> Result<PoolSpec, DustError> {
    let bad = |why: String| bad_target(text, why);
    let (name, pairs) = split_spec(text, "pool", "frames")?;
    let mut spec = PoolSpec {
        policy: String::new(),
        frames: 0,
        blocks: None,
        file: None,
        lookup: Lookup::Mapped,
        timing: false,
        reserve: 0,
    };
    let mut params = Vec::new();
    for (k, v) in pairs {
        match k {
            "frames" | "pages" => {
                spec.frames = v
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| (64..=1 << 24).contains(&n))
                    .ok_or_else(|| bad(format!("{k}={v}: expected 64 to 2^24 frames")))?;
            }
            "blocks" => {
                spec.blocks = Some(
                    v.parse::<u64>()
                        .map_err(|_| bad(format!("blocks={v}: expected a number of blocks")))?,
                )
            }
            "file" => spec.file = Some(PathBuf::from(v)),
            "reserve" => {
                spec.reserve = v
                    .parse::<usize>()
                    .map_err(|_| bad(format!("reserve={v}: expected a number of frames")))?
            }
            "timing" => spec.timing = on_off(text, k, v)?,
            "lookup" => {
                spec.lookup = match v {
                    "mapped" => Lookup::Mapped,
                    "hashed" => Lookup::Hashed,
                    _ => return Err(bad(format!("lookup={v}: expected mapped or hashed"))),
                }
            }
            _ => params.push((k, v)),
        }
    }
    spec.policy = policy_text(name, &params);
    if spec.frames == 0 {
        return Err(bad(
            "the pool size is missing: add `:frames=N` (for example pool:lru:frames=1000)".into(),
        ));
    }
    if spec.file.is_some() && spec.blocks.is_some() {
        return Err(bad(
            "give `file` or `blocks`, not both: a real file's length sets the block count".into(),
        ));
    }
    Ok(spec)
}

impl PoolTarget {
    /// Build the pool a `pool:` string describes and open its file.
    pub fn parse(text: &str) -> Result<Self, DustError> {
        let spec = parse_spec(text)?;
        let bad = |why: String| DustError::BadTarget {
            target: text.to_string(),
            why,
        };
        let builder = BufferPool::builder()
            .capacity_frames(spec.frames)
            .page_size(PAGE_BYTES as usize)
            .policy(&spec.policy)
            .lookup(spec.lookup)
            .free_reserve(spec.reserve)
            .read_ahead(0);
        let (pool, path) = match &spec.file {
            Some(path) => (builder.build_with_storage(FileStorage), path.clone()),
            None => {
                let blocks = spec.blocks.unwrap_or(8 * spec.frames as u64);
                let storage = VirtualStorage { blocks };
                (
                    builder.build_with_storage(storage),
                    PathBuf::from("dust-virtual-file"),
                )
            }
        };
        let pool = pool.map_err(|e| bad(format!("the pool refuses it: {e}")))?;
        let file = pool.open(&path).map_err(|e| DustError::Io {
            what: "opening through the pool",
            path: path.display().to_string(),
            source: io::Error::other(e.to_string()),
        })?;
        let len = pool.len(file).map_err(|e| bad(e.to_string()))?;
        let blocks = len / PAGE_BYTES;
        if blocks < 2 * spec.frames as u64 || blocks > 1 << 32 {
            return Err(bad(format!(
                "the file has {blocks} blocks of 4 KiB: give between 2*frames ({}) and 2^32",
                2 * spec.frames
            )));
        }
        let mut label = match &spec.file {
            Some(p) => format!(
                "pool:{}:frames={}:file={}",
                spec.policy,
                spec.frames,
                p.display()
            ),
            None => format!(
                "pool:{}:frames={}:blocks={blocks}",
                spec.policy, spec.frames
            ),
        };
        if spec.reserve > 0 {
            label.push_str(&format!(":reserve={}", spec.reserve));
        }
        if spec.timing {
            label.push_str(":timing=on");
        }
        Ok(PoolTarget {
            pool,
            file,
            path,
            blocks,
            frames: spec.frames,
            label,
            timing: spec.timing,
        })
    }

    /// The pool's capacity in frames (for tests; Dust itself does not look).
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// The pool under test (for its statistics).
    pub fn pool(&self) -> &BufferPool {
        &self.pool
    }

    fn io_error(&self, what: &'static str, e: pool::PoolError) -> DustError {
        DustError::Io {
            what,
            path: self.path.display().to_string(),
            source: io::Error::other(e.to_string()),
        }
    }

    #[inline]
    fn read_byte(&self, block: u64) -> Result<(), DustError> {
        let mut byte = [0u8; 1];
        self.pool
            .read(self.file, block * PAGE_BYTES, &mut byte)
            .map_err(|e| self.io_error("reading through the pool", e))?;
        Ok(())
    }
}

impl Target for PoolTarget {
    fn describe(&self) -> String {
        self.label.clone()
    }

    fn blocks(&self) -> u64 {
        self.blocks
    }

    fn read(&mut self, block: u64) -> Result<Read, DustError> {
        check_block(block, self.blocks)?;
        let resident = self
            .pool
            .is_resident(self.file, block)
            .map_err(|e| self.io_error("asking the pool about", e))?;
        let start = self.timing.then(Instant::now);
        self.read_byte(block)?;
        Ok(Read {
            latency_ns: start.map(|t| t.elapsed().as_nanos() as u64),
            resident: Some(resident),
        })
    }

    fn reset(&mut self) -> Result<(), DustError> {
        self.pool
            .close(self.file)
            .map_err(|e| self.io_error("closing in the pool", e))?;
        self.file = self
            .pool
            .open(&self.path)
            .map_err(|e| self.io_error("reopening through the pool", e))?;
        Ok(())
    }

    fn touch_range(&mut self, blocks: std::ops::Range<u64>, repeat: u32) -> Result<(), DustError> {
        if let Some(last) = blocks.clone().last() {
            check_block(last, self.blocks)?;
        }
        for b in blocks {
            for _ in 0..repeat {
                self.read_byte(b)?;
            }
        }
        Ok(())
    }

    fn has_timing(&self) -> bool {
        self.timing
    }

    fn has_oracle(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_reports_what_was_resident_before_it() {
        let mut t = PoolTarget::parse("pool:lru:frames=64").unwrap();
        assert_eq!(t.blocks(), 512);
        assert_eq!(t.read(3).unwrap().resident, Some(false));
        assert_eq!(t.read(3).unwrap().resident, Some(true));
        t.reset().unwrap();
        assert_eq!(t.read(3).unwrap().resident, Some(false));
        let s = t.pool().stats();
        // the oracle's questions are not hits: one miss, one hit, one miss after reset
        assert_eq!((s.misses, s.hits), (2, 1));
        assert!(matches!(
            t.read(512),
            Err(DustError::OutOfRange { block: 512, .. })
        ));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "opens a real path, which Miri's isolation forbids; the test above runs the pool under Miri"
    )]
    fn bad_pool_targets_say_what_is_wrong() {
        for (text, says) in [
            ("pool:", "expected pool:POLICY"),
            ("pool:lru", "pool size is missing"),
            ("pool:lru:frames=10", "64 to 2^24"),
            ("pool:lru:frames=64:blocks=100", "between 2*frames"),
            ("pool:belady:frames=64", "the pool refuses it"),
            ("pool:lru:frames=64:lookup=tree", "mapped or hashed"),
            ("pool:lru:frames=64:oops", "name=value"),
            ("pool:lru:frames=64:file=/x:blocks=9", "not both"),
            ("pool:lru:frames=64:timing=maybe", "on or off"),
        ] {
            let e = PoolTarget::parse(text).err().expect(text).to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        let e = PoolTarget::parse("pool:lru:frames=64:file=/nonexistent/dust")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/nonexistent/dust"), "{e}");
    }
}
