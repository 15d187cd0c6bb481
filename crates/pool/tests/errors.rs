//! Bad input: every `PoolError` variant the builder and the API can produce, as a typed
//! error and never a panic.

use std::time::Duration;

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
    for (name, _) in pool::CONCURRENT_POLICIES {
        assert!(build(BufferPool::builder().policy(name)).is_ok(), "{name}");
    }
    for name in pool::QUEUED_POLICIES {
        assert!(build(BufferPool::builder().policy(name)).is_ok(), "{name}");
    }
    // every registered policy is either accepted or refused with the typed error
    for info in policy::POLICIES {
        match build(BufferPool::builder().policy(info.name)) {
            Ok(_) => {}
            Err(PoolError::PolicyNotConcurrent { .. }) => assert_eq!(info.name, "belady"),
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
        drop(pin);
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
