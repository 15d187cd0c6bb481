//! What a run refuses before it starts: a workload whose files, transfers or scripts the
//! engine cannot represent (too many files or processes, blocks past what a key can
//! number, references to files, counters or dependencies that do not exist).

use super::super::ops::{Op, Workload};
use super::storage::{MAX_FILE_BLOCKS, MAX_PROCESSES};
use super::RunError;

/// Check `w` for a cache of `block_bytes` blocks.
pub(super) fn check_workload(w: &Workload, block_bytes: u64) -> Result<(), RunError> {
    let files = w.files.len();
    if files > u32::MAX as usize / 2 {
        return Err(RunError::Workload(format!(
            "{files} files; at most 2^31 are supported"
        )));
    }
    // Past MAX_FILE_BLOCKS, block keys would collide (and a run would take for ever).
    let too_big = |bytes: u64| bytes.div_ceil(block_bytes) > MAX_FILE_BLOCKS;
    for (f, spec) in w.files.iter().enumerate() {
        let bytes = spec.max_bytes.max(spec.initial_bytes);
        if too_big(bytes) {
            return Err(RunError::Workload(format!(
                "file {f}: {bytes} bytes; a file may have at most {MAX_FILE_BLOCKS} blocks of {block_bytes} bytes"
            )));
        }
    }
    if w.scripts.len() >= MAX_PROCESSES {
        return Err(RunError::Workload("too many processes".into()));
    }
    for (p, s) in w.scripts.iter().enumerate() {
        for (i, op) in s.ops.iter().enumerate() {
            // Bytes a transfer may reach: writes extend their file, and shared records are
            // transferred up to their total whatever the file's size. (A read stops at the
            // end of its file.)
            let reach = match *op {
                Op::Write { offset, len, .. } | Op::GraphWrite { offset, len, .. } => {
                    Some((offset, len))
                }
                Op::SharedRecords { total_bytes, .. } => Some((0, total_bytes)),
                _ => None,
            };
            if let Some((offset, len)) = reach {
                match offset.checked_add(len) {
                    Some(end) if !too_big(end) => {}
                    _ => {
                        return Err(RunError::Workload(format!(
                            "process {p}, op {i}: {len} bytes at {offset} reach past the {MAX_FILE_BLOCKS} blocks of {block_bytes} bytes a file may have"
                        )))
                    }
                }
            }
            let file = match *op {
                Op::Open(f) | Op::Close(f) | Op::Delete(f) | Op::Sync(Some(f)) => Some(f),
                Op::Read { file, .. } | Op::Write { file, .. } | Op::Truncate { file, .. } => {
                    Some(file)
                }
                Op::SharedRecords {
                    file,
                    counter,
                    record_bytes,
                    ..
                } => {
                    if counter >= w.counters {
                        return Err(RunError::Workload(format!(
                            "process {p}, op {i}: counter {counter} but the workload declares {}",
                            w.counters
                        )));
                    }
                    if record_bytes == 0 {
                        return Err(RunError::Workload(format!(
                            "process {p}, op {i}: record size 0"
                        )));
                    }
                    Some(file)
                }
                Op::GraphWrite {
                    file,
                    deps_start,
                    deps_len,
                    ..
                } => {
                    let end = deps_start as usize + deps_len as usize;
                    if end > w.deps.len() {
                        return Err(RunError::Workload(format!(
                            "process {p}, op {i}: dependencies {deps_start}..{end} but the workload lists {}",
                            w.deps.len()
                        )));
                    }
                    Some(file)
                }
                Op::Compute(_) | Op::ComputeNext | Op::Sync(None) | Op::Barrier => None,
            };
            if let Some(f) = file {
                if f as usize >= files {
                    return Err(RunError::Workload(format!(
                        "process {p}, op {i}: file {f} but the workload declares {files} files"
                    )));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::des::ops::{FileSpec, Script};

    fn workload(max_bytes: u64, ops: Vec<Op>) -> Workload {
        Workload {
            files: vec![FileSpec {
                initial_bytes: 0,
                max_bytes,
            }],
            scripts: vec![Script {
                ops,
                delays: Vec::new(),
            }],
            counters: 0,
            deps: Vec::new(),
        }
    }

    fn refused(w: &Workload) -> String {
        match check_workload(w, 1024) {
            Err(RunError::Workload(m)) => m,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn files_and_writes_past_what_a_block_key_can_number_are_refused() {
        let most = MAX_FILE_BLOCKS * 1024;
        assert!(check_workload(&workload(most, Vec::new()), 1024).is_ok());
        assert!(refused(&workload(most + 1, Vec::new())).starts_with("file 0:"));
        let write = |offset, len| Op::Write {
            file: 0,
            offset,
            len,
        };
        assert!(check_workload(&workload(0, vec![write(most - 10, 10)]), 1024).is_ok());
        assert!(refused(&workload(0, vec![write(most - 10, 11)])).contains("op 0"));
        // An end that does not even fit in 64 bits.
        assert!(refused(&workload(0, vec![write(u64::MAX, 2)])).contains("reach past"));
    }

    #[test]
    fn references_to_what_does_not_exist_are_refused() {
        let m = refused(&workload(0, vec![Op::Barrier, Op::Close(1)]));
        assert!(
            m.contains("op 1: file 1 but the workload declares 1 files"),
            "{m}"
        );
        let shared = Op::SharedRecords {
            counter: 0,
            file: 0,
            record_bytes: 10,
            total_bytes: 100,
            write: false,
            compute: false,
        };
        assert!(refused(&workload(0, vec![shared])).contains("counter 0"));
        let graph = Op::GraphWrite {
            file: 0,
            offset: 0,
            len: 1,
            id: 1,
            deps_start: 0,
            deps_len: 1,
        };
        assert!(refused(&workload(0, vec![graph])).contains("dependencies 0..1"));
    }
}
