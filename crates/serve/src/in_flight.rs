//! Reads in service, by file: what the ground truth needs to tell a miss that reads the
//! disk from one that waits on another request's read.
//!
//! The mirror (as in the thesis) counts a file as cached from the moment a request for it
//! is *scheduled*. With several requests in service, a queued request for a file whose
//! read is still under way is predicted a hit and chosen; when its own service begins
//! the page cache holds only part of the file, so `cachestat` says miss, yet the request
//! reads nothing from the disk itself: its `pread` waits on the pages the other request
//! is bringing in. The server reports such a request as `joined` (see
//! [`crate::ACTUAL_HEADER`]), and the load generator counts the prediction both ways.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use parking_lot::Mutex;

/// Page ranges being read right now, by inode (a few entries: at most the requests in
/// service).
#[derive(Debug, Default)]
pub struct InFlight {
    reads: Mutex<HashMap<u64, Vec<Range<u64>>>>,
}

/// One read registered in an [`InFlight`]; dropping it ends the read.
#[derive(Debug)]
pub struct InFlightRead {
    table: Arc<InFlight>,
    inode: u64,
    pages: Range<u64>,
}

impl InFlight {
    /// An empty table.
    pub fn new() -> Arc<Self> {
        Arc::new(InFlight::default())
    }

    /// Whether one read now in flight covers every page of `pages` of file `inode`.
    pub fn covers(&self, inode: u64, pages: &Range<u64>) -> bool {
        self.reads.lock().get(&inode).is_some_and(|reads| {
            reads
                .iter()
                .any(|r| r.start <= pages.start && pages.end <= r.end)
        })
    }

    /// Register a read of `pages` of file `inode` until the returned value is dropped.
    pub fn enter(self: &Arc<Self>, inode: u64, pages: Range<u64>) -> InFlightRead {
        self.reads
            .lock()
            .entry(inode)
            .or_default()
            .push(pages.clone());
        InFlightRead {
            table: Arc::clone(self),
            inode,
            pages,
        }
    }

    /// Reads in flight now (for tests).
    pub fn len(&self) -> usize {
        self.reads.lock().values().map(Vec::len).sum()
    }

    /// True when no read is in flight.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for InFlightRead {
    fn drop(&mut self) {
        let mut reads = self.table.reads.lock();
        if let Some(list) = reads.get_mut(&self.inode) {
            if let Some(i) = list.iter().position(|r| *r == self.pages) {
                list.swap_remove(i);
            }
            if list.is_empty() {
                reads.remove(&self.inode);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_covers_ranges_inside_it_until_it_ends() {
        let t = InFlight::new();
        assert!(!t.covers(7, &(0..4)));
        let whole = t.enter(7, 0..256);
        assert!(t.covers(7, &(0..256)));
        assert!(t.covers(7, &(10..20)));
        assert!(!t.covers(7, &(200..300)), "only partly covered");
        assert!(!t.covers(8, &(0..4)), "another file");
        let twin = t.enter(7, 0..256);
        assert_eq!(t.len(), 2);
        drop(whole);
        assert!(
            t.covers(7, &(0..256)),
            "the second read of the same range remains"
        );
        drop(twin);
        assert!(!t.covers(7, &(0..256)));
        assert!(t.is_empty());
    }
}
