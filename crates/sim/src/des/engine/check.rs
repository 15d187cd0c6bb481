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
