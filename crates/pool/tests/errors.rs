//! Bad input: every `PoolError` variant the builder and the API can produce, as a typed
//! error and never a panic.

use std::time::Duration;

use policy::Policy as _;
use pool::{BufferPool, Lookup, MemStorage, PoolError, WritePolicy};

fn build(b: pool::BufferPoolBuilder) -> Result<BufferPool, PoolError> {
    b.build_with_storage(MemStorage::new())
}

#[test]
fn builder_rejects_bad_configurations() {
    for ps in [0usize, 1000, 2048, 4097, 6144, 131072] {
        assert!(
            matches!(build(BufferPool::builder().page_size(ps)), Err(PoolError::BadPageSize { page_size }) if page_size == ps),
            "page size {ps}"
        );
    }
    for ps in [4096usize, 8192, 16384, 32768, 65536] {
        let p = build(BufferPool::builder().page_size(ps).capacity_frames(16)).unwrap();
        assert_eq!(p.page_size(), ps);
    }
    // pin limit 4 + read-ahead 8 + 1 = 13 frames at least
    assert!(matches!(
        build(BufferPool::builder().capacity_frames(12)),
        Err(PoolError::CapacityBelowPinLimit {
            capacity_frames: 12,
            pin_limit: 4,
            read_ahead: 8
        })
    ));
    assert!(build(BufferPool::builder().capacity_frames(13)).is_ok());
    assert!(matches!(
        build(
            BufferPool::builder()
                .capacity_bytes(3 * 4096)
                .read_ahead(0)
                .pin_limit(3)
        ),
        Err(PoolError::CapacityBelowPinLimit {
            capacity_frames: 3,
            ..
        })
    ));
    assert_eq!(
        build(
            BufferPool::builder()
                .capacity_bytes(64 << 20)
                .page_size(8192)
        )
        .unwrap()
        .capacity_frames(),
        8192
    );
    assert!(matches!(
        build(BufferPool::builder().capacity_frames(u32::MAX as usize)),
        Err(PoolError::OutOfMemory { .. })
    ));
    // 2^31 frames of 64 KiB = 128 TiB: more than the address space, refused by the
    // allocator and reported, not aborted
    assert!(matches!(
        build(BufferPool::builder().page_size(65536).capacity_frames(1 << 31)),
        Err(PoolError::OutOfMemory { bytes }) if bytes == 1u128 << 47
    ));
    assert!(matches!(
        build(BufferPool::builder().policy("nosuch")),
        Err(PoolError::Policy(_))
    ));
    assert!(matches!(
        build(BufferPool::builder().policy("clock:bogus=1")),
        Err(PoolError::Policy(_))
    ));
    match build(BufferPool::builder().policy("belady")) {
        Err(PoolError::PolicyNotConcurrent { name, allowed }) => {
            assert_eq!(name, "belady");
            assert!(allowed.contains("clock") && allowed.contains("lru"));
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("belady (offline) accepted"),
    }
    // every registered policy runs in a pool unless it declares itself offline, with no
    // list of names kept anywhere: a new policy is in the pool with its registry line
    for info in policy::POLICIES {
        let offline = policy::PolicySpec::parse(info.name)
            .unwrap()
            .build(&policy::BuildContext::new(64, 0))
            .unwrap()
            .hit_path()
            == policy::HitPath::Offline;
        match build(BufferPool::builder().policy(info.name)) {
            Ok(_) => assert!(!offline, "{}", info.name),
            Err(PoolError::PolicyNotConcurrent { .. }) => assert!(offline, "{}", info.name),
            Err(e) => panic!("{}: {e}", info.name),
        }
    }
    assert!(matches!(
        build(BufferPool::builder().write_policy(WritePolicy::WriteBack {
            interval: Duration::ZERO,
            age: Duration::from_secs(1),
        })),
        Err(PoolError::BadWritePolicy)
    ));
    assert!(matches!(
        build(BufferPool::builder().max_open_files(0)),
        Err(PoolError::TooManyOpenFiles { max: 0 })
    ));
    assert!(matches!(
        build(BufferPool::builder().max_open_files(usize::MAX)),
        Err(PoolError::TooManyOpenFiles { .. })
    ));
    assert!(build(BufferPool::builder().max_open_files(pool::MAX_OPEN_FILES)).is_ok());
    // durations too long to count in nanoseconds are fine (the flusher just never ages)
    assert!(
        build(BufferPool::builder().write_policy(WritePolicy::WriteBack {
            interval: Duration::MAX,
            age: Duration::MAX,
        }))
        .is_ok()
    );
}

#[test]
fn api_rejects_bad_handles_ranges_and_pins() {
    for lk in [Lookup::Mapped, Lookup::Hashed] {
        let p = build(
            BufferPool::builder()
                .capacity_frames(16)
                .lookup(lk)
                .max_open_files(2),
        )
        .unwrap();
        let a = p.create("/a").unwrap();
        let b = p.create("/b").unwrap();
        assert!(matches!(
            p.create("/c"),
            Err(PoolError::TooManyOpenFiles { max: 2 })
        ));
        p.close(b).unwrap();
        for r in [
            p.len(b).map(|_| ()),
            p.read(b, 0, &mut [0u8; 1]).map(|_| ()),
            p.write(b, 0, b"x"),
            p.set_len(b, 1),
            p.fsync(b),
            p.close(b),
            p.pin(b, 0).map(|_| ()),
            p.pin_mut(b, 0).map(|_| ()),
            p.resident(b).map(|_| ()),
        ] {
            assert!(matches!(r, Err(PoolError::Closed(h)) if h == b));
        }
        // past the end
        p.write(a, 0, b"abc").unwrap();
        assert!(matches!(
            p.pin(a, 1),
            Err(PoolError::PastEnd { page: 1, pages: 1 })
        ));
        assert_eq!(p.read(a, 1 << 40, &mut [0u8; 4]).unwrap(), 0);
        // ranges that overflow, or that the mapped page table cannot address
        assert!(matches!(
            p.write(a, u64::MAX - 1, b"abc"),
            Err(PoolError::OutOfRange { .. })
        ));
        let far = p.write(a, 1 << 41, b"far");
        match lk {
            Lookup::Mapped => assert!(matches!(far, Err(PoolError::OutOfRange { .. }))),
            Lookup::Hashed => {
                far.unwrap();
                let mut buf = [0u8; 3];
                assert_eq!(p.read(a, 1 << 41, &mut buf).unwrap(), 3);
                assert_eq!(&buf, b"far");
                p.set_len(a, 3).unwrap();
            }
        }
        // close and set_len refuse pinned pages and leave everything in place
        let pin = p.pin(a, 0).unwrap();
        assert!(matches!(p.close(a), Err(PoolError::PagePinned { page: 0 })));
        assert!(matches!(
            p.set_len(a, 0),
            Err(PoolError::PagePinned { page: 0 })
        ));
        assert_eq!(&pin[..3], b"abc");
        // resize refuses below the pin limit, below the pinned pages, past the arena
        assert!(matches!(
            p.resize(12),
            Err(PoolError::CapacityBelowPinLimit {
                capacity_frames: 12,
                pin_limit: 4,
                read_ahead: 8
            })
        ));
        assert!(matches!(
            p.resize(usize::MAX),
            Err(PoolError::ResizeTooLarge { .. })
        ));
        drop(pin);
        p.write(a, 0, &[1; 16 * 4096]).unwrap();
        let pins: Vec<_> = (0..13).map(|page| p.pin(a, page).unwrap()).collect();
        assert!(matches!(
            p.resize(13),
            Err(PoolError::ResizeBelowPinned {
                requested: 13,
                pinned: 13
            })
        ));
        assert_eq!(p.capacity_frames(), 16);
        drop(pins);
        p.close(a).unwrap();
    }
}

#[test]
fn close_with_a_live_page_mut_refuses_instead_of_waiting_for_itself() {
    let p = build(BufferPool::builder().capacity_frames(16)).unwrap();
    let f = p.create("/f").unwrap();
    p.write(f, 0, b"abc").unwrap();
    let mut g = p.pin_mut(f, 0).unwrap();
    g[0] = b'X';
    assert!(matches!(p.close(f), Err(PoolError::PagePinned { page: 0 })));
    drop(g);
    let mut buf = [0u8; 3];
    p.read(f, 0, &mut buf).unwrap();
    assert_eq!(&buf, b"Xbc");
    p.close(f).unwrap();
}

#[test]
fn huge_sparse_files_cost_nothing_to_describe() {
    let dir = tempfile::tempdir().unwrap();
    for lk in [Lookup::Mapped, Lookup::Hashed] {
        // a real, sparse 8 TiB file: 2^31 pages, past the mapped table's 2^28
        let p = BufferPool::builder()
            .capacity_frames(16)
            .lookup(lk)
            .build()
            .unwrap();
        let f = p.create(dir.path().join("sparse")).unwrap();
        p.set_len(f, 1 << 43).unwrap();
        p.write(f, 3 * 4096, b"x").unwrap();
        let r = p.resident(f).unwrap();
        assert_eq!(r.pages(), 1 << 31);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![3]);
        assert_eq!(r.words().len(), 1);
        assert!(!r.get(1 << 30));
        // reads far out are zeros, or OutOfRange where the mapped table ends
        let mut buf = [9u8; 4];
        match p.read(f, 1 << 42, &mut buf) {
            Ok(n) => assert_eq!((n, buf), (4, [0; 4])),
            Err(PoolError::OutOfRange { .. }) => assert_eq!(lk, Lookup::Mapped),
            Err(e) => panic!("{e}"),
        }
        p.close(f).unwrap();
    }
}

#[test]
fn an_in_memory_file_too_large_for_memory_is_an_io_error() {
    let p = build(BufferPool::builder().capacity_frames(16)).unwrap();
    let f = p.create("/f").unwrap();
    let e = p.set_len(f, 1 << 60).unwrap_err();
    assert_eq!(
        e.io_error().map(|io| io.kind()),
        Some(std::io::ErrorKind::OutOfMemory),
        "{e}"
    );
    assert_eq!(p.len(f).unwrap(), 0);
}
