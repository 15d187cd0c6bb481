//! Steady-state replay allocates nothing per request.
//!
//! A counting global allocator (per thread, so the test harness's other threads do not
//! disturb the count) wraps the system allocator. For each policy below that is
//! registered, a cache is warmed up with the first half of a seeded Zipf-like trace and
//! the second half is then replayed through [`sim::replay::serve`] — the loop every replay
//! runs — while counting allocations. The expected count is exactly zero.
//!
//! The same allocator also tracks live bytes, which pins down the memory a cached entry
//! costs: deterministic, so it can be asserted (unlike a timing).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use policy::registry::PolicyVisitor;
use policy::{BuildContext, Cache, Policy, PolicySpec};
use sim::replay::{serve, Counts};
use sim::CompactTrace;
use testutil::{Rng, TestRng};
use trace::Request;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static LIVE_BYTES: Cell<i64> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; the only addition is
// a thread-local counter bump, which does not allocate (const-initialised `Cell`).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        LIVE_BYTES.with(|c| c.set(c.get() + layout.size() as i64));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.with(|c| c.set(c.get() - layout.size() as i64));
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        LIVE_BYTES.with(|c| c.set(c.get() + new_size as i64 - layout.size() as i64));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

fn live_bytes() -> i64 {
    LIVE_BYTES.with(Cell::get)
}

/// Bytes per cached entry of the library's default driver (hashed keys) plus the policy,
/// with the cache full: at most 48 for the simple policies (issue target). Keys are the
/// caller's, the trace is not involved.
#[test]
fn bytes_per_cached_entry() {
    const ENTRIES: u64 = 100_000;
    for name in ["lru", "fifo", "clock", "sieve"] {
        let before = live_bytes();
        let policy = PolicySpec::parse(name)
            .unwrap()
            .build(&BuildContext::new(ENTRIES, 1))
            .unwrap();
        let mut cache = Cache::new(policy, ENTRIES);
        for key in 0..ENTRIES {
            cache.access(&policy::Access::unit(
                key.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                key,
            ));
        }
        assert_eq!(cache.len() as u64, ENTRIES);
        let per_entry = (live_bytes() - before) as f64 / ENTRIES as f64;
        println!("{name}: {per_entry:.1} bytes per cached entry");
        assert!(per_entry <= 48.0, "{name}: {per_entry:.1} bytes per entry");
        drop(cache);
    }
}

/// A skewed trace: key = floor(u^3 * keys) for a uniform u in [0, 1), so low keys are hot.
fn skewed_trace(n: usize, keys: u64, rng: &mut TestRng) -> CompactTrace {
    let reqs: Vec<Request> = (0..n)
        .map(|_| {
            let u: f64 = rng.gen();
            Request {
                key: (u * u * u * keys as f64) as u64,
                size: 1,
                ..Request::default()
            }
        })
        .collect();
    CompactTrace::from_requests(&reqs)
}

struct SteadyState<'a> {
    trace: &'a CompactTrace,
    capacity: u64,
}

impl PolicyVisitor for SteadyState<'_> {
    type Output = (u64, Counts);
    fn visit<P: Policy + Clone + Send>(self, policy: P) -> (u64, Counts) {
        let future = policy.needs_future().then(|| self.trace.next_access());
        let mut cache = Cache::new(policy, self.capacity);
        let half = self.trace.len() / 2;
        let mut counts = Counts::default();
        serve(
            &mut cache,
            self.trace,
            0..half,
            true,
            future,
            &mut counts,
            &|_| {},
        );
        let mut counts = Counts::default();
        let before = allocations();
        serve(
            &mut cache,
            self.trace,
            half..self.trace.len(),
            true,
            future,
            &mut counts,
            &|_| {},
        );
        (allocations() - before, counts)
    }
}

/// A fixed seed by default (`BUFCACHE_SEED` overrides it): the count is exact, so the
/// trace that produced it should not change from run to run.
#[test]
fn steady_state_replay_allocates_nothing() {
    testutil::fixed(7, |seed| {
        allocates_nothing_after_warm_up(&skewed_trace(400_000, 20_000, &mut seed.rng()))
    });
}

fn allocates_nothing_after_warm_up(trace: &CompactTrace) {
    let candidates: Vec<&str> = policy::POLICIES.iter().map(|p| p.name).collect();
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for name in candidates {
        if !policy::POLICIES.iter().any(|p| p.name == name) {
            continue;
        }
        for capacity in [100u64, 2_000] {
            let built = PolicySpec::parse(name)
                .unwrap()
                .build(&BuildContext::new(capacity, 3))
                .unwrap();
            let (allocs, counts) = built.visit(SteadyState { trace, capacity });
            // The run did real work: both hits and misses in the measured half.
            assert!(counts.hits > 0 && counts.misses() > 0, "{name}: {counts:?}");
            if allocs != 0 {
                failures.push(format!("{name}@{capacity}: {allocs}"));
            }
        }
        checked.push(name);
    }
    assert!(
        failures.is_empty(),
        "allocated in steady state: {failures:?}"
    );
    assert!(checked.contains(&"lru") && checked.contains(&"fifo"));
}
