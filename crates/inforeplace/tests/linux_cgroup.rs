//! The mirror against the real page cache under memory pressure, in a memory cgroup the
//! test creates and removes: the goal, at least 90% agreement with the ground
//! truth, and InfoReplace steering the kernel towards the target.

use inforeplace::experiment::linux::{self, LinuxSettings};

#[test]
#[ignore = "needs root and a memory cgroup (v1 or v2): run with --ignored"]
fn the_mirror_predicts_the_page_cache_in_a_cgroup() {
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
