//! The pool over real files: buffered and `O_DIRECT`, several page sizes.

use pool::{BufferPool, IoMode, Lookup, PoolError};

fn pattern(n: usize, salt: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt))
        .collect()
}

/// A 16-frame pool over real files.
fn small_pool(io: IoMode, page_size: usize, lookup: Lookup) -> Result<BufferPool, PoolError> {
    BufferPool::builder()
        .capacity_frames(16)
        .page_size(page_size)
        .io_mode(io)
        .lookup(lookup)
        .build()
}

fn roundtrip(io: IoMode, page_size: usize, lookup: Lookup) -> Result<(), PoolError> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("data");
    // not a multiple of the page size, to exercise the partial last page and the trim
    let len = 5 * page_size + 123;
    let data = pattern(len, 7);
    {
        let pool = small_pool(io, page_size, lookup)?;
        let f = pool.create(&path)?;
        pool.write(f, 0, &data)?;
        pool.fsync(f)?;
        assert_eq!(std::fs::read(&path).unwrap(), data);
        pool.write(f, page_size as u64 - 1, b"XY")?;
        pool.close(f)?;
    }
    let mut expect = data.clone();
    expect[page_size - 1..page_size + 1].copy_from_slice(b"XY");
    assert_eq!(std::fs::read(&path).unwrap(), expect);
    // reopen through a fresh pool: read-ahead over the whole file, then random reads
    let pool = small_pool(io, page_size, lookup)?;
    let f = pool.open(&path)?;
    assert_eq!(pool.len(f)?, len as u64);
    let mut back = vec![0u8; len + 50];
    assert_eq!(pool.read(f, 0, &mut back)?, len);
    assert_eq!(&back[..len], &expect[..]);
    let mut small = [0u8; 10];
    assert_eq!(pool.read(f, 3 * page_size as u64 + 5, &mut small)?, 10);
    assert_eq!(&small, &expect[3 * page_size + 5..3 * page_size + 15]);
    pool.set_len(f, 2 * page_size as u64 + 1)?;
    pool.fsync(f)?;
    assert_eq!(std::fs::read(&path).unwrap(), expect[..2 * page_size + 1]);
    Ok(())
}

#[test]
fn buffered_files_round_trip() {
    for ps in [4096, 16384, 65536] {
        for lk in [Lookup::Mapped, Lookup::Hashed] {
            roundtrip(IoMode::Buffered, ps, lk).unwrap();
        }
    }
}

/// The files live under the target directory, on the disk's file system: `/tmp` may be
/// tmpfs, which refuses `O_DIRECT` (EINVAL at open). A file system that refuses it fails
/// the test rather than skipping it.
#[test]
fn direct_io_files_round_trip() {
    for ps in [4096, 8192] {
        roundtrip(IoMode::Direct, ps, Lookup::Mapped)
            .unwrap_or_else(|e| panic!("O_DIRECT round trip at {ps}-byte pages: {e}"));
    }
}

/// Prefetch over a real file: the reads go through this thread's `io_uring` (or one at a
/// time where the kernel refuses rings); either way every page arrives with its bytes.
fn prefetch_loads_the_right_bytes(io: IoMode) -> Result<(), PoolError> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("data");
    let ps = 4096;
    // 300 pages and a partial one: more than one ring's worth (64) per call
    let data = pattern(300 * ps + 100, 3);
    std::fs::write(&path, &data).unwrap();
    let pool = BufferPool::builder()
        .capacity_frames(512)
        .io_mode(io)
        .read_ahead(0)
        .build()?;
    let f = pool.open(&path)?;
    let pages: Vec<u64> = (0..301u64).rev().step_by(2).chain([7, 7, 400]).collect();
    // 151 pages from 300 down to 0 (partial last page included), 7 twice, 400 past the end
    assert_eq!(pool.prefetch(f, &pages)?, 152);
    let s = pool.stats();
    assert_eq!((s.prefetched_pages, s.misses), (152, 0));
    for page in (0..301u64).rev().step_by(2).chain([7]) {
        let start = page as usize * ps;
        let end = (start + ps).min(data.len());
        let got = pool.pin(f, page)?;
        assert_eq!(&got[..end - start], &data[start..end], "page {page}");
        assert!(
            got[end - start..].iter().all(|&b| b == 0),
            "page {page} tail"
        );
    }
    assert_eq!(pool.stats().misses, 0);
    // resident pages are skipped
    assert_eq!(pool.prefetch(f, &[0, 2, 4])?, 0);
    Ok(())
}

#[test]
fn prefetch_buffered_and_direct() {
    prefetch_loads_the_right_bytes(IoMode::Buffered).unwrap();
    // under the target directory, like the round trip: a refusal of O_DIRECT fails
    prefetch_loads_the_right_bytes(IoMode::Direct).unwrap();
}
