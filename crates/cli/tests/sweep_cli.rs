//! `bufcache sweep`: rows equal `bufcache replay --csv`, a process killed mid-sweep and
//! rerun leaves the file a clean run leaves, bad input fails cleanly, and the output keeps
//! the shape docs/sweep.md shows.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fails, ok};

/// A deterministic skewed trace of `requests` keys over `keys` objects (a fixed formula,
/// no seed: the test needs some trace, not a random one).
fn trace_text(requests: u64, keys: u64, salt: u64) -> String {
    let mut state = salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut text = String::new();
    for _ in 0..requests {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let key = if state.is_multiple_of(2) {
            (state >> 8) % (keys / 8)
        } else {
            (state >> 8) % keys
        };
        text.push_str(&format!("{key}\n"));
    }
    text
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn field<'a>(header: &[&str], row: &[&'a str], name: &str) -> &'a str {
    row[header.iter().position(|h| *h == name).unwrap()]
}

#[test]
fn rows_equal_replay_csv_on_the_same_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.txt");
    std::fs::write(&t, trace_text(5000, 600, 1)).unwrap();
    let out = dir.path().join("r.csv");
    let common = ["--policy", "lru,fifo,s3fifo", "--size", "0.02,0.2,50"];
    let mut sweep = vec!["sweep", "--trace", path_str(&t), "-o", path_str(&out)];
    sweep.extend(common);
    sweep.extend(["--ignore-size", "--warmup", "0.1"]);
    ok(&sweep);
    let mut replay = vec!["replay", "--trace", path_str(&t), "--csv"];
    replay.extend(common);
    replay.extend(["--ignore-size", "--warmup", "0.1"]);
    let replayed = ok(&replay);
    let swept = std::fs::read_to_string(&out).unwrap();
    let (rh, rrows) = replayed.split_once('\n').unwrap();
    let (sh, srows) = swept.split_once('\n').unwrap();
    let rh: Vec<&str> = rh.split(',').collect();
    let sh: Vec<&str> = sh.split(',').collect();
    let rrows: Vec<Vec<&str>> = rrows.lines().map(|l| l.split(',').collect()).collect();
    let srows: Vec<Vec<&str>> = srows.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rrows.len(), 9);
    assert_eq!(srows.len(), 9);
    for (r, s) in rrows.iter().zip(&srows) {
        for name in [
            "size",
            "capacity",
            "requests",
            "hits",
            "misses",
            "miss_ratio",
        ] {
            assert_eq!(field(&rh, r, name), field(&sh, s, name), "{name}");
        }
        let policy = field(&sh, s, "policy");
        assert!(policy.starts_with(field(&rh, r, "policy")), "{policy}");
    }
}

fn write_traces(dir: &Path, n: u64, requests: u64) {
    for i in 0..n {
        let text = trace_text(requests, 20_000, i + 10);
        std::fs::write(dir.join(format!("t{i}.txt")), text).unwrap();
    }
    std::fs::write(
        dir.join("spec.toml"),
        "traces = [\"t*.txt\"]\npolicies = [\"lru\", \"arc\", \"s3fifo\", \"lirs\"]\nsizes = [\"0.01\", \"0.05\", \"0.1\", \"0.3\"]\nignore_size = true\n",
    )
    .unwrap();
}

fn data_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

/// SIGKILL lets nothing run: whatever the file holds at that moment, the rerun must
/// complete it to the clean run's bytes.
#[test]
#[cfg_attr(miri, ignore = "spawns processes")]
fn a_killed_sweep_resumes_to_the_file_of_a_clean_run() {
    let dir = tempfile::tempdir().unwrap();
    write_traces(dir.path(), 8, 60_000);
    let spec = dir.path().join("spec.toml");
    let clean = dir.path().join("clean.csv");
    let args = |out: &Path| {
        vec![
            "sweep".to_string(),
            path_str(&spec).to_string(),
            "-o".into(),
            path_str(out).to_string(),
            "--threads".into(),
            "1".into(),
        ]
    };
    let killed = dir.path().join("killed.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bufcache"))
        .args(args(&killed))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill as soon as the first trace's rows are durable: seven traces are still to go.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut finished_first = false;
    while data_lines(&killed) == 0 {
        if child.try_wait().unwrap().is_some() {
            finished_first = true;
            break;
        }
        assert!(Instant::now() < deadline, "no row after 120 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let rows_at_kill = data_lines(&killed);
    eprintln!("killed with {rows_at_kill} of 128 rows written (finished first: {finished_first})");
    assert!(rows_at_kill < 128, "the sweep ended before the kill");
    let resumed = ok(&args(&killed).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(resumed.contains("skipped"), "{resumed}");
    ok(&args(&clean).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        std::fs::read(&killed).unwrap(),
        std::fs::read(&clean).unwrap()
    );
    assert_eq!(data_lines(&clean), 128);
}

#[test]
fn the_documented_output_shape_holds() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/sweep.md"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_traces(dir.path(), 2, 2000);
    let spec = dir.path().join("spec.toml");
    let out = dir.path().join("r.csv");
    let first = ok(&["sweep", path_str(&spec), "-o", path_str(&out)]);
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(
        lines[0],
        "sweep: 2 traces x 4 policies x 4 sizes = 32 cells"
    );
    assert_eq!(
        lines[1],
        format!(
            "ran 2 traces, skipped 0 already complete; wrote 32 rows, 32 in {}",
            out.display()
        )
    );
    assert!(lines[2].ends_with(" s") && lines.len() == 3, "{first}");
    let again = ok(&["sweep", path_str(&spec), "-o", path_str(&out)]);
    assert!(again.contains("ran 0 traces, skipped 2 already complete; wrote 0 rows"));
    // The header docs/sweep.md shows is the file's.
    let csv = std::fs::read_to_string(&out).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        doc.contains(&format!("\n{header}\n")),
        "docs/sweep.md lacks {header}"
    );
    // The usage line in the docs names every flag `--help` lists.
    let help = ok(&["sweep", "--help"]);
    for flag in help.split_whitespace().filter(|w| w.starts_with("--")) {
        let flag = flag.trim_end_matches([',', '.']);
        if flag != "--help" && flag != "--version" {
            assert!(doc.contains(flag), "docs/sweep.md does not mention {flag}");
        }
    }
}

#[test]
fn bad_input_fails_before_work_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    write_traces(dir.path(), 1, 100);
    let spec = dir.path().join("spec.toml");
    let out = dir.path().join("r.csv");
    let o = path_str(&out);
    fails(
        &["sweep", path_str(&spec), "-o", o, "--policy", "lruu"],
        &["bad policy `lruu`"],
    );
    fails(
        &["sweep", path_str(&spec), "-o", o, "--size", "2.5"],
        &["2.5", "at most 1"],
    );
    fails(
        &[
            "sweep",
            "--trace",
            "/nonexistent/x.txt",
            "--policy",
            "lru",
            "--size",
            "1",
            "-o",
            o,
        ],
        &["/nonexistent/x.txt does not exist"],
    );
    fails(
        &[
            "sweep",
            "--trace",
            "/nonexistent/*.txt",
            "--policy",
            "lru",
            "--size",
            "1",
            "-o",
            o,
        ],
        &["matches no file"],
    );
    fails(
        &["sweep", "-o", o, "--policy", "lru", "--size", "1"],
        &["no traces"],
    );
    fails(
        &["sweep", "/nonexistent/spec.toml", "-o", o],
        &["/nonexistent/spec.toml"],
    );
    assert!(
        !out.exists(),
        "a refused sweep must not create its results file"
    );
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "traces = [\"t0.txt\"]\npolicy = [\"lru\"]\n").unwrap();
    fails(&["sweep", path_str(&bad), "-o", o], &["bad.toml", "policy"]);
}
