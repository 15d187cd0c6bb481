//! Writer -> reader round trips, atomic writes, and arbitrary bytes into every parser.

use std::io::Cursor;
use std::path::Path;

use proptest::prelude::*;
use trace::csvtrace::CsvReader;
use trace::oracle::{OracleGeneralReader, OracleGeneralWriter};
use trace::text::{TextReader, TextWriter};
use trace::{
    fill_next_access, read_all, write_trace, Format, Op, ReadOptions, Request, Requests,
    TraceError, NEVER,
};

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![Just(Op::Read), Just(Op::Write), Just(Op::Delete)]
}

prop_compose! {
    fn request()(time in 0u64..=u32::MAX as u64, key in any::<u64>(), size in any::<u32>(),
                 op in op(), stream in any::<u32>()) -> Request {
        Request { time, key, size, op, next_access: NEVER, stream }
    }
}

fn collect<R: trace::TraceReader>(r: R) -> Vec<Request> {
    Requests::new(r).collect::<Result<_, _>>().unwrap()
}

proptest! {
    #[test]
    fn oracle_round_trip(mut reqs in proptest::collection::vec(request(), 0..300), zst in any::<bool>()) {
        fill_next_access(&mut reqs);
        let p = Path::new("p");
        let mut w = if zst { OracleGeneralWriter::new_zstd(Vec::new(), p, 1).unwrap() } else { OracleGeneralWriter::new(Vec::new(), p) };
        for r in &reqs { w.write(r).unwrap(); }
        let bytes = w.finish().unwrap();
        let got = if zst { collect(OracleGeneralReader::new_zstd(&bytes[..], p).unwrap()) } else { collect(OracleGeneralReader::new(&bytes[..], p)) };
        // The format stores no op or stream.
        let want: Vec<Request> = reqs.iter().map(|r| Request { op: Op::Read, stream: 0, ..*r }).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn csv_round_trip(reqs in proptest::collection::vec(request(), 0..300)) {
        let mut w = trace::csvtrace::CsvWriter::new(Vec::new(), Path::new("p"));
        for r in &reqs { w.write(r).unwrap(); }
        let bytes = w.finish().unwrap();
        let got = collect(CsvReader::new(&bytes[..], Path::new("p"), None, 4096).unwrap());
        prop_assert_eq!(got, reqs);
    }

    #[test]
    fn text_round_trip(reqs in proptest::collection::vec(request(), 0..300)) {
        let mut w = TextWriter::new(Vec::new(), Path::new("p"));
        for r in &reqs { w.write(r).unwrap(); }
        let bytes = w.finish().unwrap();
        let got: Vec<u64> = collect(TextReader::new(&bytes[..], Path::new("p"), 4096)).iter().map(|r| r.key).collect();
        prop_assert_eq!(got, reqs.iter().map(|r| r.key).collect::<Vec<_>>());
    }

    /// Every parser takes arbitrary bytes without panicking: it returns requests, then
    /// either the end or one typed error.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let p = Path::new("fuzz");
        drain(TextReader::new(Cursor::new(&bytes), p, 4096).hash_strings(bytes.first() == Some(&0)));
        drain(OracleGeneralReader::new(&bytes[..], p));
        if let Ok(r) = OracleGeneralReader::new_zstd(&bytes[..], p) { drain(r); }
        if let Ok(r) = CsvReader::new(&bytes[..], p, None, 4096) { drain(r); }
        for m in [trace::CsvMapping::msr(), trace::CsvMapping::cloudphysics(), trace::CsvMapping::keyed()] {
            if let Ok(r) = CsvReader::new(&bytes[..], p, Some(&m), 512) { drain(r); }
        }
    }

    /// Same for text-like input, which reaches deeper into the CSV and text parsers.
    #[test]
    fn arbitrary_csv_text_never_panics(s in "([0-9a-fA-FxRrWw,;# \\-]{0,12}\n){0,20}") {
        let p = Path::new("fuzz");
        drain(TextReader::new(s.as_bytes(), p, 4096));
        if let Ok(r) = CsvReader::new(s.as_bytes(), p, None, 4096) { drain(r); }
        for m in [trace::CsvMapping::msr(), trace::CsvMapping::cloudphysics()] {
            if let Ok(r) = CsvReader::new(s.as_bytes(), p, Some(&m), 512) { drain(r); }
        }
    }
}

/// Reads to the end or the first error, with a bound so a huge block request in random
/// input (billions of pages) does not make the test slow.
fn drain<R: trace::TraceReader>(r: R) {
    for item in Requests::new(r).take(100_000) {
        if item.is_err() {
            break;
        }
    }
}

#[test]
fn write_trace_is_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.txt");
    std::fs::write(&out, "old\n").unwrap();
    let reqs = [
        Ok(Request {
            key: 1,
            ..Default::default()
        }),
        Err(TraceError::BadWorkload("boom".into())),
    ];
    let e = write_trace(&out, Format::Text, reqs).unwrap_err();
    assert!(matches!(e, TraceError::BadWorkload(_)));
    // The old file is untouched and no temporary file is left behind.
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // A successful write replaces it.
    let n = write_trace(
        &out,
        Format::Text,
        (1..=3).map(|key| {
            Ok(Request {
                key,
                ..Default::default()
            })
        }),
    )
    .unwrap();
    assert_eq!(n, 3);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "1\n2\n3\n");
    assert!(matches!(
        write_trace(&out, Format::Msr, []),
        Err(TraceError::ReadOnlyFormat(Format::Msr))
    ));
}

#[test]
fn open_errors_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = dir.path().join("x.unknown");
    std::fs::write(&unknown, "1\n").unwrap();
    let e = read_all(&unknown, None, &ReadOptions::default()).unwrap_err();
    assert!(matches!(e, TraceError::UnknownFormat { .. }), "{e:?}");
    // a missing file is reported as missing even when its name says nothing of its format
    let e = read_all(
        &dir.path().join("gone.unknown"),
        None,
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, TraceError::Io { .. }), "{e:?}");
    let missing = dir.path().join("missing.csv");
    let e = read_all(&missing, None, &ReadOptions::default()).unwrap_err();
    assert!(
        matches!(&e, TraceError::Io { path, .. } if path == &missing),
        "{e:?}"
    );
    // Format forced despite the name.
    let f = dir.path().join("keys.dat");
    std::fs::write(&f, "5\n6\n").unwrap();
    let got = read_all(
        &f,
        Some(Format::Text),
        &ReadOptions {
            page_size: 8192,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        got.iter().map(|r| (r.key, r.size)).collect::<Vec<_>>(),
        [(5, 8192), (6, 8192)]
    );
    // MSR forced on a file whose name says nothing.
    let f = dir.path().join("hm_0.trace");
    std::fs::write(&f, "1,hm,0,Read,0,8192,5\n").unwrap();
    let got = read_all(&f, Some(Format::Msr), &ReadOptions::default()).unwrap();
    assert_eq!(got.iter().map(|r| r.key).collect::<Vec<_>>(), [0, 1]);
}

/// Every reader through every compression: the same requests as the plain file.
#[test]
fn compressed_files_read_like_plain_ones() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let csv = b"timestamp,obj_id,obj_size,op\n1,user:1,10,GET\n2,42x,20,set\n3,user:1,10,delete\n";
    let plain = dir.path().join("t.csv");
    std::fs::write(&plain, csv).unwrap();
    let want = trace::read_all(&plain, None, &trace::ReadOptions::default()).unwrap();
    assert_eq!(want.len(), 3);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(csv).unwrap();
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 6);
    xz.write_all(csv).unwrap();
    for (name, bytes) in [
        ("t.csv.gz", gz.finish().unwrap()),
        ("t.csv.xz", xz.finish().unwrap()),
        ("t.CSV.ZST", zstd::encode_all(&csv[..], 1).unwrap()),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let got = trace::read_all(&p, None, &trace::ReadOptions::default()).unwrap();
        assert_eq!(got, want, "{name}");
    }
}

proptest! {
    /// A mapping typed on the command line never panics the parser, whatever it holds.
    #[test]
    fn arbitrary_mapping_text_never_panics(s in "[a-z0-9=,; \\t-]{0,40}") {
        let _ = trace::CsvMapping::parse_spec(&s);
    }
}
