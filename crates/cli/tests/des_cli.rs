//! `bufcache des` and `bufcache experiment`: the shipped scenarios run, machine output has
//! the documented fields, files are written, and bad scenarios fail with the file and key.

use crate::common;
use common::{bufcache, json_lines, ok};

use std::path::{Path, PathBuf};

fn scenario(name: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    root.join(name).to_string_lossy().into_owned()
}

#[test]
fn shipped_scenarios_run() {
    let out = ok(&["des", &scenario("disk-schedulers.toml")]);
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{out}");
    assert!(
        rows[0].starts_with("fifo") && rows[3].starts_with("clook"),
        "{out}"
    );
    let points = json_lines(&ok(&["des", &scenario("kotz-gw.toml"), "--json"]));
    assert_eq!(points.len(), 4);
    for p in &points {
        assert_eq!(p["report"]["disk_writes"], 4000);
        assert!(p["system"]["cache"]["buffers"].is_u64());
    }
}

#[test]
fn bad_scenarios_name_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| -> String {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let base = std::fs::read_to_string(scenario("kotz-gw.toml")).unwrap();
    let cases = [
        (
            "typo.toml",
            base.replace("buffers = 80", "bufers = 80"),
            vec!["typo.toml", "bufers"],
        ),
        (
            "policy.toml",
            base.replace("\"toss\"", "\"nosuch\""),
            vec!["policy.toml", "system.cache.policy", "nosuch"],
        ),
        (
            "disks.toml",
            base.replace("count = 20", "count = 0"),
            vec!["disks.toml", "system.disks.count"],
        ),
        (
            "sched.toml",
            base.replace("\"fifo\"", "\"elevator\""),
            vec!["sched.toml", "elevator", "clook"],
        ),
    ];
    for (name, text, needles) in cases {
        let path = write(name, &text);
        let out = bufcache(&["des", &path]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(!err.contains("panicked"), "{err}");
        for n in needles {
            assert!(err.contains(n), "{n:?} not in {err:?}");
        }
    }
    let out = bufcache(&["des", "/no/such/scenario.toml"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/scenario.toml"));
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn kotz_ellis_writes_csv_svg_and_json_points() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let points = json_lines(&ok(&[
        "experiment",
        "kotz-ellis",
        "--quick",
        "--json",
        "--out",
        out,
    ]));
    assert!(points.len() > 50);
    for p in &points {
        for field in [
            "figure",
            "pattern",
            "compute",
            "write_policy",
            "cache_buffers",
            "record_blocks",
            "time_s",
            "ideal_s",
            "disk_writes",
            "rewrite_mistakes",
        ] {
            assert!(p.get(field).is_some(), "{field} missing in {p}");
        }
    }
    assert!(points.iter().any(|p| p["write_policy"] == "none"));
    let files = files_in(dir.path());
    assert!(files.contains(&"kotz-ellis.csv".to_string()), "{files:?}");
    assert_eq!(
        files.iter().filter(|f| f.ends_with(".svg")).count(),
        8,
        "{files:?}"
    );
    let csv = std::fs::read_to_string(dir.path().join("kotz-ellis.csv")).unwrap();
    assert_eq!(csv.lines().count(), points.len() + 1);
    // The summary form prints the paper's caching table beside ours.
    let summary = ok(&["experiment", "kotz-ellis", "--quick", "--out", out]);
    assert!(
        summary.contains("127.3") && summary.contains("no cache (ours)"),
        "{summary}"
    );
}

#[test]
fn xmf_cleaning_reports_both_cleaners() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let points = json_lines(&ok(&[
        "experiment",
        "xmf-cleaning",
        "--quick",
        "--json",
        "--out",
        out,
    ]));
    assert_eq!(points.len(), 8);
    for p in &points {
        for field in ["cleaner", "cache_buffers", "disk_reads", "disk_writes"] {
            assert!(p.get(field).is_some(), "{field} missing in {p}");
        }
    }
    assert_eq!(
        points
            .iter()
            .filter(|p| p["cleaner"] == "getnewbuf")
            .count(),
        4
    );
    assert_eq!(points.iter().filter(|p| p["cleaner"] == "clock").count(), 4);
    assert!(files_in(dir.path()).contains(&"fig21-writes.svg".to_string()));
    assert!(ok(&["experiment", "list"]).contains("xmf-cleaning"));
}

#[test]
fn bench_des_quick_reports_events_per_second() {
    let lines = json_lines(&ok(&["bench", "des", "--quick", "--json"]));
    assert_eq!(lines.len(), 5);
    for l in &lines[..4] {
        assert!(l["events"].as_u64().unwrap() > 10_000);
        assert!(l["events_per_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn burnett_ordering_quick_reports_every_mechanism_without_violations() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let points = json_lines(&ok(&[
        "experiment",
        "burnett-ordering",
        "--quick",
        "--json",
        "--out",
        out,
    ]));
    assert_eq!(points.len(), 10 * 2 * 4);
    for p in &points {
        for field in [
            "figure",
            "mechanism",
            "scheduler",
            "param",
            "value",
            "time_s",
            "disk_reads",
            "disk_writes",
            "violations",
        ] {
            assert!(p.get(field).is_some(), "{field} missing in {p}");
        }
        assert_eq!(p["violations"], 0);
    }
    for m in ["none", "fsync", "barrier", "graph"] {
        assert!(points.iter().any(|p| p["mechanism"] == m));
    }
    assert!(files_in(dir.path())
        .iter()
        .any(|f| f.starts_with("fig4.12")));
}

#[test]
fn a_syscall_trace_replays_and_a_bad_line_is_named() {
    let out = ok(&["des", &scenario("wal-graph.toml")]);
    assert!(
        out.lines().nth(1).unwrap().trim_end().ends_with(" 0"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.syscalls"),
        "file log 100\n0 write log 0 10\n0 gwrite log 0 10 1 after=9\n",
    )
    .unwrap();
    let toml = std::fs::read_to_string(scenario("wal-graph.toml"))
        .unwrap()
        .replace("wal.syscalls", "bad.syscalls");
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, toml).unwrap();
    let result = bufcache(&["des", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(
        err.contains("bad.syscalls:3") && err.contains("after=9"),
        "{err}"
    );
}

#[test]
fn nelson_quick_writes_every_table_and_figure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let summary = ok(&["experiment", "nelson", "--quick", "--out", out]);
    for heading in [
        "Table 2:",
        "Table 3:",
        "Table 4:",
        "Every arbiter, ECD",
        "Every arbiter, IFS",
    ] {
        assert!(summary.contains(heading), "{heading} missing:\n{summary}");
    }
    // The paper's numbers are printed beside ours (Table 3, 30 s: 15.8 s mean response).
    assert!(
        summary.contains("15.8") && summary.contains("96.3"),
        "{summary}"
    );
    let files = files_in(dir.path());
    for f in [
        "nelson-ecd.csv",
        "nelson-ifs.csv",
        "nelson-tables.md",
        "fig1-elapsed.svg",
        "fig2-traffic.svg",
        "fig3-elapsed.svg",
        "fig4-traffic.svg",
        "fig5-elapsed.svg",
        "fig6-total.svg",
        "arbiters-ifs-response.svg",
    ] {
        assert!(files.contains(&f.to_string()), "{f} missing in {files:?}");
    }
    // One CSV row per run: 4 fixed sizes and 7 variable arbiters at 16 MB; 7 arbiters at
    // 2 sleep intervals.
    let ecd = std::fs::read_to_string(dir.path().join("nelson-ecd.csv")).unwrap();
    assert_eq!(ecd.lines().count(), 1 + 11);
    let ifs = std::fs::read_to_string(dir.path().join("nelson-ifs.csv")).unwrap();
    assert_eq!(ifs.lines().count(), 1 + 14);
    assert!(ifs.lines().next().unwrap().contains("response_p90_s"));
    assert!(ok(&["experiment", "list"]).contains("nelson"));
}

#[test]
fn ubc_prints_table_1_beside_the_paper() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let rows = json_lines(&ok(&["experiment", "ubc", "--json", "--out", out]));
    assert_eq!(rows.len(), 2 * 10);
    for r in &rows {
        for field in [
            "row",
            "layout",
            "device_reads",
            "device_writes",
            "copies",
            "held_mb",
            "held_twice_mb",
            "time_s",
            "paper_s",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
    }
    let summary = ok(&["experiment", "ubc", "--out", out]);
    assert!(
        summary.contains("resident file") && summary.contains("193"),
        "{summary}"
    );
    let files = files_in(dir.path());
    assert!(
        files.contains(&"ubc-sim.csv".to_string()) && files.contains(&"ubc-time.svg".to_string())
    );
}

/// `experiment ubc --real` at a tiny scale (4 MiB of memory, a 16 MiB file, its first
/// 2 MiB read five times), without a cgroup: the simulated table, then every design's
/// eight steps, in the documented columns, and the CSV.
#[test]
fn ubc_real_runs_the_dd_series_on_real_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scratch = dir.path().join("scratch");
    let args = [
        "experiment",
        "ubc",
        "--real",
        "--no-cgroup",
        "--memory-mib",
        "4",
        "--file-mib",
        "16",
        "--first-mib",
        "2",
        "--scratch",
        scratch.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let text = ok(&args);
    assert!(
        text.contains("UBC Table 1 (dd series), simulated"),
        "{text}"
    );
    assert!(
        text.contains("on real files: memory 4 MiB, file 16 MiB, first 2 MiB; no cgroup"),
        "{text}"
    );
    assert!(
        text.contains("design") && text.contains("dev read MiB") && text.contains("held twice pg"),
        "{text}"
    );
    for design in ["raw-direct", "page-cache", "pool-direct", "pool-buffered"] {
        for step in ["write", "overwrite", "read", "first-1", "first-5"] {
            assert!(
                text.lines().any(|l| {
                    let mut w = l.split_whitespace();
                    w.next() == Some(design) && w.next() == Some(step)
                }),
                "no {design} {step} row in\n{text}"
            );
        }
    }
    assert!(files_in(&out).contains(&"ubc-real.csv".to_string()));
    common::fails(
        &[
            "experiment",
            "ubc",
            "--real",
            "--memory-mib",
            "32",
            "--file-mib",
            "16",
            "--out",
            out.to_str().unwrap(),
        ],
        &["--first-mib must fit"],
    );
}
