//! `bufcache experiment inforeplace`: the thesis's chapter 3 (Figures 3.1 and 3.2), run by
//! `inforeplace::experiment`; CSV and SVG figures under `--out`, a summary or JSON lines
//! on stdout. `--linux` adds the Linux page cache as a source (experiment 3).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use inforeplace::experiment::accuracy::{self, AccuracyRow};
use inforeplace::experiment::figures;
use inforeplace::experiment::index::{self, IndexRun, IndexSettings};
use inforeplace::experiment::index_gain::{self, GainRow};
use inforeplace::experiment::index_linux::{self, IndexLinuxSettings, PageCacheIndex};
use inforeplace::experiment::linux::{self, LinuxRow, LinuxSettings, LinuxSetup};
use serde::Serialize;

use crate::experiment_cmd::{json_lines, prepare, write_csv, ExperimentArgs};
use crate::util;

/// Options of `bufcache experiment inforeplace`.
#[derive(Args, Debug)]
pub struct InfoReplaceArgs {
    #[command(flatten)]
    common: ExperimentArgs,
    /// Folder for the index files read with O_DIRECT (up to 3.9 GB, removed after each
    /// tree; the file system must support O_DIRECT). Default: the `--out` folder.
    #[arg(long, value_name = "DIR")]
    index_dir: Option<PathBuf>,
    /// Run experiment 2 in the simulator only (no index files, no device reads).
    #[arg(long)]
    sim_only: bool,
    /// Pages of the cache in experiment 1 (the file is 1.5 times as large).
    #[arg(long, default_value_t = 1024)]
    accuracy_pages: u64,
    /// Lookups per tree and way in experiment 2 (default: 100,000, the thesis's; 5,000
    /// with --quick).
    #[arg(long)]
    lookups: Option<u64>,
    /// Also run experiment 3: Figure 3.1 with the unmodified Linux page cache as the
    /// source, through an algorithmic mirror, in a memory cgroup made for the run (needs
    /// root and a memory cgroup hierarchy; writes a file of twice the limit).
    #[arg(long)]
    linux: bool,
    /// Memory cgroup limit of experiment 3 in MiB (default 64; 16 with --quick).
    #[arg(long, value_name = "MIB")]
    linux_limit_mib: Option<u64>,
    /// Folder of experiment 3's scratch file, on a disk (default: the `--out` folder).
    #[arg(long, value_name = "DIR")]
    linux_dir: Option<PathBuf>,
    /// The mirror's policy in experiment 3 (a registry policy; Dust names `linux` here).
    #[arg(long, default_value = "linux")]
    mirror_policy: String,
    /// The mirror's size in pages (default: measured by Dust inside the cgroup).
    #[arg(long, value_name = "PAGES")]
    mirror_pages: Option<u64>,
    /// Also run experiment 4: experiment 2's index lookups through the unmodified Linux
    /// page cache in a memory cgroup of the pool's cache size (64 MiB; 16 with --quick),
    /// plain and with PinRange emulated through the mirror (needs root and a memory
    /// cgroup hierarchy; writes each index file once more, in --linux-dir).
    #[arg(long)]
    linux_index: bool,
    /// Experiment 4 once more with the cgroup's device reads throttled to this many a
    /// second (a slow disk's cost per miss; 100 is the thesis's 10 ms), then the pool's
    /// `linux` and `pinrange` under the same throttle, the yardstick of its gain.
    #[arg(long, value_name = "PER_S")]
    linux_index_read_iops: Option<u64>,
    /// Experiment 4's ways (default all: linux, pinrange-info, pinrange-info+verify,
    /// pinrange-info+dontneed).
    #[arg(long, value_name = "WAY,...", value_delimiter = ',')]
    linux_index_ways: Option<Vec<String>>,
}

/// One JSON line: which part of the experiment it belongs to, and the row.
#[derive(Serialize)]
struct Tagged<'a, T: Serialize> {
    part: &'static str,
    #[serde(flatten)]
    row: &'a T,
}

/// Run it.
pub fn run(a: InfoReplaceArgs) -> Result<()> {
    let out = &a.common.out;
    prepare(out)?;
    let seed = a.common.seed;
    let accuracy_pages = if a.common.quick {
        a.accuracy_pages.min(200)
    } else {
        a.accuracy_pages
    };
    let targets = accuracy::targets();
    let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    let acc = accuracy::run(accuracy_pages, &targets, seed)
        .context("experiment 1 (accuracy and overhead)")?;
    let dir = (!a.sim_only).then(|| a.index_dir.clone().unwrap_or_else(|| out.clone()));
    let mut settings = if a.common.quick {
        IndexSettings::quick(dir, seed)
    } else {
        IndexSettings::thesis(dir, seed)
    };
    if let Some(n) = a.lookups {
        settings.lookups = n;
    }
    let (runs, levels) = index::run(&settings).context("experiment 2 (PinRange on indexes)")?;
    let linux_result = if a.linux {
        let mut s = LinuxSettings::new(
            a.linux_dir.clone().unwrap_or_else(|| out.clone()),
            a.common.quick,
            seed,
        );
        if let Some(mib) = a.linux_limit_mib {
            s.limit_mib = mib;
        }
        s.mirror_policy = a.mirror_policy.clone();
        s.mirror_pages = a.mirror_pages;
        Some(linux::run(&s).context("experiment 3 (the Linux page cache through a mirror)")?)
    } else {
        None
    };
    let page_cache = if a.linux_index {
        let mut s = IndexLinuxSettings::new(
            settings.clone(),
            a.linux_dir.clone().unwrap_or_else(|| out.clone()),
            a.common.quick,
        );
        if let Some(mib) = a.linux_limit_mib {
            s.limit_mib = mib;
        }
        s.mirror_policy = a.mirror_policy.clone();
        s.mirror_pages = a.mirror_pages;
        if let Some(n) = a.linux_index_read_iops {
            s.read_iops.push(Some(n));
        }
        if let Some(ways) = &a.linux_index_ways {
            s.only_ways(ways).context("--linux-index-ways")?;
        }
        Some(
            index_linux::run(&s)
                .context("experiment 4 (PinRange on indexes over the Linux page cache)")?,
        )
    } else {
        None
    };
    let (runs, levels) = match &page_cache {
        Some(pc) => (
            [runs, pc.runs.clone()].concat(),
            [levels, pc.levels.clone()].concat(),
        ),
        None => (runs, levels),
    };
    let gains = index_gain::gains(&runs);
    let linux_rows: &[LinuxRow] = linux_result.as_ref().map_or(&[], |(_, rows)| rows);
    let mut files = vec![
        out.join("inforeplace-accuracy.csv"),
        out.join("inforeplace-index.csv"),
        out.join("inforeplace-index-levels.csv"),
    ];
    write_csv(&files[0], &acc)?;
    write_csv(&files[1], &runs)?;
    write_csv(&files[2], &levels)?;
    if linux_result.is_some() {
        let path = out.join("inforeplace-linux.csv");
        write_csv(&path, linux_rows)?;
        files.push(path);
    }
    if let Some(pc) = &page_cache {
        let names = [
            "inforeplace-index-linux.csv",
            "inforeplace-index-linux-levels.csv",
            "inforeplace-index-linux-gain.csv",
        ]
        .map(|n| out.join(n));
        write_csv(&names[0], &pc.rows)?;
        write_csv(&names[1], &pc.level_rows)?;
        write_csv(&names[2], &gains)?;
        files.extend(names);
    }
    for f in figures::figure_3_1(&acc, linux_rows)
        .iter()
        .chain(&figures::figure_3_2(&runs, &levels))
    {
        files.push(f.write_into(out)?);
    }
    if a.common.json {
        let mut text = tagged("accuracy", &acc)?;
        text.push_str(&tagged("index", &runs)?);
        text.push_str(&tagged("level", &levels)?);
        text.push_str(&tagged("linux", linux_rows)?);
        if let Some(pc) = &page_cache {
            text.push_str(&tagged("index-linux", &pc.rows)?);
            text.push_str(&tagged("index-linux-level", &pc.level_rows)?);
            text.push_str(&tagged("index-linux-gain", &gains)?);
        }
        return util::emit(&text);
    }
    let mut text = accuracy_table(&acc);
    text.push('\n');
    text.push_str(&index_table(&runs, &settings));
    if let Some((setup, rows)) = &linux_result {
        text.push('\n');
        text.push_str(&linux_table(setup, rows));
    }
    if let Some(pc) = &page_cache {
        text.push('\n');
        text.push_str(&page_cache_table(pc, &gains));
    }
    text.push_str("\nfiles:\n");
    for f in &files {
        text.push_str(&format!("  {}\n", f.display()));
    }
    util::emit(&text)
}

fn tagged<T: Serialize>(part: &'static str, rows: &[T]) -> Result<String> {
    json_lines(
        &rows
            .iter()
            .map(|row| Tagged { part, row })
            .collect::<Vec<_>>(),
    )
}

fn accuracy_table(rows: &[AccuracyRow]) -> String {
    let header = [
        "source",
        "target",
        "inaccuracy",
        "alone",
        "check us",
        "refresh us",
        "simulate us",
        "rest us",
        "refreshes/read",
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.source.clone(),
                format!("{}{}", r.target, if r.in_thesis { " *" } else { "" }),
                format!("{:.1}%", r.inaccuracy * 100.0),
                format!("{:.1}%", r.inaccuracy_alone * 100.0),
                format!("{:.2}", r.check_us),
                format!("{:.2}", r.refresh_us),
                format!("{:.2}", r.simulate_us),
                format!("{:.2}", r.rest_us),
                format!("{:.2}", r.refreshes_per_call),
            ]
        })
        .collect();
    let mut text = format!(
        "Figure 3.1: InfoReplace on Dust's workload, cache {} pages, file {} pages (* = in the thesis)\n",
        rows.first().map_or(0, |r| r.cache_pages),
        rows.first().map_or(0, |r| r.file_pages)
    );
    text.push_str(&util::table(&header, &body));
    text.push_str(
        "thesis (Linux 2.4 2Q-like source): inaccuracy mostly low, MRU worst at about 12%; overhead under 4 us per call, LFU about 100 us\n",
    );
    text
}

fn index_table(runs: &[IndexRun], s: &IndexSettings) -> String {
    let header = [
        "engine",
        "tree",
        "way",
        "hit rate",
        "run time s",
        "vs linux",
        "device pages read",
        "kernel MB read",
        "refreshes",
    ];
    let base = |r: &IndexRun| {
        runs.iter()
            .find(|b| b.engine == r.engine && b.tree == r.tree && b.way == "linux")
            .map_or(f64::NAN, |b| b.run_time_s)
    };
    let body: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.engine.to_string(),
                r.tree.clone(),
                r.way.to_string(),
                format!("{:.3}", r.hit_rate),
                format!("{:.2}", r.run_time_s),
                format!("{:+.1}%", (r.run_time_s / base(r) - 1.0) * 100.0),
                r.device_pages_read.to_string(),
                format!("{:.1}", r.kernel_read_bytes as f64 / 1e6),
                r.refreshes.to_string(),
            ]
        })
        .collect();
    let mut text = format!(
        "Figure 3.2: {} lookups per tree, cache {} pages, {} (sim run time: misses x {} ms)\n",
        s.lookups,
        s.cache_pages,
        s.pinrange(),
        s.miss_ms
    );
    text.push_str(&util::table(&header, &body));
    text.push_str(
        "thesis: PinRange 10-22% less run time than 2Q; level 6 hit rate up, level 7 barely down\n",
    );
    text
}

fn linux_table(setup: &LinuxSetup, rows: &[LinuxRow]) -> String {
    let header = [
        "target",
        "mirror",
        "levers",
        "inaccuracy",
        "alone",
        "agreement",
        "reads predicted",
        "refreshes/read",
        "check us",
        "refresh us",
        "device pages",
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.target.clone(),
                r.mirror.clone(),
                r.levers.to_string(),
                format!("{:.1}%", r.inaccuracy * 100.0),
                format!("{:.1}%", r.inaccuracy_alone * 100.0),
                format!("{:.1}%", r.agreement * 100.0),
                format!("{:.2}%", r.predicted_right * 100.0),
                format!("{:.2}", r.refreshes_per_call),
                format!("{:.2}", r.check_us),
                format!("{:.2}", r.refresh_us),
                r.device_pages_read.to_string(),
            ]
        })
        .collect();
    let mut text = format!(
        "Experiment 3: the Linux page cache (kernel {}, memory cgroup {}), mirror {}, ground truth {}, RWF_DONTCACHE {}; file {} pages\n",
        setup.kernel,
        setup.cgroup,
        setup.mirror,
        setup.truth,
        setup.dontcache,
        rows.first().map_or(0, |r| r.file_pages)
    );
    text.push_str(&util::table(&header, &body));
    text.push_str("goal: the mirror agrees with the page cache on at least 90% of the pages\n");
    text
}

fn page_cache_table(pc: &PageCacheIndex, gains: &[GainRow]) -> String {
    let header = [
        "engine",
        "tree",
        "way",
        "hit rate",
        "predicted",
        "reads predicted",
        "agreement (cached)",
        "device pages",
        "run time s",
        "refreshes",
        "dropped",
        "us/lookup",
        "load",
    ];
    let body: Vec<Vec<String>> = pc
        .rows
        .iter()
        .map(|r| {
            vec![
                r.engine.to_string(),
                r.tree.clone(),
                r.way.to_string(),
                format!("{:.3}", r.hits as f64 / r.accesses.max(1) as f64),
                format!("{:.3}", r.predicted_hits as f64 / r.accesses.max(1) as f64),
                format!("{:.1}%", r.predicted_right * 100.0),
                format!(
                    "{:.1}% ({:.1}%)",
                    r.agreement * 100.0,
                    r.cached_agreement * 100.0
                ),
                r.device_pages_read.to_string(),
                format!("{:.2}", r.run_time_s),
                r.refreshes.to_string(),
                r.dropped.to_string(),
                format!("{:.1}", r.overhead_us_per_lookup),
                format!("{:.1}", r.load_avg),
            ]
        })
        .collect();
    let mut text = format!(
        "Experiment 4: index lookups over the Linux page cache (kernel {}; {}), mirror {} at {} pages, ground truth {}\n",
        pc.kernel,
        pc.cgroups.join(" / "),
        pc.rows.first().map_or("", |r| r.mirror.as_str()),
        pc.rows.first().map_or(0, |r| r.mirror_pages),
        pc.truth,
    );
    text.push_str(&util::table(&header, &body));
    let header = [
        "engine",
        "tree",
        "way",
        "reads saved",
        "share",
        "half of ref",
        "time saved",
        "half of ref",
        "goal (reads / time)",
    ];
    let yes = |b: bool| if b { "met" } else { "missed" };
    let body: Vec<Vec<String>> = gains
        .iter()
        .map(|g| {
            vec![
                g.engine.to_string(),
                g.tree.clone(),
                g.way.to_string(),
                g.reads_saved.to_string(),
                format!("{:.1}%", g.reads_saved_share * 100.0),
                format!(
                    "{:.1}% ({})",
                    g.reference_reads_saved_share * 50.0,
                    g.reference
                ),
                format!("{:.1}%", g.time_saved_share * 100.0),
                format!("{:.1}%", g.reference_time_saved_share * 50.0),
                format!("{} / {}", yes(g.reads_goal_met), yes(g.time_goal_met)),
            ]
        })
        .collect();
    text.push_str(&util::table(&header, &body));
    text.push_str(
        "goals: the mirror agrees with the page cache on at least 90% of the pages; the emulation saves at least half of what PinRange saves as the pool's policy\n",
    );
    text
}
