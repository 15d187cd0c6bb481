//! Experiment 2, thesis Figure 3.2: PinRange on repeated lookups in on-disk B-tree-like
//! indexes, three ways over the same cache:
//!
//! * `linux` — the pool's Linux-like active/inactive lists alone (the thesis's stock 2Q-like
//!   Linux 2.4);
//! * `pinrange-info` — PinRange emulated by InfoReplace over those lists ("explicit
//!   information": the thesis's infoLinux);
//! * `pinrange` — PinRange as the pool's own policy ("explicit control").
//!
//! On the pool the index is a real file read with `O_DIRECT`, so every miss is a device
//! read; the run time is wall-clock and the device reads are counted twice, by the pool
//! and by the kernel (`read_bytes` of `/proc/self/io`). The same lookups also run on
//! simulated caches of the same policies, where the run time is modelled as the thesis
//! prices a miss (10 ms) and hits cost nothing.

use super::workload::IndexTree;
use super::ExperimentError;
use crate::{Config, InfoReplace, PageKey, PoolSource, SimSource};
use pool::{BufferPool, IoMode, WritePolicy};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The three ways, in the order reported.
pub const WAYS: [&str; 3] = ["linux", "pinrange-info", "pinrange"];

/// Page size of the index files and the pool.
pub const PAGE_BYTES: u64 = 4096;

/// What to run.
#[derive(Clone, Debug)]
pub struct IndexSettings {
    /// The trees.
    pub trees: Vec<IndexTree>,
    /// Lookups per tree and way (thesis: 100,000).
    pub lookups: u64,
    /// Cache size in pages (the pool's frames and the simulated caches').
    pub cache_pages: u64,
    /// PinRange's preferred range in pages.
    pub range_pages: u64,
    /// PinRange's floor for the other pages, as a fraction of the cache.
    pub rest: f64,
    /// Seed of the lookups.
    pub seed: u64,
    /// Folder for the index files (removed after each tree); `None`: simulate only.
    pub dir: Option<PathBuf>,
    /// Cost of a miss in the simulated run time (thesis: about 10 ms).
    pub miss_ms: f64,
}

impl IndexSettings {
    /// The thesis's setting scaled to this machine: the three trees, 100,000 lookups, a
    /// 64 MiB cache (16,384 pages) and PinRange preferring 90/128 of it, the share the
    /// thesis gave it on its 128 MB machine.
    pub fn thesis(dir: Option<PathBuf>, seed: u64) -> Self {
        let cache_pages = 16_384;
        IndexSettings {
            trees: IndexTree::THESIS.to_vec(),
            lookups: 100_000,
            cache_pages,
            range_pages: cache_pages * 90 / 128,
            rest: 0.1,
            seed,
            dir,
            miss_ms: 10.0,
        }
    }

    /// A small version for a quick look and tests: trees of 5 and 6 levels, 256 pages.
    pub fn quick(dir: Option<PathBuf>, seed: u64) -> Self {
        let cache_pages = 256;
        IndexSettings {
            trees: vec![
                IndexTree {
                    depth: 5,
                    fanout: 7,
                },
                IndexTree {
                    depth: 5,
                    fanout: 8,
                },
                IndexTree {
                    depth: 6,
                    fanout: 5,
                },
            ],
            lookups: 5_000,
            cache_pages,
            range_pages: cache_pages * 90 / 128,
            rest: 0.1,
            seed,
            dir,
            miss_ms: 10.0,
        }
    }

    /// PinRange as written for the policy crate.
    pub fn pinrange(&self) -> String {
        format!("pinrange:range={}:rest={}", self.range_pages, self.rest)
    }
}

/// One tree, one way, one engine.
#[derive(Clone, Debug, Serialize)]
pub struct IndexRun {
    /// `pool` (real file, `O_DIRECT`) or `sim`.
    pub engine: &'static str,
    /// `D7:F7`.
    pub tree: String,
    /// One of [`WAYS`].
    pub way: &'static str,
    /// Lookups made.
    pub lookups: u64,
    /// Page reads made by the lookups (refreshes not included).
    pub accesses: u64,
    /// Of those, hits.
    pub hits: u64,
    /// `hits / accesses`.
    pub hit_rate: f64,
    /// Pool: wall-clock seconds. Sim: misses times the miss cost.
    pub run_time_s: f64,
    /// Pages read from the device (pool: its own count; sim: misses).
    pub device_pages_read: u64,
    /// Bytes the kernel read from the device for this process during the run (pool
    /// only; 0 for sim).
    pub kernel_read_bytes: u64,
    /// Pages InfoReplace re-read.
    pub refreshes: u64,
    /// InfoReplace's overhead per access in microseconds.
    pub overhead_us: f64,
}

/// Hit rate on one level of one tree.
#[derive(Clone, Debug, Serialize)]
pub struct LevelRow {
    /// `pool` or `sim`.
    pub engine: &'static str,
    /// `D7:F7`.
    pub tree: String,
    /// One of [`WAYS`].
    pub way: &'static str,
    /// Level from 1 (the root) to the depth (the leaves), as the thesis numbers them.
    pub level: u32,
    /// Nodes on the level.
    pub nodes: u64,
    /// Reads of the level's pages.
    pub accesses: u64,
    /// Of those, hits.
    pub hits: u64,
    /// `hits / accesses`.
    pub hit_rate: f64,
}

/// Per-level tallies of one run: reads and hits on each level of a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    accesses: Vec<u64>,
    hits: Vec<u64>,
}

impl Tally {
    /// Nothing counted yet, one slot per level of `tree`.
    pub fn new(tree: &IndexTree) -> Self {
        Tally {
            accesses: vec![0; tree.depth as usize],
            hits: vec![0; tree.depth as usize],
        }
    }

    /// One read of a page on `level` (0 = the root).
    pub fn record(&mut self, level: u32, hit: bool) {
        self.accesses[level as usize] += 1;
        self.hits[level as usize] += u64::from(hit);
    }

    /// Hits on every level.
    pub fn hits(&self) -> u64 {
        self.hits.iter().sum()
    }

    /// Hits on `level` (0 = the root).
    pub fn level_hits(&self, level: u32) -> u64 {
        self.hits[level as usize]
    }

    /// Reads on `level` (0 = the root).
    pub fn level_accesses(&self, level: u32) -> u64 {
        self.accesses[level as usize]
    }

    /// Reads on every level.
    pub fn accesses(&self) -> u64 {
        self.accesses.iter().sum()
    }

    /// One row per level, numbered from 1 as the thesis does.
    pub fn rows(&self, engine: &'static str, tree: &IndexTree, way: &'static str) -> Vec<LevelRow> {
        (0..tree.depth)
            .map(|l| {
                let (a, h) = (self.accesses[l as usize], self.hits[l as usize]);
                LevelRow {
                    engine,
                    tree: tree.label(),
                    way,
                    level: l + 1,
                    nodes: tree.level_nodes(l),
                    accesses: a,
                    hits: h,
                    hit_rate: h as f64 / a.max(1) as f64,
                }
            })
            .collect()
    }
}

/// Everything: the simulator for every tree, and the pool when a folder is given.
pub fn run(settings: &IndexSettings) -> Result<(Vec<IndexRun>, Vec<LevelRow>), ExperimentError> {
    let mut runs = Vec::new();
    let mut levels = Vec::new();
    for tree in &settings.trees {
        let pages = tree.lookups(settings.lookups, settings.seed);
        for way in WAYS {
            let (run, tally) = simulate(settings, tree, way, &pages)?;
            levels.extend(tally.rows("sim", tree, way));
            runs.push(run);
        }
        if let Some(dir) = &settings.dir {
            // The process id keeps two runs sharing a folder off each other's files.
            let path = dir.join(format!(
                "index-d{}f{}-{}.bin",
                tree.depth,
                tree.fanout,
                std::process::id()
            ));
            write_index(&path, tree)?;
            let result = WAYS
                .iter()
                .map(|&way| on_pool(settings, tree, way, &pages, &path, "pool"))
                .collect::<Result<Vec<_>, _>>();
            // The file can be gigabytes: remove it whatever happened.
            let _ = std::fs::remove_file(&path);
            for (run, tally) in result? {
                levels.extend(tally.rows(run.engine, tree, run.way));
                runs.push(run);
            }
        }
    }
    Ok((runs, levels))
}

fn simulate(
    settings: &IndexSettings,
    tree: &IndexTree,
    way: &'static str,
    pages: &[u64],
) -> Result<(IndexRun, Tally), ExperimentError> {
    let c = settings.cache_pages;
    let mut tally = Tally::new(tree);
    let page = |p: u64| PageKey { file: 0, page: p };
    let (refreshes, overhead_us) = match way {
        "pinrange-info" => {
            let source = SimSource::new("linux", c, settings.seed)?;
            let mut info =
                InfoReplace::with_config(source, &settings.pinrange(), config(settings))?;
            for &p in pages {
                info.before_access(page(p))?;
                let hit = info.source_mut().access(page(p))?;
                tally.record(tree.level_of(p), hit);
            }
            let o = info.overhead();
            (
                o.refreshes,
                o.total_ns as f64 / 1000.0 / o.calls.max(1) as f64,
            )
        }
        _ => {
            let policy = if way == "linux" {
                "linux".to_string()
            } else {
                settings.pinrange()
            };
            let mut source = SimSource::new(&policy, c, settings.seed)?;
            for &p in pages {
                let hit = source.access(page(p))?;
                tally.record(tree.level_of(p), hit);
            }
            (0, 0.0)
        }
    };
    let misses = tally.accesses() - tally.hits();
    Ok((
        IndexRun {
            engine: "sim",
            tree: tree.label(),
            way,
            lookups: settings.lookups,
            accesses: tally.accesses(),
            hits: tally.hits(),
            hit_rate: tally.hits() as f64 / tally.accesses().max(1) as f64,
            run_time_s: misses as f64 * settings.miss_ms / 1000.0,
            device_pages_read: misses,
            kernel_read_bytes: 0,
            refreshes,
            overhead_us,
        },
        tally,
    ))
}

pub(crate) fn config(settings: &IndexSettings) -> Config {
    Config {
        seed: settings.seed,
        ..Config::default()
    }
}

fn io_error(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ExperimentError {
    let path = path.to_path_buf();
    move |source| ExperimentError::Io { what, path, source }
}

/// Write the tree: page `p` starts with `p` (little endian), so every lookup can check
/// it read the right node. Then sync it and drop it from the page cache, so that nothing
/// of it is cached when the pool starts.
pub(crate) fn write_index(path: &Path, tree: &IndexTree) -> Result<(), ExperimentError> {
    let file = std::fs::File::create(path).map_err(io_error("creating", path))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, &file);
    let mut node = vec![0u8; PAGE_BYTES as usize];
    for p in 0..tree.pages() {
        node[..8].copy_from_slice(&p.to_le_bytes());
        w.write_all(&node).map_err(io_error("writing", path))?;
    }
    w.flush().map_err(io_error("writing", path))?;
    drop(w);
    file.sync_all().map_err(io_error("syncing", path))?;
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
        .map_err(|e| io_error("dropping from the page cache", path)(e.into()))?;
    Ok(())
}

/// Bytes the kernel has read from storage for this process (`/proc/self/io`).
pub(crate) fn kernel_read_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("read_bytes: "))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// One way's lookups through the pool over `path` (written by [`write_index`]), reported
/// as `engine`: `pool` here; experiment 4 runs the same ways again as `pool-throttled`
/// inside a cgroup that throttles the device reads, so that both caches pay the same
/// price for a miss.
pub(crate) fn on_pool(
    settings: &IndexSettings,
    tree: &IndexTree,
    way: &'static str,
    pages: &[u64],
    path: &Path,
    engine: &'static str,
) -> Result<(IndexRun, Tally), ExperimentError> {
    let policy = if way == "pinrange" {
        settings.pinrange()
    } else {
        "linux".to_string()
    };
    let pool = BufferPool::builder()
        .capacity_frames(settings.cache_pages as usize)
        .page_size(PAGE_BYTES as usize)
        .policy(&policy)
        .io_mode(IoMode::Direct)
        .read_ahead(0)
        .free_reserve(0)
        .write_policy(WritePolicy::WriteThrough)
        .build()?;
    let handle = pool.open(path)?;
    let mut tally = Tally::new(tree);
    let mut node = [0u8; 8];
    let check = |p: u64, node: &[u8; 8]| {
        if u64::from_le_bytes(*node) == p {
            Ok(())
        } else {
            Err(io_error("reading the wrong node from", path)(
                std::io::Error::other(format!("page {p}")),
            ))
        }
    };
    let read_before = kernel_read_bytes();
    let started = Instant::now();
    let (pool, refreshes, overhead_us) = if way == "pinrange-info" {
        let mut info = InfoReplace::with_config(
            PoolSource::new(pool),
            &settings.pinrange(),
            config(settings),
        )?;
        let file = info.source_mut().adopt(handle);
        for &p in pages {
            let hit = info.source().pool().is_resident(handle, p)?;
            info.read(file, p * PAGE_BYTES, &mut node)?;
            check(p, &node)?;
            tally.record(tree.level_of(p), hit);
        }
        let o = *info.overhead();
        let us = o.total_ns as f64 / 1000.0 / o.calls.max(1) as f64;
        (info.into_source().into_pool(), o.refreshes, us)
    } else {
        for &p in pages {
            let hit = pool.is_resident(handle, p)?;
            pool.read(handle, p * PAGE_BYTES, &mut node)?;
            check(p, &node)?;
            tally.record(tree.level_of(p), hit);
        }
        (pool, 0, 0.0)
    };
    let elapsed = started.elapsed().as_secs_f64();
    let kernel = kernel_read_bytes().saturating_sub(read_before);
    let stats = pool.stats();
    Ok((
        IndexRun {
            engine,
            tree: tree.label(),
            way,
            lookups: settings.lookups,
            accesses: tally.accesses(),
            hits: tally.hits(),
            hit_rate: tally.hits() as f64 / tally.accesses().max(1) as f64,
            run_time_s: elapsed,
            device_pages_read: stats.pages_read,
            kernel_read_bytes: kernel,
            refreshes,
            overhead_us,
        },
        tally,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thesis's result in the simulator, small: PinRange keeps the upper levels and
    /// raises the level above the leaves, whether emulated or native, and the two agree.
    #[test]
    fn pinrange_helps_index_lookups_in_the_simulator() {
        let mut s = IndexSettings::quick(None, 3);
        s.trees.truncate(1);
        let (runs, levels) = run(&s).unwrap();
        assert_eq!(runs.len(), 3);
        let get = |way: &str| runs.iter().find(|r| r.way == way).unwrap();
        let level = |way: &str, l: u32| {
            levels
                .iter()
                .find(|r| r.way == way && r.level == l)
                .unwrap()
                .hit_rate
        };
        // D5:F7, cache 256, range 180: levels 1-3 (57 pages) and 123 of level 4's 343.
        assert!(get("pinrange").hits > get("linux").hits);
        assert!(get("pinrange-info").hits > get("linux").hits);
        assert!(level("pinrange", 4) > level("linux", 4));
        assert!(level("pinrange-info", 4) > level("linux", 4));
        assert!(get("pinrange-info").refreshes > 0);
        for way in WAYS {
            let r = get(way);
            assert_eq!(r.accesses, 5 * 5_000);
            assert_eq!(r.device_pages_read, r.accesses - r.hits);
        }
    }
}
