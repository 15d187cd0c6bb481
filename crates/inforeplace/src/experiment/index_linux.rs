//! Experiment 4, beyond the thesis: Figure 3.2 (PinRange on index lookups) with the
//! **unmodified Linux page cache** as the cache, steered through the algorithmic mirror
//! of experiment 3 ([`crate::PageCacheSource`]), inside a memory cgroup sized like the
//! pool's cache in experiment 2.
//!
//! For each tree: the index file of experiment 2 is written, synced and dropped from the
//! page cache; then, in a memory cgroup made for the pass (experiment 3's code:
//! [`super::linux::in_memory_cgroup`]), each way reads the same lookups with buffered
//! one-byte `pread`s (read-ahead off, so a miss is one device read of one page), from a
//! cold cache (the file's pages are dropped before each way):
//!
//! * `linux` — the plain page cache, a mirror following only to predict hits;
//! * `pinrange-info` — PinRange emulated by InfoReplace over the mirror's victim list,
//!   steering by re-reads alone (the thesis's infoLinux);
//! * `pinrange-info+verify` — re-reads, but each page about to be re-read is first looked
//!   up in the ground truth (`cachestat`): one the kernel already took is not read back
//!   (a device read that would evict another page) but removed from the mirror;
//! * `pinrange-info+dontneed` — the same as `pinrange-info`, and each page PinRange
//!   evicts is dropped with `POSIX_FADV_DONTNEED`, so the kernel finds free pages and
//!   need not choose.
//!
//! `WILLNEED` and `RWF_DONTCACHE` are not used: PinRange admits every page it reads, so
//! there is nothing to read uncached, and `WILLNEED` brings a page in without raising it.
//!
//! Before every read the ground truth (`cachestat`, else `mincore`) says whether the page
//! is cached: the hit rates are the kernel's, per level, beside the mirror's predictions;
//! the probes' time is left out of the run time. At the end every page of the file is
//! compared (mirror against kernel, per level). Device reads are this process's
//! `read_bytes` (`/proc/self/io`) and the disk's own counters.
//!
//! A pass may throttle the cgroup's reads to a number of requests a second
//! (`blkio.throttle.read_iops_device` on cgroup v1, `io.max riops=` on v2): this virtual
//! disk answers a 4 KiB read in about 100 µs where the thesis's took 10 ms, so misses
//! saved show in the run time only when reads cost what they did. After a throttled pass,
//! experiment 2's `linux` and `pinrange` ways run through the pool again under the same
//! throttle (engine `pool-throttled`, a pool as large as the page cache's limit), so that
//! the run-time goal compares the two caches at the same price of a device read.
//!
//! The mirror's size is measured once by Dust inside the first pass's cgroup (experiment
//! 3's [`super::linux::measure_size`]), unless given, and made [`MEMCG_CHARGE_BATCH`]
//! pages smaller: with the `DONTNEED` lever the kernel then never has to reclaim, so it
//! holds exactly what PinRange holds (at the measured size it reclaimed a few wanted
//! pages, 96% of the level above the leaves against 100% in a quick run). PinRange runs
//! on a cache of the mirror's size; its range is the same share of it as in experiment 2
//! (90/128). A throttled pass runs only the plain way and `DONTNEED` by default: re-reads
//! alone multiply device reads (docs/experiments/inforeplace.md), which a throttle turns
//! into minutes.

use super::index::{self, IndexRun, IndexSettings, LevelRow, Tally, PAGE_BYTES};
use super::linux::{fresh_source, in_memory_cgroup, measure_size, Meter};
use super::workload::IndexTree;
use super::ExperimentError;
use crate::{
    Agreement, InfoReplace, KernelFile, Levers, Overhead, PageCacheFile, PageCacheSource, ReadHow,
};
use linux::DeviceCounter;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The ways over the page cache, in the order reported: the name, and the levers of
/// InfoReplace (`None`: not steered).
pub const PAGE_CACHE_WAYS: [(&str, Option<Levers>); 4] = [
    ("linux", None),
    ("pinrange-info", Some(lever(false, false))),
    ("pinrange-info+verify", Some(lever(false, true))),
    ("pinrange-info+dontneed", Some(lever(true, false))),
];

/// The levers of a way: `DONTNEED` on PinRange's evictions, ground truth before refreshes.
const fn lever(drop_target_evictions: bool, verify_refreshes: bool) -> Levers {
    Levers {
        drop_target_evictions,
        dontcache: false,
        verify_refreshes,
    }
}

/// Pages a memory cgroup charges ahead per CPU (`MEMCG_CHARGE_BATCH`): the kernel may
/// start reclaiming that much before the file's pages alone reach the size Dust measured,
/// so a mirror of the measured size thinks a page safe that the kernel has just taken.
pub const MEMCG_CHARGE_BATCH: u64 = 64;

/// What to run.
#[derive(Clone, Debug)]
pub struct IndexLinuxSettings {
    /// Trees, lookups, PinRange's range share and floor, seed (experiment 2's).
    pub index: IndexSettings,
    /// Folder of the index files, on a disk (not tmpfs).
    pub dir: PathBuf,
    /// The memory cgroup's limit in MiB (the pool's cache in experiment 2: 64).
    pub limit_mib: u64,
    /// The mirror's policy.
    pub mirror_policy: String,
    /// The mirror's size in pages; `None`: measured by Dust in the first cgroup, less
    /// `mirror_slack_pages`.
    pub mirror_pages: Option<u64>,
    /// Pages a measured mirror is made smaller than the kernel's share (module docs).
    pub mirror_slack_pages: u64,
    /// One pass per entry: reads throttled to that many a second, or not (`None`).
    pub read_iops: Vec<Option<u64>>,
    /// The ways an unthrottled pass runs (names of [`PAGE_CACHE_WAYS`]).
    pub ways: Vec<&'static str>,
    /// The ways a throttled pass runs.
    pub throttled_ways: Vec<&'static str>,
    /// After a throttled pass, run experiment 2's pool ways (`linux`, `pinrange`) under
    /// the same throttle, as engine `pool-throttled`: the page cache's gain is then held
    /// to the pool's at the same price of a device read, not to the unthrottled pool's,
    /// whose time is mostly its own CPU.
    pub pool_under_throttle: bool,
}

impl IndexLinuxSettings {
    /// Keep only the ways named in `names` (both passes); an unknown name is an error
    /// listing the known ones.
    pub fn only_ways(&mut self, names: &[String]) -> Result<(), ExperimentError> {
        let mut kept = Vec::new();
        for n in names {
            let way = PAGE_CACHE_WAYS
                .iter()
                .map(|(w, _)| *w)
                .find(|w| w == n)
                .ok_or_else(|| ExperimentError::UnknownWay {
                    way: n.clone(),
                    known: PAGE_CACHE_WAYS.map(|(w, _)| w).join(", "),
                })?;
            kept.push(way);
        }
        self.throttled_ways.retain(|w| kept.contains(w));
        self.ways = kept;
        Ok(())
    }

    /// Experiment 2's setting in a cgroup of the pool's cache size (64 MiB); `quick`: one
    /// tree D6:F7 in 16 MiB, large enough for the mirror's size to be measured.
    pub fn new(index: IndexSettings, dir: PathBuf, quick: bool) -> Self {
        let mut index = index;
        let limit_mib = if quick {
            index.trees = vec![IndexTree {
                depth: 6,
                fanout: 7,
            }];
            16
        } else {
            (index.cache_pages * PAGE_BYTES) >> 20
        };
        IndexLinuxSettings {
            index,
            dir,
            limit_mib,
            mirror_policy: "linux".into(),
            mirror_pages: None,
            mirror_slack_pages: MEMCG_CHARGE_BATCH,
            read_iops: vec![None],
            ways: PAGE_CACHE_WAYS.map(|(w, _)| w).to_vec(),
            throttled_ways: vec!["linux", "pinrange-info+verify", "pinrange-info+dontneed"],
            pool_under_throttle: true,
        }
    }
}

/// One tree, one way, one pass: what experiment 2's row has not.
#[derive(Clone, Debug, Serialize)]
pub struct PageCacheIndexRow {
    /// `pagecache`, or `pagecache-throttled` when reads were throttled.
    pub engine: &'static str,
    /// `D7:F7`.
    pub tree: String,
    /// One of [`PAGE_CACHE_WAYS`].
    pub way: &'static str,
    /// Device reads allowed a second (0: not throttled).
    pub read_iops: u64,
    /// The mirror's policy.
    pub mirror: String,
    /// The mirror's size in pages (PinRange's cache too).
    pub mirror_pages: u64,
    /// PinRange's preferred range in pages.
    pub range_pages: u64,
    /// Lookups made.
    pub lookups: u64,
    /// Page reads made by the lookups (refreshes not included).
    pub accesses: u64,
    /// Of those, cached before the read (the ground truth).
    pub hits: u64,
    /// Of those, predicted cached by the mirror.
    pub predicted_hits: u64,
    /// Share of reads whose hit or miss the mirror predicted right.
    pub predicted_right: f64,
    /// Share of the file's pages on which mirror and kernel agree at the end (padded by
    /// the many leaves neither holds).
    pub agreement: f64,
    /// Share of the pages either holds at the end that both hold: the agreement on what
    /// is cached, not padded.
    pub cached_agreement: f64,
    /// Pages cached in the mirror only at the end.
    pub mirror_only: u64,
    /// Pages cached in the kernel only at the end.
    pub kernel_only: u64,
    /// Pages this process read from storage (`read_bytes` / 4096), refreshes included.
    pub device_pages_read: u64,
    /// Bytes the whole disk read meanwhile (every process's).
    pub disk_read_bytes: u64,
    /// Wall-clock seconds, the ground-truth probes left out.
    pub run_time_s: f64,
    /// Seconds spent asking the ground truth before each read (not in the run time).
    pub probe_s: f64,
    /// Pages InfoReplace re-read.
    pub refreshes: u64,
    /// Pages dropped with `DONTNEED`.
    pub dropped: u64,
    /// Refreshes not made because the kernel had already taken the page (`verify`).
    pub corrected: u64,
    /// InfoReplace's time per lookup in microseconds (refreshes included).
    pub overhead_us_per_lookup: f64,
    /// ... of which checking victim lists, per read.
    pub check_us: f64,
    /// ... refreshing and dropping, per read.
    pub refresh_us: f64,
    /// ... simulating PinRange, per read.
    pub simulate_us: f64,
    /// ... the rest, per read.
    pub rest_us: f64,
    /// The machine's load average over a minute when the way started.
    pub load_avg: f64,
}

/// One level of one tree, one way, one pass.
#[derive(Clone, Debug, Serialize)]
pub struct PageCacheLevelRow {
    /// As [`PageCacheIndexRow::engine`].
    pub engine: &'static str,
    /// `D7:F7`.
    pub tree: String,
    /// One of [`PAGE_CACHE_WAYS`].
    pub way: &'static str,
    /// Level from 1 (the root).
    pub level: u32,
    /// Nodes on the level.
    pub nodes: u64,
    /// Reads of the level's pages.
    pub accesses: u64,
    /// Of those, cached before the read (ground truth).
    pub hits: u64,
    /// Of those, predicted cached by the mirror.
    pub predicted_hits: u64,
    /// The level's pages cached in the kernel at the end.
    pub kernel_resident_end: u64,
    /// The level's pages cached in the mirror at the end.
    pub mirror_resident_end: u64,
}

/// Everything experiment 4 measured.
#[derive(Clone, Debug, Default)]
pub struct PageCacheIndex {
    /// Kernel release.
    pub kernel: String,
    /// Each pass's cgroup as described by the run (version, limit, throttle).
    pub cgroups: Vec<String>,
    /// Ground truth in use (`cachestat` or `mincore`).
    pub truth: &'static str,
    /// The rows in experiment 2's shape (for its CSV, table and figure).
    pub runs: Vec<IndexRun>,
    /// Hit rate per level in experiment 2's shape.
    pub levels: Vec<LevelRow>,
    /// What experiment 2's rows have not.
    pub rows: Vec<PageCacheIndexRow>,
    /// Per level: predictions and the end state.
    pub level_rows: Vec<PageCacheLevelRow>,
}

impl PageCacheIndex {
    /// Lists a pass's cgroup, as the run described it, once however many trees used it.
    fn note_cgroup(&mut self, described: String) {
        if !self.cgroups.contains(&described) {
            self.cgroups.push(described);
        }
    }
}

/// The lookups of one way, counted.
#[derive(Clone, Debug)]
pub struct Lookups {
    /// Hits per level, from the ground truth before each read.
    pub truth: Tally,
    /// Hits per level, as the mirror predicted them.
    pub predicted: Tally,
    /// Reads whose hit or miss the mirror predicted right.
    pub predicted_right: u64,
    /// Time asking the ground truth.
    pub probe: Duration,
    /// InfoReplace's overhead (zero when not steered).
    pub overhead: Overhead,
}

/// The page cache read plainly or through InfoReplace.
enum Reader<K: PageCacheFile> {
    Plain(Box<PageCacheSource<K>>),
    Steered(Box<InfoReplace<PageCacheSource<K>>>),
}

impl<K: PageCacheFile> Reader<K> {
    fn source(&self) -> &PageCacheSource<K> {
        match self {
            Reader::Plain(s) => s,
            Reader::Steered(info) => info.source(),
        }
    }

    /// Read `page`; whether the mirror predicted a hit.
    fn read(&mut self, page: u64) -> Result<bool, ExperimentError> {
        Ok(match self {
            Reader::Plain(s) => s.read(page, ReadHow::Cached)?,
            Reader::Steered(info) => info.read_page(page)?,
        })
    }
}

/// Read the lookups' `pages` of `tree` through `source`, plainly (`target` `None`) or
/// with InfoReplace emulating `target`; ask the ground truth before each read. Returns
/// the counts and the source, for the end state ([`end_state`]). Generic over the
/// kernel so that a simulated one can check the driver.
pub fn drive<K: PageCacheFile>(
    source: PageCacheSource<K>,
    tree: &IndexTree,
    pages: &[u64],
    target: Option<(&str, crate::Config)>,
) -> Result<(Lookups, PageCacheSource<K>), ExperimentError> {
    let mut reader = match target {
        None => Reader::Plain(Box::new(source)),
        Some((policy, config)) => {
            Reader::Steered(Box::new(InfoReplace::with_config(source, policy, config)?))
        }
    };
    let mut counts = Lookups {
        truth: Tally::new(tree),
        predicted: Tally::new(tree),
        predicted_right: 0,
        probe: Duration::ZERO,
        overhead: Overhead::default(),
    };
    for &p in pages {
        let asked = Instant::now();
        let cached = reader.source().kernel().resident(p)?;
        counts.probe += asked.elapsed();
        let predicted = reader.read(p)?;
        let level = tree.level_of(p);
        counts.truth.record(level, cached);
        counts.predicted.record(level, predicted);
        counts.predicted_right += u64::from(cached == predicted);
    }
    let source = match reader {
        Reader::Plain(s) => *s,
        Reader::Steered(info) => {
            counts.overhead = *info.overhead();
            info.into_source()
        }
    };
    Ok((counts, source))
}

/// Mirror against kernel on every page of `tree`'s file: the whole file's agreement and,
/// per level, (pages the kernel holds, pages the mirror holds).
pub fn end_state<K: PageCacheFile>(
    source: &PageCacheSource<K>,
    tree: &IndexTree,
) -> Result<(Agreement, Vec<(u64, u64)>), ExperimentError> {
    let mut agreement = Agreement {
        pages: tree.pages(),
        ..Agreement::default()
    };
    let mut per_level = Vec::with_capacity(tree.depth as usize);
    for level in 0..tree.depth {
        let start = tree.level_start(level);
        let (mut kernel, mut mirror) = (0, 0);
        for page in start..start + tree.level_nodes(level) {
            let k = source.kernel().resident(page)?;
            let m = source.mirror().contains(page);
            kernel += u64::from(k);
            mirror += u64::from(m);
            match (m, k) {
                (true, false) => agreement.mirror_only += 1,
                (false, true) => agreement.kernel_only += 1,
                _ => agreement.agree += 1,
            }
        }
        per_level.push((kernel, mirror));
    }
    Ok((agreement, per_level))
}

/// Run it (module docs).
pub fn run(settings: &IndexLinuxSettings) -> Result<PageCacheIndex, ExperimentError> {
    let limit_pages = (settings.limit_mib << 20) / PAGE_BYTES;
    let mut out = PageCacheIndex {
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        ..PageCacheIndex::default()
    };
    let mut mirror_pages = settings.mirror_pages;
    for tree in &settings.index.trees {
        let path = settings.dir.join(format!(
            "index-linux-d{}f{}-{}.bin",
            tree.depth,
            tree.fanout,
            std::process::id()
        ));
        index::write_index(&path, tree)?;
        let result = passes(
            settings,
            tree,
            &path,
            limit_pages,
            &mut mirror_pages,
            &mut out,
        );
        // The file can be gigabytes: remove it whatever happened.
        let _ = std::fs::remove_file(&path);
        result?;
    }
    Ok(out)
}

/// Every pass (throttled or not) over one tree's file.
fn passes(
    settings: &IndexLinuxSettings,
    tree: &IndexTree,
    path: &Path,
    limit_pages: u64,
    mirror_pages: &mut Option<u64>,
    out: &mut PageCacheIndex,
) -> Result<(), ExperimentError> {
    let pages = tree.lookups(settings.index.lookups, settings.index.seed);
    let disk = DeviceCounter::for_path(path);
    for &read_iops in &settings.read_iops {
        let throttle = match read_iops {
            None => None,
            Some(n) => {
                let d = disk.as_ref().ok_or_else(|| {
                    ExperimentError::Cgroup(format!(
                        "no block device holds {} to throttle reads on",
                        path.display()
                    ))
                })?;
                Some((d.disk(), n))
            }
        };
        let throttle_ref = throttle.as_ref().map(|(d, n)| (d.as_str(), *n));
        let (cgroup, ()) = in_memory_cgroup(settings.limit_mib, throttle_ref, || {
            let size = match *mirror_pages {
                Some(p) => p,
                None => measure_size(
                    &settings.mirror_policy,
                    settings.index.seed,
                    path,
                    limit_pages,
                )?
                .saturating_sub(settings.mirror_slack_pages)
                .max(1),
            };
            *mirror_pages = Some(size);
            let pass = Pass {
                settings,
                tree,
                path,
                pages: &pages,
                mirror_pages: size,
                read_iops: read_iops.unwrap_or(0),
                disk: disk.as_ref(),
            };
            for (way, levers) in PAGE_CACHE_WAYS {
                let ways = match read_iops {
                    None => &settings.ways,
                    Some(_) => &settings.throttled_ways,
                };
                if ways.contains(&way) {
                    pass.way(way, levers, out)?;
                }
            }
            Ok(())
        })?;
        out.note_cgroup(cgroup);
        if throttle_ref.is_some() && settings.pool_under_throttle {
            // The pool's cache is its own memory, so the cgroup only throttles: its memory
            // limit leaves room for the pool's frames and everything else of the process.
            let limit_mib = settings.limit_mib + POOL_CGROUP_HEADROOM_MIB;
            // The pool as large as the page cache's limit, PinRange's range the same share
            // of it as in experiment 2 (the same setting unless `--quick` shrank the limit).
            let mut sized = settings.index.clone();
            sized.range_pages = sized.range_pages * limit_pages / sized.cache_pages.max(1);
            sized.cache_pages = limit_pages;
            let (cgroup, ()) = in_memory_cgroup(limit_mib, throttle_ref, || {
                for way in POOL_WAYS_UNDER_THROTTLE {
                    let (run, tally) =
                        index::on_pool(&sized, tree, way, &pages, path, "pool-throttled")?;
                    out.levels.extend(tally.rows(run.engine, tree, way));
                    out.runs.push(run);
                }
                Ok(())
            })?;
            out.note_cgroup(cgroup);
        }
    }
    Ok(())
}

/// Experiment 2's ways run again under a throttled pass's throttle: the two whose gain
/// is the yardstick ([`super::index_gain`]).
const POOL_WAYS_UNDER_THROTTLE: [&str; 2] = ["linux", "pinrange"];

/// Memory beyond the page cache's limit given to the cgroup of the throttled pool ways.
const POOL_CGROUP_HEADROOM_MIB: u64 = 1024;

/// What the ways of one pass share.
struct Pass<'a> {
    settings: &'a IndexLinuxSettings,
    tree: &'a IndexTree,
    path: &'a Path,
    pages: &'a [u64],
    mirror_pages: u64,
    read_iops: u64,
    disk: Option<&'a DeviceCounter>,
}

impl Pass<'_> {
    fn engine(&self) -> &'static str {
        if self.read_iops > 0 {
            "pagecache-throttled"
        } else {
            "pagecache"
        }
    }

    /// One way from a cold cache; its rows go to `out`.
    fn way(
        &self,
        way: &'static str,
        levers: Option<Levers>,
        out: &mut PageCacheIndex,
    ) -> Result<(), ExperimentError> {
        let s = &self.settings.index;
        let mut index_settings = s.clone();
        index_settings.cache_pages = self.mirror_pages;
        index_settings.range_pages = self.mirror_pages * s.range_pages / s.cache_pages.max(1);
        let pinrange = index_settings.pinrange();
        let source = fresh_source(
            &self.settings.mirror_policy,
            self.path,
            self.mirror_pages,
            levers.unwrap_or_default(),
        )?;
        out.truth = source.kernel().truth();
        let load_avg = load_average();
        let meter = Meter::start(self.disk);
        let target = levers.map(|_| (pinrange.as_str(), index::config(&index_settings)));
        let (counts, source) = drive::<KernelFile>(source, self.tree, self.pages, target)?;
        let (device, disk_bytes, secs) = meter.stop();
        let (agreement, per_level) = end_state(&source, self.tree)?;
        let o = counts.overhead;
        let [check_us, refresh_us, simulate_us, rest_us] = o.per_call_us();
        let (engine, tree) = (self.engine(), self.tree.label());
        let accesses = counts.truth.accesses();
        let hits = counts.truth.hits();
        let run_time_s = (secs - counts.probe.as_secs_f64()).max(0.0);
        out.runs.push(IndexRun {
            engine,
            tree: tree.clone(),
            way,
            lookups: s.lookups,
            accesses,
            hits,
            hit_rate: hits as f64 / accesses.max(1) as f64,
            run_time_s,
            device_pages_read: device,
            kernel_read_bytes: device * PAGE_BYTES,
            refreshes: o.refreshes,
            overhead_us: o.total_ns as f64 / 1000.0 / o.calls.max(1) as f64,
        });
        out.levels.extend(counts.truth.rows(engine, self.tree, way));
        out.rows.push(PageCacheIndexRow {
            engine,
            tree: tree.clone(),
            way,
            read_iops: self.read_iops,
            mirror: self.settings.mirror_policy.clone(),
            mirror_pages: self.mirror_pages,
            range_pages: index_settings.range_pages,
            lookups: s.lookups,
            accesses,
            hits,
            predicted_hits: counts.predicted.hits(),
            predicted_right: counts.predicted_right as f64 / accesses.max(1) as f64,
            agreement: agreement.rate(),
            cached_agreement: cached_agreement(&agreement, &per_level),
            mirror_only: agreement.mirror_only,
            kernel_only: agreement.kernel_only,
            device_pages_read: device,
            disk_read_bytes: disk_bytes,
            run_time_s,
            probe_s: counts.probe.as_secs_f64(),
            refreshes: o.refreshes,
            dropped: source.calls().dropped,
            corrected: source.calls().corrected,
            overhead_us_per_lookup: o.total_ns as f64 / 1000.0 / s.lookups.max(1) as f64,
            check_us,
            refresh_us,
            simulate_us,
            rest_us,
            load_avg,
        });
        for (l, &(kernel, mirror)) in per_level.iter().enumerate() {
            let level = l as u32;
            out.level_rows.push(PageCacheLevelRow {
                engine,
                tree: tree.clone(),
                way,
                level: level + 1,
                nodes: self.tree.level_nodes(level),
                accesses: counts.truth.level_accesses(level),
                hits: counts.truth.level_hits(level),
                predicted_hits: counts.predicted.level_hits(level),
                kernel_resident_end: kernel,
                mirror_resident_end: mirror,
            });
        }
        Ok(())
    }
}

/// Pages both hold over pages either holds, from the end state's counts.
fn cached_agreement(a: &Agreement, per_level: &[(u64, u64)]) -> f64 {
    let kernel: u64 = per_level.iter().map(|l| l.0).sum();
    let both = kernel - a.kernel_only;
    let either = both + a.kernel_only + a.mirror_only;
    if either == 0 {
        1.0
    } else {
        both as f64 / either as f64
    }
}

/// The one-minute load average (`/proc/loadavg`), 0 where unreadable: timings on a
/// shared machine mean little without it.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ways are chosen by name (they run in the table's order); a throttled pass keeps the
    /// chosen ones it runs; an unknown name lists the known ones.
    #[test]
    fn ways_are_chosen_by_name() {
        let mut s = IndexLinuxSettings::new(IndexSettings::quick(None, 1), "/x".into(), true);
        s.only_ways(&["pinrange-info+dontneed".into(), "linux".into()])
            .unwrap();
        assert_eq!(s.ways, ["pinrange-info+dontneed", "linux"]);
        assert_eq!(s.throttled_ways, ["linux", "pinrange-info+dontneed"]);
        let e = s.only_ways(&["lru".into()]).unwrap_err().to_string();
        assert!(
            e.contains("\"lru\"") && e.contains("pinrange-info+verify"),
            "{e}"
        );
        assert_eq!(s.limit_mib, 16);
        assert_eq!(s.index.trees.len(), 1);
    }

    /// By hand: the kernel holds 10 pages (3 + 7 on two levels), 2 of them not in the
    /// mirror; the mirror holds 3 the kernel does not. Both: 8 of 13 held by either.
    #[test]
    fn cached_agreement_leaves_out_pages_neither_holds() {
        let a = Agreement {
            pages: 1000,
            agree: 995,
            mirror_only: 3,
            kernel_only: 2,
        };
        assert!((cached_agreement(&a, &[(3, 4), (7, 7)]) - 8.0 / 13.0).abs() < 1e-12);
        assert_eq!(cached_agreement(&Agreement::default(), &[(0, 0)]), 1.0);
    }
}
