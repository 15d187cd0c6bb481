//! A CSV mapping written as text, for the command line.
//!
//! Two spellings, mixed freely, comma-separated `name=value` pairs:
//!
//! * ours: `key=2,size=3,time=1,op=op,stream=5,offset=4,header=true,delimiter=tab,
//!   keys=string,size-unit=512,offset-unit=512,unknown-op=skip`;
//! * libCacheSim's `-t` parameters: `time-col=1, obj-id-col=2, obj-size-col=3, op-col=4,
//!   tenant-col=5, delimiter=,, has-header=true, obj-id-is-num=false`.
//!
//! A column is a **1-based** position (as in libCacheSim, `cut` and awk) or a header name.
//! `header` defaults to true when some column is given by name, false otherwise. The
//! delimiter is one character, or `tab`, `\t`, `comma`, `space`, `semicolon`, `pipe`;
//! `delimiter=,,` (libCacheSim's way to write a comma) works. Naming a setting twice, under
//! either spelling, is an error, as is a name that is not listed.

use super::{names, Column, CsvMapping, KeyType, UnknownOp};
use crate::{Op, TraceError};

/// Settings, each with its accepted spellings (ours first).
const SETTINGS: &[(&str, &[&str])] = &[
    ("key", &["key", "obj-id-col", "key-col"]),
    ("size", &["size", "obj-size-col", "size-col"]),
    ("time", &["time", "time-col"]),
    ("op", &["op", "op-col"]),
    ("stream", &["stream", "tenant-col", "stream-col"]),
    ("offset", &["offset", "offset-col"]),
    ("header", &["header", "has-header"]),
    ("delimiter", &["delimiter", "sep"]),
    ("keys", &["keys", "obj-id-is-num"]),
    ("size-unit", &["size-unit"]),
    ("offset-unit", &["offset-unit"]),
    ("unknown-op", &["unknown-op"]),
];

fn bad(msg: String) -> TraceError {
    TraceError::BadMapping(msg)
}

/// Splits `text` into `(name, value)` pairs; the value of `delimiter` may itself be a comma.
fn pairs(text: &str) -> Result<Vec<(String, String)>, TraceError> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.trim().is_empty() {
        let (name, after) = rest.split_once('=').ok_or_else(|| {
            bad(format!(
                "expected name=value, found {:?}",
                rest.split(',').next().unwrap_or(rest).trim()
            ))
        })?;
        let name = name.trim().to_ascii_lowercase();
        // A delimiter written as itself may be a comma: `delimiter=,,` or a final `delimiter=,`.
        let is_delim = matches!(name.as_str(), "delimiter" | "sep");
        let (value, next) = if is_delim && after.starts_with(',') {
            (",", &after[1..])
        } else {
            after.split_once(',').unwrap_or((after, ""))
        };
        let next = next.strip_prefix(',').unwrap_or(next);
        // The delimiter value keeps its spaces and tabs: ` ` and a literal tab are delimiters.
        let value = if is_delim && !value.trim().is_empty() {
            value.trim_matches(' ')
        } else if is_delim {
            value
        } else {
            value.trim()
        };
        out.push((name, value.to_string()));
        rest = next;
    }
    Ok(out)
}

fn boolean(name: &str, v: &str) -> Result<bool, TraceError> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Ok(true),
        "false" | "no" | "0" | "off" => Ok(false),
        _ => Err(bad(format!("{name}: expected true or false, found {v:?}"))),
    }
}

fn column(name: &str, v: &str) -> Result<Column, TraceError> {
    if v.is_empty() {
        return Err(bad(format!("{name}: expected a column number or name")));
    }
    match v.parse::<usize>() {
        Ok(0) => Err(bad(format!("{name}: columns are numbered from 1, found 0"))),
        Ok(n) => Ok(Column::Index(n - 1)),
        Err(_) => Ok(Column::Name(v.to_string())),
    }
}

fn delimiter(v: &str) -> Result<u8, TraceError> {
    let d = match v.to_ascii_lowercase().as_str() {
        "tab" | "\\t" => b'\t',
        "comma" => b',',
        "space" => b' ',
        "semicolon" => b';',
        "pipe" => b'|',
        _ if v.len() == 1 && v.is_ascii() => v.as_bytes()[0],
        _ => {
            return Err(bad(format!(
                "delimiter: expected one ASCII character or tab, comma, space, semicolon, pipe; found {v:?}"
            )))
        }
    };
    if d == b'"' || d == b'\n' || d == b'\r' {
        return Err(bad(format!("delimiter: {v:?} cannot separate fields")));
    }
    Ok(d)
}

fn unit(name: &str, v: &str) -> Result<u64, TraceError> {
    match v.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(bad(format!(
            "{name}: expected a whole number of bytes, at least 1, found {v:?}"
        ))),
    }
}

impl CsvMapping {
    /// Parses a mapping written as in the [module docs](self). The result is validated.
    pub fn parse_spec(text: &str) -> Result<Self, TraceError> {
        let mut m = CsvMapping {
            has_header: false,
            delimiter: b',',
            time: None,
            key: None,
            offset: None,
            offset_unit_bytes: 1,
            size: None,
            size_unit_bytes: 1,
            op: None,
            op_values: names::common_ops(),
            unknown_op: UnknownOp::Error,
            stream: None,
            stream_in_key: false,
            key_type: KeyType::Auto,
        };
        let mut header: Option<bool> = None;
        let mut seen: Vec<(&str, String)> = Vec::new();
        for (name, v) in pairs(text)? {
            let Some(&(setting, _)) = SETTINGS.iter().find(|(_, s)| s.contains(&name.as_str()))
            else {
                let known: Vec<&str> = SETTINGS
                    .iter()
                    .flat_map(|(_, s)| s.iter().copied())
                    .collect();
                return Err(bad(format!(
                    "unknown setting {name:?} (known: {})",
                    known.join(", ")
                )));
            };
            if let Some((_, first)) = seen.iter().find(|(s, _)| *s == setting) {
                return Err(bad(format!(
                    "{setting} given twice (as {first} and as {name})"
                )));
            }
            seen.push((setting, name.clone()));
            match setting {
                "key" => m.key = Some(column(&name, &v)?),
                "size" => m.size = Some(column(&name, &v)?),
                "time" => m.time = Some(column(&name, &v)?),
                "op" => m.op = Some(column(&name, &v)?),
                "stream" => m.stream = Some(column(&name, &v)?),
                "offset" => m.offset = Some(column(&name, &v)?),
                "header" => header = Some(boolean(&name, &v)?),
                "delimiter" => m.delimiter = delimiter(&v)?,
                "keys" if name == "obj-id-is-num" => {
                    m.key_type = if boolean(&name, &v)? {
                        KeyType::Number
                    } else {
                        KeyType::String
                    }
                }
                "keys" => {
                    m.key_type = match v.to_ascii_lowercase().as_str() {
                        "auto" => KeyType::Auto,
                        "number" | "numeric" => KeyType::Number,
                        "string" | "hash" => KeyType::String,
                        _ => {
                            return Err(bad(format!(
                                "keys: expected auto, number or string, found {v:?}"
                            )))
                        }
                    }
                }
                "size-unit" => m.size_unit_bytes = unit(&name, &v)?,
                "offset-unit" => m.offset_unit_bytes = unit(&name, &v)?,
                "unknown-op" => {
                    m.unknown_op = match v.to_ascii_lowercase().as_str() {
                        "skip" => UnknownOp::Skip,
                        "error" => UnknownOp::Error,
                        "read" => UnknownOp::As(Op::Read),
                        "write" => UnknownOp::As(Op::Write),
                        "delete" => UnknownOp::As(Op::Delete),
                        _ => {
                            return Err(bad(format!(
                            "unknown-op: expected skip, error, read, write or delete, found {v:?}"
                        )))
                        }
                    }
                }
                _ => unreachable!("every setting of SETTINGS is matched"),
            }
        }
        let named = [&m.time, &m.key, &m.offset, &m.size, &m.op, &m.stream]
            .iter()
            .any(|c| matches!(c, Some(Column::Name(_))));
        m.has_header = header.unwrap_or(named);
        m.validate()?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libcachesim_form() {
        let m = CsvMapping::parse_spec(
            "time-col=1, obj-id-col=2, obj-size-col=3, delimiter=,, has-header=true",
        )
        .unwrap();
        assert_eq!(m.time, Some(Column::Index(0)));
        assert_eq!(m.key, Some(Column::Index(1)));
        assert_eq!(m.size, Some(Column::Index(2)));
        assert_eq!((m.delimiter, m.has_header), (b',', true));
        let m = CsvMapping::parse_spec("obj-id-col=1,delimiter=\t,obj-id-is-num=false").unwrap();
        assert_eq!(
            (m.delimiter, m.key_type, m.has_header),
            (b'\t', KeyType::String, false)
        );
        let m = CsvMapping::parse_spec("obj-id-col=1, delimiter=,").unwrap();
        assert_eq!(m.delimiter, b',');
    }

    #[test]
    fn our_form() {
        let m =
            CsvMapping::parse_spec("key=obj_id, size=bytes, delimiter=tab, keys=string").unwrap();
        assert_eq!(m.key, Some(Column::Name("obj_id".into())));
        assert_eq!(m.size, Some(Column::Name("bytes".into())));
        assert_eq!(
            (m.delimiter, m.has_header, m.key_type),
            (b'\t', true, KeyType::String)
        );
        let m = CsvMapping::parse_spec("offset=5,size=6,offset-unit=512,header=no,sep=;").unwrap();
        assert_eq!(
            (m.offset, m.offset_unit_bytes),
            (Some(Column::Index(4)), 512)
        );
        assert_eq!((m.delimiter, m.has_header), (b';', false));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let e = |s: &str| CsvMapping::parse_spec(s).unwrap_err().to_string();
        assert_eq!(
            e("key=1,obj-id-col=2"),
            "invalid CSV mapping: key given twice (as key and as obj-id-col)"
        );
        assert_eq!(
            e("key=0"),
            "invalid CSV mapping: key: columns are numbered from 1, found 0"
        );
        assert!(e("kee=1")
            .starts_with("invalid CSV mapping: unknown setting \"kee\" (known: key, obj-id-col"));
        assert_eq!(
            e("key"),
            "invalid CSV mapping: expected name=value, found \"key\""
        );
        assert_eq!(
            e("size=2"),
            "invalid CSV mapping: needs an offset column (block mode) or a key column (key mode)"
        );
        assert_eq!(
            e("key=id,header=false"),
            "invalid CSV mapping: columns by name need has_header = true"
        );
        assert!(e("key=1,delimiter=ab").contains("expected one ASCII character"));
        assert!(e("key=1,keys=maybe").contains("expected auto, number or string"));
        assert!(e("key=1,has-header=perhaps").contains("expected true or false"));
    }
}
