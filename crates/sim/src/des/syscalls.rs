//! A text format for system-call traces, so that traces of real programs (a database's
//! `write`/`fsync` stream, with its transactions and dependencies) can drive the simulator.
//!
//! One operation per line; `#` starts a comment; fields are separated by white space.
//! Files are declared before use:
//!
//! ```text
//! # file NAME SIZE_BYTES [on_disk]
//! file log  1048576
//! file data 644874240 on_disk
//! # PROCESS OP ARGS...   (processes are numbered from 0)
//! 0 write   log  0 128           txn=1
//! 0 fsync   log
//! 0 read    data 81920 1         txn=1
//! 0 gwrite  log  128 128 7       txn=2
//! 0 gwrite  data 4096 1 8        txn=2 after=7
//! 0 barrier
//! 0 compute 250                  # microseconds
//! 0 sync
//! ```
//!
//! Operations: `open NAME`, `close NAME`, `read NAME OFFSET LEN`, `write NAME OFFSET LEN`,
//! `gwrite NAME OFFSET LEN ID [after=ID,ID...]` (a `graphwrite` named `ID`, ordered after
//! the listed earlier ids), `fsync NAME`, `sync`, `barrier`, `compute MICROSECONDS`,
//! `delete NAME`, `truncate NAME LEN`. `txn=N` may follow any operation; it is checked
//! (a positive integer) and kept for the reader of the trace — ordering comes only from
//! `fsync`, `barrier` and `after=`. A malformed line is an error naming the file, the line
//! and what was expected.

use std::path::{Path, PathBuf};

use bufcache_core::FixedHashMap;

use super::ops::{FileSpec, Op, Script, Workload};
use super::time::END_OF_TIME;

/// A line that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum SyscallTraceError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The trace file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line is malformed.
    #[error("{}:{line}: {message}", path.display())]
    Line {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was expected and what was found.
        message: String,
    },
}

/// The operations a line may name, for messages.
const OPS: &str =
    "open, close, read, write, gwrite, fsync, sync, barrier, compute, delete, truncate";

/// Parse a trace held in memory; `path` is only used in messages.
pub fn parse(text: &str, path: &Path) -> Result<Workload, SyscallTraceError> {
    let mut files: Vec<FileSpec> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut scripts: Vec<Script> = Vec::new();
    let mut deps: Vec<u32> = Vec::new();
    let mut ids: FixedHashMap<()> = FixedHashMap::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |message: String| SyscallTraceError::Line {
            path: path.to_path_buf(),
            line,
            message,
        };
        let content = raw.split('#').next().unwrap_or("");
        let fields: Vec<&str> = content.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let (keyed, plain): (Vec<&str>, Vec<&str>) = fields.iter().partition(|f| f.contains('='));
        let number = |s: &str, what: &str| -> Result<u64, SyscallTraceError> {
            s.parse::<u64>().map_err(|_| {
                err(format!(
                    "{what}: expected a non-negative integer, found `{s}`"
                ))
            })
        };
        let mut after: Vec<u32> = Vec::new();
        for kv in &keyed {
            let (k, v) = kv.split_once('=').expect("partitioned on '='");
            match k {
                "txn" => {
                    number(v, "txn")?;
                }
                "after" => {
                    for id in v.split(',').filter(|s| !s.is_empty()) {
                        let id = number(id, "after")? as u32;
                        if !ids.contains_key(&u64::from(id)) {
                            return Err(err(format!("after={id}: no earlier gwrite has id {id}")));
                        }
                        after.push(id);
                    }
                }
                other => {
                    return Err(err(format!(
                        "unknown field `{other}=`; expected txn= or after="
                    )))
                }
            }
        }
        if plain[0] == "file" {
            if plain.len() < 3 || plain.len() > 4 || (plain.len() == 4 && plain[3] != "on_disk") {
                return Err(err("expected `file NAME SIZE_BYTES [on_disk]`".into()));
            }
            if names.iter().any(|n| n == plain[1]) {
                return Err(err(format!("file `{}` declared twice", plain[1])));
            }
            let size = number(plain[2], "file size")?;
            names.push(plain[1].to_string());
            files.push(FileSpec {
                initial_bytes: if plain.len() == 4 { size } else { 0 },
                max_bytes: size,
            });
            continue;
        }
        let pid = number(plain[0], "process")? as usize;
        if pid > 4096 {
            return Err(err(format!("process {pid}: at most 4096 processes")));
        }
        let Some(&op) = plain.get(1) else {
            return Err(err(format!(
                "expected an operation after the process number ({OPS})"
            )));
        };
        let args = &plain[2..];
        let want = |n: usize, usage: &str| -> Result<(), SyscallTraceError> {
            if args.len() == n {
                Ok(())
            } else {
                Err(err(format!(
                    "`{op}` takes {n} arguments: `{usage}`, found {}",
                    args.len()
                )))
            }
        };
        let file = |name: &str| -> Result<u32, SyscallTraceError> {
            names
                .iter()
                .position(|n| n == name)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    err(format!(
                        "file `{name}` is not declared (add `file {name} SIZE_BYTES` above)"
                    ))
                })
        };
        let parsed = match op {
            "open" | "close" | "fsync" | "delete" => {
                want(1, &format!("{op} NAME"))?;
                let f = file(args[0])?;
                match op {
                    "open" => Op::Open(f),
                    "close" => Op::Close(f),
                    "fsync" => Op::Sync(Some(f)),
                    _ => Op::Delete(f),
                }
            }
            "sync" => {
                want(0, "sync")?;
                Op::Sync(None)
            }
            "barrier" => {
                want(0, "barrier")?;
                Op::Barrier
            }
            "compute" => {
                want(1, "compute MICROSECONDS")?;
                let us = number(args[0], "microseconds")?;
                // Refuse what the clock cannot hold rather than wrap it to a short time.
                let ns = us.checked_mul(1_000).ok_or_else(|| {
                    err(format!(
                        "compute {us}: at most {} microseconds (2^64 ns, where the simulator's clock ends)",
                        END_OF_TIME / 1_000
                    ))
                })?;
                Op::Compute(ns)
            }
            "truncate" => {
                want(2, "truncate NAME LEN")?;
                Op::Truncate {
                    file: file(args[0])?,
                    len: number(args[1], "length")?,
                }
            }
            "read" | "write" => {
                want(3, &format!("{op} NAME OFFSET LEN"))?;
                let (f, offset, len) = (
                    file(args[0])?,
                    number(args[1], "offset")?,
                    number(args[2], "length")?,
                );
                let end = offset
                    .checked_add(len)
                    .ok_or_else(|| err("offset + length overflows".into()))?;
                if end > files[f as usize].max_bytes {
                    return Err(err(format!(
                        "bytes {offset}..{end} lie past the end of `{}` ({} bytes as declared)",
                        args[0], files[f as usize].max_bytes
                    )));
                }
                if op == "read" {
                    Op::Read {
                        file: f,
                        offset,
                        len,
                    }
                } else {
                    Op::Write {
                        file: f,
                        offset,
                        len,
                    }
                }
            }
            "gwrite" => {
                want(4, "gwrite NAME OFFSET LEN ID [after=ID,...]")?;
                let (f, offset, len) = (
                    file(args[0])?,
                    number(args[1], "offset")?,
                    number(args[2], "length")?,
                );
                let id = number(args[3], "id")?;
                let id =
                    u32::try_from(id).map_err(|_| err(format!("id {id}: at most {}", u32::MAX)))?;
                if ids.insert(u64::from(id), ()).is_some() {
                    return Err(err(format!("gwrite id {id} used twice")));
                }
                let end = offset
                    .checked_add(len)
                    .ok_or_else(|| err("offset + length overflows".into()))?;
                if end > files[f as usize].max_bytes {
                    return Err(err(format!(
                        "bytes {offset}..{end} lie past the end of `{}` ({} bytes as declared)",
                        args[0], files[f as usize].max_bytes
                    )));
                }
                let deps_start = deps.len() as u32;
                deps.extend_from_slice(&after);
                Op::GraphWrite {
                    file: f,
                    offset,
                    len,
                    id,
                    deps_start,
                    deps_len: after.len() as u32,
                }
            }
            other => {
                return Err(err(format!(
                    "unknown operation `{other}`; expected one of {OPS}"
                )))
            }
        };
        if !after.is_empty() && op != "gwrite" {
            return Err(err("after= only applies to gwrite".into()));
        }
        if scripts.len() <= pid {
            scripts.resize(pid + 1, Script::default());
        }
        scripts[pid].ops.push(parsed);
    }
    Ok(Workload {
        files,
        scripts,
        counters: 0,
        deps,
    })
}

/// Read and parse a trace file.
pub fn load(path: &Path) -> Result<Workload, SyscallTraceError> {
    let text = std::fs::read_to_string(path).map_err(|source| SyscallTraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
# a two-transaction write-ahead log
file log  65536
file data 1048576 on_disk
0 gwrite log 0 128 1 txn=1
0 read data 8192 1 txn=1
0 gwrite data 4096 1 2 txn=1 after=1
1 write data 0 10
1 fsync data
0 barrier
0 compute 250
0 sync
";

    #[test]
    fn a_good_trace_becomes_scripts() {
        let w = parse(GOOD, Path::new("t.sys")).unwrap();
        assert_eq!(w.files.len(), 2);
        assert_eq!(w.files[1].initial_bytes, 1 << 20);
        assert_eq!(w.scripts.len(), 2);
        assert_eq!(w.scripts[0].ops.len(), 6);
        assert_eq!(w.deps, [1]);
        assert!(matches!(
            w.scripts[0].ops[2],
            Op::GraphWrite {
                file: 1,
                offset: 4096,
                id: 2,
                deps_start: 0,
                deps_len: 1,
                ..
            }
        ));
        assert_eq!(w.scripts[0].ops[4], Op::Compute(250_000));
        assert_eq!(
            w.scripts[1].ops,
            [
                Op::Write {
                    file: 1,
                    offset: 0,
                    len: 10
                },
                Op::Sync(Some(1))
            ]
        );
    }

    #[test]
    fn bad_lines_are_named_with_what_was_expected() {
        let cases = [
            ("0 write nofile 0 1", "1: file `nofile` is not declared"),
            (
                "file a 10\n0 write a 5 10",
                "2: bytes 5..15 lie past the end of `a`",
            ),
            (
                "file a 10\n0 frobnicate a",
                "2: unknown operation `frobnicate`; expected one of open",
            ),
            ("file a 10\n0 read a 1", "2: `read` takes 3 arguments"),
            (
                "file a 10\n0 gwrite a 0 1 5 after=4",
                "2: after=4: no earlier gwrite has id 4",
            ),
            (
                "file a 10\n0 gwrite a 0 1 5\n0 gwrite a 0 1 5",
                "3: gwrite id 5 used twice",
            ),
            (
                "file a 10\nx read a 0 1",
                "2: process: expected a non-negative integer, found `x`",
            ),
            (
                "file a 10\n0 read a 0 1 color=red",
                "2: unknown field `color=`",
            ),
            (
                "file a 10\n0 compute 18446744073709552",
                "2: compute 18446744073709552: at most 18446744073709551 microseconds",
            ),
        ];
        for (text, needle) in cases {
            let e = parse(text, Path::new("t.sys")).unwrap_err().to_string();
            assert!(e.contains(&format!("t.sys:{needle}")), "{e}");
        }
    }
}
