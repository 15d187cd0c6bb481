//! `bufcache experiment ubc --real`: Table 1's `dd` series on real files of this machine
//! (`bench::ubc`): raw `O_DIRECT`, the OS page cache inside a memory cgroup this command
//! creates and removes, the pool over `O_DIRECT` (unified) and the pool over buffered I/O
//! (double caching, counted with `cachestat`). Writes `ubc-real.csv` and prints the table.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bench::ubc::{self, Design, MemoryLimit, UbcOptions, UbcRow};
use clap::Args;
use linux::MemoryCgroup;

use crate::experiment_cmd::{json_lines, write_csv, ExperimentArgs};
use crate::util;

/// The real-file options of `bufcache experiment ubc`.
#[derive(Args, Debug)]
pub struct RealArgs {
    /// Also run the series on real files (about half a minute at the default sizes).
    #[arg(long)]
    pub real: bool,
    /// Directory for the data file (its file system must accept O_DIRECT; tmpfs does not).
    #[arg(long, value_name = "DIR", default_value = "target/tmp")]
    pub scratch: PathBuf,
    /// Memory budget in MiB: the pool's capacity and the page cache's cgroup limit.
    #[arg(long, default_value_t = 64)]
    pub memory_mib: u64,
    /// File size in MiB (several times the memory).
    #[arg(long, default_value_t = 256)]
    pub file_mib: u64,
    /// The first part read again, in MiB (it must fit in memory).
    #[arg(long, default_value_t = 48)]
    pub first_mib: u64,
    /// Run without a memory cgroup (the page cache is then bounded only by free memory).
    #[arg(long)]
    pub no_cgroup: bool,
}

/// The page cache's limit: a memory cgroup the process enters for the page-cache
/// designs and leaves (back to its own cgroup) after them.
struct CgroupLimit {
    cgroup: MemoryCgroup,
    bytes: u64,
}

impl CgroupLimit {
    fn home(&self) -> &Path {
        // Created directly below this process's own cgroup.
        self.cgroup.path().parent().unwrap_or(self.cgroup.path())
    }
}

impl MemoryLimit for CgroupLimit {
    fn enter(&self) -> std::io::Result<()> {
        self.cgroup
            .add(std::process::id())
            .map_err(|e| std::io::Error::other(e.to_string()))
    }

    fn leave(&self) -> std::io::Result<()> {
        std::fs::write(
            self.home().join("cgroup.procs"),
            std::process::id().to_string(),
        )
    }

    fn limit_bytes(&self) -> u64 {
        self.bytes
    }
}

/// Run the real half.
pub fn run(a: &ExperimentArgs, r: &RealArgs) -> Result<()> {
    anyhow::ensure!(
        r.first_mib > 0 && r.first_mib <= r.memory_mib && r.memory_mib < r.file_mib,
        "--first-mib must fit in --memory-mib, which must be smaller than --file-mib \
         (got {} / {} / {})",
        r.first_mib,
        r.memory_mib,
        r.file_mib
    );
    std::fs::create_dir_all(&r.scratch)
        .with_context(|| format!("cannot create {}", r.scratch.display()))?;
    let mut o = UbcOptions::new(r.scratch.clone());
    o.memory_bytes = r.memory_mib << 20;
    o.file_bytes = r.file_mib << 20;
    o.first_bytes = r.first_mib << 20;
    let (limit, note) = if r.no_cgroup {
        (
            None,
            "no cgroup (--no-cgroup): the page cache may use all free memory".to_string(),
        )
    } else {
        match MemoryCgroup::create(
            &format!("bufcache-ubc-{}", std::process::id()),
            o.memory_bytes,
        ) {
            Ok(cgroup) => (
                Some(CgroupLimit {
                    cgroup,
                    bytes: o.memory_bytes,
                }),
                format!(
                    "page cache limited to {} MiB by a memory cgroup",
                    r.memory_mib
                ),
            ),
            Err(e) => (
                None,
                format!("no memory cgroup ({e}): the page cache may use all free memory"),
            ),
        }
    };
    let rows = ubc::run(
        &o,
        &Design::ALL,
        limit.as_ref().map(|l| l as &dyn MemoryLimit),
    )
    .context("the real-file UBC series")?;
    drop(limit);
    let csv = a.out.join("ubc-real.csv");
    write_csv(&csv, &rows)?;
    if a.json {
        return util::emit(&json_lines(&rows)?);
    }
    let header: Vec<String> = [
        "design",
        "step",
        "MiB",
        "s",
        "MiB/s",
        "dev read MiB",
        "dev write MiB",
        "page cache pg",
        "pool pg",
        "held twice pg",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mib = |b: u64| format!("{:.1}", b as f64 / f64::from(1 << 20));
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|row: &UbcRow| {
            vec![
                row.design.label().to_string(),
                row.step.clone(),
                mib(row.bytes),
                format!("{:.2}", row.seconds),
                format!(
                    "{:.0}",
                    row.bytes as f64 / f64::from(1 << 20) / row.seconds.max(1e-9)
                ),
                mib(row.device_read_bytes),
                mib(row.device_write_bytes),
                row.page_cache_pages.to_string(),
                row.pool_pages.to_string(),
                row.held_twice_pages.to_string(),
            ]
        })
        .collect();
    let mut out = format!(
        "\nUBC Table 1 (dd series) on real files: memory {} MiB, file {} MiB, first {} MiB; {note}\n\
         pages columns: the first part's 4 KiB pages after the step\n\n",
        r.memory_mib, r.file_mib, r.first_mib
    );
    out.push_str(&util::table(&header, &table));
    out.push_str(&format!("\nfiles:\n  {}\n", csv.display()));
    util::emit(&out)
}
