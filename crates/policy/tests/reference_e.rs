//! TinyUFO against a reference model written the way pingora's `tinyufo` is: two FIFO
//! queues of keys, a uses count per key, `put` counting the key in the sketch, evicting to
//! the limit, and the TinyLFU check putting the one victim back when it is more popular.
//! The model shares the policy's sketch ([`MissSketch`], tested on its own) so that the
//! comparison is about the queues and the contest; the sketch is sized small so that it
//! halves many times in a trace.

use std::collections::{HashMap, VecDeque};

use policy::testkit::hits;
use policy::tinyufo::MissSketch;
use policy::TinyUfo;
use proptest::prelude::*;

const USES_CAP: u8 = 3;

/// pingora's `FiFoQueues` with unit weights; keys in queues, newest at the back.
struct Model {
    capacity: usize,
    small_limit: usize,
    small: VecDeque<u64>,
    main: VecDeque<u64>,
    /// Resident keys: (uses, in main).
    resident: HashMap<u64, (u8, bool)>,
    sketch: MissSketch,
    contest: bool,
}

impl Model {
    fn new(capacity: usize, items: u64, contest: bool) -> Self {
        Model {
            capacity,
            small_limit: (capacity as f32 * 0.1).floor() as usize + 1,
            small: VecDeque::new(),
            main: VecDeque::new(),
            resident: HashMap::new(),
            sketch: MissSketch::new(items, None),
            contest,
        }
    }

    /// `get`, then `put` on a miss; true on a hit.
    fn access(&mut self, key: u64) -> bool {
        if let Some((uses, _)) = self.resident.get_mut(&key) {
            *uses = (*uses + 1).min(USES_CAP);
            return true;
        }
        let new_freq = self.sketch.increment(key);
        let mut evicted = Vec::new();
        while self.small.len() + self.main.len() + 1 > self.capacity {
            match self.evict_one() {
                Some(k) => evicted.push(k),
                None => break,
            }
        }
        let mut admitted = key;
        if self.contest && evicted.len() == 1 && self.sketch.estimate(evicted[0]) > new_freq {
            admitted = evicted[0];
        }
        self.resident.insert(admitted, (0, false));
        self.small.push_back(admitted);
        false
    }

    fn evict_one(&mut self) -> Option<u64> {
        if self.small.len() >= self.small_limit {
            while let Some(k) = self.small.pop_front() {
                let (uses, in_main) = self.resident.get_mut(&k).unwrap();
                if *uses > 1 {
                    *in_main = true;
                    self.main.push_back(k);
                } else {
                    self.resident.remove(&k);
                    return Some(k);
                }
            }
        }
        while let Some(k) = self.main.pop_front() {
            let (uses, _) = self.resident.get_mut(&k).unwrap();
            if *uses > 0 {
                *uses -= 1;
                self.main.push_back(k);
            } else {
                self.resident.remove(&k);
                return Some(k);
            }
        }
        None
    }
}

fn model_hits(capacity: usize, items: u64, contest: bool, trace: &[u64]) -> Vec<bool> {
    let mut m = Model::new(capacity, items, contest);
    trace.iter().map(|&k| m.access(k)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn tinyufo_is_pingoras_algorithm(
        capacity in 1usize..=12,
        items in 1u64..=16,
        contest in any::<bool>(),
        trace in prop::collection::vec(0u64..24, 1..400),
    ) {
        let policy = TinyUfo::with_params(capacity as u64, 0.1, items, None, contest);
        prop_assert_eq!(
            hits(policy, capacity as u64, &trace),
            model_hits(capacity, items, contest, &trace)
        );
    }
}

/// The contest matters: on a scan over a small hot set, TinyUFO with contests keeps more
/// of the hot set than without (the hot keys' repeated misses outweigh each scanned key's
/// single one), as TinyLFU's admission is meant to.
#[test]
fn contest_protects_a_hot_set_from_a_scan() {
    let mut trace = Vec::new();
    for round in 0..200u64 {
        for hot in 0..8 {
            trace.push(hot);
        }
        for s in 0..16 {
            trace.push(1_000 + round * 16 + s);
        }
    }
    let count = |contest| {
        hits(TinyUfo::with_params(10, 0.1, 10, None, contest), 10, &trace)
            .into_iter()
            .filter(|&h| h)
            .count()
    };
    let (with, without) = (count(true), count(false));
    assert!(
        with > without,
        "hits with contests {with}, without {without}"
    );
}
