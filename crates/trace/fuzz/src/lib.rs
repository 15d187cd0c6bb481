//! What every fuzz target shares: draining a reader under a bound on *time*, and a check
//! that the heap stays within a bound per input byte (*memory*).
//!
//! # Why the two bounds differ
//!
//! A parser may legitimately produce far more requests than its input has bytes: a CSV
//! block row of 48 bytes asking for 1 TiB is 2^28 requests of 4 KiB pages (2^40 of 1-byte
//! pages), and a small zstd frame can decompress to millions of records. That is not a
//! bug, but it must cost bounded *memory*: the readers stream (a block row is kept as a
//! page range and split one page per call; zstd decodes within its window), so a few
//! bytes can never claim gigabytes.
//!
//! Memory is checked, not assumed: [`Counting`] is the global allocator of every target,
//! and [`run`] asserts that the heap's peak during one input stays below
//! [`HEAP_FIXED_BYTES`] + [`HEAP_PER_INPUT_BYTE`] × input length (the reader's fixed
//! buffers, plus rows, lines and error messages that are at most input-sized). libFuzzer's
//! `-rss_limit_mb` backs this up for memory outside Rust's heap (zstd's C allocations).
//! (Checked: with the CSV reader changed to collect a row's pages, the seed
//! `corpus/csv/seed-huge-request` fails at once with "heap grew by 134227218 bytes".)
//!
//! Time is bounded separately: [`drain`] stops after [`REQUESTS_PER_INPUT_BYTE`] × input
//! length requests. Stopping there does not hide memory amplification, because a
//! streaming reader does all the work of a row (parse, range checks, any allocation it
//! would make to hold the row's pages) *before* it yields that row's first page; pages
//! after the first come from two integers and allocate nothing (the heap check covers
//! every one drained). What the cut skips is more pages of the same row, and rows after
//! it; libFuzzer reaches those rows through inputs without the huge one. Without the cut,
//! one amplifying input would run for a day (2^40 pages at about 70 ns each) and trip
//! `-timeout`: a time-out of the harness, not a bug of the reader.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use trace::{Request, TraceReader};

/// Requests drained per input byte before a target stops (plus one input byte's worth,
/// so that an empty input still drains a little). Real traces give far fewer at the page
/// sizes replays use: the CloudPhysics CSV gives 0.4 requests per byte at 4 KiB pages and
/// 3 at 512-byte pages (the CSV target also tries 1-byte pages, where rows are cut). A
/// request costs about 70 ns in the instrumented build, so a 4 KiB input (libFuzzer's
/// default maximum length) stops within 0.1 s, far below `-timeout`.
pub const REQUESTS_PER_INPUT_BYTE: usize = 256;

/// Heap a reader may hold whatever its input: the oracleGeneral reader's 1 MiB chunk, the
/// zstd decoder's 128 KiB input buffer and the writer's 64 KiB buffer fit with room.
pub const HEAP_FIXED_BYTES: usize = 2 << 20;

/// Heap per input byte: a CSV row's fields and their bounds, detection's copies of the
/// first line, error excerpts, the recompressed frame of `oracle_zst`.
pub const HEAP_PER_INPUT_BYTE: usize = 256;

/// The system allocator, counting live bytes and their peak.
pub struct Counting;

#[global_allocator]
static ALLOC: Counting = Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to `System`; the counters are bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as ours.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

/// Runs one input's work and panics (a crash libFuzzer reports) if the heap grew beyond
/// the bound for `input_len` bytes at any moment.
pub fn run(input_len: usize, work: impl FnOnce()) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    work();
    let grown = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let bound = HEAP_FIXED_BYTES + HEAP_PER_INPUT_BYTE * input_len;
    assert!(
        grown <= bound,
        "heap grew by {grown} bytes for a {input_len}-byte input (bound {bound})"
    );
}

/// Reads requests until the end, the first error, or the time budget for `input_len`
/// bytes (see the module docs for why the budget hides no memory amplification).
/// Returns how many requests were read.
pub fn drain<R: TraceReader>(mut reader: R, input_len: usize) -> usize {
    let budget = REQUESTS_PER_INPUT_BYTE * (input_len + 1);
    let mut req = Request::default();
    let mut n = 0;
    while n < budget && matches!(reader.read_into(&mut req), Ok(true)) {
        n += 1;
    }
    n
}
