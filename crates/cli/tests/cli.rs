//! Runs the built `bufcache` binary on small inputs: every subcommand succeeds with the
//! expected numbers, machine output parses, and bad inputs fail with a message that names
//! the problem, a non-zero status and no panic.

use crate::common;
use common::{fails, json_lines, ok};

use std::path::Path;

/// A text trace (one key per line): 1 2 1 3 1 2.
fn small_trace(dir: &Path) -> String {
    let p = dir.join("small.txt");
    std::fs::write(&p, "1\n2\n1\n3\n1\n2\n").unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn replay_json_has_hand_worked_counts() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_trace(dir.path());
    let out = ok(&[
        "replay",
        "--trace",
        &t,
        "--policy",
        "lru,fifo",
        "--size",
        "2",
        "--ignore-size",
        "--json",
    ]);
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 2);
    // LRU at 2: m m h m h m -> 2 hits; FIFO: m m h m m m -> 1 hit.
    assert_eq!(rows[0]["policy"], "lru");
    assert_eq!(rows[0]["hits"], 2);
    assert_eq!(rows[0]["misses"], 4);
    assert_eq!(rows[0]["requests"], 6);
    assert_eq!(rows[1]["policy"], "fifo");
    assert_eq!(rows[1]["hits"], 1);
    for key in ["size", "miss_ratio", "bytes_missed", "wall_s"] {
        assert!(rows[0].get(key).is_some(), "missing {key}");
    }
    // Text traces give every request the page size: 4 misses of 4096 bytes.
    assert_eq!(rows[0]["bytes_missed"], 4 * 4096);
}

#[test]
fn replay_admission_by_hand_and_checked_before_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_trace(dir.path());
    let out = ok(&[
        "replay",
        "--trace",
        &t,
        "--policy",
        "lru",
        "--size",
        "2",
        "--ignore-size",
        "--admission",
        "secondhit",
        "--json",
    ]);
    let rows = json_lines(&out);
    // 1 2 1 3 1 2 behind secondhit: 1 and 2 refused, 1 admitted, 3 refused, 1 hits, 2 admitted.
    assert_eq!(rows[0]["admission"], "secondhit");
    assert_eq!(rows[0]["hits"], 1);
    fails(
        &[
            "replay",
            "--admission",
            "bloom",
            "--trace",
            "/no/such/trace.txt",
        ],
        &["unknown admission filter `bloom`", "known: always, prob"],
    );
}

#[test]
fn replay_prefetch_by_hand_and_checked_before_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("scan.txt");
    std::fs::write(&p, "10\n11\n12\n20\n21\n").unwrap();
    let out = ok(&[
        "replay",
        "--trace",
        p.to_str().unwrap(),
        "--policy",
        "lru",
        "--size",
        "3",
        "--ignore-size",
        "--prefetch",
        "obl",
        "--json",
    ]);
    let rows = json_lines(&out);
    // LRU of 3 with obl: 10 m, 11 m (prefetch 12), 12 h (prefetch 13), 20 m, 21 m (prefetch
    // 22): the hand-worked case of crates/policy/tests/prefetch.rs.
    assert_eq!(rows[0]["prefetch"], "obl");
    assert_eq!(rows[0]["requests"], 5);
    assert_eq!(rows[0]["hits"], 1);
    assert_eq!(rows[0]["prefetches"], 3);
    assert_eq!(rows[0]["prefetch_hits"], 1);
    fails(
        &[
            "replay",
            "--prefetch",
            "mithril",
            "--trace",
            "/no/such/trace.txt",
        ],
        &["unknown prefetcher `mithril`", "known: obl, readahead"],
    );
}

#[test]
fn replay_csv_and_table() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_trace(dir.path());
    let csv = ok(&[
        "replay",
        "--trace",
        &t,
        "--policy",
        "lru",
        "--size",
        "1,3",
        "--ignore-size",
        "--csv",
    ]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines[0].starts_with("trace,mode,seed,admission,policy,size,capacity,requests,hits,misses")
    );
    assert!(lines[2].contains(",lru,3,3,6,3,3,"), "{}", lines[2]);
    let table = ok(&[
        "replay",
        "--trace",
        &t,
        "--policy",
        "lru,fifo",
        "--size",
        "2",
        "--ignore-size",
    ]);
    assert!(
        table.contains("lru") && table.contains("0.6667*"),
        "{table}"
    );
}

#[test]
fn default_replay_runs_the_builtin_workload() {
    let out = ok(&["replay", "--policy", "lru", "--size", "0.1", "--json"]);
    let rows = json_lines(&out);
    assert_eq!(rows[0]["requests"], 2_000_000);
    assert_eq!(rows[0]["mode"], "units");
    let mr = rows[0]["miss_ratio"].as_f64().unwrap();
    assert!(mr > 0.0 && mr < 1.0);
    // Seeded: the same numbers again.
    assert_eq!(
        json_lines(&ok(&[
            "replay", "--policy", "lru", "--size", "0.1", "--json"
        ]))[0]["hits"],
        rows[0]["hits"]
    );
}

#[test]
fn mrc_exact_equals_sweep_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_trace(dir.path());
    let svg = dir.path().join("mrc.svg");
    let exact = json_lines(&ok(&[
        "mrc",
        "--trace",
        &t,
        "--sizes",
        "1,2,3",
        "--ignore-size",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ]));
    // 1 2 1 3 1 2: reuse distances 2, 2, 3 -> misses 6, 4, 3 at sizes 1, 2, 3.
    let misses = |rows: &[serde_json::Value]| -> Vec<u64> {
        rows.iter().map(|r| r["misses"].as_u64().unwrap()).collect()
    };
    assert_eq!(misses(&exact), [6, 4, 3]);
    assert!(exact.iter().all(|r| r["method"] == "exact"));
    // Byte-mode LRU is exact too (byte stack distances); every object is one 4096-byte
    // page here. Other policies are swept.
    let bytes = json_lines(&ok(&[
        "mrc",
        "--trace",
        &t,
        "--sizes",
        "4096,8192,12288",
        "--json",
        "--policy",
        "lru,fifo",
    ]));
    assert_eq!(misses(&bytes[..3]), [6, 4, 3]);
    assert!(bytes[..3].iter().all(|r| r["method"] == "exact"));
    assert!(bytes[3..].iter().all(|r| r["method"] == "sweep"));
    let body = std::fs::read_to_string(&svg).unwrap();
    assert!(body.starts_with("<svg") && body.contains("miss ratio"));
}

#[test]
fn mrc_sampled_methods_at_rate_one_match_and_report_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_trace(dir.path());
    let base = [
        "mrc",
        "--trace",
        &t,
        "--sizes",
        "1,2,3",
        "--ignore-size",
        "--json",
    ];
    let with = |more: &[&str]| json_lines(&ok(&[&base[..], more].concat()));
    let misses = |rows: &[serde_json::Value]| -> Vec<u64> {
        rows.iter().map(|r| r["misses"].as_u64().unwrap()).collect()
    };
    let shards = with(&["--method", "shards", "--rate", "1"]);
    // Three curve points, then the summary line.
    assert_eq!(misses(&shards[..3]), [6, 4, 3]);
    assert!(shards[..3]
        .iter()
        .all(|r| r["method"] == "shards" && r["rate"] == 1.0));
    let summary = &shards[3];
    assert_eq!(summary["summary"], true);
    assert_eq!(summary["requests"], 6);
    assert_eq!(summary["working_set_objects"], 3.0);
    assert!(summary["peak_rss_bytes"].as_u64().unwrap() > 0);
    // At rate 1 every size is resolved, and any sample seed keeps every key.
    assert_eq!(summary["min_resolved_capacity"], 1);
    assert!(shards[..3].iter().all(|r| r["resolved"] == true));
    let seeded = with(&["--method", "shards", "--rate", "1", "--sample-seed", "3"]);
    assert_eq!(misses(&seeded[..3]), [6, 4, 3]);
    let fixed = with(&["--method", "shards-fixed", "--samples", "10"]);
    assert_eq!(misses(&fixed[..3]), [6, 4, 3]);
    assert_eq!(fixed[0]["method"], "shards-fixed");
    // --min-sampled 3 at base rate 0.5: a cache of 1 to 3 objects needs rate 3 / c >= 1
    // to hold 3 sampled objects, so each point is served by the one nested level at rate
    // 1, which sees all 6 requests: the exact curve, 6 level requests in all.
    let raised = ["--method", "shards", "--rate", "0.5", "--min-sampled", "3"];
    let rows = with(&raised);
    assert_eq!(misses(&rows[..3]), [6, 4, 3]);
    assert!(rows[..3].iter().all(|r| r["rate"] == 1.0));
    assert_eq!(
        (rows[3]["rate"].as_f64(), rows[3]["min_sampled"].as_u64()),
        (Some(0.5), Some(3))
    );
    assert_eq!(rows[3]["miniature_requests"], 6);
    let table = ok(&[&base[..6], &raised[..]].concat());
    assert!(
        table.contains("rate  lru (shards R=0.5000)")
            && table.contains("3 smaller size(s) served at a higher rate"),
        "{table}"
    );
    // FIFO on 1 2 1 3 1 2 at 1, 2, 3 objects: 6, 5, 3 misses, as the sweep gives.
    let mini = with(&["--method", "minisim", "--rate", "1", "--policy", "fifo"]);
    let swept = json_lines(&ok(&[&base[..], &["--policy", "fifo"]].concat()));
    let fifo: Vec<&serde_json::Value> = mini.iter().filter(|r| r["policy"] == "fifo").collect();
    assert_eq!(fifo.len(), 3);
    assert!(fifo.iter().all(|r| r["method"] == "minisim"));
    assert_eq!(
        fifo.iter()
            .map(|r| r["misses"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        misses(&swept)
    );
    fails(
        &[&base[..], &["--method", "shards", "--policy", "fifo"]].concat(),
        &["LRU curve only", "minisim"],
    );
    fails(
        &[&base[..], &["--method", "shards", "--rate", "0"]].concat(),
        &["(0, 1]"],
    );
    fails(&["mrc", "--method", "shards"], &["--trace"]);
}

#[test]
fn trace_stats_generate_convert_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_trace(dir.path());
    let stats = json_lines(&ok(&["trace", "stats", &t, "--json"]));
    assert_eq!(stats[0]["requests"], 6);
    assert_eq!(stats[0]["distinct_keys"], 3);
    assert_eq!(stats[0]["first_access_fraction"], 0.5);
    assert_eq!(stats[0]["stack_distance_median"], 2);
    let gen = dir.path().join("z.oracleGeneral.bin");
    ok(&[
        "trace",
        "generate",
        "zipf",
        "--requests",
        "5000",
        "--keys",
        "300",
        "--alpha",
        "0.8",
        "--seed",
        "3",
        "-o",
        gen.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::metadata(&gen).unwrap().len(), 5000 * 24);
    let csv = dir.path().join("z.csv");
    ok(&[
        "trace",
        "convert",
        gen.to_str().unwrap(),
        csv.to_str().unwrap(),
    ]);
    let a = json_lines(&ok(&["trace", "stats", gen.to_str().unwrap(), "--json"]));
    let b = json_lines(&ok(&["trace", "stats", csv.to_str().unwrap(), "--json"]));
    for key in [
        "requests",
        "distinct_keys",
        "stack_distance_median",
        "stack_distance_p90",
    ] {
        assert_eq!(a[0][key], b[0][key], "{key}");
    }
    assert_eq!(a[0]["requests"], 5000);
}

#[test]
fn policies_and_bench() {
    let list = ok(&["policies"]);
    for p in policy::POLICIES {
        assert!(list.contains(p.name) && list.contains(p.summary));
    }
    let out = ok(&[
        "bench",
        "replay",
        "--requests",
        "20000",
        "--keys",
        "1000",
        "--policy",
        "lru,fifo",
        "--size",
        "100",
        "--json",
    ]);
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["policy"], "lru");
    assert_eq!(rows[0]["size"], 100);
    assert_eq!(rows[0]["requests"], 20000);
    assert!(rows[0]["requests_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_inputs_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_trace(dir.path());
    fails(
        &["replay", "--trace", "/nonexistent/x.txt"],
        &["/nonexistent/x.txt"],
    );
    fails(
        &["replay", "--trace", &t, "--format", "nope"],
        &["nope", "text"],
    );
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "1\n2\nxyz\n").unwrap();
    fails(
        &["replay", "--trace", bad.to_str().unwrap()],
        &["bad.txt:3", "xyz"],
    );
    fails(
        &["replay", "--trace", &t, "--policy", "nosuch"],
        &["unknown policy", "nosuch"],
    );
    fails(
        &["replay", "--trace", &t, "--policy", "lru:depth=3"],
        &["depth"],
    );
    fails(&["replay", "--trace", &t, "--size", "lots"], &["lots"]);
    fails(&["replay", "--trace", &t, "--size", "1.5"], &["fraction"]);
    fails(
        &["replay", "--trace", &t, "--size", "1MiB", "--ignore-size"],
        &["bytes"],
    );
    fails(&["mrc", "--trace", &t, "--sizes", "0"], &["points"]);
    fails(&["trace", "stats", "/nonexistent.bin"], &["nonexistent"]);
    let noext = dir.path().join("out.weird");
    fails(
        &["trace", "convert", &t, noext.to_str().unwrap()],
        &["output format"],
    );
    fails(
        &[
            "trace",
            "generate",
            "zipf",
            "--alpha=-1",
            "-o",
            noext.to_str().unwrap(),
            "--format",
            "text",
        ],
        &["alpha"],
    );
    fails(
        &[
            "trace",
            "generate",
            "nosuch",
            "-o",
            noext.to_str().unwrap(),
            "--format",
            "text",
        ],
        &["nosuch"],
    );
    let trunc = dir.path().join("t.oracleGeneral.bin");
    // One valid 24-byte record (time 0, key 1, 4096 bytes, never again), then 6 stray bytes.
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&1u64.to_le_bytes());
    bytes.extend_from_slice(&4096u32.to_le_bytes());
    bytes.extend_from_slice(&(-1i64).to_le_bytes());
    bytes.extend_from_slice(&[0u8; 6]);
    std::fs::write(&trunc, bytes).unwrap();
    fails(
        &["trace", "stats", trunc.to_str().unwrap()],
        &["record 1", "truncated"],
    );
}

#[test]
fn bench_pool_quick_json_has_every_field_of_every_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&[
        "bench",
        "pool",
        "--quick",
        "--tiny",
        "--json",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    let rows = json_lines(&out);
    // xmf-read: 6 transfers x 2 thread counts x (2 pool schemes read and read
    // optimistically + pread + mmap); pin-hit: 2 schemes x 2 thread counts x (pin,
    // optimistic, each also through page hints); random-evict: 2 I/O modes x 2 thread counts x 2 depths x (2 pool
    // schemes + pread); scan: 2 read-ahead settings x 2 pool schemes + pread direct +
    // pread buffered.
    let count = |bench: &str| rows.iter().filter(|r| r["bench"] == bench).count();
    assert_eq!(count("xmf-read"), 72);
    assert_eq!(count("pin-hit"), 16);
    assert_eq!(count("random-evict"), 24);
    assert_eq!(count("scan"), 6);
    assert_eq!(rows.len(), 118);
    let variant = |bench: &str, v: &str| {
        rows.iter()
            .filter(|r| r["bench"] == bench && r["variant"] == v)
            .count()
    };
    assert_eq!(variant("xmf-read", "optimistic"), 24);
    for v in ["pin", "pin-hinted", "optimistic", "optimistic-hinted"] {
        assert_eq!(variant("pin-hit", v), 4, "pin-hit rows of {v}");
    }
    assert!(rows
        .iter()
        .filter(|r| r["bench"] == "pin-hit" && r["variant"].as_str().unwrap().starts_with("pin"))
        .all(|r| r["transfer_bytes"] == 4096));
    for r in &rows {
        for field in ["bench", "scheme", "io"] {
            assert!(r[field].is_string(), "{field} missing in {r}");
        }
        for field in ["transfer_bytes", "threads", "working_set_bytes"] {
            assert!(r[field].as_u64().unwrap() > 0, "{field} in {r}");
        }
        for field in ["ops_per_s", "ns_per_op"] {
            let x = r[field].as_f64().unwrap();
            assert!(x.is_finite() && x > 0.0, "{field} in {r}");
        }
        let scheme = r["scheme"].as_str().unwrap();
        assert!(
            ["mapped", "hashed", "pread", "mmap"].contains(&scheme),
            "{r}"
        );
        if r["bench"] == "random-evict" && scheme != "pread" {
            assert!(r["ratio"].as_f64().unwrap() >= 0.0, "{r}");
            assert_eq!(r["ratio_runs"].as_array().unwrap().len(), 1, "{r}");
            assert!(r["ratio_to"].as_str().unwrap().starts_with("pread/"), "{r}");
            let m = r["miss_ratio"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&m), "{r}");
            // at depth 8 each thread prefetches 16 pages at once: several reads per call
            let depth = r["in_flight"].as_u64().unwrap();
            let per_call = r["reads_per_call"].as_f64().unwrap();
            assert!(
                if depth == 1 {
                    per_call == 1.0
                } else {
                    per_call > 1.0
                },
                "{r}"
            );
        }
    }
    for t in [4, 64, 1024, 4096, 8192, 65536] {
        assert!(
            rows.iter().any(|r| r["bench"] == "xmf-read"
                && r["scheme"] == "mapped"
                && r["transfer_bytes"] == t
                && r["threads"] == 2),
            "no mapped xmf-read of {t} bytes on 2 threads"
        );
    }
    // The temporary data directory is gone.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn bench_pool_rejects_bad_sizes_without_panicking() {
    fails(
        &["bench", "pool", "--tiny", "--threads", "0"],
        &["--threads"],
    );
    fails(
        &["bench", "pool", "--tiny", "--in-flight", "0"],
        &["--in-flight"],
    );
    fails(
        &["bench", "pool", "--tiny", "--transfers", "4000000"],
        &["transfer size 4000000"],
    );
    fails(
        &["bench", "pool", "--tiny", "--dir", "/nonexistent/dir"],
        &["/nonexistent/dir"],
    );
}

#[test]
fn bench_pool_measures_only_the_selected_schemes_and_io_modes() {
    let out = ok(&[
        "bench",
        "pool",
        "--tiny",
        "--json",
        "--bench",
        "xmf-read,random-evict",
        "--scheme",
        "mapped",
        "--io",
        "buffered",
        "--threads",
        "1",
        "--in-flight",
        "1",
        "--transfers",
        "64",
    ]);
    let rows = json_lines(&out);
    let described: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["bench"].as_str().unwrap().to_string(),
                r["scheme"].as_str().unwrap().to_string(),
                r["io"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // random-evict always measures raw pread: the pool's ratio is taken against it;
    // xmf-read measures the pool with `read` and `read_optimistic`.
    let expected = [
        ("xmf-read", "mapped", "cached"),
        ("xmf-read", "mapped", "cached"),
        ("random-evict", "mapped", "buffered"),
        ("random-evict", "pread", "buffered"),
    ];
    assert_eq!(described.len(), expected.len(), "{described:?}");
    for (b, s, io) in expected {
        assert!(
            described.contains(&(b.to_string(), s.to_string(), io.to_string())),
            "{b} {s} {io} missing from {described:?}"
        );
    }
    // Without pread measured, xmf-read has nothing to take a ratio to.
    assert!(rows[0].get("ratio").is_none(), "{}", rows[0]);
}

#[test]
fn outputs_behave_like_a_unix_tool() {
    let dir = tempfile::tempdir().unwrap();
    // `-` is standard output, and carries only the trace
    let out = ok(&[
        "trace",
        "generate",
        "uniform",
        "--requests",
        "3",
        "--keys",
        "1",
        "-o",
        "-",
        "--format",
        "text",
    ]);
    assert_eq!(out, "0\n0\n0\n");
    // a device is written through: the error is the device's, and it stays a device
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::FileTypeExt;
        fails(
            &[
                "trace",
                "generate",
                "uniform",
                "--requests",
                "100000",
                "-o",
                "/dev/full",
                "--format",
                "text",
            ],
            &["/dev/full", "No space left on device"],
        );
        let meta = std::fs::symlink_metadata("/dev/full").unwrap();
        assert!(meta.file_type().is_char_device());
    }
    // below something that is not a directory
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let below = file.join("t.txt");
    fails(
        &[
            "trace",
            "generate",
            "uniform",
            "-o",
            below.to_str().unwrap(),
        ],
        &["not a directory"],
    );
    // oracleGeneral output carries next-access times, so it is built in memory: a trace
    // that cannot fit is refused before anything is allocated (text and CSV stream instead)
    fails(
        &[
            "trace",
            "generate",
            "uniform",
            "--requests",
            "5000000000000",
            "-o",
            dir.path().join("big.oracleGeneral.bin").to_str().unwrap(),
        ],
        &["more than this machine has"],
    );
    // Dust refuses offline policies
    fails(
        &["dust", "--target", "sim:belady:pages=10"],
        &["offline policy"],
    );
}

#[test]
fn bench_replay_refuses_byte_sizes_up_front_and_names_what_it_takes() {
    // A byte size is refused before 20M requests are made (this would take seconds).
    fails(
        &["bench", "replay", "--size", "64MiB"],
        &[
            "--size 64MiB",
            "counts objects",
            "a count of objects (100000)",
            "fraction",
            "--bytes",
        ],
    );
    fails(
        &[
            "bench",
            "replay",
            "--requests",
            "1000",
            "--size",
            "0.0000001",
        ],
        &["truncates to 0 objects"],
    );
    let out = ok(&[
        "bench",
        "replay",
        "--requests",
        "1000",
        "--keys",
        "100",
        "--policy",
        "lru",
        "--size",
        "10",
    ]);
    assert!(out.contains("cache: 10 objects"), "{out}");
    // byte mode takes the byte size; the built-in workload's objects are 4 KiB each
    let out = ok(&[
        "bench",
        "replay",
        "--requests",
        "1000",
        "--keys",
        "100",
        "--policy",
        "gdsf",
        "--size",
        "40KiB",
        "--bytes",
        "--json",
    ]);
    let row: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(row["size"], 40 * 1024, "{out}");
    assert_eq!(row["mode"], "bytes", "{out}");
}

#[test]
fn mrc_checks_policy_specs_before_it_opens_the_trace() {
    for method in ["exact", "minisim"] {
        fails(
            &[
                "mrc",
                "--trace",
                "/nonexistent/t.bin",
                "--policy",
                "lru:bogus=1",
                "--method",
                method,
            ],
            &["bad policy `lru:bogus=1`", "no parameter `bogus`"],
        );
    }
    fails(
        &[
            "mrc",
            "--trace",
            "/nonexistent/t.bin",
            "--policy",
            "s3fifo:small=0.1:small=0.2",
        ],
        &["parameter `small` given more than once"],
    );
}
