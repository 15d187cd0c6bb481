//! Seeds for the workspace's randomized tests, and the one generator they draw from.
//!
//! This crate is a dev-dependency only. A randomized test takes its seed from here instead
//! of a literal of its own, so that every such test can be replayed and explored the same
//! way:
//!
//! * `BUFCACHE_SEED=N` in the environment makes every seeded test use `N`. That is how a
//!   failure is replayed.
//! * Otherwise an *exploring* test ([`explore`]) draws a fresh seed on every run, so that
//!   each CI run covers new cases. Exploring tests are the ones whose checks hold for
//!   every seed (equality with a model, invariants).
//! * A *fixed* test ([`fixed`]) uses the default it names unless `BUFCACHE_SEED` is set.
//!   That is for checks that are statistical (a ratio within a band) or that measure
//!   something which must not move from run to run.
//!
//! Either way the seed is printed on stderr (libtest shows it for a failing test, or for
//! every test under `--nocapture`) with the command that replays it, and a failing test's
//! panic message ends with the same line:
//!
//! ```text
//! seed 8231417 (fresh): replay with BUFCACHE_SEED=8231417 cargo test -p bufcache-pool -- --exact stamped_overlapping_writers_both_lookups
//! ```
//!
//! The generator is xoshiro256++ ([`TestRng`]): a fixed, published algorithm, so a seed
//! gives the same stream on every machine and with every `rand` release (`SmallRng` promises
//! neither). Tests that need several independent streams (one per thread) take them from
//! [`Seed::stream`].
//!
//! ```
//! use testutil::Rng;
//! let draws = testutil::fixed(7, |seed| {
//!     let mut rng = seed.rng();
//!     (0..3).map(|_| rng.gen_range(0..10u32)).collect::<Vec<_>>()
//! });
//! assert_eq!(draws.len(), 3);
//! ```

use std::any::Any;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::panic::{self, AssertUnwindSafe};

pub use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The seeded generator every test draws from.
pub type TestRng = Xoshiro256PlusPlus;

/// The environment variable that fixes the seed of every seeded test.
pub const SEED_VAR: &str = "BUFCACHE_SEED";

/// Where a test's seed came from (printed with it, so a log says whether a run explored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Given in `BUFCACHE_SEED`.
    Env,
    /// Drawn afresh for this run (an exploring test).
    Fresh,
    /// The test's own default (a fixed test).
    Default,
}

/// A test's root seed. Everything random in the test derives from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed {
    value: u64,
    origin: Origin,
}

impl Seed {
    /// The seed itself, for code under test that takes a `u64` seed.
    pub fn value(self) -> u64 {
        self.value
    }

    /// Where it came from.
    pub fn origin(self) -> Origin {
        self.origin
    }

    /// The generator seeded with this seed.
    pub fn rng(self) -> TestRng {
        TestRng::seed_from_u64(self.value)
    }

    /// The `n`-th independent generator derived from this seed (one per thread or per
    /// case): the same `(seed, n)` always gives the same stream.
    pub fn stream(self, n: u64) -> TestRng {
        self.derive(n).rng()
    }

    /// The `n`-th seed derived from this one, for the cases of a test that loops over
    /// several runs (each run then takes its own streams from it). Derived seeds are well
    /// mixed (SplitMix64's finalizer over seed and index), so neighbouring `n` give
    /// unrelated streams.
    pub fn derive(self, n: u64) -> Seed {
        let mut z = self
            .value
            .wrapping_add(n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Seed {
            value: z ^ (z >> 31),
            origin: self.origin,
        }
    }
}

impl fmt::Display for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let origin = match self.origin {
            Origin::Env => SEED_VAR,
            Origin::Fresh => "fresh",
            Origin::Default => "the test's default",
        };
        write!(f, "seed {} ({origin})", self.value)
    }
}

/// Runs an exploring test: the seed is `BUFCACHE_SEED` if set, else drawn afresh. The
/// seed is printed before `body` runs and repeated in the panic message if it fails.
///
/// # Panics
///
/// If `BUFCACHE_SEED` is set but is not a decimal `u64`, and whenever `body` panics.
pub fn explore<R>(body: impl FnOnce(Seed) -> R) -> R {
    run(resolve(env_seed().as_deref(), None), body)
}

/// Runs a fixed test: the seed is `BUFCACHE_SEED` if set, else `default`. Printed and
/// repeated on failure as by [`explore`].
///
/// # Panics
///
/// As [`explore`].
pub fn fixed<R>(default: u64, body: impl FnOnce(Seed) -> R) -> R {
    run(resolve(env_seed().as_deref(), Some(default)), body)
}

fn env_seed() -> Option<String> {
    std::env::var(SEED_VAR).ok()
}

/// The seed from the variable's value if there is one, else the default, else a fresh one.
fn resolve(env: Option<&str>, default: Option<u64>) -> Seed {
    if let Some(text) = env {
        match text.trim().parse() {
            Ok(value) => Seed {
                value,
                origin: Origin::Env,
            },
            Err(_) => panic!("{SEED_VAR}={text:?}: expected a decimal u64"),
        }
    } else if let Some(value) = default {
        Seed {
            value,
            origin: Origin::Default,
        }
    } else {
        Seed {
            value: fresh_value(),
            origin: Origin::Fresh,
        }
    }
}

/// A seed nobody chose: std's `RandomState` is keyed from the operating system's random
/// source (and differs per call), mixed with the clock for good measure.
fn fresh_value() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// Prints the seed, runs the body, and on a panic panics again with the replay line
/// appended (the original message first, so the failure still reads as the test wrote it).
fn run<R>(seed: Seed, body: impl FnOnce(Seed) -> R) -> R {
    let line = replay_line(
        seed,
        std::env::var("CARGO_PKG_NAME").ok().as_deref(),
        std::thread::current().name(),
    );
    eprintln!("{line}");
    match panic::catch_unwind(AssertUnwindSafe(|| body(seed))) {
        Ok(r) => r,
        Err(payload) => panic!("{}\n{line}", panic_text(payload.as_ref())),
    }
}

/// `seed N (origin): replay with BUFCACHE_SEED=N cargo test [-p PKG] [-- --exact TEST]`.
/// The package comes from Cargo's environment at run time and the test's name from its
/// thread (libtest names each test's thread after it); either is left out if unknown.
fn replay_line(seed: Seed, package: Option<&str>, test: Option<&str>) -> String {
    let mut line = format!("{seed}: replay with {SEED_VAR}={} cargo test", seed.value);
    if let Some(p) = package {
        line.push_str(" -p ");
        line.push_str(p);
    }
    if let Some(t) = test.filter(|&t| t != "main") {
        line.push_str(" -- --exact ");
        line.push_str(t);
    }
    line
}

fn panic_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "the test panicked with a value that is not a message"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(value: u64, origin: Origin) -> Seed {
        Seed { value, origin }
    }

    #[test]
    fn the_variable_wins_over_the_default_and_is_trimmed() {
        assert_eq!(resolve(Some(" 42\n"), Some(7)), seed(42, Origin::Env));
        assert_eq!(resolve(Some("0"), None), seed(0, Origin::Env));
        assert_eq!(resolve(None, Some(7)), seed(7, Origin::Default));
        assert_eq!(resolve(None, None).origin(), Origin::Fresh);
    }

    #[test]
    fn a_bad_variable_fails_naming_it() {
        for bad in ["", "0x10", "-1", "18446744073709551616", "seven"] {
            let err = panic::catch_unwind(|| resolve(Some(bad), Some(1))).unwrap_err();
            let text = panic_text(err.as_ref()).to_string();
            assert_eq!(
                text,
                format!("BUFCACHE_SEED={bad:?}: expected a decimal u64"),
                "{bad}"
            );
        }
    }

    #[test]
    fn fresh_seeds_differ() {
        // RandomState is keyed anew per call; two equal draws have probability 2^-64.
        assert_ne!(fresh_value(), fresh_value());
    }

    #[test]
    fn streams_are_reproducible_and_independent() {
        let s = seed(5, Origin::Env);
        let draw = |mut r: TestRng| (0..4).map(|_| r.gen::<u64>()).collect::<Vec<_>>();
        assert_eq!(draw(s.rng()), draw(TestRng::seed_from_u64(5)));
        assert_eq!(draw(s.stream(3)), draw(s.stream(3)));
        assert_ne!(draw(s.stream(0)), draw(s.stream(1)));
        assert_ne!(draw(s.stream(0)), draw(s.rng()));
        // neighbouring seeds and indices give unrelated derived seeds
        let derived: std::collections::HashSet<u64> = (0..4)
            .flat_map(|v| (0..4).map(move |n| seed(v, Origin::Env).derive(n).value()))
            .collect();
        assert_eq!(derived.len(), 16);
    }

    #[test]
    fn the_generator_is_xoshiro256_plus_plus() {
        // The algorithm as published (Blackman & Vigna): output rotl(s0 + s3, 23) + s0,
        // then the xorshift-and-rotate state update. A seed only replays across releases
        // while the generator stays this one.
        let mut s: [u64; 4] = [1, 2, 3, 0x0123_4567_89AB_CDEF];
        let mut bytes = [0u8; 32];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(s) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        let mut rng = TestRng::from_seed(bytes);
        for _ in 0..100 {
            let out = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
            let t = s[1] << 17;
            s[2] ^= s[0];
            s[3] ^= s[1];
            s[1] ^= s[2];
            s[0] ^= s[3];
            s[2] ^= t;
            s[3] = s[3].rotate_left(45);
            assert_eq!(rng.gen::<u64>(), out);
        }
    }

    #[test]
    fn the_replay_line_names_the_seed_package_and_test() {
        let s = seed(123, Origin::Fresh);
        assert_eq!(
            replay_line(s, Some("bufcache-pool"), Some("stress_test")),
            "seed 123 (fresh): replay with BUFCACHE_SEED=123 cargo test -p bufcache-pool \
             -- --exact stress_test"
        );
        assert_eq!(
            replay_line(seed(9, Origin::Default), None, Some("main")),
            "seed 9 (the test's default): replay with BUFCACHE_SEED=9 cargo test"
        );
        assert_eq!(
            replay_line(seed(1, Origin::Env), Some("p"), None),
            "seed 1 (BUFCACHE_SEED): replay with BUFCACHE_SEED=1 cargo test -p p"
        );
    }

    #[test]
    fn a_failure_repeats_the_seed_in_its_panic_message() {
        let s = seed(77, Origin::Fresh);
        let err =
            panic::catch_unwind(|| run(s, |_| panic!("model differs at step 3"))).unwrap_err();
        let text = panic_text(err.as_ref()).to_string();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("model differs at step 3"));
        let last = lines.next().unwrap();
        assert!(
            last.starts_with("seed 77 (fresh): replay with BUFCACHE_SEED=77 cargo test -p "),
            "{last}"
        );
        assert_eq!(lines.next(), None);
        // a formatted message (a String payload) too, and success passes the value through
        let err = panic::catch_unwind(|| run(s, |seed| assert_eq!(seed.value(), 78)));
        assert!(panic_text(err.unwrap_err().as_ref()).contains("BUFCACHE_SEED=77"));
        assert_eq!(run(s, |seed| seed.value() + 1), 78);
    }
}
