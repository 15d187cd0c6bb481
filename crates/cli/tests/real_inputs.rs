//! The traces people have, through the command line: any CSV layout (detected or mapped),
//! string keys, spelled-out operations and compressed inputs; exact counts on hand-worked
//! cases and clean errors on bad ones.

mod common;
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
