//! Crash enumeration: record every write, length change and sync a scripted run sends to
//! storage, rebuild every state a crash could leave on disk, and check that every byte
//! that was fsynced (and not overwritten since) is there in each of them.
//!
//! The crash model and the enumeration of states are in `common/mod.rs` (shared with the
//! ordering proof, `crash_ordering.rs`).
//!
//! The scripted runs explore: each test draws a fresh seed unless `BUFCACHE_SEED` is set,
//! and prints it (see `docs/TESTING.md`).

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use pool::{BufferPool, IoMode, Lookup, RecordingStorage, StorageEvent, WritePolicy};
use testutil::{Rng, Seed};

const PS: usize = 4096;
const FILE_PAGES: usize = 6;

/// What the user knows at one completed fsync.
struct Promise {
    /// Log length when fsync returned: crash points at or after it must keep the promise.
    log_len: usize,
    /// File contents at that fsync.
    image: Vec<u8>,
    /// Values each byte may have taken since (later writes may or may not be on disk).
    later: Vec<BTreeSet<u8>>,
    /// The shortest length the file was cut to since (`set_len`): the file on disk may end
    /// there, and bytes past it may read as zero after it grew again.
    cut: usize,
}

impl Promise {
    fn new(log_len: usize, image: &[u8]) -> Self {
        Promise {
            log_len,
            image: image.to_vec(),
            later: vec![BTreeSet::new(); image.len()],
            cut: image.len(),
        }
    }

    /// Bytes `range` took `value` after the promise.
    fn written(&mut self, range: std::ops::Range<usize>, value: u8) {
        for i in range.start..range.end.min(self.image.len()) {
            self.later[i].insert(value);
        }
    }

    /// The file was cut to `len` after the promise.
    fn truncated(&mut self, len: usize) {
        self.cut = self.cut.min(len);
        self.written(len..self.image.len(), 0);
    }
}

fn check_all_crash_states(log: &[StorageEvent], promises: &[Promise]) -> usize {
    let path = Path::new("/f");
    let mine = |e: &StorageEvent| common::path_of(e) == path;
    common::for_each_crash_state(log, mine, |c, order, _| {
        let mut img = Vec::new();
        for &i in order {
            common::apply(&mut img, &log[i]);
        }
        let Some(p) = promises.iter().rev().find(|p| p.log_len <= c) else {
            return;
        };
        assert!(
            img.len() >= p.image.len().min(p.cut),
            "crash point {c}: file shorter ({}) than fsynced ({}, cut to {} since)",
            img.len(),
            p.image.len(),
            p.cut
        );
        for (i, &want) in p.image.iter().enumerate().take(img.len()) {
            let got = img[i];
            assert!(
                got == want || p.later[i].contains(&got),
                "crash point {c}, events {order:?}: byte {i} is {got}, fsynced {want}, \
                 written since {:?}",
                p.later[i]
            );
        }
    })
}

/// Operations of a scripted run beyond writes and fsyncs.
#[derive(Clone, Copy)]
struct Script {
    /// `set_len`, `close` and reopen, and `pin_mut` mixed in.
    lifecycle: bool,
    io: IoMode,
}

const WRITES_ONLY: Script = Script {
    lifecycle: false,
    io: IoMode::Buffered,
};

fn scripted_run(
    seed: Seed,
    lookup: Lookup,
    frames: usize,
    wp: WritePolicy,
    script: Script,
) -> usize {
    let st = RecordingStorage::new();
    let pool = BufferPool::builder()
        .capacity_frames(frames)
        .pin_limit(1)
        .read_ahead(0)
        .lookup(lookup)
        .write_policy(wp)
        .io_mode(script.io)
        .build_with_storage(st.clone())
        .unwrap();
    let path = Path::new("/f");
    let mut f = pool.create(path).unwrap();
    let mut rng = seed.rng();
    let mut model: Vec<u8> = Vec::new();
    let mut promises: Vec<Promise> = Vec::new();
    for step in 0..40u32 {
        let value = (step % 250) as u8 + 1;
        let roll = rng.gen_range(0..100);
        if roll < 20 {
            pool.fsync(f).unwrap();
            promises.push(Promise::new(st.log_len(), &model));
        } else if script.lifecycle && roll < 30 {
            let len = rng.gen_range(0..FILE_PAGES * PS);
            pool.set_len(f, len as u64).unwrap();
            model.resize(len, 0);
            for p in promises.iter_mut() {
                p.truncated(len);
            }
        } else if script.lifecycle && roll < 36 {
            // close writes every dirty page (without a sync); the file must read back whole
            pool.close(f).unwrap();
            f = pool.open(path).unwrap();
            assert_eq!(pool.len(f).unwrap(), model.len() as u64, "step {step}");
        } else if script.lifecycle && roll < 45 && !model.is_empty() {
            let pos = rng.gen_range(0..model.len());
            let mut g = pool.pin_mut(f, (pos / PS) as u64).unwrap();
            g[pos % PS] = value;
            drop(g);
            model[pos] = value;
            for p in promises.iter_mut() {
                p.written(pos..pos + 1, value);
            }
        } else {
            let off = rng.gen_range(0..FILE_PAGES * PS - 1);
            let len = rng.gen_range(1..=(3 * PS / 2).min(FILE_PAGES * PS - off));
            pool.write(f, off as u64, &vec![value; len]).unwrap();
            if model.len() < off + len {
                model.resize(off + len, 0);
            }
            model[off..off + len].fill(value);
            for p in promises.iter_mut() {
                p.written(off..off + len, value);
            }
        }
    }
    pool.fsync(f).unwrap();
    promises.push(Promise::new(st.log_len(), &model));
    // the pool agrees with the model, and so does the final durable state
    let mut back = vec![0u8; model.len()];
    assert_eq!(pool.read(f, 0, &mut back).unwrap(), model.len());
    assert_eq!(back, model);
    assert_eq!(st.contents(path).unwrap(), model);
    check_all_crash_states(&st.log(), &promises)
}

fn quiet() -> WritePolicy {
    WritePolicy::WriteBack {
        interval: Duration::from_secs(3600),
        age: Duration::from_secs(3600),
    }
}

/// The same property with a flusher writing concurrently with the script (its writes land
/// anywhere in the log, so each run's log differs) and with write-through.
#[test]
fn fsynced_bytes_survive_with_a_busy_flusher_and_with_write_through() {
    let eager = WritePolicy::WriteBack {
        interval: Duration::from_micros(200),
        age: Duration::ZERO,
    };
    testutil::explore(|root| {
        for seed in (0..4).map(|i| root.derive(i)) {
            scripted_run(seed, Lookup::Mapped, 16, eager, WRITES_ONLY);
            scripted_run(seed, Lookup::Hashed, 3, eager, WRITES_ONLY);
            scripted_run(
                seed,
                Lookup::Mapped,
                4,
                WritePolicy::WriteThrough,
                WRITES_ONLY,
            );
        }
    });
}

#[test]
fn tail_orders_are_bounded_and_complete_when_small() {
    use common::tail_orders;
    assert_eq!(tail_orders(0), vec![Vec::<usize>::new()]);
    assert_eq!(tail_orders(2).len(), 1 + 2 + 2);
    assert_eq!(tail_orders(4).len(), 65);
    assert_eq!(tail_orders(6).len(), 7 + 1 + 6);
}

#[test]
fn every_fsynced_byte_survives_every_crash_state() {
    testutil::explore(|root| {
        let mut states = 0;
        for seed in (0..8).map(|i| root.derive(i)) {
            for lookup in [Lookup::Mapped, Lookup::Hashed] {
                // a tight pool (eviction writes dirty pages in policy order) and a roomy one
                states += scripted_run(seed, lookup, 3, quiet(), WRITES_ONLY);
                states += scripted_run(seed, lookup, 16, quiet(), WRITES_ONLY);
            }
        }
        eprintln!("checked {states} crash states");
        assert!(states > 5_000, "only {states} crash states checked");
    });
}

/// The same with `set_len`, `close` and reopen, and `pin_mut` in the script, buffered and
/// `O_DIRECT` (whole-page writes, trims), with a quiet and a busy flusher and write-through.
#[test]
fn fsynced_bytes_survive_truncation_close_pin_mut_and_direct_io() {
    let eager = WritePolicy::WriteBack {
        interval: Duration::from_micros(200),
        age: Duration::ZERO,
    };
    testutil::explore(|root| {
        let mut states = 0;
        for seed in (0..6).map(|i| root.derive(i)) {
            for io in [IoMode::Buffered, IoMode::Direct] {
                let script = Script {
                    lifecycle: true,
                    io,
                };
                states += scripted_run(seed, Lookup::Mapped, 3, quiet(), script);
                states += scripted_run(seed, Lookup::Hashed, 16, quiet(), script);
                states += scripted_run(seed, Lookup::Mapped, 16, eager, script);
                states += scripted_run(seed, Lookup::Hashed, 4, WritePolicy::WriteThrough, script);
            }
        }
        eprintln!("checked {states} crash states");
        assert!(states > 5_000, "only {states} crash states checked");
    });
}

/// The checker itself must catch a storage that loses an fsynced write: drop one write
/// that precedes a sync from the log and expect a complaint.
#[test]
fn checker_catches_a_lost_fsynced_write() {
    let st = RecordingStorage::new();
    let pool = BufferPool::builder()
        .capacity_frames(8)
        .pin_limit(1)
        .read_ahead(0)
        .build_with_storage(st.clone())
        .unwrap();
    let f = pool.create("/f").unwrap();
    pool.write(f, 0, &[7u8; 100]).unwrap();
    pool.fsync(f).unwrap();
    // one event shorter: the write removed below
    let promise = Promise::new(st.log_len() - 1, &[7u8; 100]);
    let mut log = st.log();
    let w = log
        .iter()
        .position(|e| matches!(e, StorageEvent::Write { .. }))
        .unwrap();
    log.remove(w);
    let caught = std::panic::catch_unwind(|| {
        check_all_crash_states(&log, std::slice::from_ref(&promise));
    });
    assert!(caught.is_err());
    drop(pool);
}
