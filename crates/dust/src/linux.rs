//! The Linux page cache, probed through one file.
//!
//! * `read` times a one-byte `pread` at the start of the block (wall clock,
//!   `std::time::Instant`), and asks beforehand whether the page was resident: the ground
//!   truth. Where the kernel has it (Linux 6.5 and later) that is `cachestat(2)` over the
//!   one page, a question about the file's page cache that needs no mapping; elsewhere
//!   `mincore(2)` on a `PROT_READ` mapping of the file that is never touched (so it maps
//!   nothing and cannot keep pages alive). [`LinuxTarget::truth`] says which is used.
//! * `reset` is `posix_fadvise(POSIX_FADV_DONTNEED)` over the whole file: clean, unmapped
//!   pages are dropped at once.
//! * The file is opened with `POSIX_FADV_RANDOM`, which turns read-ahead off for it:
//!   otherwise one miss would bring in its neighbours and Dust's sequential set-up reads
//!   would be mostly read-ahead hits.
//!
//! Blocks are pages (`sysconf(_SC_PAGESIZE)`, 4 KiB on x86-64).
//!
//! The page cache is not a fixed-size cache: it grows into all free memory and shrinks
//! under pressure from anything else. Dust therefore only sees replacement when the file's
//! pages compete for a bounded amount of memory: run it in a memory cgroup with a limit
//! (its page cache is charged to the cgroup), or with a file larger than free memory.
//! `docs/dust.md` says how to arrange either safely.
//!
//! The system calls themselves are wrapped once, in `bufcache-linux`'s `page_cache`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Instant;

use linux::page_cache as sys;

use crate::target::{check_block, Read, Target};
use crate::DustError;

/// The page cache behind one file.
#[derive(Debug)]
pub struct LinuxTarget {
    path: String,
    file: File,
    map: sys::Mapping,
    page_bytes: u64,
    blocks: u64,
    residency: Vec<u8>,
    truth: Truth,
}

/// Which system call tells whether a page is resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    /// `cachestat(2)`, Linux 6.5 and later.
    Cachestat,
    /// `mincore(2)` on a mapping of the file.
    Mincore,
}

impl LinuxTarget {
    /// Parse `linux:PATH` and open the file.
    pub fn parse(text: &str) -> Result<Self, DustError> {
        let path = text
            .strip_prefix("linux:")
            .filter(|p| !p.is_empty())
            .ok_or_else(|| DustError::BadTarget {
                target: text.to_string(),
                why: "expected linux:PATH, the path of a file to read through the page cache"
                    .into(),
            })?;
        Self::open(path)
    }

    /// Open `path` for probing.
    pub fn open(path: &str) -> Result<Self, DustError> {
        let io = |what: &'static str| {
            move |source| DustError::Io {
                what,
                path: path.to_string(),
                source,
            }
        };
        let file = File::open(path).map_err(io("opening"))?;
        let len = file
            .metadata()
            .map_err(io("reading the metadata of"))?
            .len();
        let page_bytes = sys::page_size();
        let blocks = len / page_bytes;
        if blocks < 64 {
            return Err(DustError::BadTarget {
                target: format!("linux:{path}"),
                why: format!("the file has {blocks} pages; Dust needs a file several times larger than the cache"),
            });
        }
        sys::fadvise(&file, sys::Advice::Random).map_err(io("advising random access on"))?;
        let map = sys::Mapping::new(&file, blocks * page_bytes).map_err(io("mapping"))?;
        // A kernel without cachestat answers ENOSYS (seccomp filters may say EPERM).
        let truth = match sys::cached_pages(&file, 0, page_bytes) {
            Ok(_) => Truth::Cachestat,
            Err(_) => Truth::Mincore,
        };
        Ok(LinuxTarget {
            path: path.to_string(),
            file,
            map,
            page_bytes,
            blocks,
            residency: vec![0u8; 1],
            truth,
        })
    }

    /// The ground truth in use.
    pub fn truth(&self) -> Truth {
        self.truth
    }

    /// Whether a page of the file is resident, without touching it. A block past the end
    /// of the file is an error ([`DustError::OutOfRange`]).
    pub fn resident(&mut self, block: u64) -> Result<bool, DustError> {
        check_block(block, self.blocks)?;
        match self.truth {
            Truth::Cachestat => {
                sys::cached_pages(&self.file, block * self.page_bytes, self.page_bytes)
                    .map(|cached| cached > 0)
                    .map_err(|source| DustError::Io {
                        what: "cachestat on",
                        path: self.path.clone(),
                        source,
                    })
            }
            Truth::Mincore => self.resident_by_mincore(block),
        }
    }

    /// Whether a page of the file is resident, by `mincore` (whatever `truth` says). A
    /// block past the end of the file is an error ([`DustError::OutOfRange`]): checked here,
    /// and not only by the mapping, because `block * page_bytes` of a huge block wraps
    /// around to an offset inside it.
    pub fn resident_by_mincore(&mut self, block: u64) -> Result<bool, DustError> {
        check_block(block, self.blocks)?;
        self.map
            .mincore(
                block * self.page_bytes,
                self.page_bytes,
                &mut self.residency,
            )
            .map_err(|source| DustError::Io {
                what: "mincore on",
                path: self.path.clone(),
                source,
            })?;
        Ok(self.residency[0] & 1 == 1)
    }

    fn pread(&self, block: u64) -> Result<(), DustError> {
        let mut byte = [0u8; 1];
        self.file
            .read_exact_at(&mut byte, block * self.page_bytes)
            .map_err(|source| DustError::Io {
                what: "reading",
                path: self.path.clone(),
                source,
            })
    }
}

impl Target for LinuxTarget {
    fn describe(&self) -> String {
        let truth = match self.truth {
            Truth::Cachestat => "cachestat",
            Truth::Mincore => "mincore",
        };
        format!(
            "linux:{} ({} pages of {} bytes, ground truth {truth})",
            self.path, self.blocks, self.page_bytes
        )
    }

    fn blocks(&self) -> u64 {
        self.blocks
    }

    fn read(&mut self, block: u64) -> Result<Read, DustError> {
        check_block(block, self.blocks)?;
        let resident = self.resident(block)?;
        let start = Instant::now();
        self.pread(block)?;
        let latency_ns = start.elapsed().as_nanos() as u64;
        Ok(Read {
            latency_ns: Some(latency_ns),
            resident: Some(resident),
        })
    }

    fn reset(&mut self) -> Result<(), DustError> {
        sys::fadvise(&self.file, sys::Advice::DontNeed).map_err(|source| DustError::Io {
            what: "dropping the cached pages of",
            path: self.path.clone(),
            source,
        })
    }

    fn touch_range(&mut self, blocks: std::ops::Range<u64>, repeat: u32) -> Result<(), DustError> {
        if let Some(last) = blocks.clone().last() {
            check_block(last, self.blocks)?;
        }
        for b in blocks {
            for _ in 0..repeat {
                self.pread(b)?;
            }
        }
        Ok(())
    }

    fn has_timing(&self) -> bool {
        true
    }

    fn has_oracle(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// cachestat and mincore agree page by page, after reading some pages and after
    /// dropping them (on a kernel without cachestat both answers are mincore's).
    #[test]
    #[cfg_attr(
        miri,
        ignore = "real files, mmap, mincore and cachestat are outside what Miri emulates"
    )]
    fn cachestat_and_mincore_agree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("truth.dat");
        std::fs::write(&path, vec![7u8; 128 * 4096]).unwrap();
        let mut t = LinuxTarget::parse(&format!("linux:{}", path.display())).unwrap();
        if t.truth() == Truth::Mincore {
            eprintln!("no cachestat on this kernel: only mincore is checked");
        }
        t.reset().unwrap();
        for b in (0..t.blocks()).step_by(3) {
            t.pread(b).unwrap();
        }
        let agree = |t: &mut LinuxTarget| {
            for b in 0..t.blocks() {
                assert_eq!(
                    t.resident(b).unwrap(),
                    t.resident_by_mincore(b).unwrap(),
                    "page {b}"
                );
            }
        };
        agree(&mut t);
        assert!(t.resident(3).unwrap());
        t.reset().unwrap();
        agree(&mut t);
    }

    /// Huge block numbers are errors, not pointers. `block * page` wraps (to 0 for
    /// 2^52 four-KiB pages, to the page before the mapping for u64::MAX), and the mapping's
    /// bounds check added two u64s that could wrap too, so such a block reached `ptr.add`
    /// out of bounds behind a safe function.
    #[test]
    #[cfg_attr(miri, ignore = "real files and mmap are outside what Miri emulates")]
    fn huge_block_numbers_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.dat");
        let page = sys::page_size();
        std::fs::write(&path, vec![1u8; 64 * page as usize]).unwrap();
        let mut t = LinuxTarget::parse(&format!("linux:{}", path.display())).unwrap();
        for block in [
            t.blocks(),
            1 << 52,
            u64::MAX / page,
            u64::MAX / page + 1,
            u64::MAX,
        ] {
            for r in [t.resident_by_mincore(block), t.resident(block)] {
                assert!(
                    matches!(r, Err(DustError::OutOfRange { .. })),
                    "block {block}: {r:?}"
                );
            }
            assert!(t.read(block).is_err(), "block {block}");
        }
        // The mapping's own check, with ranges whose end wraps past 2^64 to 0.
        let mut out = [0u8; 2];
        for (offset, len) in [
            (0u64.wrapping_sub(page), page),
            (0u64.wrapping_sub(2 * page), 2 * page),
        ] {
            let e = t.map.mincore(offset, len, &mut out).unwrap_err();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::InvalidInput,
                "{offset} + {len}: {e}"
            );
        }
        // In range, it still answers.
        assert!(t.resident_by_mincore(t.blocks() - 1).is_ok());
        t.map.mincore(0, 2 * page, &mut out).unwrap();
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "real files, mmap, mincore and cachestat are outside what Miri emulates"
    )]
    fn reads_are_timed_and_judged_against_mincore() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe.dat");
        let mut f = File::create(&path).unwrap();
        let page = vec![0x5au8; 4096];
        for _ in 0..256 {
            f.write_all(&page).unwrap();
        }
        f.sync_all().unwrap();
        drop(f);
        let mut t = LinuxTarget::parse(&format!("linux:{}", path.display())).unwrap();
        assert!(t.blocks() >= 256 * 4096 / sys::page_size());
        t.reset().unwrap();
        let first = t.read(3).unwrap();
        assert!(first.latency_ns.is_some());
        // After a read the page is resident, whatever it was before.
        assert!(t.resident(3).unwrap());
        assert_eq!(t.read(3).unwrap().resident, Some(true));
        assert!(t.read(t.blocks()).is_err());
        assert!(t.describe().contains("ground truth"));
        assert!(LinuxTarget::parse("linux:").is_err());
        assert!(LinuxTarget::parse("linux:/nonexistent/file").is_err());
    }
}
