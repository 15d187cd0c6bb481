//! The random draws of the learning policies (LeCaR, Cacheus): a seeded xoshiro256++, or
//! the generator libCacheSim uses, so that its runs can be reproduced draw for draw.
//!
//! libCacheSim's `next_rand` is Knuth's MMIX linear congruential generator
//! (`x = 6364136223846793005 x + 1442695040888963407 mod 2^64`, the new state being the
//! draw) in a thread-local state that starts at 0 in every thread.

use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Where a learning policy's random numbers come from.
#[derive(Clone, Debug)]
pub(crate) enum Draws {
    /// xoshiro256++ from a seed.
    Seeded(Xoshiro256PlusPlus),
    /// libCacheSim's `next_rand`: Knuth's MMIX LCG, the state after the step is the draw.
    Mmix(u64),
}

impl Draws {
    /// libCacheSim's generator from state 0.
    pub(crate) fn libcachesim() -> Self {
        Draws::Mmix(0)
    }

    /// A seeded xoshiro256++.
    pub(crate) fn seeded(seed: u64) -> Self {
        Draws::Seeded(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// The next 64-bit draw.
    #[inline]
    pub(crate) fn next(&mut self) -> u64 {
        match self {
            Draws::Seeded(rng) => rng.next_u64(),
            Draws::Mmix(state) => {
                *state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                *state
            }
        }
    }

    /// A number in `{0, 0.01, .., 0.99}`, as libCacheSim draws its expert choice.
    #[inline]
    pub(crate) fn percent(&mut self) -> f64 {
        (self.next() % 100) as f64 / 100.0
    }
}
