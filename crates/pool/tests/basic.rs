//! Exact small cases: read-after-write across pages, one copy between `read`/`write` and
//! pins, pinned pages never evicted, read-ahead, victims and resident maps.

use std::time::Duration;

use pool::{BufferPool, Lookup, MemStorage, PoolError, WritePolicy};

const PS: usize = 4096;

/// A write-back pool whose flusher never writes (age of an hour), so tests see exactly the
/// writes they cause.
fn pool(lookup: Lookup, frames: usize, ra: usize) -> (BufferPool, MemStorage) {
    let storage = MemStorage::new();
    let p = BufferPool::builder()
        .capacity_frames(frames)
        .lookup(lookup)
        .read_ahead(ra)
        .pin_limit(2)
        .write_policy(WritePolicy::WriteBack {
            interval: Duration::from_secs(3600),
            age: Duration::from_secs(3600),
        })
        .build_with_storage(storage.clone())
        .unwrap();
    (p, storage)
}

const LOOKUPS: [Lookup; 2] = [Lookup::Mapped, Lookup::Hashed];

#[test]
fn read_after_write_across_page_boundaries() {
    for lk in LOOKUPS {
        let (p, st) = pool(lk, 8, 0);
        let f = p.create("/f").unwrap();
        assert_eq!(p.len(f).unwrap(), 0);
        let data: Vec<u8> = (0..3 * PS + 100).map(|i| (i % 253) as u8).collect();
        p.write(f, 10, &data).unwrap();
        assert_eq!(p.len(f).unwrap(), (10 + data.len()) as u64);
        let mut buf = vec![0u8; data.len()];
        assert_eq!(p.read(f, 10, &mut buf).unwrap(), data.len());
        assert_eq!(buf, data);
        // the first 10 bytes are a hole: zeros
        let mut head = [7u8; 12];
        assert_eq!(p.read(f, 0, &mut head).unwrap(), 12);
        assert_eq!(&head[..10], &[0; 10]);
        assert_eq!(&head[10..], &data[..2]);
        // short read at the end, like pread; nothing past it
        let mut tail = [0u8; 50];
        let len = p.len(f).unwrap();
        assert_eq!(p.read(f, len - 20, &mut tail).unwrap(), 20);
        assert_eq!(&tail[..20], &data[data.len() - 20..]);
        assert_eq!(p.read(f, len, &mut tail).unwrap(), 0);
        assert_eq!(p.read(f, len + 5000, &mut tail).unwrap(), 0);
        // nothing reached storage yet (write-back, flusher idle)
        assert_eq!(st.contents("/f".as_ref()).unwrap().len(), 0);
        p.fsync(f).unwrap();
        let on_disk = st.contents("/f".as_ref()).unwrap();
        assert_eq!(on_disk.len(), 10 + data.len());
        assert_eq!(&on_disk[10..], &data[..]);
        // overwrite in the middle of a page and across a boundary
        p.write(f, PS as u64 - 2, b"XYZW").unwrap();
        let mut b4 = [0u8; 6];
        p.read(f, PS as u64 - 3, &mut b4).unwrap();
        assert_eq!(
            &b4,
            &[data[PS - 13], b'X', b'Y', b'Z', b'W', data[PS + 2 - 10]]
        );
    }
}

#[test]
fn pins_and_copies_share_one_frame() {
    for lk in LOOKUPS {
        let (p, _) = pool(lk, 8, 0);
        let f = p.create("/f").unwrap();
        p.write(f, PS as u64 + 5, b"hello").unwrap();
        {
            let page = p.pin(f, 1).unwrap();
            assert_eq!(page.page(), 1);
            assert_eq!(page.len(), PS);
            assert_eq!(&page[5..10], b"hello");
            // a second pin of the same page is the same memory
            let again = p.pin(f, 1).unwrap();
            assert_eq!(again.as_ptr(), page.as_ptr());
        }
        {
            let mut page = p.pin_mut(f, 0).unwrap();
            page[100..103].copy_from_slice(b"abc");
        }
        let mut buf = [0u8; 3];
        p.read(f, 100, &mut buf).unwrap();
        assert_eq!(&buf, b"abc");
        assert_eq!(p.stats().dirty_pages, 2);
        // pin past the end is an error
        assert!(matches!(
            p.pin(f, 2),
            Err(PoolError::PastEnd { page: 2, pages: 2 })
        ));
        assert!(matches!(p.pin_mut(f, 9), Err(PoolError::PastEnd { .. })));
        // bytes written through pin_mut beyond the file's end are not part of it
        p.set_len(f, PS as u64 + 7).unwrap();
        {
            let mut page = p.pin_mut(f, 1).unwrap();
            page[4000] = 9;
        }
        p.set_len(f, 2 * PS as u64).unwrap();
        let mut one = [1u8];
        p.read(f, PS as u64 + 4000, &mut one).unwrap();
        assert_eq!(one[0], 0);
        let mut keep = [0u8; 2];
        p.read(f, PS as u64 + 5, &mut keep).unwrap();
        assert_eq!(&keep, b"he");
    }
}

#[test]
fn pinned_page_is_never_evicted() {
    for lk in LOOKUPS {
        let (p, _) = pool(lk, 4, 0);
        let f = p.create("/f").unwrap();
        p.write(f, 0, &vec![1u8; 20 * PS]).unwrap();
        p.fsync(f).unwrap();
        let pinned = p.pin(f, 3).unwrap();
        let addr = pinned.as_ptr();
        // cycle through every page many times: heavy eviction around the pin
        let mut buf = [0u8; 1];
        for round in 0..5 {
            for page in 0..20u64 {
                p.read(f, page * PS as u64, &mut buf).unwrap();
                assert!(p.resident(f).unwrap().get(3), "round {round} page {page}");
                assert!(!p.victims(4).contains(&(f, 3)));
            }
        }
        assert_eq!(pinned[0], 1);
        assert_eq!(p.pin(f, 3).unwrap().as_ptr(), addr);
        assert!(p.stats().evictions >= 5 * 19 - 4);
        drop(pinned);
    }
}

#[test]
fn all_pinned_is_an_error_not_a_hang() {
    let (p, _) = pool(Lookup::Mapped, 3, 0);
    let f = p.create("/f").unwrap();
    p.write(f, 0, &vec![1u8; 4 * PS]).unwrap();
    p.fsync(f).unwrap();
    let a = p.pin(f, 0).unwrap();
    let b = p.pin(f, 1).unwrap();
    let c = p.pin(f, 2).unwrap();
    assert!(matches!(
        p.pin(f, 3),
        Err(PoolError::AllPinned { frames: 3 })
    ));
    drop((a, b, c));
    assert_eq!(p.pin(f, 3).unwrap()[0], 1);
}

#[test]
fn dirty_pages_are_written_not_lost_under_pressure() {
    // a pool of 4 frames written 10 pages without fsync: eviction must write the dirty
    // pages itself (the flusher never runs here) and read them back later
    for lk in LOOKUPS {
        let (p, st) = pool(lk, 4, 0);
        let f = p.create("/f").unwrap();
        for page in 0..10u64 {
            p.write(f, page * PS as u64, &vec![page as u8 + 1; PS])
                .unwrap();
        }
        let s = p.stats();
        assert!(s.foreground_writes >= 6, "{s:?}");
        for page in 0..10u64 {
            let mut b = [0u8; 2];
            p.read(f, page * PS as u64 + 7, &mut b).unwrap();
            assert_eq!(b, [page as u8 + 1; 2]);
        }
        p.close(f).unwrap();
        let disk = st.contents("/f".as_ref()).unwrap();
        assert_eq!(disk.len(), 10 * PS);
        for page in 0..10 {
            assert!(disk[page * PS..(page + 1) * PS]
                .iter()
                .all(|&b| b == page as u8 + 1));
        }
    }
}

#[test]
fn sequential_reads_trigger_read_ahead_random_reads_do_not() {
    for lk in LOOKUPS {
        let storage = MemStorage::new();
        {
            let p = BufferPool::builder()
                .capacity_frames(64)
                .lookup(lk)
                .build_with_storage(storage.clone())
                .unwrap();
            let f = p.create("/f").unwrap();
            p.write(f, 0, &vec![3u8; 40 * PS]).unwrap();
            p.close(f).unwrap();
        }
        let p = BufferPool::builder()
            .capacity_frames(64)
            .lookup(lk)
            .read_ahead(8)
            .build_with_storage(storage.clone())
            .unwrap();
        let f = p.open("/f").unwrap();
        let mut buf = vec![0u8; PS];
        for page in 0..40u64 {
            p.read(f, page * PS as u64, &mut buf).unwrap();
            assert!(buf.iter().all(|&b| b == 3));
        }
        let s = p.stats();
        // page 0 misses and reads 1..=8 ahead in the same call; hitting page 1 (the mark)
        // reads 9..=16, page 9 reads 17..=24, then 25..=32 and 33..=39: 1 demand miss, 39
        // pages read ahead, 5 read calls
        assert_eq!(s.misses, 1, "{s:?}");
        assert_eq!(s.pages_read, 40);
        assert_eq!(s.read_ahead_pages, 39);
        assert_eq!(s.read_calls, 5);
        assert_eq!(s.hits, 39);
        // random (non-sequential) misses read one page each
        let g = p.open("/f").unwrap();
        let before = p.stats().pages_read;
        p.close(f).unwrap();
        for page in [30u64, 3, 17, 25] {
            p.read(g, page * PS as u64, &mut buf).unwrap();
        }
        assert_eq!(p.stats().pages_read - before, 4);
    }
}

#[test]
fn victims_and_resident_follow_the_clock() {
    let (p, _) = pool(Lookup::Mapped, 4, 0);
    let f = p.create("/f").unwrap();
    p.write(f, 0, &vec![0u8; 6 * PS]).unwrap();
    p.fsync(f).unwrap();
    // resident now: after writing pages 0..6 through 4 frames, pages 2..6 stay
    let r = p.resident(f).unwrap();
    assert_eq!(r.pages(), 6);
    assert_eq!(r.iter().collect::<Vec<_>>(), vec![2, 3, 4, 5]);
    // clock: none referenced since insertion (write misses do not count as hits), so the
    // victims come in insertion order; a hit on 2 gives it a second chance
    assert_eq!(p.victims(4), vec![(f, 2), (f, 3), (f, 4), (f, 5)]);
    let mut b = [0u8];
    p.read(f, 2 * PS as u64, &mut b).unwrap();
    assert_eq!(p.victims(4), vec![(f, 3), (f, 4), (f, 5), (f, 2)]);
    // victims() changes nothing
    assert_eq!(p.victims(2), vec![(f, 3), (f, 4)]);
    let _pin = p.pin(f, 3).unwrap();
    assert_eq!(p.victims(2), vec![(f, 4), (f, 5)]);
    // asking for more than there are lists every evictable page once
    assert_eq!(p.victims(usize::MAX), vec![(f, 4), (f, 5), (f, 2)]);
}

#[test]
fn close_flushes_and_invalidates_the_handle() {
    let (p, st) = pool(Lookup::Hashed, 8, 0);
    let f = p.create("/f").unwrap();
    p.write(f, 0, b"data").unwrap();
    p.close(f).unwrap();
    assert_eq!(st.contents("/f".as_ref()).unwrap(), b"data");
    assert!(matches!(p.len(f), Err(PoolError::Closed(h)) if h == f));
    assert!(matches!(
        p.read(f, 0, &mut [0u8; 1]),
        Err(PoolError::Closed(_))
    ));
    assert!(matches!(p.close(f), Err(PoolError::Closed(_))));
    // the slot is reused by the next open, and the old handle stays dead
    let g = p.open("/f").unwrap();
    assert_ne!(f, g);
    assert!(matches!(p.write(f, 0, b"x"), Err(PoolError::Closed(_))));
    let mut buf = [0u8; 4];
    assert_eq!(p.read(g, 0, &mut buf).unwrap(), 4);
    assert_eq!(&buf, b"data");
    assert_eq!(p.stats().free_frames, 7);
}

#[test]
fn drop_flushes_dirty_pages() {
    let st = MemStorage::new();
    {
        let (p, s2) = pool(Lookup::Mapped, 8, 0);
        drop(s2);
        drop(p);
    }
    let p = BufferPool::builder()
        .capacity_frames(16)
        .write_policy(WritePolicy::WriteBack {
            interval: Duration::from_secs(3600),
            age: Duration::from_secs(3600),
        })
        .build_with_storage(st.clone())
        .unwrap();
    let f = p.create("/f").unwrap();
    p.write(f, 3, b"kept").unwrap();
    drop(p);
    assert_eq!(st.contents("/f".as_ref()).unwrap(), b"\0\0\0kept");
}

#[test]
fn flusher_writes_aged_pages() {
    let st = MemStorage::new();
    let p = BufferPool::builder()
        .capacity_frames(16)
        .write_policy(WritePolicy::WriteBack {
            interval: Duration::from_millis(10),
            age: Duration::from_millis(20),
        })
        .build_with_storage(st.clone())
        .unwrap();
    let f = p.create("/f").unwrap();
    p.write(f, 0, b"aged").unwrap();
    let start = std::time::Instant::now();
    while p.stats().dirty_pages > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "flusher never ran"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(st.contents("/f".as_ref()).unwrap(), b"aged");
    let s = p.stats();
    assert_eq!(s.flusher_writes, 1);
    assert!(s.flusher_runs >= 1);
}

#[test]
fn write_through_reaches_storage_before_returning() {
    let st = MemStorage::new();
    let p = BufferPool::builder()
        .capacity_frames(16)
        .write_policy(WritePolicy::WriteThrough)
        .build_with_storage(st.clone())
        .unwrap();
    let f = p.create("/f").unwrap();
    p.write(f, 4094, b"across").unwrap();
    assert_eq!(&st.contents("/f".as_ref()).unwrap()[4094..], b"across");
    {
        let mut page = p.pin_mut(f, 0).unwrap();
        page[0] = b'!';
    }
    assert_eq!(st.contents("/f".as_ref()).unwrap()[0], b'!');
    assert_eq!(p.stats().dirty_pages, 0);
}

#[test]
fn set_len_truncates_and_extends_with_zeros() {
    for lk in LOOKUPS {
        let (p, st) = pool(lk, 8, 0);
        let f = p.create("/f").unwrap();
        p.write(f, 0, &vec![5u8; 3 * PS]).unwrap();
        p.set_len(f, PS as u64 + 10).unwrap();
        assert_eq!(p.len(f).unwrap(), PS as u64 + 10);
        assert_eq!(
            p.resident(f).unwrap().iter().collect::<Vec<_>>(),
            vec![0, 1]
        );
        p.set_len(f, 3 * PS as u64).unwrap();
        let mut buf = vec![9u8; 3 * PS];
        assert_eq!(p.read(f, 0, &mut buf).unwrap(), 3 * PS);
        assert!(buf[..PS + 10].iter().all(|&b| b == 5));
        assert!(buf[PS + 10..].iter().all(|&b| b == 0));
        let pin = p.pin(f, 2).unwrap();
        assert!(matches!(
            p.set_len(f, PS as u64),
            Err(PoolError::PagePinned { page: 2 })
        ));
        drop(pin);
        p.fsync(f).unwrap();
        let disk = st.contents("/f".as_ref()).unwrap();
        assert_eq!(disk.len(), 3 * PS);
        assert_eq!(disk, buf);
    }
}

#[test]
fn lru_hits_are_queued_and_applied_in_order() {
    let storage = MemStorage::new();
    let p = BufferPool::builder()
        .capacity_frames(4)
        .policy("lru")
        .read_ahead(0)
        .pin_limit(2)
        .write_policy(WritePolicy::WriteBack {
            interval: Duration::from_secs(3600),
            age: Duration::from_secs(3600),
        })
        .build_with_storage(storage)
        .unwrap();
    let f = p.create("/f").unwrap();
    p.write(f, 0, &vec![0u8; 4 * PS]).unwrap();
    p.fsync(f).unwrap();
    assert_eq!(p.victims(4), vec![(f, 0), (f, 1), (f, 2), (f, 3)]);
    // hits on 2, then 0: LRU order becomes 1, 3, 2, 0
    let mut b = [0u8];
    p.read(f, 2 * PS as u64, &mut b).unwrap();
    p.read(f, 0, &mut b).unwrap();
    assert_eq!(p.victims(4), vec![(f, 1), (f, 3), (f, 2), (f, 0)]);
    // a miss evicts exactly the least recently used page
    p.write(f, 4 * PS as u64, &[1u8]).unwrap();
    assert_eq!(
        p.resident(f).unwrap().iter().collect::<Vec<_>>(),
        vec![0, 2, 3, 4]
    );
}

#[test]
fn flusher_keeps_a_reserve_of_clean_free_frames() {
    // 1024 frames: the low-water mark is 1024 / 64 = 16 free frames; a miss that leaves
    // fewer wakes the flusher, which refills to twice that in batches of 1024 / 32 = 32
    let (p, _) = pool(Lookup::Mapped, 1024, 0);
    let f = p.create("/f").unwrap();
    p.write(f, 0, &vec![1u8; 3000 * PS]).unwrap();
    p.fsync(f).unwrap();
    let mut b = [0u8];
    for page in 0..3000u64 {
        p.read(f, page * PS as u64, &mut b).unwrap();
    }
    wait_for_free_frames(&p, 16);
    let s = p.stats();
    assert!(s.flusher_runs >= 1, "{s:?}");
    assert_eq!(s.capacity_frames, 1024);
}

#[test]
fn flusher_writes_dirty_victims_so_writers_do_not() {
    // Dirty every frame without ever needing an eviction: the free list runs below the
    // low-water mark (16), and the only way back to 32 free frames is the flusher writing
    // the policy's next victims itself (the age is an hour, so ageing writes nothing).
    let (p, st) = pool(Lookup::Mapped, 1024, 0);
    let f = p.create("/f").unwrap();
    for page in 0..1024u64 {
        p.write(f, page * PS as u64, &[7u8; PS]).unwrap();
    }
    wait_for_free_frames(&p, 32);
    let s = p.stats();
    assert_eq!(s.foreground_writes, 0, "{s:?}");
    assert!(s.flusher_writes >= 32, "{s:?}");
    assert_eq!(s.pages_written, s.flusher_writes, "{s:?}");
    // the victims' bytes are on storage (clock's first victims: the first pages written)
    let on_disk = st.contents("/f".as_ref()).unwrap();
    assert!(on_disk.len() >= 32 * PS, "{}", on_disk.len());
    assert!(on_disk.iter().all(|&x| x == 7));
}

/// Wait (up to 10 s) until the flusher has refilled the free list to `n` frames.
fn wait_for_free_frames(p: &BufferPool, n: u64) {
    let start = std::time::Instant::now();
    while p.stats().free_frames < n {
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", p.stats());
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn without_a_free_reserve_only_misses_free_frames() {
    // reserve 0: the flusher is never woken for frames, so which pages stay resident is
    // decided by the accesses alone (the flusher's timer is an hour away)
    let p = BufferPool::builder()
        .capacity_frames(1024)
        .read_ahead(0)
        .free_reserve(0)
        .write_policy(WritePolicy::WriteBack {
            interval: Duration::from_secs(3600),
            age: Duration::from_secs(3600),
        })
        .build_with_storage(MemStorage::new())
        .unwrap();
    let f = p.create("/f").unwrap();
    p.write(f, 0, &vec![1u8; 3000 * PS]).unwrap();
    let mut b = [0u8];
    for page in 0..3000u64 {
        p.read(f, page * PS as u64, &mut b).unwrap();
    }
    std::thread::sleep(Duration::from_millis(20));
    let s = p.stats();
    assert_eq!(s.flusher_runs, 0, "{s:?}");
    assert_eq!(s.flusher_writes, 0, "{s:?}");
    // what batch eviction left over: fewer than one batch (1024 / 32)
    assert!(s.free_frames < 32, "{s:?}");
}
