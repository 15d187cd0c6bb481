//! `sim::sweep`: exact rows on a hand-worked trace, rows equal to replay's, resuming after
//! a cut or lost rows gives the file of an uninterrupted run byte for byte, and bad specs
//! fail before any work with errors that name the problem.

use std::path::{Path, PathBuf};

use sim::sweep::{self, LocalOptions, SweepError, SweepSpec, HEADER};
use sim::{CacheSize, ReplayOptions};
use testutil::Rng;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn spec(traces: &[&str], policies: &[&str], sizes: &[&str]) -> SweepSpec {
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    SweepSpec {
        traces: own(traces),
        policies: own(policies),
        sizes: own(sizes),
        warmup: None,
        seed: 42,
        ignore_size: true,
        format: None,
        page_size: 4096,
    }
}

const OPTIONS: LocalOptions = LocalOptions {
    traces_at_once: 2,
    memory_budget_bytes: u64::MAX,
};

/// LRU and FIFO over `1 2 3 1 4 1 2`, worked by hand:
/// LRU at 2: only the second `1` after `4` hits (1 hit); at 3: both later `1`s hit (2).
/// FIFO at 2: the `1` after `4` hits (1); at 3: only the first reuse of `1` hits (1),
/// because `4` then evicts the oldest, `1`.
#[test]
fn a_hand_worked_trace_gives_exact_rows() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.txt", "1\n2\n3\n1\n4\n1\n2\n");
    let plan = spec(&["t.txt"], &["lru", "fifo"], &["2", "3"])
        .resolve(dir.path())
        .unwrap();
    let rows = sweep::run_trace(&plan, &dir.path().join("t.txt")).unwrap();
    let got: Vec<(&str, &str, u64, u64, u64)> = rows
        .iter()
        .map(|r| {
            (
                r.policy.as_str(),
                r.size.as_str(),
                r.requests,
                r.hits,
                r.misses,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("lru", "2", 7, 1, 6),
            ("lru", "3", 7, 2, 5),
            ("fifo", "2", 7, 1, 6),
            ("fifo", "3", 7, 1, 6),
        ]
    );
    let digest = sweep::file_digest(&dir.path().join("t.txt")).unwrap();
    assert!(rows.iter().all(|r| r.trace_digest == digest
        && r.mode == "units"
        && r.seed == 42
        && r.warmup == "0"
        && r.version == sweep::VERSION));
    assert_eq!(rows[1].capacity, 3);
    assert!((rows[1].miss_ratio - 5.0 / 7.0).abs() < 1e-15);
}

fn random_trace(rng: &mut testutil::TestRng, requests: usize, keys: u64) -> String {
    let mut text = String::new();
    for _ in 0..requests {
        // Skewed: half the requests go to a tenth of the keys.
        let key = if rng.gen_bool(0.5) {
            rng.gen_range(0..keys / 10)
        } else {
            rng.gen_range(0..keys)
        };
        text.push_str(&format!("{key}\n"));
    }
    text
}

/// Rows equal those of the replay library that `bufcache replay` calls, for seeded and
/// offline policies, fractions and counts, in byte mode with a warm-up.
#[test]
fn rows_equal_replay_on_the_same_inputs() {
    testutil::explore(|seed| {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = seed.rng();
        write(dir.path(), "a.txt", &random_trace(&mut rng, 3000, 400));
        let policies = ["lru", "s3fifo", "random", "belady", "s3fifo:small=0.2"];
        let mut s = spec(&["a.txt"], &policies, &["0.05", "0.3", "40"]);
        s.warmup = Some("0.25".into());
        s.ignore_size = false;
        s.sizes[2] = "163840".into();
        s.seed = 7;
        let plan = s.resolve(dir.path()).unwrap();
        let rows = sweep::run_trace(&plan, &dir.path().join("a.txt")).unwrap();
        let trace = sweep::load_trace(&plan, &dir.path().join("a.txt")).unwrap();
        let specs: Vec<_> = policies
            .iter()
            .map(|p| policy::PolicySpec::parse(p).unwrap())
            .collect();
        let sizes: Vec<_> = s
            .sizes
            .iter()
            .map(|t| CacheSize::parse(t).unwrap())
            .collect();
        let always = policy::AdmissionSpec::parse("always").unwrap();
        let grid = sim::replay::Grid {
            policies: &specs,
            sizes: &sizes,
            admission: &always,
            prefetch: None,
            options: ReplayOptions {
                ignore_size: false,
                seed: 7,
            },
            schedule: sim::Schedule {
                warmup: 750,
                interval: sim::Intervals::None,
            },
        };
        let expected = sim::replay_scheduled(&trace.trace, &grid, &|_| {}).unwrap();
        assert_eq!(rows.len(), expected.len());
        for (row, r) in rows.iter().zip(&expected) {
            assert_eq!(
                row.policy,
                sweep::canonical_policy(&policy::PolicySpec::parse(&r.policy).unwrap())
            );
            assert_eq!(
                (row.size.as_str(), row.capacity, row.requests, row.hits),
                (
                    r.size.as_str(),
                    r.capacity,
                    r.counts.requests,
                    r.counts.hits
                )
            );
            assert_eq!(row.bytes_missed, r.counts.bytes_missed);
            assert_eq!(row.requests, 2250);
        }
    });
}

/// Four seeded traces and a grid; the uninterrupted run's file is the reference.
fn resume_fixture(seed: testutil::Seed) -> (tempfile::TempDir, sweep::SweepPlan, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = seed.rng();
    for i in 0..4 {
        let name = format!("t{i}.txt");
        write(dir.path(), &name, &random_trace(&mut rng, 2000, 300));
    }
    let plan = spec(
        &["t*.txt"],
        &["lru", "fifo", "sieve"],
        &["0.01", "0.1", "0.5"],
    )
    .resolve(dir.path())
    .unwrap();
    let clean = dir.path().join("clean.csv");
    let summary = sweep::run_local(&plan, &clean, OPTIONS, &|_| {}).unwrap();
    assert_eq!((summary.rows_written, summary.rows_total), (36, 36));
    (dir, plan, std::fs::read(&clean).unwrap())
}

#[test]
fn a_run_cut_mid_row_resumes_to_the_same_file() {
    testutil::explore(|seed| {
        let (dir, plan, clean) = resume_fixture(seed);
        let text = String::from_utf8(clean.clone()).unwrap();
        // Every cut point inside the data, including the middle of a row and right after
        // a newline, resumes to the same bytes.
        let header = text.find('\n').unwrap() + 1;
        let mut rng = seed.derive(1).rng();
        for _ in 0..6 {
            let cut = rng.gen_range(header..clean.len());
            let out = dir.path().join("cut.csv");
            std::fs::write(&out, &clean[..cut]).unwrap();
            let summary = sweep::run_local(&plan, &out, OPTIONS, &|_| {}).unwrap();
            assert_eq!(std::fs::read(&out).unwrap(), clean, "cut at byte {cut}");
            let partial = !clean[..cut].ends_with(b"\n");
            assert_eq!(summary.dropped_bytes > 0, partial, "cut at byte {cut}");
            assert_eq!(summary.rows_total, 36);
        }
    });
}

#[test]
fn lost_rows_are_computed_again_and_nothing_else() {
    testutil::explore(|seed| {
        let (dir, plan, clean) = resume_fixture(seed);
        let text = String::from_utf8(clean.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Nine rows a trace. Drop rows 5..=11 (trace 0's last five, trace 1's first two)
        // and reverse the rest: the rerun writes exactly the dropped ones, loads only
        // traces 0 and 1, and restores the order.
        let mut kept: Vec<&str> = lines[1..5].iter().chain(&lines[12..]).copied().collect();
        kept.reverse();
        let out = dir.path().join("lost.csv");
        std::fs::write(&out, format!("{}\n{}\n", lines[0], kept.join("\n"))).unwrap();
        let summary = sweep::run_local(&plan, &out, OPTIONS, &|_| {}).unwrap();
        assert_eq!(summary.rows_written, 7);
        assert_eq!(summary.traces_skipped, 2, "traces 2 and 3 were complete");
        assert_eq!(std::fs::read(&out).unwrap(), clean);
        // A complete file is left alone: no trace is even loaded.
        let again = sweep::run_local(&plan, &out, OPTIONS, &|_| {}).unwrap();
        assert_eq!((again.rows_written, again.traces_skipped), (0, 4));
        assert_eq!(std::fs::read(&out).unwrap(), clean);
    });
}

#[test]
fn memory_budget_and_workers_do_not_change_the_file() {
    testutil::explore(|seed| {
        let (dir, plan, clean) = resume_fixture(seed);
        for (traces_at_once, budget) in [(1, u64::MAX), (4, 1), (3, 200_000)] {
            let out = dir.path().join(format!("w{traces_at_once}.csv"));
            let options = LocalOptions {
                traces_at_once,
                memory_budget_bytes: budget,
            };
            sweep::run_local(&plan, &out, options, &|_| {}).unwrap();
            assert_eq!(std::fs::read(&out).unwrap(), clean);
        }
    });
}

#[test]
fn rows_of_another_sweep_stay_after_this_ones() {
    let (dir, plan, clean) = testutil::fixed(5, resume_fixture);
    let mut other = plan.clone();
    other.seed = 9;
    other.traces.truncate(1);
    let out = dir.path().join("both.csv");
    sweep::run_local(&other, &out, OPTIONS, &|_| {}).unwrap();
    let theirs = std::fs::read_to_string(&out).unwrap();
    let summary = sweep::run_local(&plan, &out, OPTIONS, &|_| {}).unwrap();
    assert_eq!(summary.rows_total, 36 + 9);
    let text = std::fs::read_to_string(&out).unwrap();
    let clean = String::from_utf8(clean).unwrap();
    let their_rows = theirs.split_once('\n').unwrap().1;
    assert_eq!(text, format!("{clean}{their_rows}"));
}

fn error_of(s: &SweepSpec, dir: &Path) -> String {
    s.resolve(dir).unwrap_err().to_string()
}

#[test]
fn bad_specs_fail_before_any_work_and_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.txt", "1\n2\n");
    let ok = spec(&["t.txt"], &["lru"], &["0.5"]);
    assert!(ok.resolve(dir.path()).is_ok());
    let cases: Vec<(SweepSpec, &str)> = vec![
        (
            spec(&["t.txt"], &["lruu"], &["0.5"]),
            "unknown policy `lruu`",
        ),
        (spec(&["t.txt"], &["s3fifo:smal=0.1"], &["0.5"]), "smal"),
        (spec(&["t.txt"], &["lru"], &["1.5"]), "at most 1"),
        (spec(&["t.txt"], &["lru"], &["64MiB"]), "in bytes"),
        (
            spec(&["nope.txt"], &["lru"], &["1"]),
            "nope.txt does not exist",
        ),
        (spec(&["*.bin"], &["lru"], &["1"]), "matches no file"),
        (spec(&[], &["lru"], &["1"]), "no traces"),
        (spec(&["t.txt"], &[], &["1"]), "no policies"),
        (spec(&["t.txt"], &["lru"], &[]), "no sizes"),
        (
            SweepSpec {
                warmup: Some("1.5".into()),
                ..ok.clone()
            },
            "bad warm-up `1.5`",
        ),
        (
            SweepSpec {
                format: Some("parquet".into()),
                ..ok.clone()
            },
            "parquet",
        ),
    ];
    for (s, needle) in cases {
        let e = error_of(&s, dir.path());
        assert!(e.contains(needle), "`{e}` should mention `{needle}`");
    }
    // A size that truncates to nothing is known only with the trace, and named with it.
    let plan = spec(&["t.txt"], &["lru"], &["0.1"])
        .resolve(dir.path())
        .unwrap();
    let e = sweep::run_trace(&plan, &dir.path().join("t.txt")).unwrap_err();
    assert!(matches!(e, SweepError::Replay { .. }), "{e}");
    assert!(e.to_string().contains("t.txt") && e.to_string().contains("truncates to 0"));
}

#[test]
fn spec_files_parse_as_toml_and_json_and_refuse_unknown_keys() {
    let dir = tempfile::tempdir().unwrap();
    let toml = write(
        dir.path(),
        "s.toml",
        "traces = [\"t.txt\"]\npolicies = [\"lru\", \"s3fifo:small=0.2\"]\nsizes = [\"0.1\", \"100\"]\nwarmup = \"0.2\"\nseed = 3\nignore_size = true\n",
    );
    let json = write(
        dir.path(),
        "s.json",
        r#"{"traces": ["t.txt"], "policies": ["lru", "s3fifo:small=0.2"], "sizes": ["0.1", "100"], "warmup": "0.2", "seed": 3, "ignore_size": true}"#,
    );
    let a = SweepSpec::from_file(&toml).unwrap();
    assert_eq!(a, SweepSpec::from_file(&json).unwrap());
    assert_eq!((a.seed, a.page_size, a.ignore_size), (3, 4096, true));
    let typo = write(
        dir.path(),
        "typo.toml",
        "traces = []\npolicies = []\nsize = []\n",
    );
    let e = SweepSpec::from_file(&typo).unwrap_err().to_string();
    assert!(e.contains("typo.toml") && e.contains("size"), "{e}");
}

#[test]
fn a_results_file_of_something_else_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.txt", "1\n2\n1\n");
    let plan = spec(&["t.txt"], &["lru"], &["1"])
        .resolve(dir.path())
        .unwrap();
    let out = write(dir.path(), "other.csv", "a,b,c\n1,2,3\n");
    let e = sweep::run_local(&plan, &out, OPTIONS, &|_| {}).unwrap_err();
    assert!(e.to_string().contains("header is not a sweep's"), "{e}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a,b,c\n1,2,3\n");
    // A mangled complete line in the middle is an error, not silently dropped.
    let out = write(
        dir.path(),
        "mangled.csv",
        &format!("{}\nnot,a,row\n", HEADER.join(",")),
    );
    let e = sweep::run_local(&plan, &out, OPTIONS, &|_| {}).unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
}

#[test]
fn a_second_sweep_on_the_same_file_is_refused_while_the_first_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    let _held = sweep::ResultsFile::open(&out).unwrap();
    let e = sweep::ResultsFile::open(&out).unwrap_err();
    assert!(e.to_string().contains("locked by another sweep"), "{e}");
}

#[test]
fn the_memory_estimate_grows_with_objects_runs_and_offline_policies() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.txt", "1\n");
    let online = spec(&["t.txt"], &["lru", "fifo"], &["0.1", "0.2"])
        .resolve(dir.path())
        .unwrap();
    let offline = spec(&["t.txt"], &["lru", "belady"], &["0.1", "0.2"])
        .resolve(dir.path())
        .unwrap();
    let item = std::mem::size_of::<sim::compact::Item>() as u64;
    let per_object = 8 + 4 * sweep::run::RUN_BYTES_PER_OBJECT;
    assert_eq!(
        sweep::memory_estimate_bytes(&online, 1000, 100),
        1000 * item + 100 * per_object
    );
    assert_eq!(
        sweep::memory_estimate_bytes(&offline, 1000, 100),
        1000 * item + 100 * per_object + 8 * 1000
    );
}
