//! Several reads in flight from one thread: a batch of page reads goes to the kernel in
//! one `io_uring` submission, and the thread waits once for all of them.
//!
//! Each thread gets its own small ring on first use (a ring is not meant to be shared
//! between submitters without a lock, and a per-thread ring needs none). When the kernel
//! refuses rings (`io_uring_disabled`, seccomp, an old kernel) the thread remembers it and
//! the caller reads one page at a time instead.
//!
//! Soundness: the kernel writes into the batch's buffers until each read's completion is
//! posted. [`read_batch`] therefore never returns while a submitted read is outstanding;
//! all `unsafe` code of this module is the push of a read whose buffer outlives it.

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use io_uring::{opcode, types, IoUring};

use crate::storage::BatchRead;

/// Reads per submission: enough to keep a device's queue busy, small enough that the
/// ring's memory (a few KiB) is negligible per thread.
const RING_ENTRIES: u32 = 64;

enum Ring {
    /// Not created on this thread yet.
    Untried,
    Ready(Box<IoUring>),
    /// The kernel refused; read one at a time from now on.
    Refused,
}

thread_local! {
    static RING: RefCell<Ring> = const { RefCell::new(Ring::Untried) };
}

/// Do `reads` through this thread's ring, all in flight at once (in chunks of
/// [`RING_ENTRIES`]). Returns how many reads, from the front, it did: all of them, or
/// fewer when there is no ring or the ring failed before the kernel took a chunk (the
/// caller then does the rest one at a time).
pub(crate) fn read_batch(fd: BorrowedFd<'_>, reads: &mut [BatchRead<'_>]) -> usize {
    RING.with(|cell| {
        let mut ring = cell.borrow_mut();
        if let Ring::Untried = *ring {
            *ring = match IoUring::new(RING_ENTRIES) {
                Ok(r) => Ring::Ready(Box::new(r)),
                Err(_) => Ring::Refused,
            };
        }
        let Ring::Ready(r) = &mut *ring else {
            return 0;
        };
        let mut done = 0;
        for chunk in reads.chunks_mut(RING_ENTRIES as usize) {
            if !run_chunk(r, fd, chunk) {
                // The ring failed before the kernel took any read of this chunk: give it
                // up for good on this thread (dropping it drops the entries it never took).
                *ring = Ring::Refused;
                return done;
            }
            done += chunk.len();
        }
        done
    })
}

/// Submit one chunk (at most `RING_ENTRIES` reads) and wait for every completion.
/// `false`: the first submission failed and the kernel took nothing.
fn run_chunk(ring: &mut IoUring, fd: BorrowedFd<'_>, chunk: &mut [BatchRead<'_>]) -> bool {
    debug_assert!(chunk.len() <= RING_ENTRIES as usize);
    {
        let mut sq = ring.submission();
        for (i, r) in chunk.iter_mut().enumerate() {
            // Pages are at most 64 KiB, so the length always fits.
            let len = u32::try_from(r.buf.len()).unwrap_or(u32::MAX);
            let entry = opcode::Read::new(types::Fd(fd.as_raw_fd()), r.buf.as_mut_ptr(), len)
                .offset(r.offset)
                .build()
                .user_data(i as u64);
            // SAFETY: the buffer is a live `&mut [u8]` borrowed for this whole call, and
            // this function does not return until the kernel has posted the completion of
            // every read it took (the loop below), so the kernel never writes to memory
            // the caller has got back. The queue was empty (every earlier call drained it)
            // and holds RING_ENTRIES >= chunk.len() entries, so the push cannot fail.
            if unsafe { sq.push(&entry) }.is_err() {
                r.result = Err(io::Error::other("io_uring submission queue full"));
            }
        }
    }
    let mut outstanding = ring.submission().len();
    let mut taken_any = false;
    // Completions can only come from this chunk: earlier chunks were fully drained.
    while outstanding > 0 {
        match ring.submit_and_wait(1) {
            Ok(_) => taken_any = true,
            Err(e) if retryable(&e) => continue,
            Err(_) if !taken_any && ring.submission().len() == outstanding => {
                // Nothing reached the kernel: the caller drops the ring (and the entries
                // it never took with it) and reads without one.
                return false;
            }
            // The kernel holds reads whose buffers it may still write: waiting is the only
            // sound thing to do, and a valid ring only fails here transiently.
            Err(_) => {
                std::thread::yield_now();
                continue;
            }
        }
        for cqe in ring.completion() {
            let i = cqe.user_data() as usize;
            let res = cqe.result();
            chunk[i].result = if res >= 0 {
                Ok(res as usize)
            } else {
                Err(io::Error::from_raw_os_error(-res))
            };
            outstanding -= 1;
        }
    }
    true
}

/// Interrupted waits and a momentarily full completion queue are retried.
fn retryable(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock | io::ErrorKind::ResourceBusy
    )
}
