//! `bufcache dust` end to end: the JSON line, the output directory, and bad targets.

use crate::common;
use common::{fails, ok};

/// `bufcache dust --target TARGET --iterations N --json`: the object on the last line.
fn dust_json(target: &str, iterations: &str) -> serde_json::Value {
    let text = ok(&[
        "dust",
        "--target",
        target,
        "--iterations",
        iterations,
        "--json",
    ]);
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

#[test]
fn json_last_line() {
    let v = dust_json("sim:lruk:k=2:pages=1000", "40");
    assert_eq!(v["verdict"], "lruk");
    assert_eq!(v["size_estimate_pages"], 1000);
    assert_eq!(
        v["attributes"],
        serde_json::json!(["recency", "frequency", "history"])
    );
    let c = v["confidence"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&c));
    assert_eq!(v["probes"], 40 * 60);
}

#[test]
fn the_real_pool_as_a_target() {
    let v = dust_json("pool:twoq:frames=500", "30");
    assert_eq!(v["verdict"], "twoq");
    assert_eq!(v["size_estimate_pages"], 500);
    assert_eq!(v["target"], "pool:twoq:frames=500:blocks=4000");
    assert_eq!(v["judge"]["kind"], "oracle");
}

#[test]
fn out_dir_and_human_summary() {
    let dir = tempfile::tempdir().unwrap();
    let text = ok(&[
        "dust",
        "--target",
        "sim:fifo:pages=500:timing=on",
        "--size-hint",
        "450",
        "--iterations",
        "20",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(text.contains("cache size: 450 pages (hint"), "{text}");
    assert!(text.contains("judge: timing"), "{text}");
    assert!(text.contains("verdict: fifo"), "{text}");
    let csv = std::fs::read_to_string(dir.path().join("probes.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("step,iteration,offset,stripe,hit,latency_ns,resident")
    );
    assert_eq!(lines.count(), 20 * 60);
    // A size hint: no size trials, so no size figure.
    assert!(!dir.path().join("size.svg").exists());
    for f in ["short_term.svg", "use_bits.svg", "history.svg"] {
        let svg = std::fs::read_to_string(dir.path().join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<circle"), "{f}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["verdict"]["verdict"], "fifo");
    assert!(report.get("probes").is_none());
}

#[test]
fn size_figure_when_measured() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "dust",
        "--target",
        "sim:lru:pages=300",
        "--iterations",
        "5",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(dir.path().join("size.svg")).unwrap();
    assert!(svg.contains("size estimate 300 pages"));
    let trials = std::fs::read_to_string(dir.path().join("size.csv")).unwrap();
    // 64, 128, 256 fit; 512 does not; bisection down to 300.
    assert!(
        trials.starts_with(
            "prefix_pages,slow,fits
64,0,true
128,0,true
256,0,true
512,512,false
"
        ),
        "{trials}"
    );
    assert_eq!(svg.matches("<circle").count(), trials.lines().count() - 1);
}

#[test]
fn bad_targets() {
    fails(
        &["dust", "--target", "nfs:/x"],
        &["bad target `nfs:/x`", "sim:POLICY"],
    );
    fails(&["dust", "--target", "sim:lru"], &["add `:pages=N`"]);
    fails(
        &["dust", "--target", "pool:lru:frames=100:blocks=50"],
        &["between 2*frames"],
    );
    fails(
        &["dust", "--target", "pool:belady:frames=100"],
        &["the pool refuses it"],
    );
    fails(
        &["dust", "--target", "sim:nosuch:pages=100"],
        &["unknown policy `nosuch`"],
    );
    fails(
        &["dust", "--target", "linux:/nonexistent/dust-file"],
        &["opening /nonexistent/dust-file"],
    );
    fails(
        &["dust", "--target", "sim:lru:pages=100", "--size-hint", "5"],
        &["too small to fingerprint"],
    );
    fails(
        &["dust", "--target", "sim:lru:pages=100", "--iterations", "0"],
        &["iterations must be at least 1"],
    );
    fails(
        &[
            "dust",
            "--target",
            "sim:lru:pages=100",
            "--size-hint",
            "1000",
        ],
        &["Dust needs"],
    );
}
