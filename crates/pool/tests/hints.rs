//! Page hints (`PageHint`, `read_hinted`, `pin_hinted`): hand-worked cases of what keeps a
//! hint fresh and what makes it stale, and a seeded random run against a model of the
//! file in which hinted reads and pins meet evictions, writes, truncations, growth,
//! closes and pool resizes.

use pool::{BufferPool, FileHandle, Lookup, MemStorage, PageHint, PoolError, WritePolicy};
use std::time::Duration;
use testutil::Rng;

const PS: usize = 4096;

fn pool_of(frames: usize, lookup: Lookup) -> BufferPool {
    pool_with(frames, lookup, "clock")
}

fn pool_with(frames: usize, lookup: Lookup, policy: &str) -> BufferPool {
    BufferPool::builder()
        .capacity_frames(frames)
        .read_ahead(0)
        .pin_limit(1)
        .lookup(lookup)
        .policy(policy)
        .write_policy(WritePolicy::WriteBack {
            interval: Duration::from_secs(3600),
            age: Duration::from_secs(3600),
        })
        .build_with_storage(MemStorage::new())
        .unwrap()
}

/// A file of `pages` pages, page `p` filled with `p + 1`, written to storage.
fn file_of(pool: &BufferPool, pages: usize) -> FileHandle {
    let f = pool.create("/h").unwrap();
    for p in 0..pages {
        pool.write(f, (p * PS) as u64, &[p as u8 + 1; PS]).unwrap();
    }
    pool.sync_all().unwrap();
    f
}

/// `read_hinted` of 8 bytes at `in_page`: the count and the first byte.
fn read8(pool: &BufferPool, hint: &mut PageHint, in_page: usize) -> (usize, u8) {
    let mut buf = [0xEE; 8];
    let n = pool.read_hinted(hint, in_page, &mut buf).unwrap();
    (n, buf[0])
}

/// The first use fills the hint (one refresh, one hit); later reads and pins go straight
/// to the frame: no refresh, one hit each, the page's bytes.
#[test]
fn a_hint_survives_hits() {
    let pool = pool_of(16, Lookup::Mapped);
    let f = file_of(&pool, 4);
    let mut h = pool.hint(f, 2).unwrap();
    assert!(!h.is_filled());
    let before = pool.stats();
    assert_eq!(read8(&pool, &mut h, 16), (8, 3));
    assert!(h.is_filled());
    for _ in 0..10 {
        assert_eq!(read8(&pool, &mut h, 4088), (8, 3));
        assert_eq!(pool.pin_hinted(&mut h).unwrap()[100], 3);
    }
    let after = pool.stats();
    assert_eq!(after.hint_refreshes - before.hint_refreshes, 1);
    assert_eq!(after.hits - before.hits, 21);
    assert_eq!(after.misses, before.misses);
}

/// Hinted hits reach the policy like any other: with LRU (whose victim list shows the
/// order of every hit), a hinted pin of page 0, then a hinted read of page 1, each make
/// the page the most recent.
#[test]
fn hinted_hits_are_recorded_for_the_policy() {
    let pool = pool_with(8, Lookup::Mapped, "lru");
    let f = file_of(&pool, 4);
    let pages = |v: Vec<(FileHandle, u64)>| v.into_iter().map(|(_, p)| p).collect::<Vec<_>>();
    assert_eq!(pages(pool.victims(8)), [0, 1, 2, 3]);
    let mut h0 = pool.hint(f, 0).unwrap();
    let mut h1 = pool.hint(f, 1).unwrap();
    let mut h2 = pool.hint(f, 2).unwrap();
    // fill the hints first (the full path records its hit too): loaded 0, 1, 2, 3, then
    // hit 0, 1, 2
    drop(pool.pin_hinted(&mut h0).unwrap());
    read8(&pool, &mut h1, 0);
    read8(&pool, &mut h2, 0);
    assert_eq!(pages(pool.victims(8)), [3, 0, 1, 2]);
    assert_eq!(pages(pool.victims(8)), [3, 0, 1, 2], "nothing new");
    let refreshes = pool.stats().hint_refreshes;
    drop(pool.pin_hinted(&mut h0).unwrap());
    assert_eq!(pages(pool.victims(8)), [3, 1, 2, 0], "the hinted pin of 0");
    read8(&pool, &mut h1, 0);
    assert_eq!(pages(pool.victims(8)), [3, 2, 0, 1], "the hinted read of 1");
    assert_eq!(
        pool.stats().hint_refreshes,
        refreshes,
        "the hints were fresh"
    );
}

/// Evicted (and its frame reused by other pages): the hint is refreshed and the page's
/// own bytes come back, through a miss.
#[test]
fn eviction_makes_a_hint_stale() {
    for lookup in [Lookup::Mapped, Lookup::Hashed] {
        let pool = pool_of(4, lookup);
        let f = file_of(&pool, 12);
        let mut h = pool.hint(f, 0).unwrap();
        assert_eq!(read8(&pool, &mut h, 0), (8, 1));
        let mut buf = [0u8; PS];
        for p in 1..12 {
            pool.read(f, (p * PS) as u64, &mut buf).unwrap();
        }
        assert!(!pool.is_resident(f, 0).unwrap(), "{lookup:?}");
        let before = pool.stats();
        assert_eq!(pool.pin_hinted(&mut h).unwrap()[0], 1, "{lookup:?}");
        let after = pool.stats();
        assert_eq!(after.hint_refreshes - before.hint_refreshes, 1);
        assert_eq!(after.misses - before.misses, 1);
        assert_eq!(read8(&pool, &mut h, 8), (8, 1));
        assert_eq!(
            pool.stats().hint_refreshes,
            after.hint_refreshes,
            "fresh again"
        );
    }
}

/// A write to the page (a `write`, a `PageMut`) makes the hint stale; the hinted read
/// returns the new bytes.
#[test]
fn a_rewrite_makes_a_hint_stale() {
    let pool = pool_of(16, Lookup::Mapped);
    let f = file_of(&pool, 2);
    let mut h = pool.hint(f, 1).unwrap();
    assert_eq!(read8(&pool, &mut h, 0), (8, 2));
    pool.write(f, PS as u64, &[9; 8]).unwrap();
    let r = pool.stats().hint_refreshes;
    assert_eq!(read8(&pool, &mut h, 0), (8, 9));
    assert_eq!(pool.stats().hint_refreshes, r + 1);
    pool.pin_mut(f, 1).unwrap()[0] = 7;
    assert_eq!(pool.pin_hinted(&mut h).unwrap()[0], 7);
    assert_eq!(pool.stats().hint_refreshes, r + 2);
}

/// After a close, the old handle's hint is refused with `Closed` (never bytes of the
/// closed file), and so is it after a reopen, which is a new handle; a hint made for the
/// new handle works. A hint is refused by another pool too.
#[test]
fn close_and_reopen_and_other_pools_refuse_a_hint() {
    let pool = pool_of(16, Lookup::Mapped);
    let f = file_of(&pool, 2);
    let mut old = pool.hint(f, 0).unwrap();
    assert_eq!(read8(&pool, &mut old, 0), (8, 1));
    pool.close(f).unwrap();
    let closed = |r: Result<usize, PoolError>| matches!(r, Err(PoolError::Closed(h)) if h == f);
    assert!(closed(pool.read_hinted(&mut old, 0, &mut [0; 8])));
    let g = pool.open("/h").unwrap();
    assert!(closed(pool.read_hinted(&mut old, 0, &mut [0; 8])));
    assert!(matches!(
        pool.pin_hinted(&mut old),
        Err(PoolError::Closed(_))
    ));
    assert!(matches!(pool.hint(f, 0), Err(PoolError::Closed(_))));
    let mut new = pool.hint(g, 0).unwrap();
    assert_eq!(read8(&pool, &mut new, 0), (8, 1));

    let other = pool_of(16, Lookup::Mapped);
    let o = file_of(&other, 2);
    let mut foreign = other.hint(o, 0).unwrap();
    assert_eq!(read8(&other, &mut foreign, 0), (8, 1));
    assert!(foreign.is_filled());
    assert!(matches!(
        pool.read_hinted(&mut foreign, 0, &mut [0; 8]),
        Err(PoolError::Closed(_))
    ));
    assert!(matches!(
        pool.pin_hinted(&mut foreign),
        Err(PoolError::Closed(_))
    ));
}

/// Shrinking: a cut inside the hinted page makes its hint stale, and a hinted read past
/// the new end is short (0 bytes here), never the old bytes; a page dropped whole is
/// `PastEnd`. Growing: the page's new bytes (zeros) are read through the full path, which
/// refreshes the hint to the whole page.
#[test]
fn set_len_shrink_and_grow_are_seen_through_a_hint() {
    let pool = pool_of(16, Lookup::Mapped);
    let f = file_of(&pool, 3);
    pool.set_len(f, (2 * PS + 2048) as u64).unwrap();
    let mut h = pool.hint(f, 2).unwrap();
    assert_eq!(read8(&pool, &mut h, 2040), (8, 3));
    // the hint knows the page ends at 2048 in the file: a read across it is short
    let mut across = [0xEE; 16];
    assert_eq!(pool.read_hinted(&mut h, 2040, &mut across).unwrap(), 8);

    pool.set_len(f, (2 * PS + 100) as u64).unwrap();
    assert_eq!(read8(&pool, &mut h, 200), (0, 0xEE), "past the new end");
    assert_eq!(read8(&pool, &mut h, 96), (4, 3), "the last 4 bytes");
    assert_eq!(read8(&pool, &mut h, 0), (8, 3));

    pool.set_len(f, (3 * PS) as u64).unwrap();
    let r = pool.stats().hint_refreshes;
    assert_eq!(read8(&pool, &mut h, 200), (8, 0), "zeros, not the old 3s");
    assert_eq!(pool.stats().hint_refreshes, r + 1);
    assert_eq!(read8(&pool, &mut h, 4000), (8, 0));
    assert_eq!(
        pool.stats().hint_refreshes,
        r + 1,
        "refreshed to the whole page"
    );

    let mut h1 = pool.hint(f, 1).unwrap();
    assert_eq!(pool.pin_hinted(&mut h1).unwrap()[0], 2);
    pool.set_len(f, PS as u64).unwrap();
    assert!(matches!(
        pool.pin_hinted(&mut h1),
        Err(PoolError::PastEnd { page: 1, pages: 1 })
    ));
    assert_eq!(read8(&pool, &mut h1, 0), (0, 0xEE));
}

/// Shrinking the pool retires frames (some held hinted pages); growing it back adds
/// others. Every hinted read still returns its page's bytes.
#[test]
fn a_pool_resize_leaves_hinted_reads_right() {
    let pool = pool_of(32, Lookup::Mapped);
    let f = file_of(&pool, 24);
    let mut hints: Vec<PageHint> = (0..24).map(|p| pool.hint(f, p).unwrap()).collect();
    for (p, h) in hints.iter_mut().enumerate() {
        assert_eq!(read8(&pool, h, 0), (8, p as u8 + 1));
    }
    pool.resize(8).unwrap();
    for (p, h) in hints.iter_mut().enumerate() {
        assert_eq!(read8(&pool, h, 8), (8, p as u8 + 1));
    }
    pool.resize(64).unwrap();
    for (p, h) in hints.iter_mut().enumerate().rev() {
        assert_eq!(pool.pin_hinted(h).unwrap()[4095], p as u8 + 1);
    }
}

/// A read that does not lie in the hinted page continues into the next pages, as `read`
/// at the same offset does; a hint for a page past the end reads nothing.
#[test]
fn reads_beyond_the_hinted_page_take_the_full_path() {
    let pool = pool_of(16, Lookup::Mapped);
    let f = file_of(&pool, 3);
    let mut h = pool.hint(f, 0).unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(pool.read_hinted(&mut h, PS - 8, &mut buf).unwrap(), 16);
    assert_eq!(buf, [[1; 8], [2; 8]].concat()[..]);
    assert_eq!(pool.read_hinted(&mut h, 2 * PS, &mut buf[..8]).unwrap(), 8);
    assert_eq!(buf[..8], [3; 8]);
    let mut past = pool.hint(f, 7).unwrap();
    assert_eq!(pool.read_hinted(&mut past, 0, &mut buf).unwrap(), 0);
    assert!(!past.is_filled());
    let mut far = pool.hint(f, u64::MAX).unwrap();
    assert!(matches!(
        pool.read_hinted(&mut far, 0, &mut buf),
        Err(PoolError::OutOfRange { .. })
    ));
}

/// Random single-thread runs: hinted reads and pins (one hint per page, kept across every
/// other operation) interleaved with plain reads over a pool too small for the file
/// (evictions), writes, `set_len` both ways, close and reopen, and resizes, against a
/// `Vec<u8>` model. Prints its seed (`BUFCACHE_SEED` replays it).
#[test]
fn hinted_reads_and_pins_match_a_model() {
    testutil::explore(|seed| {
        for (i, lookup) in [Lookup::Mapped, Lookup::Hashed].into_iter().enumerate() {
            model_run(lookup, &mut seed.derive(i as u64).rng());
        }
    });
}

/// `n` bytes of the model from `from` (none when `n` is 0, wherever `from` is).
fn slice(model: &[u8], from: usize, n: usize) -> &[u8] {
    if n == 0 {
        &[]
    } else {
        &model[from..from + n]
    }
}

fn model_run(lookup: Lookup, rng: &mut impl Rng) {
    const PAGES: u64 = 12;
    let pool = pool_of(6, lookup);
    let mut f = pool.create("/m").unwrap();
    let mut model: Vec<u8> = Vec::new();
    let mut hints: Vec<PageHint> = (0..PAGES).map(|p| pool.hint(f, p).unwrap()).collect();
    for step in 0..3000 {
        let page = rng.gen_range(0..PAGES);
        let at = |in_page: usize| page as usize * PS + in_page;
        match rng.gen_range(0..100u32) {
            0..=39 => {
                let in_page = rng.gen_range(0..PS);
                let len = rng.gen_range(0..=64usize.min(2 * PS - in_page));
                let mut buf = vec![0xEE; len];
                let n = pool
                    .read_hinted(&mut hints[page as usize], in_page, &mut buf)
                    .unwrap();
                let want = model.len().saturating_sub(at(in_page)).min(len);
                assert_eq!(n, want, "step {step}: read {page}+{in_page} x{len}");
                assert_eq!(buf[..n], *slice(&model, at(in_page), n), "step {step}");
            }
            40..=54 => match pool.pin_hinted(&mut hints[page as usize]) {
                Ok(g) => {
                    let end = model.len().min(at(PS));
                    assert_eq!(
                        g[..end - at(0)],
                        model[at(0)..end],
                        "step {step}: pin {page}"
                    );
                    assert!(g[end - at(0)..].iter().all(|&b| b == 0), "step {step}");
                }
                Err(PoolError::PastEnd { page: p, .. }) => {
                    assert!(p == page && at(0) >= model.len(), "step {step}")
                }
                Err(e) => panic!("step {step}: {e}"),
            },
            55..=69 => {
                // plain reads elsewhere: misses that evict
                let mut buf = vec![0u8; PS];
                let n = pool.read(f, (page as usize * PS) as u64, &mut buf).unwrap();
                assert_eq!(buf[..n], *slice(&model, at(0), n), "step {step}");
            }
            70..=84 => {
                let off = at(rng.gen_range(0..PS));
                let len = rng.gen_range(1..PS);
                let val = rng.gen_range(1..=255u8);
                pool.write(f, off as u64, &vec![val; len]).unwrap();
                if model.len() < off + len {
                    model.resize(off + len, 0);
                }
                model[off..off + len].fill(val);
            }
            85..=92 => {
                let len = rng.gen_range(0..=PAGES as usize * PS);
                pool.set_len(f, len as u64).unwrap();
                model.resize(len, 0);
            }
            93..=96 => {
                pool.close(f).unwrap();
                let old = f;
                f = pool.open("/m").unwrap();
                // the old hints are refused; the new handle's replace them
                let h = &mut hints[page as usize];
                assert!(
                    matches!(pool.read_hinted(h, 0, &mut [0; 1]), Err(PoolError::Closed(x)) if x == old),
                    "step {step}"
                );
                hints = (0..PAGES).map(|p| pool.hint(f, p).unwrap()).collect();
            }
            _ => pool.resize(rng.gen_range(4..12)).unwrap(),
        }
        assert_eq!(pool.len(f).unwrap(), model.len() as u64, "step {step}");
    }
}
