//! Experiment 3, beyond the thesis: Figure 3.1's accuracy measurement with the
//! **unmodified Linux page cache** as the source, through an algorithmic mirror
//! ([`crate::PageCacheSource`]), inside a memory cgroup the experiment creates and removes.
//!
//! 1. A scratch file of seeded random data (not sparse: a hole costs no I/O) twice the
//!    limit, written, synced and dropped from the cache.
//! 2. A memory cgroup below this process's own, limited to `limit_mib`; the process moves
//!    itself in (what it reads from then on is charged there, so the kernel reclaims
//!    inside the limit) and back out at the end, and the cgroup is removed.
//! 3. The mirror's size: given, or measured by Dust's size step (`dust::estimate_size`,
//!    ground truth as the judge) while a warm-up run of the same shape is alive, so that
//!    the process's own memory in the cgroup is what it will be during the runs.
//! 4. "alone": Dust's workload (the thesis's, over 1.5 times the mirror's size) read
//!    through the page cache with the mirror following and nothing steered: how well the
//!    mirror predicts the kernel, page by page (`mincore`/`cachestat`).
//! 5. Each target, with each set of levers: the same reads through InfoReplace; the
//!    inaccuracy against the ground truth, the mirror's agreement at the end, overhead
//!    by part, and device reads (`read_bytes` of `/proc/self/io`, and the disk's own
//!    counters from `/sys/dev/block`).
//!
//! Without root or a memory hierarchy the cgroup cannot be made and the experiment stops
//! with [`ExperimentError::Cgroup`]: without a limit the page cache grows into all free
//! memory and nothing is ever evicted, so there would be nothing to measure.

use super::workload::{dust_file_pages, dust_pages};
use super::ExperimentError;
use crate::{Config, InfoReplace, KernelFile, Levers, PageCacheFile, PageCacheSource, ReadHow};
use linux::DeviceCounter;
use linux::MemoryCgroup;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What to run.
#[derive(Clone, Debug)]
pub struct LinuxSettings {
    /// Folder of the scratch file: on a disk (not tmpfs, whose pages cannot be dropped).
    pub dir: PathBuf,
    /// The memory cgroup's limit in MiB.
    pub limit_mib: u64,
    /// The mirror's policy for the steered runs (what Dust names; `linux` here).
    pub mirror_policy: String,
    /// Mirror policies tried without steering, each an `alone` row: how well each model
    /// of the kernel predicts it.
    pub alone_mirrors: Vec<String>,
    /// The mirror's size in pages; `None`: measured by Dust in the cgroup.
    pub mirror_pages: Option<u64>,
    /// The steered runs: a target (`policy` or `policy+admission`, as `lru+secondhit`)
    /// and the levers it may use.
    pub runs: Vec<(String, Levers)>,
    /// Seed of the workload and the file's data.
    pub seed: u64,
}

impl LinuxSettings {
    /// The thesis's four targets without levers and with `DONTNEED`, and a
    /// scan-resistant LRU (LRU behind `secondhit` admission) without levers and with
    /// `RWF_DONTCACHE` for the pages it does not admit; a 64 MiB cgroup (`quick`: 16).
    pub fn new(dir: PathBuf, quick: bool, seed: u64) -> Self {
        let none = Levers::default();
        let dontneed = Levers {
            drop_target_evictions: true,
            dontcache: false,
            verify_refreshes: false,
        };
        let dontcache = Levers {
            drop_target_evictions: false,
            dontcache: true,
            verify_refreshes: false,
        };
        let mut runs = Vec::new();
        for target in super::accuracy::THESIS_TARGETS {
            runs.push((target.to_string(), none));
            runs.push((target.to_string(), dontneed));
        }
        runs.push(("lru+secondhit".to_string(), none));
        runs.push(("lru+secondhit".to_string(), dontcache));
        LinuxSettings {
            dir,
            limit_mib: if quick { 16 } else { 64 },
            mirror_policy: "linux".into(),
            alone_mirrors: ["linux", "linux:active_ratio=0.8", "lru", "clock"]
                .map(String::from)
                .to_vec(),
            mirror_pages: None,
            runs,
            seed,
        }
    }
}

/// One run.
#[derive(Clone, Debug, Serialize)]
pub struct LinuxRow {
    /// `alone` (the mirror only, nothing steered) or the target.
    pub target: String,
    /// The mirror's policy.
    pub mirror: String,
    /// The levers used.
    pub levers: &'static str,
    /// The mirror's size in pages.
    pub mirror_pages: u64,
    /// Pages of the file the workload reads.
    pub file_pages: u64,
    /// Reads by the workload.
    pub calls: u64,
    /// Share of the target's pages the kernel does not hold at the end (ground truth).
    pub inaccuracy: f64,
    /// The same share when the reads are not steered (the `alone` run's end state).
    pub inaccuracy_alone: f64,
    /// Share of the pages the workload reads on which mirror and kernel agree at the end.
    pub agreement: f64,
    /// Pages in the mirror but not the kernel.
    pub mirror_only: u64,
    /// Pages in the kernel but not the mirror.
    pub kernel_only: u64,
    /// Share of the workload's reads whose hit or miss the mirror predicted right.
    pub predicted_right: f64,
    /// Mean microseconds per read checking victim lists.
    pub check_us: f64,
    /// ... refreshing (and dropping, with the `DONTNEED` lever).
    pub refresh_us: f64,
    /// ... simulating the target.
    pub simulate_us: f64,
    /// ... everything else in the library.
    pub rest_us: f64,
    /// Pages re-read per workload read.
    pub refreshes_per_call: f64,
    /// Pages dropped with `DONTNEED`.
    pub dropped: u64,
    /// Reads made with `RWF_DONTCACHE`.
    pub uncached_reads: u64,
    /// Pages this process read from storage (`read_bytes` of `/proc/self/io` / 4096).
    pub device_pages_read: u64,
    /// Bytes the whole disk read meanwhile (`/sys/dev/block`; every process's).
    pub disk_read_bytes: u64,
    /// Wall-clock seconds of the run.
    pub run_time_s: f64,
}

/// The setting the runs had, for the report.
#[derive(Clone, Debug, Serialize)]
pub struct LinuxSetup {
    /// Kernel release.
    pub kernel: String,
    /// Memory cgroup version and limit.
    pub cgroup: String,
    /// Mirror policy and size, and where the size came from.
    pub mirror: String,
    /// Ground truth used.
    pub truth: &'static str,
    /// What `RWF_DONTCACHE` did on this kernel and file system.
    pub dontcache: String,
}

/// Page size of the experiment's reads.
const PAGE_BYTES: u64 = 4096;

/// Run it (module docs).
pub fn run(settings: &LinuxSettings) -> Result<(LinuxSetup, Vec<LinuxRow>), ExperimentError> {
    let limit_pages = settings.limit_mib * (1 << 20) / PAGE_BYTES;
    let path = settings
        .dir
        .join(format!("inforeplace-linux-{}.bin", std::process::id()));
    write_scratch(&path, limit_pages * 2, settings.seed)?;
    let result = in_cgroup(settings, &path, limit_pages);
    let _ = std::fs::remove_file(&path);
    result
}

fn in_cgroup(
    settings: &LinuxSettings,
    path: &Path,
    limit_pages: u64,
) -> Result<(LinuxSetup, Vec<LinuxRow>), ExperimentError> {
    let (cgroup, (mut setup, rows)) = in_memory_cgroup(settings.limit_mib, None, || {
        runs(settings, path, limit_pages)
    })?;
    setup.cgroup = cgroup;
    Ok((setup, rows))
}

/// Run `work` with this process inside a memory cgroup of `limit_mib` made for it (step 2
/// of the module docs), its reads of `read_iops`'s disk (`MAJ:MIN`) throttled to that
/// many a second when given; the process leaves and the cgroup is removed whatever
/// `work` returns. Also returns the cgroup as reports describe it.
pub(crate) fn in_memory_cgroup<T>(
    limit_mib: u64,
    read_iops: Option<(&str, u64)>,
    work: impl FnOnce() -> Result<T, ExperimentError>,
) -> Result<(String, T), ExperimentError> {
    let name = format!("bufcache-inforeplace-{}", std::process::id());
    let mut cgroup = MemoryCgroup::create(&name, limit_mib << 20).map_err(|e| {
        ExperimentError::Cgroup(format!(
            "{e} (needs root and a memory cgroup hierarchy, v1 or v2; without a limit the page cache never evicts)"
        ))
    })?;
    let mut described = format!("{:?}, {limit_mib} MiB", cgroup.version());
    if let Some((disk, per_s)) = read_iops {
        cgroup
            .throttle_read_iops(disk, per_s)
            .map_err(|e| ExperimentError::Cgroup(e.to_string()))?;
        described.push_str(&format!(", reads of {disk} throttled to {per_s}/s"));
    }
    let inside = Inside::enter(&cgroup)?;
    let result = work();
    drop(inside);
    drop(cgroup);
    Ok((described, result?))
}

/// This process inside the cgroup; moved back to its parents on drop, so that the
/// cgroup can be removed.
struct Inside<'a>(&'a MemoryCgroup);

impl<'a> Inside<'a> {
    fn enter(cgroup: &'a MemoryCgroup) -> Result<Self, ExperimentError> {
        cgroup
            .add(std::process::id())
            .map_err(|e| ExperimentError::Cgroup(e.to_string()))?;
        Ok(Inside(cgroup))
    }
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        // Failing here leaves the cgroup behind (its removal then fails too, with a
        // warning from the linux crate); nothing else depends on it.
        let _ = self.0.leave(std::process::id());
    }
}

fn runs(
    settings: &LinuxSettings,
    path: &Path,
    limit_pages: u64,
) -> Result<(LinuxSetup, Vec<LinuxRow>), ExperimentError> {
    let (mirror_pages, size_source) = match settings.mirror_pages {
        Some(p) => (p, "given"),
        None => (
            measure_size(&settings.mirror_policy, settings.seed, path, limit_pages)?,
            "measured by Dust",
        ),
    };
    let probe = KernelFile::open(path)?;
    let setup = LinuxSetup {
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        cgroup: String::new(),
        mirror: format!(
            "{} at {mirror_pages} pages ({size_source})",
            settings.mirror_policy
        ),
        truth: probe.truth(),
        dontcache: match probe.dontcache_probe() {
            Ok(()) => "honoured".into(),
            Err(e) => format!("refused: {e}"),
        },
    };
    drop(probe);
    let pages = dust_pages(mirror_pages, settings.seed)?;
    let disk = DeviceCounter::for_path(path);
    let bench = Bench {
        settings,
        path,
        mirror_pages,
        file_pages: dust_file_pages(mirror_pages)?,
        pages: &pages,
        disk: disk.as_ref(),
    };
    let mut rows = Vec::new();
    let mut alone_resident = Vec::new();
    for mirror in &settings.alone_mirrors {
        let (row, resident) = bench.alone(mirror)?;
        if *mirror == settings.mirror_policy || alone_resident.is_empty() {
            alone_resident = resident;
        }
        rows.push(row);
    }
    for (target, levers) in &settings.runs {
        rows.push(bench.steered(target, *levers, &alone_resident)?);
    }
    Ok((setup, rows))
}

/// Dust's size step with the ground truth as the judge, measured while a run of the
/// experiment's shape (mirror, target and workload at the limit's size) is alive.
pub(crate) fn measure_size(
    mirror_policy: &str,
    seed: u64,
    path: &Path,
    limit_pages: u64,
) -> Result<u64, ExperimentError> {
    let pages = dust_pages(limit_pages, seed)?;
    let mut kernel = KernelFile::open(path)?;
    kernel.drop_all()?;
    let source = PageCacheSource::new(kernel, mirror_policy, limit_pages, Levers::default())?;
    let mut ballast = InfoReplace::new(source, "lru")?;
    for &p in pages.iter().take(limit_pages as usize) {
        ballast.read_page(p)?;
    }
    let text = path.to_str().unwrap_or_default();
    let mut target = dust::LinuxTarget::open(text)?;
    let size = dust::estimate_size(
        &mut target,
        &dust::Judge::Oracle,
        &dust::SizeOptions::default(),
    )?;
    drop(ballast);
    Ok(size.pages)
}

/// Device counters before a run.
pub(crate) struct Meter<'a> {
    process: u64,
    disk: Option<(&'a DeviceCounter, linux::DeviceReads)>,
    started: Instant,
}

impl<'a> Meter<'a> {
    pub(crate) fn start(disk: Option<&'a DeviceCounter>) -> Self {
        Meter {
            process: super::index::kernel_read_bytes(),
            disk: disk.and_then(|d| d.snapshot().map(|s| (d, s))),
            started: Instant::now(),
        }
    }

    /// (pages this process read, bytes the disk read, seconds).
    pub(crate) fn stop(self) -> (u64, u64, f64) {
        let process = super::index::kernel_read_bytes().saturating_sub(self.process);
        let disk = self
            .disk
            .and_then(|(d, before)| d.snapshot().map(|now| now.since(before).bytes))
            .unwrap_or(0);
        (
            process / PAGE_BYTES,
            disk,
            self.started.elapsed().as_secs_f64(),
        )
    }
}

/// A cold page cache of the file and a fresh mirror of `mirror` at `mirror_pages`.
pub(crate) fn fresh_source(
    mirror: &str,
    path: &Path,
    mirror_pages: u64,
    levers: Levers,
) -> Result<PageCacheSource<KernelFile>, ExperimentError> {
    let mut kernel = KernelFile::open(path)?;
    kernel.drop_all()?;
    Ok(PageCacheSource::new(kernel, mirror, mirror_pages, levers)?
        .with_reclaim_batch(RECLAIM_BATCH))
}

/// Pages Linux reclaims at once when a memory cgroup is at its limit
/// (`SWAP_CLUSTER_MAX`): the library keeps that many of the mirror's victims clear.
pub const RECLAIM_BATCH: u64 = 32;

/// What every run of one experiment shares.
struct Bench<'a> {
    settings: &'a LinuxSettings,
    path: &'a Path,
    mirror_pages: u64,
    file_pages: u64,
    pages: &'a [u64],
    disk: Option<&'a DeviceCounter>,
}

impl Bench<'_> {
    /// The workload read with a `mirror` following and nothing steered; also what the
    /// kernel holds at the end, page by page.
    fn alone(&self, mirror: &str) -> Result<(LinuxRow, Vec<bool>), ExperimentError> {
        let mut source = fresh_source(mirror, self.path, self.mirror_pages, Levers::default())?;
        let meter = Meter::start(self.disk);
        let mut right = 0u64;
        for &p in self.pages {
            let truth = source.kernel().resident(p)?;
            let predicted = source.read(p, ReadHow::Cached)?;
            right += u64::from(predicted == truth);
        }
        let (device, disk_bytes, secs) = meter.stop();
        let a = source.agreement_over(0..self.file_pages)?;
        let resident = (0..source.kernel().pages())
            .map(|p| source.kernel().resident(p))
            .collect::<Result<Vec<bool>, _>>()?;
        let calls = self.pages.len() as u64;
        let row = LinuxRow {
            target: "alone".into(),
            mirror: mirror.to_string(),
            levers: "none",
            mirror_pages: self.mirror_pages,
            file_pages: self.file_pages,
            calls,
            inaccuracy: 0.0,
            inaccuracy_alone: 0.0,
            agreement: a.rate(),
            mirror_only: a.mirror_only,
            kernel_only: a.kernel_only,
            predicted_right: right as f64 / calls.max(1) as f64,
            check_us: 0.0,
            refresh_us: 0.0,
            simulate_us: 0.0,
            rest_us: 0.0,
            refreshes_per_call: 0.0,
            dropped: 0,
            uncached_reads: 0,
            device_pages_read: device,
            disk_read_bytes: disk_bytes,
            run_time_s: secs,
        };
        Ok((row, resident))
    }

    /// The workload through InfoReplace emulating `target` with `levers`.
    fn steered(
        &self,
        target: &str,
        levers: Levers,
        alone_resident: &[bool],
    ) -> Result<LinuxRow, ExperimentError> {
        let settings = self.settings;
        let source = fresh_source(
            &settings.mirror_policy,
            self.path,
            self.mirror_pages,
            levers,
        )?;
        let config = Config {
            seed: settings.seed,
            ..Config::default()
        };
        let (policy, admission) = match target.split_once('+') {
            Some((p, a)) => (p, Some(a)),
            None => (target, None),
        };
        let mut info = InfoReplace::with_config(source, policy, config)?;
        if let Some(a) = admission {
            info = info.admit_with(a)?;
        }
        let (pages, file_pages, mirror_pages, disk) =
            (self.pages, self.file_pages, self.mirror_pages, self.disk);
        let meter = Meter::start(disk);
        let mut right = 0u64;
        for &p in pages {
            let truth = info.source().kernel().resident(p)?;
            let predicted = info.read_page(p)?;
            right += u64::from(predicted == truth);
        }
        let (device, disk_bytes, secs) = meter.stop();
        let inaccuracy = info.inaccuracy()?;
        let held = info.target_pages();
        let missing_alone = held
            .iter()
            .filter(|p| {
                !alone_resident
                    .get(p.page as usize)
                    .copied()
                    .unwrap_or(false)
            })
            .count();
        let source = info.source();
        let a = source.agreement_over(0..file_pages)?;
        let o = *info.overhead();
        let [check_us, refresh_us, simulate_us, rest_us] = o.per_call_us();
        Ok(LinuxRow {
            target: target.to_string(),
            mirror: settings.mirror_policy.clone(),
            levers: levers.label(),
            mirror_pages,
            file_pages,
            calls: o.calls,
            inaccuracy,
            inaccuracy_alone: missing_alone as f64 / held.len().max(1) as f64,
            agreement: a.rate(),
            mirror_only: a.mirror_only,
            kernel_only: a.kernel_only,
            predicted_right: right as f64 / pages.len().max(1) as f64,
            check_us,
            refresh_us,
            simulate_us,
            rest_us,
            refreshes_per_call: o.refreshes as f64 / o.calls.max(1) as f64,
            dropped: source.calls().dropped,
            uncached_reads: source.calls().uncached_reads,
            device_pages_read: device,
            disk_read_bytes: disk_bytes,
            run_time_s: secs,
        })
    }
}

/// Write `pages` pages of seeded random data, sync them and drop them from the cache.
fn write_scratch(path: &Path, pages: u64, seed: u64) -> Result<(), ExperimentError> {
    let io = |what: &'static str| {
        let path = path.to_path_buf();
        move |source| ExperimentError::Io { what, path, source }
    };
    let file = std::fs::File::create(path).map_err(io("creating"))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, &file);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut page = vec![0u8; PAGE_BYTES as usize];
    for _ in 0..pages {
        rng.fill_bytes(&mut page);
        w.write_all(&page).map_err(io("writing"))?;
    }
    w.flush().map_err(io("writing"))?;
    drop(w);
    file.sync_all().map_err(io("syncing"))?;
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
        .map_err(|e| io("dropping from the page cache")(e.into()))?;
    Ok(())
}
