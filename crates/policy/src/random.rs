//! Random: evict a uniformly chosen resident object.
//!
//! The policy without memory; a baseline that cannot be fooled by any access pattern and
//! that Dust recognises because two runs evict different pages (Burnett 2006, fig. 2.8).
//!
//! Resident frames are kept in a dense array; each frame remembers its position, so a
//! victim is drawn with one random number and removed by swapping the last entry into its
//! place: O(1), no scan.
//!
//! Protected frames: if the drawn frame may not be evicted, the search continues with the
//! next positions of the dense array (wrapping round) and takes the first evictable frame.
//! This keeps the draw to one random number per eviction and bounds the scan by the number
//! of resident frames, at the cost of a slight bias towards frames just after a pinned run.
//!
//! Parameters: `seed` — 0 (the default) derives the generator's seed from the run's root
//! seed ([`BuildContext::seed`]), so a whole experiment is reproduced from one number; any
//! other value is used as the seed itself. The generator is xoshiro256++.
//!
//! The victim list is computed by simulating the generator on a copy
//! ([`crate::victims_by_simulation`]): it is exactly what the next evictions will draw.
//!
//! Cost: O(1) per eviction (one draw, one swap), nothing on a hit. Memory: 8 bytes per
//! frame (position + dense entry).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::resident::ResidentSet;
use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::{BuildContext, NamedPolicy};
use crate::{Access, FrameId, Policy};

/// Uniform random replacement.
#[derive(Clone, Debug)]
pub struct RandomPolicy {
    residents: ResidentSet,
    rng: Xoshiro256PlusPlus,
}

/// Mixed into the root seed so that Random's stream differs from other components'.
const STREAM: u64 = 0x7261_6e64_6f6d_0001;

impl RandomPolicy {
    /// A random policy expecting about `frames` residents, drawing from `seed`.
    pub fn new(frames: usize, seed: u64) -> Self {
        RandomPolicy {
            residents: ResidentSet::new(frames),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }
}

impl Policy for RandomPolicy {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// Victims are drawn at random: hits change nothing.
    fn hit_path(&self) -> crate::HitPath {
        crate::HitPath::Ignore
    }

    fn len(&self) -> usize {
        self.residents.len()
    }

    #[inline]
    fn on_hit(&mut self, _: FrameId, _: &Access) {}

    #[inline]
    fn on_insert(&mut self, frame: FrameId, _: &Access) {
        self.residents.insert(frame);
    }

    #[inline]
    fn evict(&mut self, _: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let n = self.residents.len();
        if n == 0 {
            return None;
        }
        let start = self.rng.gen_range(0..n);
        let mut i = start;
        for _ in 0..n {
            if evictable(self.residents.at(i)) {
                return Some(self.residents.take_at(i));
            }
            i += 1;
            if i == n {
                i = 0;
            }
        }
        None
    }

    fn remove(&mut self, frame: FrameId) {
        self.residents.remove(frame);
    }

    fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
        crate::victims_by_simulation(self, n, evictable, out);
    }
}

impl NamedPolicy for RandomPolicy {
    const NAME: &'static str = "random";
    const SUMMARY: &'static str = "uniformly random victim, seeded (xoshiro256++)";
    const SEEDED: bool = true;
    const PARAMS: &'static [ParamInfo] = &[ParamInfo {
        name: "seed",
        default: "0",
        help: "generator seed; 0 derives it from the run's root seed",
    }];

    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError> {
        let seed = match params.integer("seed", 0, u64::MAX)? {
            0 => ctx.seed ^ STREAM,
            s => s,
        };
        Ok(RandomPolicy::new(
            crate::prealloc_frames(ctx.capacity),
            seed,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{evictions, hits};
    use crate::Cache;

    #[test]
    fn same_seed_same_run_other_seed_other_run() {
        let trace: Vec<u64> = (0..2000).map(|i| (i * 7919 + i / 3) % 50).collect();
        let a = evictions(RandomPolicy::new(10, 1), 10, &trace);
        let b = evictions(RandomPolicy::new(10, 1), 10, &trace);
        let c = evictions(RandomPolicy::new(10, 2), 10, &trace);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn victims_follow_the_generator() {
        // Fill 4 frames, then the victim list must equal the frames removed by evicting
        // with an identically seeded generator: draw i in 0..len, swap-remove.
        let mut cache = Cache::new(RandomPolicy::new(4, 9), 4);
        for k in 0..4 {
            cache.access(&Access::unit(k, k));
        }
        let listed = cache.victims(4);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut dense: Vec<u64> = vec![0, 1, 2, 3];
        let mut expected = Vec::new();
        while !dense.is_empty() {
            let i = rng.gen_range(0..dense.len());
            expected.push(dense.swap_remove(i));
        }
        assert_eq!(listed, expected);
    }

    #[test]
    fn pinned_frames_are_skipped_cyclically() {
        let mut p = RandomPolicy::new(3, 5);
        for f in 0..3 {
            p.on_insert(FrameId(f), &Access::unit(f as u64, 0));
        }
        // Only frame 1 may go: whatever the draw, the cyclic scan finds it.
        let got = p.evict(&Access::phantom(), &|f| f == FrameId(1));
        assert_eq!(got, Some(FrameId(1)));
        assert_eq!(p.len(), 2);
        assert_eq!(p.evict(&Access::phantom(), &|f| f == FrameId(1)), None);
    }

    #[test]
    fn about_a_uniform_hit_ratio() {
        // Independent reference model over 100 keys, cache 50: random replacement's hit
        // ratio is close to LRU's, near 0.5. Loose statistical check on a fixed seed
        // (`BUFCACHE_SEED` overrides it).
        testutil::fixed(12345, |seed| {
            let mut rng = seed.rng();
            let trace: Vec<u64> = (0..20000).map(|_| rng.gen_range(0..100)).collect();
            let h = hits(RandomPolicy::new(50, 3), 50, &trace);
            let ratio = h.iter().filter(|&&b| b).count() as f64 / h.len() as f64;
            assert!((0.45..0.55).contains(&ratio), "hit ratio {ratio}");
        });
    }
}
