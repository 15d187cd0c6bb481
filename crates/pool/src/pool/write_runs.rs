//! Write-back in runs. The dirty pages chosen for writing (by the flusher's ageing and
//! refill, by a miss that found only dirty victims, by `fsync`) are first *claimed* (a
//! shared pin and the page's `writing` flag, as a single write takes them), then sorted
//! by file and page, and each run of adjacent pages of one file goes to storage in one
//! vectored write (`pwritev`) instead of one `pwrite` per page. Frames are page-aligned
//! and every buffer but a buffered file's last page is a whole page, so a run is as valid
//! for `O_DIRECT` as a single page is.
//!
//! Ordered data is never claimed (a tagged frame is written only by its level, see
//! `ordering`), so runs change nothing the ordering promises: pages written outside a
//! level were never ordered among themselves.
//!
//! Claiming never waits while this thread holds a claim: a frame another thread holds
//! is deferred and, when the caller asked to wait (`fsync`), claimed and written alone
//! after every run is done. A thread that waits for a latch while holding pins could
//! close a cycle with one that holds that latch and waits for a pin to go.

use super::Inner;
use crate::error::PoolError;
use crate::frames::{backoff, Shared, NO_OWNER};
use crate::stats::Counter;
use std::sync::atomic::Ordering;

/// The longest run written in one call: 1 MiB of 4 KiB pages, well under Linux's
/// `IOV_MAX` (1024), and a bound on the pins one writer holds at once.
const MAX_RUN_PAGES: usize = 256;

/// A dirty page claimed for writing: its frame pinned shared (readers go on, nobody
/// changes the bytes) and its `writing` flag set (one write of a page at a time).
struct Claimed<'a> {
    id: u32,
    owner: u64,
    page: u64,
    pin: Shared<'a>,
}

impl Drop for Claimed<'_> {
    fn drop(&mut self) {
        // Before the pin goes (fields drop after this): the next writer finds the flag
        // clear only once this claim has ended.
        self.pin.header().writing.store(false, Ordering::Release);
    }
}

/// What an attempt to claim a frame found.
enum WriteClaim<'a> {
    Got(Claimed<'a>),
    /// Latched or being written by another thread.
    Busy,
    /// Nothing to write here: clean, free, another file's, or ordered data.
    Skip,
}

/// Pages a run wrote (cleaned), and its error if it failed part way.
type RunOutcome = (usize, Option<PoolError>);

impl Inner {
    /// Claim frame `id` for writing if it holds a dirty, unordered page (of `owner`, when
    /// given: the frame may have been reused since the caller chose it). With `wait`, wait
    /// for the frame's latch and for a write already in flight; call it so only while
    /// holding no other claim.
    fn claim_for_write(&self, id: u32, wait: bool, owner: Option<u64>) -> WriteClaim<'_> {
        let mut spins = 0;
        loop {
            let pin = if wait {
                self.frames.share(id)
            } else {
                match self.frames.try_share(id) {
                    Some(g) => g,
                    None => return WriteClaim::Busy,
                }
            };
            let h = pin.header();
            let o = h.owner.load(Ordering::Relaxed);
            if !h.dirty.load(Ordering::Acquire)
                || o == NO_OWNER
                || owner.is_some_and(|w| w != o)
                || self.is_tagged(id)
            {
                return WriteClaim::Skip;
            }
            if h.writing
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                if !wait {
                    return WriteClaim::Busy;
                }
                drop(pin);
                backoff(&mut spins);
                continue;
            }
            let page = h.page.load(Ordering::Relaxed);
            return WriteClaim::Got(Claimed {
                id,
                owner: o,
                page,
                pin,
            });
        }
    }

    /// Write the dirty pages of frames `ids`, adjacent pages of a file in one call each,
    /// and mark them clean; `by` names who wrote them (a [`Counter`] of pages). With
    /// `wait`, frames other threads hold are waited for (see the module's note);
    /// without, they are passed over. Returns the pages this call wrote and the first
    /// error; a page whose write failed stays dirty, marked `write_failed`.
    pub(super) fn clean_frames(
        &self,
        ids: &[u32],
        wait: bool,
        by: Counter,
        owner: Option<u64>,
    ) -> RunOutcome {
        let mut claimed = Vec::with_capacity(ids.len());
        let mut deferred = Vec::new();
        for &id in ids {
            match self.claim_for_write(id, false, owner) {
                WriteClaim::Got(c) => claimed.push(c),
                WriteClaim::Busy if wait => deferred.push(id),
                WriteClaim::Busy | WriteClaim::Skip => {}
            }
        }
        claimed.sort_unstable_by_key(|c| (c.owner, c.page));
        let mut cleaned = 0;
        let mut first_err = None;
        let mut note = |(n, err): RunOutcome| {
            cleaned += n;
            if let Some(e) = err {
                first_err.get_or_insert(e);
            }
        };
        let mut rest = &claimed[..];
        while !rest.is_empty() {
            let len = run_length(rest);
            note(self.write_run(&rest[..len], by));
            rest = &rest[len..];
        }
        drop(claimed);
        for id in deferred {
            if let WriteClaim::Got(c) = self.claim_for_write(id, true, owner) {
                note(self.write_run(std::slice::from_ref(&c), by));
            }
        }
        (cleaned, first_err)
    }

    /// Write one run of claimed pages (one file, consecutive pages) and mark the pages
    /// written clean; the rest are marked `write_failed`.
    fn write_run(&self, run: &[Claimed<'_>], by: Counter) -> RunOutcome {
        let fh = self.handle_of(run[0].owner);
        let target = self
            .file_of(fh)
            .and_then(|(file, path)| Ok((file, path, self.slot(fh)?.len.load(Ordering::Acquire))));
        let (file, path, len) = match target {
            Ok(t) => t,
            // Its file is being closed, and `close` writes its dirty pages itself.
            Err(PoolError::Closed(_)) => return (0, None),
            Err(e) => return (0, Some(e)),
        };
        let bytes: Vec<&[u8]> = run.iter().map(|c| c.pin.bytes()).collect();
        let result = self.write_pages(&*file, &path, run[0].page, &bytes, len);
        let done = result
            .as_ref()
            .map_or_else(|e| e.pages_done, |()| run.len());
        for c in &run[..done] {
            let h = c.pin.header();
            self.clear_dirty(c.id, h);
            h.write_failed.store(false, Ordering::Relaxed);
        }
        self.counters.add(by, done as u64);
        for c in &run[done..] {
            c.pin.header().write_failed.store(true, Ordering::Relaxed);
        }
        (done, result.err().map(|e| e.error))
    }
}

/// How many claims at the front of `claims` (sorted by file and page) form one run.
fn run_length(claims: &[Claimed<'_>]) -> usize {
    let first = &claims[0];
    claims
        .iter()
        .enumerate()
        .take(MAX_RUN_PAGES)
        .take_while(|(i, c)| c.owner == first.owner && c.page == first.page + *i as u64)
        .count()
}
