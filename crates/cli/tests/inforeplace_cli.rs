//! `bufcache experiment inforeplace`: the documented command and the shape of its output
//! (docs/experiments/inforeplace.md), kept small: simulator only for the index part.

use crate::common;

use common::{json_lines, ok};

/// The experiment kept small: quick, index part simulated only, 40-page accuracy cache.
fn small_run(out: &str) -> Vec<&str> {
    vec![
        "experiment",
        "inforeplace",
        "--quick",
        "--sim-only",
        "--accuracy-pages",
        "40",
        "--lookups",
        "300",
        "--out",
        out,
    ]
}

#[test]
fn inforeplace_writes_three_csv_files_and_tagged_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let args = small_run(dir.path().to_str().unwrap());
    let lines = json_lines(&ok(&[&args[..], &["--json"]].concat()));
    let part = |p: &str| lines.iter().filter(|l| l["part"] == p).collect::<Vec<_>>();
    let accuracy = part("accuracy");
    let targets = policy::POLICIES.len() - 1; // all but belady
    assert_eq!(accuracy.len(), 4 * targets);
    for r in &accuracy {
        for field in [
            "source",
            "target",
            "inaccuracy",
            "inaccuracy_alone",
            "check_us",
            "refresh_us",
            "simulate_us",
            "rest_us",
            "refreshes_per_call",
            "bound_reached",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
    }
    // three quick trees, three ways, simulator only
    let index = part("index");
    assert_eq!(index.len(), 9);
    assert!(index
        .iter()
        .all(|r| r["engine"] == "sim" && r["lookups"] == 300));
    let levels = part("level");
    assert_eq!(levels.len(), 3 * (5 + 5 + 6));
    for name in [
        "inforeplace-accuracy.csv",
        "inforeplace-index.csv",
        "inforeplace-index-levels.csv",
        "fig3-1-inaccuracy.svg",
        "fig3-1-overhead-pool-linux.svg",
        "fig3-1-overhead-sim-clock.svg",
        "fig3-2-run-time.svg",
        "fig3-2-levels.svg",
    ] {
        assert!(dir.path().join(name).exists(), "{name}");
    }
    assert!(part("linux").is_empty());
    // The summary form prints the thesis's findings beside the tables.
    let summary = ok(&args);
    assert!(summary.contains("Figure 3.1") && summary.contains("MRU worst at about 12%"));
    assert!(summary.contains("Figure 3.2") && summary.contains("10-22% less run time"));
    assert!(ok(&["experiment", "list"]).contains("inforeplace"));
}

/// `--linux` (docs/experiments/inforeplace.md, experiment 3): the Linux page cache through
/// a mirror, in a memory cgroup made and removed for the run.
#[test]
#[ignore = "needs root and a memory cgroup (v1 or v2): run with --ignored"]
fn inforeplace_linux_adds_the_page_cache_rows() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut args = small_run(dir.path().to_str().unwrap());
    args.extend(["--linux", "--linux-limit-mib", "12"]);
    let summary = ok(&args);
    assert!(
        summary.contains("Experiment 3: the Linux page cache"),
        "{summary}"
    );
    assert!(summary.contains("goal: the mirror agrees"));
    let lines = json_lines(&ok(&[&args[..], &["--json"]].concat()));
    let linux: Vec<_> = lines.iter().filter(|l| l["part"] == "linux").collect();
    // four mirrors alone, four thesis targets twice, the scan-resistant LRU twice
    assert_eq!(linux.len(), 4 + 8 + 2);
    for r in &linux {
        for field in [
            "target",
            "mirror",
            "levers",
            "inaccuracy",
            "agreement",
            "device_pages_read",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
    }
    assert!(dir.path().join("inforeplace-linux.csv").exists());
}

/// `--linux-index` (docs/experiments/inforeplace.md, experiment 4): experiment 2's
/// lookups through the Linux page cache in a memory cgroup, four ways, with the rows,
/// levels and gains in their own CSV files.
#[test]
#[ignore = "needs root and a memory cgroup (v1 or v2): run with --ignored"]
fn inforeplace_linux_index_adds_the_page_cache_ways() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut args = small_run(dir.path().to_str().unwrap());
    args.extend(["--linux-index"]);
    let summary = ok(&args);
    assert!(
        summary.contains("Experiment 4: index lookups over the Linux page cache"),
        "{summary}"
    );
    assert!(summary.contains("goals: the mirror agrees"));
    let lines = json_lines(&ok(&[&args[..], &["--json"]].concat()));
    let rows: Vec<_> = lines
        .iter()
        .filter(|l| l["part"] == "index-linux")
        .collect();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        for field in [
            "way",
            "hits",
            "predicted_hits",
            "agreement",
            "device_pages_read",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
    }
    let pagecache = lines
        .iter()
        .filter(|l| l["part"] == "index" && l["engine"] == "pagecache")
        .count();
    assert_eq!(pagecache, 4);
    for f in [
        "inforeplace-index-linux.csv",
        "inforeplace-index-linux-levels.csv",
        "inforeplace-index-linux-gain.csv",
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
}
