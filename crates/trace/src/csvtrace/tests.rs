//! The CSV reader on small inputs: exact requests, presets, detection, and every error.

use super::*;

fn read(s: &str, m: Option<&CsvMapping>, page: u32) -> Result<Vec<Request>, TraceError> {
    let r = CsvReader::new(s.as_bytes(), Path::new("t.csv"), m, page)?;
    crate::Requests::new(r).collect()
}

fn req(time: u64, key: u64, size: u32, op: Op, stream: u32) -> Request {
    Request {
        time,
        key,
        size,
        op,
        next_access: NEVER,
        stream,
    }
}

#[test]
fn cloudphysics_splits_sectors_into_pages() {
    // lbn 7 = byte 3584; 1024 bytes -> [3584, 4608) touches pages 0 and 1.
    // lbn 8 = byte 4096; 4096 bytes -> page 1 only. Opcode 35 (SYNCHRONIZE CACHE) skipped.
    let s = "version,time,op,size,lbn\n1,10,28,1024,7\n1,11,35,0,0\n1,12,2A,4096,8\n1,13,2a,0,99\n";
    let got = read(s, None, 4096).unwrap();
    assert_eq!(
        got,
        [
            req(10, 0, 4096, Op::Read, 0),
            req(10, 1, 4096, Op::Read, 0),
            req(12, 1, 4096, Op::Write, 0),
        ]
    );
    // Same rows with 512-byte pages: sector numbers become keys.
    let got = read(s, Some(&CsvMapping::cloudphysics()), 512).unwrap();
    let keys: Vec<u64> = got.iter().map(|r| r.key).collect();
    assert_eq!(keys, [7, 8, 8, 9, 10, 11, 12, 13, 14, 15]);
}

#[test]
fn msr_detected_and_disk_in_key() {
    let s = "128166372003061629,hm,1,Read,8192,4096,100\n128166372003061630,hm,0,Write,4095,2,7\n";
    let got = read(s, None, 4096).unwrap();
    assert_eq!(
        got,
        [
            req(128166372003061629, 1 << 40 | 2, 4096, Op::Read, 1),
            req(128166372003061630, 0, 4096, Op::Write, 0),
            req(128166372003061630, 1, 4096, Op::Write, 0),
        ]
    );
    let e = read("1,hm,0,Trim,0,512,1\n", Some(&CsvMapping::msr()), 4096).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:1: column \"op (#3)\": expected a known operation, found \"Trim\""
    );
}

#[test]
fn keyed_and_custom_mappings() {
    let got = read("key,time\n5,1\n0x10,2\n", None, 4096).unwrap();
    assert_eq!(
        got,
        [req(1, 5, 4096, Op::Read, 0), req(2, 16, 4096, Op::Read, 0)]
    );
    // Semicolon-delimited, no header, columns by index, 8 KiB size units.
    let m = CsvMapping {
        has_header: false,
        delimiter: b';',
        time: None,
        key: Some(Column::Index(1)),
        offset: None,
        size: Some(Column::Index(0)),
        size_unit_bytes: 8192,
        op: None,
        stream: None,
        ..CsvMapping::keyed()
    };
    let got = read("2;77\n1;78\n", Some(&m), 4096).unwrap();
    assert_eq!(
        got,
        [
            req(0, 77, 16384, Op::Read, 0),
            req(0, 78, 8192, Op::Read, 0)
        ]
    );
}

#[test]
fn bad_inputs_give_typed_errors() {
    let h = "version,time,op,size,lbn\n";
    let e = read(&format!("{h}1,1,28,512,1\n1,2,28,abc,1\n"), None, 4096).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:3: column \"size\": expected an unsigned integer, found \"abc\""
    );
    let e = read(&format!("{h}1,1,28\n"), None, 4096).unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::ShortRow {
                line: 2,
                expected: 5,
                found: 3,
                ..
            }
        ),
        "{e:?}"
    );
    let e = read("a,b,c\n1,2,3\n", None, 4096).unwrap_err();
    assert!(matches!(e, TraceError::UndetectedCsv { .. }), "{e:?}");
    let e = read("time,key\n1,2\n", Some(&CsvMapping::cloudphysics()), 4096).unwrap_err();
    assert!(
        matches!(&e, TraceError::UnknownColumn { column, .. } if column == "lbn"),
        "{e:?}"
    );
    let e = read(
        "1,2\n",
        Some(&CsvMapping {
            has_header: false,
            ..CsvMapping::keyed()
        }),
        4096,
    )
    .unwrap_err();
    assert!(matches!(e, TraceError::BadMapping(_)), "{e:?}");
    // A page number too large to share the key with the disk number.
    let e = read("1,hm,1,Read,4503599627370496,4096,1\n", None, 4096).unwrap_err();
    assert!(matches!(e, TraceError::OutOfRange { line: 1, .. }), "{e:?}");
    // Offset + size overflowing u64.
    let e = read(&format!("{h}1,1,28,512,36028797018963967\n"), None, 4096).unwrap_err();
    assert!(matches!(e, TraceError::OutOfRange { line: 2, .. }), "{e:?}");
}

#[test]
fn huge_request_is_split_lazily() {
    // 48 bytes asking for 1 TiB: 2^28 pages of 4 KiB. Collecting them would take 8 GiB;
    // the reader holds the rest of the row as a page range.
    let s = "version,time,op,size,lbn\n1,1,28,1099511627776,0\n";
    assert_eq!(s.len(), 48);
    let mut r = CsvReader::new(s.as_bytes(), Path::new("t.csv"), None, 4096).unwrap();
    let keys: Vec<u64> = crate::Requests::new(&mut r)
        .take(1000)
        .map(|q| q.unwrap().key)
        .collect();
    assert_eq!(keys, (0..1000).collect::<Vec<u64>>());
    assert_eq!((r.next_page, r.end_page), (1000, 1 << 28));
    assert!(r.rec.as_slice().len() <= s.len());
}

#[test]
fn empty_inputs() {
    assert_eq!(read("", None, 4096).unwrap(), []);
    assert_eq!(read("version,time,op,size,lbn\n", None, 4096).unwrap(), []);
}

#[test]
fn writer_round_trips_through_detection() {
    let reqs = [
        Request {
            time: 3,
            key: 9,
            size: 100,
            op: Op::Write,
            next_access: NEVER,
            stream: 2,
        },
        Request {
            time: 4,
            key: u64::MAX,
            size: 1,
            op: Op::Delete,
            next_access: NEVER,
            stream: 0,
        },
    ];
    let mut w = CsvWriter::new(Vec::new(), Path::new("o.csv"));
    for r in &reqs {
        w.write(r).unwrap();
    }
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(
        out,
        "time,key,op,size,stream\n3,9,write,100,2\n4,18446744073709551615,delete,1,0\n"
    );
    assert_eq!(read(&out, None, 4096).unwrap(), reqs);
}

#[test]
fn headers_named_as_people_name_them() {
    // libCacheSim-style names, any order; ops spelled as key-value stores spell them.
    let s = "timestamp,obj_id,obj_size,op\n5,10,100,GET\n6,11,200,set\n7,10,0,delete\n";
    assert_eq!(
        read(s, None, 4096).unwrap(),
        [
            req(5, 10, 100, Op::Read, 0),
            req(6, 11, 200, Op::Write, 0),
            req(7, 10, 0, Op::Delete, 0),
        ]
    );
    // Tabs, detected from the first line; `id` and `bytes`.
    let s = "id\tbytes\n3\t7\n";
    assert_eq!(read(s, None, 4096).unwrap(), [req(0, 3, 7, Op::Read, 0)]);
    // A block trace by header: sector numbers and sizes.
    let s = "lba,size\n8,4096\n";
    assert_eq!(read(s, None, 4096).unwrap(), [req(0, 1, 4096, Op::Read, 0)]);
    // One column of keys, no header.
    assert_eq!(
        read("7\n8\n", None, 4096).unwrap(),
        [req(0, 7, 4096, Op::Read, 0), req(0, 8, 4096, Op::Read, 0)]
    );
}

#[test]
fn msr_with_its_header() {
    let s =
        "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n9,hm,1,Write,4096,4096,3\n";
    assert_eq!(
        read(s, None, 4096).unwrap(),
        [req(9, 1 << 40 | 1, 4096, Op::Write, 1)]
    );
}

#[test]
fn string_keys_are_hashed_when_the_first_is_not_a_number() {
    use crate::keyhash::key_hash;
    let s = "key,op\nuser:42,get\nhttp://x/y?z=1,put\n42,GET\nuser:42,get\n";
    let mut r = CsvReader::new(s.as_bytes(), Path::new("t.csv"), None, 4096).unwrap();
    let keys: Vec<u64> = crate::Requests::new(&mut r)
        .map(|q| q.unwrap().key)
        .collect();
    assert_eq!(
        keys,
        [
            key_hash(b"user:42"),
            key_hash(b"http://x/y?z=1"),
            key_hash(b"42"),
            key_hash(b"user:42")
        ]
    );
    assert!(r.keys_hashed());
    // Numbers first: a later string is an error naming line and column.
    let e = read("key\n1\nuser:1\n", None, 4096).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:3: column \"key\": expected an unsigned integer key, as on the first row (keys=string in the mapping hashes every key), found \"user:1\""
    );
    // keys=string hashes numbers too.
    let m = CsvMapping::parse_spec("key=1,keys=string").unwrap();
    let got = read("1\n2\n", Some(&m), 4096).unwrap();
    assert_eq!(got[0].key, key_hash(b"1"));
    let e = read("key\nx\ny\n,\n", None, 4096).unwrap_err();
    assert!(matches!(e, TraceError::BadField { line: 4, .. }), "{e:?}");
}

#[test]
fn mappings_from_the_command_line() {
    // libCacheSim's parameters on a headerless file (1-based columns).
    let m = CsvMapping::parse_spec(
        "time-col=1, obj-id-col=2, obj-size-col=3, delimiter=,, has-header=false",
    )
    .unwrap();
    assert_eq!(
        read("4,abc,10\n5,abd,20\n", Some(&m), 4096).unwrap(),
        [
            req(4, crate::keyhash::key_hash(b"abc"), 10, Op::Read, 0),
            req(5, crate::keyhash::key_hash(b"abd"), 20, Op::Read, 0)
        ]
    );
    // Ours, by header name; an unknown op is an error naming it.
    let m = CsvMapping::parse_spec("key=k,op=verb,delimiter=;").unwrap();
    let e = read("verb;k\nGET;1\nFROB;2\n", Some(&m), 4096).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:3: column \"verb\": expected a known operation, found \"FROB\""
    );
    let m = CsvMapping::parse_spec("key=k,op=verb,delimiter=;,unknown-op=skip").unwrap();
    assert_eq!(
        read("verb;k\nFROB;2\nR;3\n", Some(&m), 4096).unwrap(),
        [req(0, 3, 4096, Op::Read, 0)]
    );
    // A short row names the line and the columns the mapping needs.
    let m = CsvMapping::parse_spec("key=3").unwrap();
    let e = read("1,2,3\n1,2\n", Some(&m), 4096).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:2: short row: expected at least 3 columns, found 2"
    );
}
