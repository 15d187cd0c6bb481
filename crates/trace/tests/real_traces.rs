//! The real CloudPhysics trace, read completely in every format bufcache reads.
//!
//! Each check runs twice: on the committed slice (`tests/data/cloudPhysicsIO.20k.*`, the
//! first 20,000 requests; see the README there), on every clone; and on the whole trace in
//! the project's shared folder (`../shared/traces/`), outside the repository, in tests that
//! are `#[ignore]`d (`cargo test --release -- --ignored` runs them, and they fail if a file
//! is missing). Every expected count was counted independently with a short Python script
//! over the files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use trace::{fill_next_access, open, read_all, Format, Op, ReadOptions, TraceReader, NEVER};

/// What one copy of the trace holds.
struct Expect {
    /// Requests (records, rows, lines).
    requests: usize,
    /// Distinct object ids.
    objects: usize,
    /// The last record's (time, key, size); the first is the same in both copies.
    last: (u64, u64, u32),
    /// At 4096-byte pages, the CSV's page requests, distinct pages, and read and write pages.
    pages: usize,
    distinct_pages: usize,
    read_write_pages: (usize, usize),
    /// Rows whose size differs from the size the binary file gives their object.
    size_differs: usize,
}

const SLICE: Expect = Expect {
    requests: 20_000,
    objects: 13_778,
    last: (5_635_697, 29_916_628, 65_536),
    pages: 232_650,
    distinct_pages: 161_375,
    read_write_pages: (68_318, 164_332),
    size_differs: 1_513,
};

const FULL: Expect = Expect {
    requests: 113_872,
    objects: 48_974,
    last: (5_641_098, 42_936_150, 512),
    pages: 1_141_869,
    distinct_pages: 269_210,
    read_write_pages: (485_700, 656_169),
    size_differs: 13_671,
};

fn slice(suffix: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(format!("cloudPhysicsIO.20k.{suffix}"))
}

fn shared(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name);
    assert!(p.exists(), "{} is missing", p.display());
    p
}

/// The CSV in key mode: one request per row, key = `lbn` (the oracleGeneral obj_id).
fn csv_rows(csv: &Path) -> Vec<trace::Request> {
    let m = trace::CsvMapping {
        key: Some("lbn".into()),
        offset: None,
        ..trace::CsvMapping::cloudphysics()
    };
    let opts = ReadOptions {
        csv: Some(m),
        ..ReadOptions::default()
    };
    read_all(csv, None, &opts).unwrap()
}

fn oracle_general_counts_and_next_access(bin: &Path, want: &Expect) {
    let reqs = read_all(bin, None, &ReadOptions::default()).unwrap();
    assert_eq!(reqs.len(), want.requests);
    let distinct: HashSet<u64> = reqs.iter().map(|r| r.key).collect();
    assert_eq!(distinct.len(), want.objects);
    // The file's next-access fields agree exactly with recomputing them.
    let mut again = reqs.clone();
    for r in &mut again {
        r.next_access = 0;
    }
    fill_next_access(&mut again);
    assert_eq!(again, reqs);
    assert!(reqs.iter().any(|r| r.next_access != NEVER));
    // First record, checked by hand against the CSV's first row; and the last one.
    assert_eq!(
        (reqs[0].time, reqs[0].key, reqs[0].size),
        (5_633_898, 42_932_745, 512)
    );
    let last = reqs.last().unwrap();
    assert_eq!((last.time, last.key, last.size), want.last);
}

fn oracle_general_zstd_round_trip(bin: &Path, want: &Expect) {
    let reqs = read_all(bin, None, &ReadOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.oracleGeneral.zst");
    let n =
        trace::write_trace(&out, Format::OracleGeneralZst, reqs.iter().copied().map(Ok)).unwrap();
    assert_eq!(n, want.requests as u64);
    assert!(std::fs::metadata(&out).unwrap().len() < std::fs::metadata(bin).unwrap().len());
    assert_eq!(read_all(&out, None, &ReadOptions::default()).unwrap(), reqs);
}

fn cloudphysics_csv_pages(csv: &Path, want: &Expect) {
    let reqs = read_all(csv, None, &ReadOptions::default()).unwrap();
    assert_eq!(reqs.len(), want.pages);
    let distinct: HashSet<u64> = reqs.iter().map(|r| r.key).collect();
    assert_eq!(distinct.len(), want.distinct_pages);
    assert!(reqs
        .iter()
        .all(|r| r.size == 4096 && r.next_access == NEVER));
    let reads = reqs.iter().filter(|r| r.op == Op::Read).count();
    assert_eq!((reads, reqs.len() - reads), want.read_write_pages);
    // At 512-byte pages the first page of each row is its lbn, which is the oracleGeneral
    // obj_id: the two files' key sets relate exactly through that.
    let opts = ReadOptions {
        page_size: 512,
        ..ReadOptions::default()
    };
    let mut r = open(csv, Some(Format::Csv), &opts).unwrap();
    let mut req = trace::Request::default();
    assert!(r.read_into(&mut req).unwrap());
    assert_eq!(
        (req.key, req.time, req.op),
        (42_932_745, 5_633_898, Op::Write)
    );
}

/// Read in key mode, record for record the CSV's time and key equal the oracleGeneral
/// file's. The sizes differ on some rows: the converter that produced the binary file keeps
/// each object's size fixed at the size of its *first* request (checked: zero mismatches
/// under that rule), so this checks exactly that rule.
fn csv_rows_are_the_oracle_records(csv: &Path, bin: &Path, want: &Expect) {
    let rows = csv_rows(csv);
    let recs = read_all(bin, None, &ReadOptions::default()).unwrap();
    assert_eq!(rows.len(), recs.len());
    let mut first_size = HashMap::new();
    let mut differ = 0;
    for (a, b) in rows.iter().zip(&recs) {
        assert_eq!((a.time, a.key), (b.time, b.key));
        assert_eq!(*first_size.entry(a.key).or_insert(a.size), b.size);
        differ += usize::from(a.size != b.size);
    }
    assert_eq!(differ, want.size_differs);
}

/// The text file's lines are the binary file's object ids, in order.
fn text_lines_are_the_oracle_keys(txt: &Path, bin: &Path, want: &Expect) {
    let lines = read_all(txt, None, &ReadOptions::default()).unwrap();
    let recs = read_all(bin, None, &ReadOptions::default()).unwrap();
    assert_eq!(lines.len(), want.requests);
    let keys = |v: &[trace::Request]| v.iter().map(|r| r.key).collect::<Vec<_>>();
    assert_eq!(keys(&lines), keys(&recs));
    assert!(lines
        .iter()
        .all(|r| r.op == Op::Read && r.time == 0 && r.size == 4096));
}

#[test]
fn slice_oracle_general_counts_and_next_access() {
    oracle_general_counts_and_next_access(&slice("oracleGeneral.bin"), &SLICE);
}

#[test]
fn slice_oracle_general_zstd_round_trip() {
    oracle_general_zstd_round_trip(&slice("oracleGeneral.bin"), &SLICE);
}

#[test]
fn slice_cloudphysics_csv_pages() {
    cloudphysics_csv_pages(&slice("csv"), &SLICE);
}

#[test]
fn slice_csv_rows_are_the_oracle_records() {
    csv_rows_are_the_oracle_records(&slice("csv"), &slice("oracleGeneral.bin"), &SLICE);
}

#[test]
fn slice_text_lines_are_the_oracle_keys() {
    text_lines_are_the_oracle_keys(&slice("txt"), &slice("oracleGeneral.bin"), &SLICE);
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn oracle_general_counts_and_next_access_of_real_file() {
    oracle_general_counts_and_next_access(&shared("cloudPhysicsIO.oracleGeneral.bin"), &FULL);
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.oracleGeneral.bin"]
fn oracle_general_zstd_round_trip_of_real_file() {
    oracle_general_zstd_round_trip(&shared("cloudPhysicsIO.oracleGeneral.bin"), &FULL);
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.csv"]
fn cloudphysics_csv_pages_of_real_file() {
    cloudphysics_csv_pages(&shared("cloudPhysicsIO.csv"), &FULL);
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.csv and .oracleGeneral.bin"]
fn csv_rows_are_the_oracle_records_of_real_files() {
    csv_rows_are_the_oracle_records(
        &shared("cloudPhysicsIO.csv"),
        &shared("cloudPhysicsIO.oracleGeneral.bin"),
        &FULL,
    );
}

#[test]
#[ignore = "needs ../shared/traces/cloudPhysicsIO.txt and .oracleGeneral.bin"]
fn text_lines_are_the_oracle_keys_of_real_files() {
    text_lines_are_the_oracle_keys(
        &shared("cloudPhysicsIO.txt"),
        &shared("cloudPhysicsIO.oracleGeneral.bin"),
        &FULL,
    );
}
