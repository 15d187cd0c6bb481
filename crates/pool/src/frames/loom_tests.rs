//! The latch protocol under loom (`RUSTFLAGS="--cfg loom" cargo test -p bufcache-pool
//! --release --lib loom`; `.ci/run` does it): every interleaving of the state word's
//! atomics, under the C++ memory model's permitted reorderings, for small thread counts.
//! A shadow `UnsafeCell` stands for the frame's bytes: loom reports any access to it not
//! ordered by happens-before (a missing Acquire/Release), and shadow holder counts assert
//! that readers and a writer never overlap. The counts use relaxed read-modify-writes
//! only (exact, but creating no happens-before of their own, so they cannot hide a
//! missing ordering in the latch: with SeqCst counts, a Relaxed latch release between
//! two writers went unnoticed).

use super::*;
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;

struct Shadow {
    bytes: UnsafeCell<u64>,
    readers: AtomicUsize,
    writers: AtomicUsize,
}

impl Shadow {
    fn new() -> Self {
        Shadow {
            bytes: UnsafeCell::new(0),
            readers: AtomicUsize::new(0),
            writers: AtomicUsize::new(0),
        }
    }

    /// Increment the shadow bytes under `_g`; returns the value written.
    fn write(&self, _g: &Exclusive<'_>) -> u64 {
        assert_eq!(self.writers.fetch_add(1, Ordering::Relaxed), 0);
        assert_eq!(self.readers.fetch_add(0, Ordering::Relaxed), 0);
        // SAFETY (test): loom checks that this access is ordered with every other.
        let v = self.bytes.with_mut(|b| unsafe {
            *b += 1;
            *b
        });
        self.writers.fetch_sub(1, Ordering::Relaxed);
        v
    }

    fn read(&self, _g: &Shared<'_>) -> u64 {
        self.readers.fetch_add(1, Ordering::Relaxed);
        assert_eq!(self.writers.fetch_add(0, Ordering::Relaxed), 0);
        // SAFETY (test): as in `write`.
        let v = self.bytes.with(|b| unsafe { *b });
        self.readers.fetch_sub(1, Ordering::Relaxed);
        v
    }
}

/// loom's exhaustive search with a bound on preemptions (3): waiting loops make the
/// unbounded search space explode, and bugs of a latch protocol show up within a few
/// preemptions.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

/// A one-frame arena and its shadow, and a thread already running `body` on them.
fn with_thread(
    body: impl FnOnce(&Frames, &Shadow) + Send + 'static,
) -> (Arc<Frames>, Arc<Shadow>, loom::thread::JoinHandle<()>) {
    let f = Arc::new(Frames::new(1, 4096).unwrap());
    let shadow = Arc::new(Shadow::new());
    let (f2, shadow2) = (Arc::clone(&f), Arc::clone(&shadow));
    let t = loom::thread::spawn(move || body(&f2, &shadow2));
    (f, shadow, t)
}

fn write_once(f: &Frames, shadow: &Shadow) {
    shadow.write(&f.exclusive(0));
}

#[test]
fn loom_writers_exclude_each_other() {
    model(|| {
        let (f, shadow, t) = with_thread(write_once);
        write_once(&f, &shadow);
        t.join().unwrap();
        // both writes are seen (no lost update), and the latch is free again
        assert_eq!(shadow.read(&f.share(0)), 2);
        assert!(f.is_idle(0));
    });
}

#[test]
fn loom_readers_and_a_writer_never_overlap() {
    model(|| {
        let (f, shadow, t) = with_thread(write_once);
        // a reader sees the frame before or after the write, never during it
        let seen = shadow.read(&f.share(0));
        assert!(seen <= 1);
        t.join().unwrap();
        assert_eq!(shadow.read(&f.share(0)), 1);
    });
}

#[test]
fn loom_downgrade_lets_no_writer_in_between() {
    model(|| {
        let (f, shadow, loader) = with_thread(|f, shadow| {
            let x = f.exclusive(0);
            let mine = shadow.write(&x);
            // a load publishes its page by downgrading: the reader that follows sees
            // exactly its own write, never a later writer's
            let s = x.downgrade();
            assert_eq!(shadow.read(&s), mine);
        });
        if let Some(x) = f.try_exclusive(0) {
            shadow.write(&x);
        }
        loader.join().unwrap();
    });
}

#[test]
fn loom_try_latches_fail_rather_than_overlap() {
    model(|| {
        let (f, shadow, t) = with_thread(|f, shadow| {
            if let Some(s) = f.try_share_as(0, true) {
                assert!(f.user_pinned(0));
                shadow.read(&s);
            }
        });
        if let Some(x) = f.try_exclusive(0) {
            shadow.write(&x);
        }
        t.join().unwrap();
        assert!(f.is_idle(0) && !f.user_pinned(0));
    });
}

/// A page's contents for the optimistic models: two words a writer always sets equal,
/// as loom atomics (the seqlock's data; `optimistic.rs` says why the real bytes are read
/// with atomic loads), so that loom explores every value a racing read may return.
struct Words {
    a: loom::sync::atomic::AtomicU64,
    b: loom::sync::atomic::AtomicU64,
}

impl Words {
    fn set(&self, _g: &Exclusive<'_>, v: u64) {
        self.a.store(v, Ordering::Relaxed);
        self.b.store(v, Ordering::Relaxed);
    }
}

/// A one-frame arena holding page "owner 1" with both words 10.
fn owned_frame() -> (Arc<Frames>, Arc<Words>) {
    let f = Arc::new(Frames::new(1, 4096).unwrap());
    f.header(0).owner.store(1, Ordering::Relaxed);
    let words = Words {
        a: loom::sync::atomic::AtomicU64::new(10),
        b: loom::sync::atomic::AtomicU64::new(10),
    };
    (f, Arc::new(words))
}

/// An optimistic reader racing a writer (page 1 becomes 11, 11) and then an eviction
/// (the frame becomes page 2 holding 20, 20): a validated read that found page 1 never
/// holds a torn pair or page 2's contents.
#[test]
fn loom_an_optimistic_read_never_validates_a_changed_page() {
    model(|| {
        let (f, words) = owned_frame();
        let (f2, words2) = (Arc::clone(&f), Arc::clone(&words));
        let other = loom::thread::spawn(move || {
            let x = f2.exclusive(0);
            words2.set(&x, 11);
            drop(x);
            let x = f2.exclusive(0);
            f2.header(0).owner.store(2, Ordering::Relaxed);
            words2.set(&x, 20);
        });
        for _ in 0..2 {
            let Some(snap) = f.snapshot(0) else {
                loom::thread::yield_now();
                continue;
            };
            let owner = f.header(0).owner.load(Ordering::Relaxed);
            let a = words.a.load(Ordering::Relaxed);
            let b = words.b.load(Ordering::Relaxed);
            if snap.still_valid() {
                assert!(owner == 1 || owner == 2);
                let expected: &[u64] = if owner == 1 { &[10, 11] } else { &[20] };
                assert!(a == b && expected.contains(&a), "owner {owner}: {a}, {b}");
            }
        }
        other.join().unwrap();
    });
}

/// A user pin checked and taken in one compare-and-swap (`try_share_if`) racing an
/// eviction that gives the frame to page 2: the pin, if taken, is always on page 1 for its
/// whole life (the evictor cannot latch a pinned frame, and a frame evicted before the
/// swap makes the swap fail), and the reader never overlaps the evictor's writes.
#[test]
fn loom_a_checked_pin_never_holds_a_reused_frame() {
    model(|| {
        let (f, shadow, evictor) = with_thread(|f, shadow| {
            if let Some(x) = f.try_exclusive(0) {
                f.header(0).owner.store(2, Ordering::Relaxed);
                shadow.write(&x);
            }
        });
        f.header(0).owner.store(1, Ordering::Relaxed);
        let is_page_1 = || f.header(0).owner.load(Ordering::Relaxed) == 1;
        if let Some(pin) = f.try_share_if(0, true, is_page_1) {
            assert!(f.user_pinned(0));
            shadow.read(&pin);
            assert_eq!(pin.header().owner.load(Ordering::Relaxed), 1);
        }
        evictor.join().unwrap();
        assert!(f.is_idle(0) && !f.user_pinned(0));
    });
}

/// A page hint's two uses racing an eviction that gives the frame to page 2 (and writes
/// it): the tag was taken under a pin of page 1, and a read (snapshot, tag compared,
/// validated) or a pin (tag compared against the word it swaps from) that trusts it never
/// sees page 2's owner or words: the evictor's release moved the tag.
#[test]
fn loom_a_hint_never_validates_a_reused_frame() {
    model(|| {
        let (f, words) = owned_frame();
        let tag = f.share(0).tag();
        let (f2, words2) = (Arc::clone(&f), Arc::clone(&words));
        let evictor = loom::thread::spawn(move || {
            if let Some(x) = f2.try_exclusive(0) {
                f2.header(0).owner.store(2, Ordering::Relaxed);
                words2.set(&x, 20);
            }
        });
        let hw = f.hit_words(0);
        if let Some(snap) = f.snapshot_words(&hw) {
            if hw.tag(snap.seen()) == tag {
                let owner = f.header(0).owner.load(Ordering::Relaxed);
                let a = words.a.load(Ordering::Relaxed);
                if snap.still_valid() {
                    assert_eq!((owner, a), (1, 10));
                }
            }
        }
        if let Some(pin) = f.try_share_words(&hw, 0, true, |cur| hw.tag(cur) == tag) {
            assert_eq!(pin.header().owner.load(Ordering::Relaxed), 1);
            assert_eq!(words.a.load(Ordering::Relaxed), 10);
        }
        evictor.join().unwrap();
        assert!(f.is_idle(0) && !f.user_pinned(0));
    });
}
