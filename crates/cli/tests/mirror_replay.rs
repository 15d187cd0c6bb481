//! `bufcache mirror-replay`: a request log written by hand, scored by mirror models whose
//! predictions are worked out below; the table and the JSON say the same; a malformed log
//! and an unknown feed are refused with the file, the line and the reason; a bank of
//! flush phases is scored for policies with a statistics period.

use crate::common;
use common::{fails, json_lines, ok};

/// Four GETs of 2 pages (8 KiB) each: file 1, file 1 again, file 2, file 1 again. The
/// live mirror said miss, hit, miss, miss; the kernel had the first two as miss and hit,
/// the third as a miss, and still held file 1 at the fourth (hit).
///
/// An LRU mirror of 8 KiB (2 pages) fed at scheduling: miss (right), hit (right), file 2
/// pushes file 1 out, miss (right), miss where the kernel hit (one predicted miss that
/// hit): 3 of 4. Of 16 KiB both files fit: the fourth is a hit, 4 of 4.
fn log(dir: &std::path::Path, extra: &str) -> std::path::PathBuf {
    let rows = [
        (0, 1, "miss", "miss", 0),
        (1, 1, "hit", "hit", 2),
        (2, 2, "miss", "miss", 0),
        (3, 1, "miss", "hit", 2),
    ];
    let mut text = String::new();
    for (order, inode, predicted, actual, cached) in rows {
        text.push_str(&format!(
            "{{\"order\":{order},\"inode\":{inode},\"first_page\":0,\"pages\":2,\
             \"predicted\":\"{predicted}\",\"cached_pages\":{cached},\"actual\":\"{actual}\",\
             \"start_us\":{},\"end_us\":{}}}\n",
            100 * order,
            100 * order + 50
        ));
    }
    text.push_str(extra);
    let path = dir.join("run.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn models_are_scored_as_worked_out_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let trace = log(dir.path(), "");
    let trace = trace.to_str().unwrap();
    let base = [
        "mirror-replay",
        "--trace",
        trace,
        "--sizes",
        "8K,16K",
        "--policies",
        "lru",
        "--feeds",
        "scheduled",
    ];
    let text = ok(&base);
    let row = |label: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no row {label:?} in {text}"));
        line[label.len()..]
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    assert!(text.starts_with("4 requests logged\n"), "{text}");
    // agree, +joined, predicted hits that missed, of them joined, predicted misses that
    // hit, compared
    assert_eq!(
        row("(the live predictions)"),
        ["75.0%", "75.0%", "0", "0", "1", "4"]
    );
    assert_eq!(
        row("lru 8K scheduled"),
        ["75.0%", "75.0%", "0", "0", "1", "4"]
    );
    assert_eq!(
        row("lru 16K scheduled"),
        ["100.0%", "100.0%", "0", "0", "0", "4"]
    );

    let json = json_lines(&ok(&[&base[..], &["--json"]].concat()));
    assert_eq!(json.len(), 2, "one object per model");
    assert_eq!(json[0]["policy"], "lru");
    assert_eq!(json[0]["size_bytes"], 8192);
    assert_eq!(json[0]["feed"], "scheduled");
    assert_eq!(json[0]["agreement"], 0.75);
    let score = &json[0]["score"];
    assert_eq!(
        (
            &score["right_hits"],
            &score["right_misses"],
            &score["false_misses"]
        ),
        (&1.into(), &2.into(), &1.into())
    );
    assert_eq!(json[1]["agreement"], 1.0);
}

#[test]
fn a_malformed_log_and_an_unknown_feed_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bad = log(dir.path(), "not json\n");
    let bad = bad.to_str().unwrap();
    fails(&["mirror-replay", "--trace", bad], &["run.jsonl", "line 5"]);
    let good = log(dir.path(), "");
    let good = good.to_str().unwrap();
    fails(
        &["mirror-replay", "--trace", good, "--feeds", "sometime"],
        &["sometime"],
    );
    fails(
        &["mirror-replay", "--trace", "/nonexistent/run.jsonl"],
        &["/nonexistent/run.jsonl"],
    );
}

/// `--phase-bank`: a bank row for each policy with a statistics period, none for the
/// others. Within the log's 0.3 ms no flush falls, so both phases are the same model:
/// with 2 pages, file 1 goes active at its second read; file 2 is read with reclaim
/// gated off (nothing flushed: no activation counted, inactive not low), so its first
/// page evicts file 1's active tail and its second its own first; file 1 is then a
/// predicted miss that hit, 3 of 4, as the fresh model scores it.
#[test]
fn a_phase_bank_is_scored_for_policies_with_a_statistics_period() {
    let dir = tempfile::tempdir().unwrap();
    let trace = log(dir.path(), "");
    let args = [
        "mirror-replay",
        "--trace",
        trace.to_str().unwrap(),
        "--sizes",
        "8K",
        "--policies",
        "lru,linux:stats_ms=2000",
        "--feeds",
        "scheduled",
        "--phase-bank",
        "2",
    ];
    let text = ok(&args);
    let banks: Vec<&str> = text.lines().filter(|l| l.contains("bank of")).collect();
    assert_eq!(banks.len(), 1, "{text}");
    let cells: Vec<&str> = banks[0].split_whitespace().collect();
    assert_eq!(
        cells[..6],
        ["linux:stats_ms=2000", "8K", "bank", "of", "2", "phases"]
    );
    assert_eq!(cells[6..], ["75.0%", "75.0%", "0", "0", "1", "4"]);
    let json = json_lines(&ok(&[&args[..], &["--json"]].concat()));
    assert_eq!(json.len(), 3, "lru, linux, the bank");
    assert_eq!(json[2]["phase_bank"], 2);
    assert_eq!(json[2]["agreement"], 0.75);
    assert_eq!(json[1]["phase_bank"], 0);
}

/// Flush lines (`--mirror-flush-events` servers log them) are read with the requests:
/// the header counts them and models told of flushes run on them; a flush line that is
/// not a number of µs is refused with its line. (What a flush does to a model is worked
/// out by hand in `serve::replay`'s tests.)
#[test]
fn a_logs_flush_lines_are_counted_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let trace = log(dir.path(), "{\"flush_us\":120}\n{\"flush_us\":250}\n");
    let trace = trace.to_str().unwrap();
    let args = [
        "mirror-replay",
        "--trace",
        trace,
        "--sizes",
        "16K",
        "--policies",
        "linux:stats_events=true",
        "--feeds",
        "scheduled",
    ];
    let text = ok(&args);
    assert!(
        text.starts_with("4 requests logged, 2 statistics flushes\n"),
        "{text}"
    );
    // Both files fit in 16K whatever the statistics say: 4 of 4.
    let json = json_lines(&ok(&[&args[..], &["--json"]].concat()));
    assert_eq!(json[0]["agreement"], 1.0);
    let bad = log(dir.path(), "{\"flush_us\":\"soon\"}\n");
    fails(
        &["mirror-replay", "--trace", bad.to_str().unwrap()],
        &["run.jsonl", "line 5"],
    );
}
