//! `replay --warmup` and `--interval` as spans of trace time, `--warmup-trace`, and the
//! interval figure (`--plot`), on a six-request trace worked by hand.
//!
//! The trace (time, key): (0,1) (10,2) (20,1) (30,3) (40,1) (50,2). LRU with room for two
//! objects: miss, miss, hit, miss (3 evicts 2), hit, miss.

use crate::common;

use common::{fails, json_lines, ok};

const TRACE: &str = "time,key\n0,1\n10,2\n20,1\n30,3\n40,1\n50,2\n";

fn with_trace(body: impl FnOnce(&str, &std::path::Path)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, TRACE).unwrap();
    body(path.to_str().unwrap(), dir.path());
}

/// One interval row: start, start_s, requests, hits.
type IntervalRow = (u64, Option<f64>, u64, u64);

/// (requests, hits) of the single run, and its interval rows.
fn replay_json(args: &[&str]) -> ((u64, u64), Vec<IntervalRow>) {
    let mut all = vec![
        "replay",
        "--policy",
        "lru",
        "--size",
        "2",
        "--ignore-size",
        "--json",
    ];
    all.extend_from_slice(args);
    let lines = json_lines(&ok(&all));
    let total = (
        lines[0]["requests"].as_u64().unwrap(),
        lines[0]["hits"].as_u64().unwrap(),
    );
    let intervals = lines[1..]
        .iter()
        .map(|l| {
            (
                l["start"].as_u64().unwrap(),
                l["start_s"].as_f64(),
                l["requests"].as_u64().unwrap(),
                l["hits"].as_u64().unwrap(),
            )
        })
        .collect();
    (total, intervals)
}

#[test]
fn a_warmup_span_ends_at_the_first_request_that_far_into_the_trace() {
    with_trace(|t, _| {
        // 20 s after the first request is position 2: h m h m are counted.
        assert_eq!(replay_json(&["--trace", t, "--warmup", "20s"]).0, (4, 2));
        // 21 s: position 3 (time 30): m h m.
        assert_eq!(replay_json(&["--trace", t, "--warmup", "21s"]).0, (3, 1));
        // Minutes are 60 s: 1m is past the trace's 50 s.
        fails(
            &["replay", "--trace", t, "--warmup", "1m"],
            &["leaves nothing to count", "spans 50"],
        );
    });
}

#[test]
fn intervals_of_trace_time_cut_where_time_crosses_each_span() {
    with_trace(|t, _| {
        // Spans of 25 s from time 0: [0,25) holds positions 0..3 (m m h), [25,50) 3..5 (m h),
        // [50,75) 5 (m).
        let (total, intervals) = replay_json(&["--trace", t, "--interval", "25s"]);
        assert_eq!(total, (6, 2));
        assert_eq!(
            intervals,
            vec![
                (0, Some(0.0), 3, 1),
                (3, Some(25.0), 2, 1),
                (5, Some(50.0), 1, 0)
            ]
        );
        // With 10 ticks per second, 25 s is 250 units: one interval holds everything.
        let (_, intervals) = replay_json(&[
            "--trace",
            t,
            "--interval",
            "25s",
            "--ticks-per-second",
            "10",
        ]);
        assert_eq!(intervals, vec![(0, Some(0.0), 6, 2)]);
        // Counted in requests, as before: [0,4) m m h m, [4,6) h m.
        let (_, intervals) = replay_json(&["--trace", t, "--interval", "4"]);
        assert_eq!(intervals, vec![(0, None, 4, 1), (4, None, 2, 1)]);
    });
}

#[test]
fn the_interval_table_and_csv_label_intervals_by_their_start() {
    with_trace(|t, _| {
        let table = ok(&[
            "replay",
            "--trace",
            t,
            "--policy",
            "lru",
            "--size",
            "2",
            "--ignore-size",
            "--interval",
            "25s",
        ]);
        let tail: Vec<&str> = table.lines().rev().take(4).collect();
        assert_eq!(
            tail[3].split_whitespace().collect::<Vec<_>>(),
            ["from", "second", "lru", "@", "2"]
        );
        assert_eq!(
            tail[2].split_whitespace().collect::<Vec<_>>(),
            ["0", "0.6667"]
        );
        assert_eq!(
            tail[1].split_whitespace().collect::<Vec<_>>(),
            ["25", "0.5000"]
        );
        assert_eq!(
            tail[0].split_whitespace().collect::<Vec<_>>(),
            ["50", "1.0000"]
        );
        let csv = ok(&[
            "replay",
            "--trace",
            t,
            "--policy",
            "lru",
            "--size",
            "2",
            "--ignore-size",
            "--interval",
            "4",
            "--csv",
        ]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "trace,policy,size,interval,start,start_s,requests,hits,miss_ratio"
        );
        assert_eq!(lines[1], format!("{t},lru,2,0,0,,4,1,0.75"));
        assert_eq!(lines[2], format!("{t},lru,2,1,4,,2,1,0.5"));
    });
}

#[test]
fn a_warmup_trace_fills_the_cache_and_is_not_counted() {
    with_trace(|t, dir| {
        let warm = dir.join("warm.csv");
        std::fs::write(&warm, "time,key\n0,1\n1,2\n").unwrap();
        let warm = warm.to_str().unwrap();
        // Warm: 1 2 leave both resident; then 1 h, 2 h, 1 h, 3 m (evicts 2), 1 h, 2 m.
        assert_eq!(
            replay_json(&["--trace", t, "--warmup-trace", warm]).0,
            (6, 4)
        );
        // With --warmup 2 on top, the trace's first two (1 h, 2 h) are warm-up too: h m h m.
        assert_eq!(
            replay_json(&["--trace", t, "--warmup-trace", warm, "--warmup", "2"]).0,
            (4, 2)
        );
        // The warm-up trace's positions come first in intervals: [0,4) m m h h, [4,8) h m h m.
        let (_, intervals) =
            replay_json(&["--trace", t, "--warmup-trace", warm, "--interval", "4"]);
        assert_eq!(intervals, vec![(0, None, 4, 2), (4, None, 4, 2)]);
        fails(
            &["replay", "--trace", t, "--warmup-trace", warm, "--stream"],
            &["--warmup-trace needs the trace in memory"],
        );
    });
}

#[test]
fn spans_need_time_and_a_unit() {
    with_trace(|_, dir| {
        let text = dir.join("t.txt");
        std::fs::write(&text, "1\n2\n1\n").unwrap();
        let text = text.to_str().unwrap();
        fails(
            &["replay", "--trace", text, "--warmup", "1h"],
            &["timestamps are all 0"],
        );
        fails(
            &["replay", "--trace", text, "--interval", "1h"],
            &["timestamps are all 0"],
        );
        fails(
            &["replay", "--trace", text, "--warmup", "5x"],
            &["ends in s, m, h or d"],
        );
        fails(
            &["replay", "--trace", text, "--interval", "0h"],
            &["whole positive number"],
        );
        fails(
            &["replay", "--trace", text, "--plot", "p.svg"],
            &["--interval"],
        );
    });
}

#[test]
fn the_interval_plot_is_drawn_through_the_report_crate() {
    with_trace(|t, dir| {
        let svg = dir.join("iv.svg");
        let out = ok(&[
            "replay",
            "--trace",
            t,
            "--policy",
            "lru,fifo",
            "--size",
            "2",
            "--ignore-size",
            "--interval",
            "25s",
            "--plot",
            svg.to_str().unwrap(),
        ]);
        assert!(
            out.ends_with(&format!("plot written to {}\n", svg.display())),
            "{out}"
        );
        let drawn = std::fs::read_to_string(&svg).unwrap();
        for needle in [
            "<svg",
            "miss ratio",
            "trace time (s)",
            "lru @ 2",
            "fifo @ 2",
        ] {
            assert!(drawn.contains(needle), "{needle} missing from the figure");
        }
    });
}

#[test]
fn streaming_finds_the_same_spans_in_its_first_pass() {
    with_trace(|t, _| {
        let args = ["--trace", t, "--warmup", "20s", "--interval", "25s"];
        let in_memory = replay_json(&args);
        assert_eq!(in_memory.0, (4, 2));
        let mut streamed = args.to_vec();
        streamed.push("--stream");
        assert_eq!(replay_json(&streamed), in_memory);
    });
}
