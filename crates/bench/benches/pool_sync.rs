//! Criterion benchmark of `fsync` on a large pool with little dirty: write one page of a
//! file, then `fsync` it, in a pool of 65 536 frames (256 MiB) over memory storage. The
//! cost that matters is finding the file's dirty pages: a walk over every frame header
//! (as the pool first did) grows with the pool, the dirty-frame bitmap walk grows with
//! it too but 512 times more slowly (one bit instead of one 64-byte header per frame).

#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pool::{BufferPool, MemStorage};

const FRAMES: usize = 65_536;
const PAGE_BYTES: usize = 4096;

fn fsync_one_dirty_page(c: &mut Criterion) {
    let pool = BufferPool::builder()
        .capacity_frames(FRAMES)
        .read_ahead(0)
        .build_with_storage(MemStorage::new())
        .expect("pool builds");
    let f = pool.create("/log").expect("file is created");
    // fill the pool with clean pages of another file, as a busy pool would be
    let other = pool.create("/table").expect("file is created");
    let page = vec![1u8; PAGE_BYTES];
    for p in 0..(FRAMES as u64 - 64) {
        pool.write(other, p * PAGE_BYTES as u64, &page)
            .expect("write");
    }
    pool.fsync(other).expect("fsync");
    let mut i = 0u64;
    c.bench_function("fsync_one_dirty_page_of_65536_frames", |b| {
        b.iter(|| {
            i = (i + 1) % 16;
            pool.write(f, i * PAGE_BYTES as u64, &page).expect("write");
            pool.fsync(f).expect("fsync");
            black_box(i);
        })
    });
}

criterion_group!(benches, fsync_one_dirty_page);
criterion_main!(benches);
