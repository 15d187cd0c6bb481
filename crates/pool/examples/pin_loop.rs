//! A bare loop of pin + unpin hits on random resident pages, for instruction counts and
//! profiles without a benchmark harness around it:
//!
//! `N=1000000 valgrind --tool=callgrind target/release/examples/pin_loop [hashed]`
//! (subtract a run with `N=0` for the set-up), or just run it for ns per pin.

use pool::{BufferPool, Lookup, MemStorage};

fn main() {
    let lookup = match std::env::args().nth(1).as_deref() {
        Some("hashed") => Lookup::Hashed,
        _ => Lookup::Mapped,
    };
    let n: u64 = std::env::var("N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000_000);
    const PAGES: u64 = 4096;
    let pool = BufferPool::builder()
        .capacity_frames(PAGES as usize + 104)
        .lookup(lookup)
        .read_ahead(0)
        .build_with_storage(MemStorage::new())
        .unwrap();
    let f = pool.create("/pin_loop").unwrap();
    pool.write(f, 0, &vec![1u8; (PAGES * 4096) as usize])
        .unwrap();
    // xorshift: a seeded page sequence costing a few instructions per step
    let mut x = 12345u64;
    let start = std::time::Instant::now();
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let page = pool.pin(f, x % PAGES).unwrap();
        std::hint::black_box(page.as_ptr());
    }
    if n > 0 {
        let ns = start.elapsed().as_nanos() as f64 / n as f64;
        println!(
            "{lookup:?}: {ns:.1} ns per pin + unpin ({:.1} M/s)",
            1e3 / ns
        );
    }
}
