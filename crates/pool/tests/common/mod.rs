//! Crash states of a recorded run, shared by the crash-enumeration tests (`crash.rs`: the
//! fsync promise; `crash_ordering.rs`: barriers and graphs).
//!
//! Crash model: at a crash point `c` (any prefix of the log), everything logged for a file
//! up to that file's last `Sync` before `c` is on disk. The events after it and before `c`
//! (the *tail*, over every file) may have reached the disk in any order, or not at all:
//! when there are at most four of them every ordered subset is tried (65 states),
//! otherwise every prefix, the reversed tail, and the tail with each single event left
//! out. That bound keeps a run of a few hundred events at some thousands of states while
//! still trying, for every event, a state where it alone is missing and a state where it
//! came first.

#![allow(dead_code)] // each test binary uses its own part

use pool::StorageEvent;
use std::path::Path;

/// The file an event is about.
pub fn path_of(e: &StorageEvent) -> &Path {
    match e {
        StorageEvent::Write { path, .. }
        | StorageEvent::SetLen { path, .. }
        | StorageEvent::Sync { path } => path,
    }
}

/// Apply a write or length change to a file image.
pub fn apply(image: &mut Vec<u8>, ev: &StorageEvent) {
    match ev {
        StorageEvent::Write { offset, data, .. } => {
            let start = *offset as usize;
            if image.len() < start + data.len() {
                image.resize(start + data.len(), 0);
            }
            image[start..start + data.len()].copy_from_slice(data);
        }
        StorageEvent::SetLen { len, .. } => image.resize(*len as usize, 0),
        StorageEvent::Sync { .. } => {}
    }
}

/// Orderings of the un-synced tail to try (indices into the tail).
pub fn tail_orders(n: usize) -> Vec<Vec<usize>> {
    fn rec(n: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        out.push(cur.clone());
        for i in 0..n {
            if !cur.contains(&i) {
                cur.push(i);
                rec(n, cur, out);
                cur.pop();
            }
        }
    }
    let mut out = Vec::new();
    if n <= 4 {
        rec(n, &mut Vec::new(), &mut out);
    } else {
        for k in 0..=n {
            out.push((0..k).collect());
        }
        out.push((0..n).rev().collect());
        for skip in 0..n {
            out.push((0..n).filter(|&i| i != skip).collect());
        }
    }
    out
}

/// Call `visit(c, order, synced)` for every crash state of `log` (events of the files
/// `mine` accepts): `order` lists indices into `log` of the writes and length changes on
/// disk, in an order they may have arrived in, the first `synced` of them the ones the
/// files' syncs made durable (in log order). Returns the number of states.
pub fn for_each_crash_state(
    log: &[StorageEvent],
    mine: impl Fn(&StorageEvent) -> bool,
    mut visit: impl FnMut(usize, &[usize], usize),
) -> usize {
    let mut states = 0;
    for c in 0..=log.len() {
        // per file: the log index after its last sync before c
        let mut synced_until: Vec<(&Path, usize)> = Vec::new();
        for (i, e) in log[..c].iter().enumerate() {
            if mine(e) && matches!(e, StorageEvent::Sync { .. }) {
                let p = path_of(e);
                match synced_until.iter_mut().find(|(q, _)| *q == p) {
                    Some(entry) => entry.1 = i + 1,
                    None => synced_until.push((p, i + 1)),
                }
            }
        }
        let durable_until = |e: &StorageEvent| {
            synced_until
                .iter()
                .find(|(q, _)| *q == path_of(e))
                .map_or(0, |&(_, u)| u)
        };
        let (mut base, mut tail) = (Vec::new(), Vec::new());
        for (i, e) in log[..c].iter().enumerate() {
            if !mine(e) || matches!(e, StorageEvent::Sync { .. }) {
                continue;
            }
            if i < durable_until(e) {
                base.push(i);
            } else {
                tail.push(i);
            }
        }
        for order in tail_orders(tail.len()) {
            let mut events = base.clone();
            events.extend(order.iter().map(|&t| tail[t]));
            states += 1;
            visit(c, &events, base.len());
        }
    }
    states
}
