//! Clock2Q+ against a reference model written the way libCacheSim's `Clock2QPlus.c` runs a
//! request: look the key up in the small FIFO (counting the hit only outside the
//! correlation window), else consume its ghost entry and look in the main FIFO; on a miss,
//! evict until the newcomer fits (an eviction from the small FIFO may only move blocks to
//! the main one, and the loop goes on), then insert. Queues of keys in `VecDeque`s, counts
//! unbounded as libCacheSim's are; unit sizes.

use std::collections::VecDeque;

use policy::testkit::hits;
use policy::Clock2QPlus;
use proptest::prelude::*;

struct Model {
    capacity: usize,
    small_cap: usize,
    main_cap: usize,
    ghost_cap: usize,
    threshold: u32,
    window: f64,
    /// Oldest first: (key, admissions when it entered, counted hits).
    small: VecDeque<(u64, u64, u32)>,
    /// Oldest first: (key, hits since the hand passed).
    main: VecDeque<(u64, u32)>,
    ghost: VecDeque<u64>,
    admissions: u64,
    has_evicted: bool,
}

impl Model {
    fn new(capacity: usize, threshold: u32, window_ratio: f64) -> Self {
        let small_cap = (capacity as f64 * 0.1) as usize;
        Model {
            capacity,
            small_cap,
            main_cap: capacity - small_cap,
            ghost_cap: (capacity as f64 * 0.9) as usize,
            threshold,
            window: small_cap as f64 * window_ratio,
            small: VecDeque::new(),
            main: VecDeque::new(),
            ghost: VecDeque::new(),
            admissions: 0,
            has_evicted: false,
        }
    }

    fn access(&mut self, key: u64) -> bool {
        if let Some(b) = self.small.iter_mut().find(|b| b.0 == key) {
            if (self.admissions - b.1) as f64 >= self.window {
                b.2 += 1;
            }
            return true;
        }
        let ghost_hit = match self.ghost.iter().position(|&k| k == key) {
            Some(i) => self.ghost.remove(i).is_some(),
            None => false,
        };
        if let Some(b) = self.main.iter_mut().find(|b| b.0 == key) {
            b.1 += 1;
            return true;
        }
        while self.small.len() + self.main.len() >= self.capacity {
            self.evict();
        }
        if ghost_hit || (!self.has_evicted && self.small.len() >= self.small_cap) {
            self.main.push_back((key, 0));
        } else {
            self.admissions += 1;
            self.small.push_back((key, self.admissions, 0));
        }
        false
    }

    fn evict(&mut self) {
        self.has_evicted = true;
        if self.main.len() > self.main_cap || self.small.is_empty() {
            while let Some((key, count)) = self.main.pop_front() {
                if count == 0 {
                    return;
                }
                self.main.push_back((key, 0));
            }
        } else {
            while let Some((key, _, count)) = self.small.pop_front() {
                if count >= self.threshold {
                    self.main.push_back((key, 0));
                } else {
                    self.ghost.push_back(key);
                    while self.ghost.len() > self.ghost_cap {
                        self.ghost.pop_front();
                    }
                    return;
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// From 20 objects up, where S holds at least two (libCacheSim caches nothing in S
    /// below that, `clock2qplus.rs` says why bufcache differs there).
    #[test]
    fn clock2qplus_is_libcachesims_algorithm(
        capacity in 20usize..=60,
        threshold in 1u32..=3,
        window in prop::sample::select(vec![0.0, 0.1, 0.25, 0.5, 0.75, 1.0]),
        trace in prop::collection::vec(prop_oneof![3 => 0u64..30, 1 => 0u64..300], 1..1500),
    ) {
        let policy = Clock2QPlus::new(capacity as u64, 0.1, 0.9, threshold as u8, window);
        let mut model = Model::new(capacity, threshold, window);
        let expected: Vec<bool> = trace.iter().map(|&k| model.access(k)).collect();
        prop_assert_eq!(hits(policy, capacity as u64, &trace), expected);
    }
}
