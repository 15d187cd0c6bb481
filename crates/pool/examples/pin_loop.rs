//! Bare loops over the pool's hit paths, for instruction counts and profiles without a
//! benchmark harness around them: pin + unpin of a random resident page, a 64-byte `read`
//! or `write` of one, an 8- or 64-byte `read_optimistic` (no pin), next to a 64-byte
//! `pread` of the same offsets from a file in the OS page cache. `opt8r` is `opt8` at a
//! random 8-byte word of the page, as `bench pool`'s optimistic row and vmcache's reads
//! take it (with a fixed line a page, the data of 4096 pages stay in the L2 cache).
//!
//! ```text
//! target/release/examples/pin_loop [mapped|hashed] [pin|read64|write64|opt8|opt8r|opt64|pread64]
//! N=1000000 valgrind --tool=callgrind target/release/examples/pin_loop ...  # minus N=0
//! PAGES=65536 target/release/examples/pin_loop mapped pin   # 256 MiB resident
//! ```
//!
//! `PAGES` (default 4096, 16 MiB) sets the resident pages: the hit path's instructions do
//! not depend on it, its cache misses do.

use std::os::unix::fs::FileExt;

use pool::{BufferPool, FileStorage, Lookup};

const PS: u64 = 4096;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lookup = match args.get(1).map(String::as_str) {
        Some("hashed") => Lookup::Hashed,
        _ => Lookup::Mapped,
    };
    let what = args.get(2).cloned().unwrap_or_else(|| "pin".into());
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let n = env("N", 20_000_000);
    let pages = env("PAGES", 4096);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pin_loop");
    std::fs::write(&path, vec![1u8; (pages * PS) as usize]).unwrap();
    let pool = BufferPool::builder()
        .capacity_frames(pages as usize + 104)
        .lookup(lookup)
        .read_ahead(0)
        .build_with_storage(FileStorage)
        .unwrap();
    let f = pool.open(&path).unwrap();
    let mut buf = [0u8; 64];
    for p in 0..pages {
        pool.read(f, p * PS, &mut buf).unwrap();
    }
    let file = std::fs::File::open(&path).unwrap();
    // xorshift: a seeded page sequence costing a few instructions per step
    let mut x = 12345u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // multiply-shift, not `%`: with `pages` known only at run time that is a division
    let page_of = |x: u64| ((u128::from(x) * u128::from(pages)) >> 64) as u64;
    let mut next_page = || page_of(next());
    let start = std::time::Instant::now();
    // one loop per operation, so that choosing the operation is not part of the cost
    match what.as_str() {
        "read64" => {
            for _ in 0..n {
                pool.read(f, next_page() * PS + 128, &mut buf).unwrap();
                std::hint::black_box(&buf);
            }
        }
        "opt8" | "opt64" => {
            let len = if what == "opt8" { 8 } else { 64 };
            for _ in 0..n {
                let got = pool.read_optimistic(f, next_page() * PS + 128, &mut buf[..len]);
                std::hint::black_box((got.unwrap(), &buf));
            }
        }
        "opt8r" => {
            for _ in 0..n {
                // one draw gives both: the page from its high bits, the word from its low
                let x = next();
                let at = page_of(x) * PS + (x & (PS / 8 - 1)) * 8;
                let got = pool.read_optimistic(f, at, &mut buf[..8]);
                std::hint::black_box((got.unwrap(), &buf));
            }
        }
        "write64" => {
            // the flusher never runs during the loop (1 s interval, 5 s age)
            for i in 0..n {
                buf[0] = i as u8;
                pool.write(f, next_page() * PS + 128, &buf).unwrap();
            }
        }
        "pread64" => {
            for _ in 0..n {
                file.read_exact_at(&mut buf, next_page() * PS + 128)
                    .unwrap();
                std::hint::black_box(&buf);
            }
        }
        _ => {
            for _ in 0..n {
                let g = pool.pin(f, next_page()).unwrap();
                std::hint::black_box(g.as_ptr());
            }
        }
    }
    if n > 0 {
        let ns = start.elapsed().as_nanos() as f64 / n as f64;
        let label = if what == "pread64" {
            "os".to_string()
        } else {
            format!("{lookup:?}")
        };
        println!(
            "{label} {what}: {ns:.1} ns per operation ({:.1} M/s)",
            1e3 / ns
        );
    }
}
