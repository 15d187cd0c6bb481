//! InfoReplace over the real buffer pool (in-memory storage): refusals, the wrappers, and
//! exact emulation over the pool's LRU.

use inforeplace::{InfoReplace, InfoReplaceError, PageKey, PoolSource, Source};
use pool::{BufferPool, MemStorage, WritePolicy};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE: usize = 4096;

fn pool(policy: &str, frames: usize) -> BufferPool {
    BufferPool::builder()
        .capacity_frames(frames)
        .policy(policy)
        .read_ahead(0)
        .free_reserve(0)
        .write_policy(WritePolicy::WriteThrough)
        .build_with_storage(MemStorage::new())
        .unwrap()
}

#[test]
fn a_fifo_pool_is_refused() {
    let err = InfoReplace::new(PoolSource::new(pool("fifo", 16)), "lru").err();
    assert!(
        matches!(err, Some(InfoReplaceError::SourceIgnoresAccess { .. })),
        "{err:?}"
    );
}

#[test]
fn wrappers_read_and_write_through_the_pool_and_keep_the_target_resident() {
    let mut info = InfoReplace::new(PoolSource::new(pool("lru", 16)), "mru").unwrap();
    let f = info.create("/index").unwrap();
    // 40 pages with their number in every byte, written through the wrapper.
    for p in 0..40u64 {
        info.write(f, p * PAGE as u64, &[p as u8; PAGE]).unwrap();
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let mut buf = [0u8; 10];
    for step in 0..600 {
        let p = rng.gen_range(0..40u64);
        // a read spanning two pages steers both
        let offset = p * PAGE as u64 + PAGE as u64 - 5;
        let n = info.read(f, offset, &mut buf).unwrap();
        let expect: Vec<u8> = [[p as u8; 5], [p as u8 + 1; 5]].concat();
        assert_eq!(&buf[..n], &expect[..n], "step {step}");
        let target: Vec<PageKey> = {
            let mut t = info.target_pages();
            t.sort();
            t
        };
        let source: Vec<PageKey> = (0..40)
            .map(|page| PageKey { file: f.0, page })
            .filter(|&k| info.source().is_resident(k).unwrap())
            .collect();
        assert_eq!(source, target, "step {step}");
    }
    assert!(info.overhead().refreshes > 0);
    info.close(f).unwrap();
    assert!(info.read(f, 0, &mut buf).is_err());
}

#[test]
fn the_victim_list_covers_two_eviction_batches() {
    // 8192 frames: the pool evicts 256 at once, more than the thesis's 100 victims.
    let info = InfoReplace::new(PoolSource::new(pool("lru", 8192)), "lru").unwrap();
    assert_eq!(info.source().eviction_batch(), 256);
    assert_eq!(info.config().victim_list_len, 512);
    let small = InfoReplace::new(PoolSource::new(pool("lru", 16)), "lru").unwrap();
    assert_eq!(small.config().victim_list_len, 100);
}
