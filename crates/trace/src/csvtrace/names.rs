//! What people call their columns and spell their operations, so that a CSV trace with a
//! header reads without a mapping.
//!
//! Detection looks each header field up in these lists (case-insensitively, after
//! trimming); the first field naming a role takes it. A header naming a key column gives
//! key mode; one naming an offset and a size (and no key) gives block mode.

use super::{Column, CsvMapping, KeyType, UnknownOp};
use crate::Op;

/// Header names of the object id.
pub const KEY_NAMES: &[&str] = &[
    "key",
    "obj_id",
    "obj-id",
    "objid",
    "object_id",
    "object-id",
    "objectid",
    "id",
    "object",
    "item",
    "item_id",
    "url",
    "path",
];
/// Header names of the timestamp.
pub const TIME_NAMES: &[&str] = &["time", "timestamp", "ts", "clock_time", "real_time"];
/// Header names of the request or object size.
pub const SIZE_NAMES: &[&str] = &[
    "size",
    "obj_size",
    "obj-size",
    "object_size",
    "bytes",
    "value_size",
    "length",
    "len",
];
/// Header names of the operation.
pub const OP_NAMES: &[&str] = &[
    "op",
    "operation",
    "type",
    "cmd",
    "command",
    "method",
    "req_type",
    "opcode",
];
/// Header names of the issuing stream.
pub const STREAM_NAMES: &[&str] = &["stream", "tenant", "client", "client_id", "pid", "disk"];
/// Header names of a byte offset (block mode).
pub const OFFSET_BYTE_NAMES: &[&str] = &["offset", "byte_offset"];
/// Header names of a 512-byte sector number (block mode).
pub const OFFSET_SECTOR_NAMES: &[&str] = &["lbn", "lba", "sector"];

/// Operation spellings accepted in key mode (case-insensitive): key-value stores
/// (memcached, Redis), HTTP methods, file and block I/O.
pub const OPS: &[(&str, Op)] = &[
    ("read", Op::Read),
    ("r", Op::Read),
    ("get", Op::Read),
    ("gets", Op::Read),
    ("head", Op::Read),
    ("write", Op::Write),
    ("w", Op::Write),
    ("set", Op::Write),
    ("put", Op::Write),
    ("post", Op::Write),
    ("add", Op::Write),
    ("replace", Op::Write),
    ("cas", Op::Write),
    ("append", Op::Write),
    ("prepend", Op::Write),
    ("incr", Op::Write),
    ("decr", Op::Write),
    ("update", Op::Write),
    ("insert", Op::Write),
    ("delete", Op::Delete),
    ("del", Op::Delete),
    ("d", Op::Delete),
    ("remove", Op::Delete),
];

/// [`OPS`] as a mapping's op table.
pub fn common_ops() -> Vec<(String, Op)> {
    OPS.iter().map(|(s, o)| (s.to_string(), *o)).collect()
}

/// The first position in `fields` (lower-case) holding one of `names`.
fn find(fields: &[String], names: &[&str]) -> Option<usize> {
    fields.iter().position(|f| names.contains(&f.as_str()))
}

/// A mapping from a header whose fields (lower-case, trimmed) name the columns, or `None`
/// if it names neither a key nor an offset and a size.
pub fn from_header(fields: &[String], delimiter: u8) -> Option<CsvMapping> {
    let col = |names: &[&str]| find(fields, names).map(Column::Index);
    let key = col(KEY_NAMES);
    let size = col(SIZE_NAMES);
    let (offset, offset_unit_bytes) = match (col(OFFSET_BYTE_NAMES), col(OFFSET_SECTOR_NAMES)) {
        _ if key.is_some() => (None, 1),
        (Some(c), _) => (Some(c), 1),
        (None, Some(c)) => (Some(c), 512),
        (None, None) => (None, 1),
    };
    if key.is_none() && (offset.is_none() || size.is_none()) {
        return None;
    }
    Some(CsvMapping {
        has_header: true,
        delimiter,
        time: col(TIME_NAMES),
        key,
        offset,
        offset_unit_bytes,
        size,
        size_unit_bytes: 1,
        op: col(OP_NAMES),
        op_values: common_ops(),
        unknown_op: UnknownOp::Error,
        stream: col(STREAM_NAMES),
        stream_in_key: false,
        key_type: KeyType::Auto,
    })
}

/// True when `fields` (lower-case) is MSR Cambridge's own header line.
pub fn is_msr_header(fields: &[String]) -> bool {
    fields
        == [
            "timestamp",
            "hostname",
            "disknumber",
            "type",
            "offset",
            "size",
            "responsetime",
        ]
}
