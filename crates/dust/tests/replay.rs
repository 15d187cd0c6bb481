//! Simulated targets return to a saved state instead of redoing identical set-up reads
//! (`Target::save` / `Target::restore`). That must change nothing but the time: a run
//! through a wrapper that refuses to save gives exactly the same report.

use dust::{fingerprint, DustConfig, DustError, Read, SimTarget, Target};

/// A simulated target that cannot save states: every step does its own set-up.
struct NoReplay(SimTarget);

impl Target for NoReplay {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn blocks(&self) -> u64 {
        self.0.blocks()
    }
    fn read(&mut self, block: u64) -> Result<Read, DustError> {
        self.0.read(block)
    }
    fn reset(&mut self) -> Result<(), DustError> {
        self.0.reset()
    }
    fn touch_range(&mut self, blocks: std::ops::Range<u64>, repeat: u32) -> Result<(), DustError> {
        self.0.touch_range(blocks, repeat)
    }
    fn has_timing(&self) -> bool {
        self.0.has_timing()
    }
    fn has_oracle(&self) -> bool {
        self.0.has_oracle()
    }
}

#[test]
fn saved_states_change_nothing_but_the_time() {
    for spec in [
        "sim:lru:pages=600",
        "sim:lruk:pages=600",
        "sim:twoq:pages=600",
        "sim:clock:pages=600:timing=on",
        "sim:random:pages=600",
    ] {
        let cfg = DustConfig {
            iterations: 15,
            seed: 9,
            ..DustConfig::default()
        };
        let mut fast = SimTarget::parse(spec, 4).unwrap();
        let mut slow = NoReplay(SimTarget::parse(spec, 4).unwrap());
        let a = fingerprint(&mut fast, &cfg).unwrap();
        let b = fingerprint(&mut slow, &cfg).unwrap();
        assert_eq!(a.probes, b.probes, "{spec}");
        assert_eq!(a.verdict, b.verdict, "{spec}");
        assert_eq!(a.size, b.size, "{spec}");
    }
}

#[test]
fn only_unseeded_policies_save_and_a_restore_is_exact() {
    let mut t = SimTarget::parse("sim:lru:pages=100", 1).unwrap();
    t.touch_range(0..100, 1).unwrap();
    assert!(t.save(7));
    let after: Vec<bool> = (50..150)
        .map(|b| t.read(b).unwrap().resident.unwrap())
        .collect();
    assert!(!t.restore(8), "nothing saved under 8");
    assert!(t.restore(7));
    let again: Vec<bool> = (50..150)
        .map(|b| t.read(b).unwrap().resident.unwrap())
        .collect();
    assert_eq!(after, again);
    // seeded policies would not come back to the same state by the same reads
    let mut r = SimTarget::parse("sim:random:pages=100", 1).unwrap();
    assert!(!r.save(7) && !r.restore(7));
}
