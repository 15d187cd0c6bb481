//! Result rows as CSV and JSON lines: the machine-readable forms every experiment and
//! command writes, from `serde` rows (one struct per row, its field names the header) or
//! from fields already formatted.

use std::path::Path;

use serde::Serialize;

use crate::error::ReportError;
use crate::write::write_atomic;

/// CSV of `rows` with a header line of their field names.
pub fn csv_bytes<T: Serialize>(rows: &[T]) -> Result<Vec<u8>, ReportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.serialize(row)?;
    }
    w.into_inner()
        .map_err(|e| ReportError::Csv(csv::Error::from(e.into_error())))
}

/// Write `rows` as CSV to `path`, atomically.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), ReportError> {
    write_atomic(path, &csv_bytes(rows)?)
}

/// One JSON object per row and line.
pub fn json_lines<T: Serialize>(rows: &[T]) -> Result<String, ReportError> {
    let mut out = String::new();
    for row in rows {
        out.push_str(&serde_json::to_string(row)?);
        out.push('\n');
    }
    Ok(out)
}

/// One CSV field, quoted when it holds a comma, a quote or a line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A CSV line (with its `\n`) from fields already formatted.
pub fn csv_line<S: AsRef<str>>(fields: &[S]) -> String {
    let mut line = fields
        .iter()
        .map(|f| csv_field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row {
        name: &'static str,
        hits: u64,
        ratio: f64,
        flag: bool,
    }

    const ROWS: [Row; 2] = [
        Row {
            name: "lru",
            hits: 3,
            ratio: 0.25,
            flag: true,
        },
        Row {
            name: "a,b",
            hits: 0,
            ratio: 1.0,
            flag: false,
        },
    ];

    #[test]
    fn csv_has_a_header_and_quotes_commas() {
        let text = String::from_utf8(csv_bytes(&ROWS).unwrap()).unwrap();
        assert_eq!(
            text,
            "name,hits,ratio,flag\nlru,3,0.25,true\n\"a,b\",0,1.0,false\n"
        );
        assert_eq!(
            String::from_utf8(csv_bytes::<Row>(&[]).unwrap()).unwrap(),
            ""
        );
    }

    #[test]
    fn json_lines_one_object_a_line() {
        assert_eq!(
            json_lines(&ROWS).unwrap(),
            "{\"name\":\"lru\",\"hits\":3,\"ratio\":0.25,\"flag\":true}\n{\"name\":\"a,b\",\"hits\":0,\"ratio\":1.0,\"flag\":false}\n"
        );
    }

    #[test]
    fn hand_built_lines_quote_like_the_csv_crate() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_line(&["x", "y,z"]), "x,\"y,z\"\n");
    }

    #[test]
    fn write_csv_writes_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        write_csv(&path, &ROWS).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), csv_bytes(&ROWS).unwrap());
    }
}
