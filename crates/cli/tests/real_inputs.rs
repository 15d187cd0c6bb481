//! The traces people have, through the command line: any CSV layout (detected or mapped),
//! string keys, spelled-out operations and compressed inputs; exact counts on hand-worked
//! cases and clean errors on bad ones.

use crate::common;
use common::{fails, json_lines, ok};

use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// LRU at 2 objects over a b a c a b (keys as strings): m m h m h m.
const LRU2_HITS: u64 = 2;

#[test]
fn string_keys_and_ops_by_header() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(
        dir.path(),
        "kv.csv",
        "timestamp\tobj_id\tobj_size\top\n1\tuser:a\t10\tGET\n2\tuser:b\t10\tset\n3\tuser:a\t10\tget\n4\tuser:c\t10\tGET\n5\tuser:a\t10\tGET\n6\tuser:b\t10\tput\n",
    );
    let rows = json_lines(&ok(&[
        "replay",
        "--trace",
        &t,
        "--policy",
        "lru",
        "--size",
        "2",
        "--ignore-size",
        "--json",
    ]));
    assert_eq!(rows[0]["hits"], LRU2_HITS);
    assert_eq!(rows[0]["requests"], 6);
    let st = json_lines(&ok(&["trace", "stats", &t, "--json"]));
    assert_eq!(st[0]["keys_hashed"], true);
    assert_eq!(st[0]["distinct_keys"], 3);
    assert_eq!(st[0]["writes"], 2);
    let text = ok(&["trace", "stats", &t]);
    assert!(
        text.contains("strings hashed to 64 bits (XXH3); chance of a collision"),
        "{text}"
    );
}

#[test]
fn libcachesim_mapping_on_a_headerless_file() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(
        dir.path(),
        "nohdr.csv",
        "1,a,10\n2,b,10\n3,a,10\n4,c,10\n5,a,10\n6,b,10\n",
    );
    fails(
        &["replay", "--trace", &t],
        &["cannot detect the CSV layout", "--csv-columns"],
    );
    for spec in [
        "time-col=1, obj-id-col=2, obj-size-col=3, delimiter=,, has-header=false",
        "time=1,key=2,size=3",
    ] {
        let rows = json_lines(&ok(&[
            "replay",
            "--trace",
            &t,
            "-t",
            spec,
            "--policy",
            "lru",
            "--size",
            "2",
            "--ignore-size",
            "--json",
        ]));
        assert_eq!(rows[0]["hits"], LRU2_HITS, "{spec}");
    }
    fails(
        &["replay", "--trace", &t, "-t", "key=2,obj-id-col=2"],
        &["key given twice"],
    );
    fails(
        &["replay", "--trace", &t, "-t", "key=9"],
        &["nohdr.csv:1: short row: expected at least 9 columns, found 3"],
    );
}

/// `bufcache ARGS` with `input` on standard input.
fn with_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_bufcache"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn compressed_files_and_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let text = b"1\n2\n1\n3\n1\n2\n";
    let zst = zstd::encode_all(&text[..], 3).unwrap();
    let path = dir.path().join("k.txt.zst");
    std::fs::write(&path, &zst).unwrap();
    let rows = json_lines(&ok(&[
        "replay",
        "--trace",
        path.to_str().unwrap(),
        "--policy",
        "lru",
        "--size",
        "2",
        "--json",
        "--ignore-size",
    ]));
    assert_eq!(rows[0]["hits"], LRU2_HITS);
    // The same bytes on standard input, compression recognised from the magic number.
    let args = [
        "replay",
        "--trace",
        "-",
        "--format",
        "text",
        "--policy",
        "lru",
        "--size",
        "2",
        "--ignore-size",
        "--json",
    ];
    for input in [&text[..], &zst[..]] {
        let out = with_stdin(&args, input);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = json_lines(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(rows[0]["hits"], LRU2_HITS);
        assert_eq!(rows[0]["trace"], "-");
    }
    let out = with_stdin(&["trace", "stats", "-"], text);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("give the format"));
    // A corrupt compressed file is an error naming it, not a panic.
    let bad = dir.path().join("bad.csv.gz");
    std::fs::write(&bad, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]).unwrap();
    fails(&["trace", "stats", bad.to_str().unwrap()], &["bad.csv.gz"]);
}

/// 1 2 1 3 1 2, LRU at 2: m m h m h m.
fn small(dir: &Path) -> String {
    write(dir, "small.txt", "1\n2\n1\n3\n1\n2\n")
}

#[test]
fn warmup_intervals_threads_and_streaming() {
    let dir = tempfile::tempdir().unwrap();
    let t = small(dir.path());
    let base = [
        "replay",
        "--trace",
        &t,
        "--policy",
        "lru",
        "--size",
        "2",
        "--ignore-size",
        "--json",
    ];
    let run = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        json_lines(&ok(&args))
    };
    for stream in [&[][..], &["--stream"][..]] {
        let rows = run(&[
            &["--warmup", "2", "--interval", "4", "--threads", "1"],
            stream,
        ]
        .concat());
        assert_eq!(
            (rows[0]["requests"].as_u64(), rows[0]["hits"].as_u64()),
            (Some(4), Some(2))
        );
        assert_eq!(rows[0]["capacity_objects"], 2);
        assert_eq!(rows[0]["capacity_bytes"], 2 * 4096);
        let iv: Vec<(u64, u64)> = rows[1..]
            .iter()
            .map(|r| (r["start"].as_u64().unwrap(), r["hits"].as_u64().unwrap()))
            .collect();
        assert_eq!(iv, [(0, 1), (4, 1)], "{stream:?}");
        // A fraction: 0.5 of 6 is 3 -> counted: m h m.
        let rows = run(&[&["--warmup", "0.5"], stream].concat());
        assert_eq!(
            (rows[0]["requests"].as_u64(), rows[0]["hits"].as_u64()),
            (Some(3), Some(1))
        );
    }
    let csv = ok(&[
        "replay",
        "--trace",
        &t,
        "--policy",
        "lru",
        "--size",
        "2",
        "--ignore-size",
        "--csv",
        "--interval",
        "4",
    ]);
    assert_eq!(
        csv.lines().collect::<Vec<_>>(),
        [
            "trace,policy,size,interval,start,start_s,requests,hits,miss_ratio".to_string(),
            format!("{t},lru,2,0,0,,4,1,0.75"),
            format!("{t},lru,2,1,4,,2,1,0.5"),
        ]
    );
    let table = ok(&[
        "replay",
        "--trace",
        &t,
        "--policy",
        "lru",
        "--size",
        "2",
        "--ignore-size",
        "--interval",
        "4",
    ]);
    assert!(table.contains("miss ratio per interval"), "{table}");
    assert!(table.contains("from request  lru @ 2"), "{table}");
    fails(
        &[&base[..], &["--warmup", "6"]].concat(),
        &["leaves nothing to count"],
    );
    fails(
        &[&base[..], &["--warmup", "1.5"]].concat(),
        &["must be in 0..1"],
    );
    fails(&[&base[..], &["--interval", "0"]].concat(), &["--interval"]);
    fails(
        &["replay", "--trace", &t, "--policy", "belady", "--stream"],
        &["without --stream"],
    );
    fails(
        &["replay", "--trace", "-", "--format", "text", "--stream"],
        &["standard input"],
    );
}

#[test]
fn runs_fail_early_and_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.txt", "");
    fails(&["replay", "--trace", &empty], &["holds no requests"]);
    fails(
        &["replay", "--trace", &empty, "--stream"],
        &["holds no requests"],
    );
    let t = small(dir.path());
    fails(
        &["replay", "--trace", &t, "--ignore-size", "--size", "0.1"],
        &["truncates to 0 objects"],
    );
    // Policies are checked before the trace is opened: the missing file is not reached.
    fails(
        &[
            "replay",
            "--trace",
            "/nonexistent/t.txt",
            "--policy",
            "s3fifo:small=0.1:small=0.2",
        ],
        &["parameter `small` given more than once"],
    );
    fails(
        &[
            "replay",
            "--trace",
            "/nonexistent/t.txt",
            "--policy",
            "s3fifo:small=2",
        ],
        &["expected a number in 0..=1"],
    );
    // 16mb is 16 MiB, as in cachesim.
    let rows = json_lines(&ok(&[
        "replay", "--trace", &t, "--policy", "lru", "--size", "16mb", "--json",
    ]));
    assert_eq!(rows[0]["capacity"], 16 << 20);
    assert_eq!(rows[0]["capacity_bytes"], 16 << 20);
    assert_eq!(rows[0]["capacity_objects"], 4096);
}

/// The committed slices of the CloudPhysics trace: the object trace and the block trace
/// (split into pages), both with deletes absent, warm-up and intervals crossing chunks.
#[test]
fn streaming_replay_of_the_real_trace_slices_equals_the_in_memory_one() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/");
    for (file, runs) in [
        ("cloudPhysicsIO.20k.oracleGeneral.bin", 12),
        ("cloudPhysicsIO.20k.csv", 12),
    ] {
        let t = format!("{data}{file}");
        let args = [
            "replay",
            "--trace",
            &t,
            "--policy",
            "lru,arc,s3fifo,wtinylfu",
            "--size",
            "0.01,0.1,64MiB",
            "--json",
            "--warmup",
            "0.1",
            "--interval",
            "5000",
        ];
        let mem = json_lines(&ok(&args));
        let stream = json_lines(&ok(&[&args[..], &["--stream"]].concat()));
        assert!(mem.len() > runs, "{file}: intervals reported");
        assert_eq!(mem.len(), stream.len());
        for (a, b) in mem.iter().zip(&stream) {
            for k in [
                "policy",
                "size",
                "capacity",
                "requests",
                "hits",
                "bytes_missed",
                "interval",
                "start",
            ] {
                assert_eq!(a[k], b[k], "{file}: {k}");
            }
        }
    }
}
