//! The mirror over the real page cache of a small file, without memory pressure (no
//! cgroup needed): what was read is cached, what the library dropped is not, and the
//! mirror agrees with the kernel's ground truth on every page.

use inforeplace::{InfoReplace, KernelFile, Levers, PageCacheFile, PageCacheSource};

#[test]
#[cfg_attr(
    miri,
    ignore = "real files, fadvise and cachestat are outside what Miri emulates"
)]
fn the_mirror_agrees_with_the_kernel_on_a_small_file() {
    // Real data on the target's file system (tmpfs would keep dropped pages).
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("mirror.dat");
    std::fs::write(&path, vec![5u8; 128 * 4096]).unwrap();
    // Dirty pages cannot be dropped: write them back first.
    std::fs::File::open(&path).unwrap().sync_all().unwrap();
    let mut kernel = KernelFile::open(&path).unwrap();
    eprintln!(
        "truth {}, RWF_DONTCACHE: {:?}",
        kernel.truth(),
        kernel.dontcache_probe()
    );
    kernel.drop_all().unwrap();
    assert_eq!(kernel.pages(), 128);
    // The mirror (LRU, 16 pages) is the target's size, with DONTNEED: the kernel keeps
    // only what an LRU of 16 would, though it has room for the whole file.
    let levers = Levers {
        drop_target_evictions: true,
        dontcache: false,
        verify_refreshes: false,
    };
    let source = PageCacheSource::new(kernel, "lru", 16, levers).unwrap();
    let mut info = InfoReplace::new(source, "lru").unwrap();
    for p in (0..128).step_by(3) {
        info.read_page(p).unwrap();
    }
    // 43 pages read (0, 3, ..., 126); the last 16 of them stay.
    let kernel = info.source().kernel();
    let cached: Vec<u64> = (0..128).filter(|&p| kernel.resident(p).unwrap()).collect();
    assert_eq!(cached, (0..128).step_by(3).skip(27).collect::<Vec<u64>>());
    assert_eq!(info.source().calls().dropped, 27);
    assert_eq!(info.source().agreement().unwrap().rate(), 1.0);
    assert_eq!(info.inaccuracy().unwrap(), 0.0);
    assert!(kernel.resident(128).is_err());
}
