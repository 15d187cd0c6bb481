//! `bufcache make-files`, `serve`, `load` and `experiment cache-aware-server` as
//! documented in docs/serve.md: the commands run, their output keeps its shape, and unsafe
//! or bad arguments fail cleanly. Everything binds to loopback and is bounded.

use crate::common;
use common::{fails, ok};

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A `bufcache serve` child, killed (by its own handle) when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bufcache"))
        .arg("serve")
        .args(args)
        .args(["--listen", "127.0.0.1:0", "--duration-secs", "120"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("first line {line:?}"))
        .to_string();
    Server { child, addr }
}

#[test]
fn make_files_serve_and_load_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().to_str().unwrap();
    let made = ok(&[
        "make-files",
        "--workload",
        "uniform:4x8K",
        "--dir",
        files,
        "--seed",
        "2",
    ]);
    assert!(
        made.starts_with("4 files, 32.0 KiB in all, workload uniform (seed 2)"),
        "{made}"
    );

    let server = start(&[
        "--root",
        files,
        "--scheduler",
        "mirror",
        "--mirror-size",
        "1M",
    ]);
    let json = ok(&[
        "load",
        "--target",
        &server.addr,
        "--files",
        files,
        "--requests",
        "50",
        "--connections",
        "2",
        "--warmup",
        "8",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["ok"], 50);
    assert_eq!(v["errors"], 0);
    assert_eq!(v["mode"], "closed");
    assert_eq!(v["latency"]["count"], 50);
    for key in [
        "throughput_rps",
        "throughput_mb_s",
        "latency_hit",
        "latency_miss",
        "prediction_accuracy",
        "joined",
        "prediction_accuracy_joined",
        "device_reads",
    ] {
        assert!(v.get(key).is_some(), "{key} in {v}");
    }
    for key in ["mean_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"] {
        assert!(v["latency"][key].is_number(), "{key}");
    }
    let table = ok(&[
        "load",
        "--target",
        &server.addr,
        "--files",
        files,
        "--requests",
        "20",
        "--connections",
        "2",
        "--rate",
        "500",
    ]);
    assert!(
        table.starts_with("open loop at 500/s, 2 connections, uniform (4 files)"),
        "{table}"
    );
    for needle in [
        "req/s",
        "MB/s",
        "class",
        "p99.9",
        "predictions:",
        "device reads:",
    ] {
        assert!(table.contains(needle), "{needle} in {table}");
    }
}

#[test]
fn unsafe_or_bad_arguments_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().to_str().unwrap();
    fails(
        &["serve", "--root", files, "--listen", "0.0.0.0:0"],
        &["loopback", "--allow-remote"],
    );
    fails(
        &["serve", "--root", files, "--scheduler", "lifo"],
        &["unknown scheduler", "fifo"],
    );
    fails(
        &["serve", "--root", files, "--scheduler", "mirror"],
        &["--mirror-size"],
    );
    fails(
        &["serve", "--root", files, "--scheduler", "pool"],
        &["--pool-size"],
    );
    fails(
        &["serve", "--root", files, "--cgroup-poll", "cache"],
        &["--cgroup-poll \"cache\"", "stat or usage"],
    );
    fails(
        &[
            "serve",
            "--root",
            files,
            "--cgroup-poll",
            "stat",
            "--cgroup-poll-ms",
            "0",
        ],
        &["--cgroup-poll-ms"],
    );
    fails(
        &["serve", "--root", files, "--mirror-track"],
        &["--cgroup-poll"],
    );
    // A server on loopback with `extra` arguments.
    let on_loopback = |extra: &[&'static str]| -> Vec<&str> {
        let mut args = vec!["serve", "--root", files, "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        args
    };
    // Observed flushes need a mirror to tell (a plain one, or a bank of phases that logs
    // them); the tracepoint is checked only after that.
    fails(
        &on_loopback(&["--mirror-flush-events"]),
        &["mirror flush events", "mirror scheduler"],
    );
    // A bank of phases needs a policy with a timer, and 1 to 32 mirrors.
    let phases = |policy: &'static str, count: &'static str| {
        [
            "serve",
            "--root",
            files,
            "--listen",
            "127.0.0.1:0",
            "--scheduler",
            "mirror",
            "--mirror-size",
            "80M",
            "--mirror-policy",
            policy,
            "--mirror-phases",
            count,
        ]
    };
    fails(&phases("linux", "8"), &["no timer to phase"]);
    fails(
        &phases("linux:stats_ms=2000", "33"),
        &["1 to 32 phases, not 33"],
    );
    fails(
        &on_loopback(&["--cgroup-poll", "usage", "--mirror-track"]),
        &["mirror track", "mirror scheduler"],
    );
    fails(
        &[
            "serve",
            "--root",
            "/nonexistent/root",
            "--listen",
            "127.0.0.1:0",
        ],
        &["root"],
    );
    // Refused before any connection is attempted.
    fails(
        &["load", "--target", "192.0.2.1:80", "--files", files],
        &["loopback"],
    );
    fails(&["load", "--files", files], &["manifest.json"]);
    fails(
        &["make-files", "--workload", "zipf", "--dir", files],
        &["workload"],
    );
}

/// Without a cgroup the experiment says so and runs the pool line of each workload; the
/// CSV has one row per run with the documented columns.
/// `bufcache experiment cache-aware-server --quick --no-cgroup` with `extra` arguments,
/// in a fresh directory: the directory (kept alive), the output folder, its scratch
/// folder and the printed text.
fn quick_experiment(extra: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut args = vec![
        "experiment",
        "cache-aware-server",
        "--quick",
        "--no-cgroup",
        "--out",
        out.to_str().unwrap(),
        "--scratch",
        scratch.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let text = ok(&args);
    (dir, out, scratch, text)
}

#[test]
fn the_experiment_without_cgroups_runs_the_pool_half() {
    let (_dir, out, scratch, text) = quick_experiment(&[]);
    assert!(
        text.starts_with("no memory cgroup (--no-cgroup was given)"),
        "{text}"
    );
    let csv = std::fs::read_to_string(out.join("cache-aware-server.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with(
            "workload,scheduler,mode,offered_rps,load,mirror_ratio,mirror_mib,cache_mib"
        ),
        "{header}"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows[0].starts_with("uniform,pool,closed,") && rows[1].starts_with("surge,pool,closed,"),
        "{csv}"
    );
    // The pool line has no mirror: no estimate figure is drawn.
    assert!(!out.join("uniform-by-estimate-throughput.svg").exists());
    // The scratch file sets are removed afterwards.
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
    assert!(ok(&["experiment", "list"]).contains("cache-aware-server"));
}

/// The open-loop sweep without a cgroup: the pool's capacity in a closed loop, then an
/// open loop at each quick load; one row each, and the open-loop figures.
#[test]
fn the_open_loop_sweep_without_cgroups_runs_the_pool_at_each_load() {
    let (_dir, out, _scratch, text) = quick_experiment(&["--open-loop"]);
    assert!(text.contains("open loop at 0.5 x capacity"), "{text}");
    assert!(text.contains("open loop at 1.2 x capacity"), "{text}");
    let csv = std::fs::read_to_string(out.join("cache-aware-server.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[0].starts_with("uniform,pool,closed,,,"), "{csv}");
    assert!(rows[1].starts_with("uniform,pool,open,"), "{csv}");
    assert!(rows[1].contains(",0.5,"), "{csv}");
    assert!(rows[2].contains(",1.2,"), "{csv}");
    for stem in ["mean", "p99", "hits"] {
        let svg = out.join(format!("uniform-open-loop-{stem}.svg"));
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("open loop"), "{}", svg.display());
    }
}

/// `--observed-flushes` says which mirror its lines run: the observed-flush one where
/// this machine has the tracepoint (and we may read tracefs), the fresh `linux` one
/// elsewhere; it refuses the options it sets itself and the adaptive lines.
#[test]
fn observed_flushes_say_which_mirror_runs_and_refuse_what_they_replace() {
    let (_dir, out, _scratch, text) = quick_experiment(&["--observed-flushes"]);
    let here = std::path::Path::new("/sys/kernel/tracing/events/memcg/memcg_flush_stats").is_dir();
    let expected = if here {
        "observed flushes: the mirror lines run linux:stats_events=true"
    } else {
        "no flush tracepoint ("
    };
    assert!(text.contains(expected), "{text}");
    let json = std::fs::read_to_string(out.join("cache-aware-server.json")).unwrap();
    assert!(json.contains("\"mirror_note\""), "{json}");
    for clash in [
        ["--mirror-policy", "clock"],
        ["--mirror-flush-events", "--quick"],
        ["--mirror-phases", "8"],
    ] {
        let mut args = vec!["experiment", "cache-aware-server", "--observed-flushes"];
        args.extend_from_slice(&clash);
        fails(&args, &["cannot be used with"]);
    }
    let dir = tempfile::tempdir().unwrap();
    let refused = dir.path().join("refused");
    fails(
        &[
            "experiment",
            "cache-aware-server",
            "--observed-flushes",
            "--no-cgroup",
            "--lines",
            "fifo,mirror-adaptive",
            "--out",
            refused.to_str().unwrap(),
            "--scratch",
            dir.path().to_str().unwrap(),
        ],
        &["adaptive mirror cannot be told"],
    );
}
