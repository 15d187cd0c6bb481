//! The mirror against the real page cache under memory pressure, in a memory cgroup the
//! test creates and removes: the goal, at least 90% agreement with the ground
//! truth, and InfoReplace steering the kernel towards the target.

use inforeplace::experiment::linux::{self, LinuxSettings};
use std::sync::Mutex;

/// A memory cgroup holds whole processes: two tests of this file running at once would
/// share (and fight over) one cgroup, so each holds this while it runs.
static ONE_CGROUP_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
#[ignore = "needs root and a memory cgroup (v1 or v2): run with --ignored"]
fn the_mirror_predicts_the_page_cache_in_a_cgroup() {
    let _alone = ONE_CGROUP_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut s = LinuxSettings::new(dir.path().to_path_buf(), true, 1);
    s.runs.retain(|(t, _)| t == "mru" || t == "lru+secondhit");
    let (setup, rows) = linux::run(&s).unwrap();
    eprintln!("{setup:?}");
    for r in &rows {
        eprintln!("{r:?}");
    }
    for r in &rows {
        // Every miss reached the disk (the file is read cold), and the mirror told hits
        // from misses for nearly every read.
        assert!(r.device_pages_read >= r.file_pages, "{r:?}");
        assert!(r.predicted_right >= 0.99, "{r:?}");
        // Steered, the mirror and the kernel hold the same pages (the 90%).
        if r.target != "alone" {
            assert!(r.agreement >= 0.9, "{r:?}");
        }
    }
    // MRU disagrees most with the kernel's lists: steering must cut its inaccuracy, and
    // the DONTNEED lever without a single refresh.
    for r in rows.iter().filter(|r| r.target == "mru") {
        assert!(r.inaccuracy < r.inaccuracy_alone, "{r:?}");
    }
    // RWF_DONTCACHE, where honoured, reads the pages secondhit refuses uncached.
    if setup.dontcache == "honoured" {
        let r = rows
            .iter()
            .find(|r| r.target == "lru+secondhit" && r.levers == "dontcache")
            .unwrap();
        assert!(r.uncached_reads > 0, "{r:?}");
    }
}

/// Experiment 4, small (tree D6:F7 in 16 MiB, 3,000 lookups): every miss reaches the
/// disk, the mirror agrees with the kernel on at least 90% of the file's pages in every
/// way, and with `DONTNEED` the page cache keeps more of the level above the leaves than
/// plain, for fewer device reads.
#[test]
#[ignore = "needs root and a memory cgroup (v1 or v2): run with --ignored"]
fn pinrange_over_the_page_cache_in_a_cgroup() {
    let _alone = ONE_CGROUP_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    use inforeplace::experiment::index::IndexSettings;
    use inforeplace::experiment::index_linux::{self, IndexLinuxSettings};
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut index = IndexSettings::quick(None, 1);
    index.lookups = 3_000;
    let mut s = IndexLinuxSettings::new(index, dir.path().to_path_buf(), true);
    s.mirror_policy = "linux:active_ratio=0.8".into();
    let pc = index_linux::run(&s).unwrap();
    for r in &pc.rows {
        eprintln!("{r:?}");
    }
    assert_eq!(pc.rows.len(), 4);
    for r in &pc.rows {
        assert!(r.device_pages_read >= r.accesses - r.hits, "{r:?}");
        assert!(r.agreement >= 0.9, "{r:?}");
    }
    let way = |w: &str| pc.rows.iter().find(|r| r.way == w).unwrap();
    let level5 = |w: &str| {
        let l = pc
            .level_rows
            .iter()
            .find(|l| l.way == w && l.level == 5)
            .unwrap();
        l.hits as f64 / l.accesses as f64
    };
    let (plain, dropped) = (way("linux"), way("pinrange-info+dontneed"));
    assert_eq!(dropped.refreshes, 0);
    assert!(dropped.dropped > 0);
    assert!(level5("pinrange-info+dontneed") > level5("linux"));
    assert!(
        dropped.device_pages_read < plain.device_pages_read,
        "{dropped:?}"
    );
}
