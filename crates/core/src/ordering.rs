//! The write-ordering checker (Burnett 2006, ch.4), one piece of code for every user:
//! the simulator's disk completions and the pool's crash enumeration both feed it.
//!
//! It records every *logical write* (one `write` or `graphwrite` call: its epoch, the graph
//! writes it must follow, its file) and, each time a *disk write* reaches stable storage,
//! checks that every logical write the disk write carries had its predecessors there
//! already: every logical write of an older epoch (`barrier()`), and every graph write it
//! named as a dependency. It also checks that each `fsync` returned only once the file's
//! earlier writes were durable. It shares no state with the mechanisms that keep order
//! (the simulator's epochs and graphs, the pool's tags and levels), so a bug in them shows
//! up as a violation here instead of being hidden by the same bookkeeping. Its interface
//! is plain numbers (files, epochs, graph ids, blocks), no simulator or pool types.
//!
//! ```
//! use bufcache_core::ordering::Checker;
//!
//! let mut c = Checker::new(1);
//! let log = c.record(0, 0, Some(1), &[]); // graph write 1: a log record
//! let data = c.record(0, 0, Some(2), &[1]); // graph write 2, after 1
//! c.reached_disk(&[data], 7, 10); // the data page first: a broken promise
//! assert_eq!(c.violations(), 1);
//! c.reached_disk(&[log], 3, 20);
//! assert_eq!(c.violations(), 1);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::FixedHashMap;

/// One logical write as the checker sees it.
#[derive(Debug, Clone)]
struct Logical {
    epoch: u64,
    deps: Vec<u32>,
    file: u32,
    durable: bool,
}

/// Watches what reaches the disk and counts broken promises.
#[derive(Debug, Default)]
pub struct Checker {
    writes: Vec<Logical>,
    /// Application graph ids to logical writes.
    by_graph_id: FixedHashMap<u32>,
    /// Logical writes not yet on disk, per epoch.
    undurable_epochs: BTreeMap<u64, u32>,
    /// Logical writes not yet on disk, per file.
    undurable_files: Vec<BTreeSet<u32>>,
    violations: u64,
    first: Option<String>,
}

impl Checker {
    /// A checker for `files` files.
    pub fn new(files: usize) -> Self {
        Checker {
            undurable_files: vec![BTreeSet::new(); files],
            ..Default::default()
        }
    }

    /// Record a logical write (one `write` or `graphwrite` call); returns its number.
    pub fn record(
        &mut self,
        file: u32,
        epoch: u64,
        graph_id: Option<u32>,
        graph_deps: &[u32],
    ) -> u32 {
        let n = self.writes.len() as u32;
        let deps = graph_deps
            .iter()
            .filter_map(|&d| self.by_graph_id.get(&u64::from(d)).copied())
            .collect();
        if let Some(id) = graph_id {
            self.by_graph_id.insert(u64::from(id), n);
        }
        self.writes.push(Logical {
            epoch,
            deps,
            file,
            durable: false,
        });
        *self.undurable_epochs.entry(epoch).or_default() += 1;
        self.undurable_files[file as usize].insert(n);
        n
    }

    fn violation(&mut self, what: String) {
        self.violations += 1;
        if self.first.is_none() {
            self.first = Some(what);
        }
    }

    /// A disk write carrying `logical` completed at `time_ns`: check, then mark durable.
    pub fn reached_disk(&mut self, logical: &[u32], block: u64, time_ns: u64) {
        let oldest_undurable = self.undurable_epochs.keys().next().copied();
        for &l in logical {
            let w = &self.writes[l as usize];
            if w.durable {
                continue;
            }
            let epoch = w.epoch;
            let missing = w
                .deps
                .iter()
                .copied()
                .find(|&d| !self.writes[d as usize].durable);
            if let Some(old) = oldest_undurable.filter(|&old| old < epoch) {
                self.violation(format!(
                    "at {time_ns} ns block {block:#x} carried a write of epoch {epoch} while epoch {old} was not on disk"
                ));
            }
            if let Some(d) = missing {
                self.violation(format!(
                    "at {time_ns} ns block {block:#x} carried logical write {l} before its dependency {d}"
                ));
            }
        }
        self.mark_durable(logical);
    }

    /// Logical writes that no longer need to reach the disk (their file was deleted).
    pub fn mark_durable(&mut self, logical: &[u32]) {
        for &l in logical {
            let w = &mut self.writes[l as usize];
            if w.durable {
                continue;
            }
            w.durable = true;
            let (epoch, file) = (w.epoch, w.file);
            let count = self.undurable_epochs.get_mut(&epoch).expect("counted");
            *count -= 1;
            if *count == 0 {
                self.undurable_epochs.remove(&epoch);
            }
            self.undurable_files[file as usize].remove(&l);
        }
    }

    /// `fsync(file)` returned: every write to it numbered below `issued_before` must be on
    /// disk.
    pub fn fsync_returned(&mut self, file: u32, issued_before: u32, time_ns: u64) {
        if let Some(&l) = self.undurable_files[file as usize]
            .range(..issued_before)
            .next()
        {
            self.violation(format!(
                "at {time_ns} ns fsync of file {file} returned with logical write {l} not on disk"
            ));
        }
    }

    /// Whether logical write `logical` has reached the disk (or no longer needs to).
    pub fn is_durable(&self, logical: u32) -> bool {
        self.writes[logical as usize].durable
    }

    /// Logical writes recorded so far.
    pub fn recorded(&self) -> u32 {
        self.writes.len() as u32
    }

    /// Violations found.
    pub fn violations(&self) -> u64 {
        self.violations
    }

    /// The first violation, described.
    pub fn first_violation(&self) -> Option<&str> {
        self.first.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checker_catches_an_epoch_overtaken_and_a_dependency_skipped() {
        let mut c = Checker::new(1);
        let _a = c.record(0, 0, Some(1), &[]);
        let b = c.record(0, 1, Some(2), &[1]);
        c.reached_disk(&[b], 7, 5);
        assert_eq!(c.violations(), 2, "{:?}", c.first_violation());
        let mut ok = Checker::new(1);
        let a2 = ok.record(0, 0, Some(1), &[]);
        let b2 = ok.record(0, 1, Some(2), &[1]);
        ok.fsync_returned(0, 1, 0);
        assert_eq!(ok.violations(), 1);
        ok.reached_disk(&[a2], 1, 1);
        ok.reached_disk(&[b2], 2, 2);
        ok.fsync_returned(0, 2, 3);
        assert_eq!(ok.violations(), 1);
    }

    /// A disk write carrying a write already durable checks nothing again, and a write
    /// whose dependency was never recorded (an id the checker does not know) has none.
    #[test]
    fn repeated_and_unknown_dependencies_are_not_violations() {
        let mut c = Checker::new(2);
        let a = c.record(1, 0, Some(9), &[]);
        let b = c.record(0, 0, None, &[42]);
        c.reached_disk(&[a], 0, 0);
        assert!(c.is_durable(a) && !c.is_durable(b));
        c.reached_disk(&[a, b], 1, 1);
        assert_eq!(c.violations(), 0);
        assert!(c.is_durable(b));
        assert_eq!(c.recorded(), 2);
        assert!(c.first_violation().is_none());
    }
}
