//! Unit tests of the frame arena and its latches (the optimistic reads have theirs in
//! `optimistic.rs`, the loom models in `loom_tests.rs`).

use super::*;
use std::sync::Arc;

#[test]
fn frames_are_page_aligned_and_zeroed() {
    for ps in [4096usize, 8192, 65536] {
        let f = Frames::new(3, ps).unwrap();
        // Slice equality is one `memcmp`, which Miri runs at native speed; a loop over
        // the bytes would be interpreted byte by byte.
        let zeros = vec![0u8; ps];
        for id in 0..3 {
            let g = f.try_share(id).unwrap();
            assert_eq!(g.bytes().as_ptr() as usize % ps, 0);
            assert_eq!(g.bytes().len(), ps);
            assert!(g.bytes() == &zeros[..]);
        }
    }
    assert!(Frames::new(0, 4096).is_none());
    assert!(Frames::new(usize::MAX / 2, 4096).is_none());
}

/// An arena of at least one huge page starts on a huge-page boundary (and is advised
/// to use huge pages, except under Miri), and is zeroed like a small one.
#[test]
fn huge_arena_is_aligned_to_huge_pages() {
    let f = Frames::new(HUGE_PAGE / 4096, 4096).unwrap();
    let first = f.try_share(0).unwrap();
    assert_eq!(first.bytes().as_ptr() as usize % HUGE_PAGE, 0);
    let last = f.try_share(f.len() as u32 - 1).unwrap();
    assert!(first.bytes() == [0u8; 4096] && last.bytes() == [0u8; 4096]);
}

#[test]
fn latch_excludes_pins_and_writes_are_seen() {
    let f = Frames::new(2, 4096).unwrap();
    {
        let mut x = f.try_exclusive(1).unwrap();
        assert!(f.try_share(1).is_none());
        assert!(f.try_exclusive(1).is_none());
        x.bytes_mut()[..3].copy_from_slice(b"abc");
        assert_eq!(&x.bytes()[..3], b"abc");
        // the other frame is independent
        assert!(f.try_share(0).is_some());
    }
    let a = f.try_share(1).unwrap();
    let b = f.try_share(1).unwrap();
    assert!(f.try_exclusive(1).is_none());
    assert!(!f.is_idle(1));
    assert_eq!(&a.bytes()[..3], b"abc");
    assert_eq!(&b.bytes()[..3], b"abc");
    drop(a);
    assert!(f.try_exclusive(1).is_none());
    drop(b);
    assert!(f.is_idle(1));
    let x = f.try_exclusive(1).unwrap();
    let s = x.downgrade();
    assert!(f.try_exclusive(1).is_none());
    assert!(f.try_share(1).is_some());
    drop(s);
    assert!(f.is_idle(1));
}

#[test]
fn user_pins_are_told_apart_from_pool_latches() {
    let f = Frames::new(1, 4096).unwrap();
    let pool_pin = f.try_share(0).unwrap();
    assert!(!f.user_pinned(0));
    let user_pin = f.try_share_as(0, true).unwrap();
    assert!(f.user_pinned(0));
    drop(user_pin);
    assert!(!f.user_pinned(0));
    let mut later = f.share(0);
    later.mark_user();
    assert!(f.user_pinned(0));
    drop(later);
    drop(pool_pin);
    assert!(f.is_idle(0));
    let mut x = f.try_exclusive(0).unwrap();
    assert!(!f.user_pinned(0));
    x.mark_user();
    assert!(f.user_pinned(0));
    assert!(f.try_share(0).is_none());
    drop(x);
    assert!(f.is_idle(0) && !f.user_pinned(0));
}

/// Writers increment a counter spread over the frame under the exclusive latch; readers
/// check under shared pins that they never see a half-written frame.
#[test]
fn threads_never_see_torn_frames() {
    let f = Arc::new(Frames::new(1, 4096).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                for _ in 0..2000 {
                    if t % 2 == 0 {
                        let mut x = f.exclusive(0);
                        let v = x.bytes()[0].wrapping_add(1);
                        x.bytes_mut().fill(v);
                    } else {
                        let s = f.share(0);
                        let b = s.bytes();
                        // every byte equals its neighbour (one memcmp: fast under Miri)
                        assert!(b[1..] == b[..b.len() - 1]);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // 2 writer threads x 2000 increments, mod 256
    assert_eq!(f.share(0).bytes()[0], (4000 % 256) as u8);
}

/// A frame's tag moves with every exclusive release (a latch, a downgrade), not with
/// shared pins, and stays put while a pin is held.
#[test]
fn the_tag_moves_with_every_exclusive_release_only() {
    let f = Frames::new(2, 4096).unwrap();
    let t0 = f.share(0).tag();
    assert_eq!(f.share(0).tag(), t0, "pins leave it");
    drop(f.exclusive(0));
    let t1 = f.share(0).tag();
    assert_ne!(t1, t0);
    let pinned = f.exclusive(0).downgrade();
    let t2 = pinned.tag();
    assert!(t2 != t1 && t2 != t0);
    assert_eq!(f.share(1).tag(), t0, "another frame's is its own");
}

/// When the 30-bit version wraps to 0 the wrap count moves, so the tag after 2^30
/// releases is not the tag before them: (version 0, wraps 0) and (version 0, wraps 1).
#[test]
fn a_version_wrap_moves_the_wrap_count() {
    let f = Frames::new(1, 4096).unwrap();
    let fresh = f.share(0).tag();
    f.set_version(0, (1 << 30) - 1);
    let last = f.share(0).tag();
    drop(f.exclusive(0));
    let wrapped = f.share(0).tag();
    assert_eq!(wrapped & VERSION_MASK, 0, "the version wrapped");
    assert_ne!(wrapped, fresh, "the wrap count tells them apart");
    assert_ne!(wrapped, last);
    assert_eq!(wrapped, tag(0, 1));
    // and through a downgrade too
    f.set_version(0, (1 << 30) - 1);
    let g = f.exclusive(0).downgrade();
    assert_eq!(g.tag(), tag(0, 2));
}
