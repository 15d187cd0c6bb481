//! Admission filters: on a miss, decide whether the object may take room at all.
//!
//! An admission filter sits in front of any replacement policy. [`Cache`](crate::Cache)
//! asks it once per miss, *before* anything is evicted: an object it refuses is served (the
//! request still counts as a miss) but takes no room and evicts nothing, so a scan of
//! one-hit wonders cannot flush the cache. The filter sees only misses, the way
//! libCacheSim's admissioners do (`cache_can_insert_default` asks them before the size
//! check), so miss ratios are comparable with `cachesim -a NAME`.
//!
//! Filters are written `NAME[:param=value...]` like policies, and built through
//! [`AdmissionSpec`]; [`ADMITTERS`] is the catalogue. Everything random is seeded from the
//! [`BuildContext`] seed, so a run is a pure function of its inputs.
//!
//! | name | admits | state |
//! |---|---|---|
//! | `always` | everything (the default; the same as no filter) | none |
//! | `prob:p=P` | each miss with probability P | one seeded RNG |
//! | `secondhit` | an object on its second miss, never its first (libCacheSim's `bloomfilter`, which keeps an exact set despite its name) | one bit per distinct object seen |
//! | `size:below=B` | objects smaller than B bytes (libCacheSim's `size`) | none |
//! | `doorkeeper:window=W` | the second miss within a window: a Bloom filter cleared every W misses (TinyLFU's doorkeeper, Einziger et al. 2017, used alone) | 10 bits per window slot |
//! | `adaptsize:c=C` | each miss with probability e^(-size/C) (AdaptSize, Berger et al. NSDI 2017, with a fixed C: the paper's Markov tuning of C is not implemented) | one seeded RNG |

use bufcache_core::mix;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::params::{ConfigError, ParamInfo, Params};
use crate::registry::BuildContext;
use crate::Access;

/// Catalogue entry for one admission filter.
#[derive(Clone, Copy, Debug)]
pub struct AdmitterInfo {
    /// Short name used on the command line.
    pub name: &'static str,
    /// One line: what it admits and where it comes from.
    pub summary: &'static str,
    /// Parameters with defaults.
    pub params: &'static [ParamInfo],
}

/// Every admission filter, in display order.
pub const ADMITTERS: &[AdmitterInfo] = &[
    AdmitterInfo {
        name: "always",
        summary: "admit every miss (no filter)",
        params: &[],
    },
    AdmitterInfo {
        name: "prob",
        summary: "admit each miss with probability p (seeded)",
        params: &[ParamInfo {
            name: "p",
            default: "0.5",
            help: "admission probability, 0..=1",
        }],
    },
    AdmitterInfo {
        name: "secondhit",
        summary: "admit an object from its second miss on (libCacheSim's bloomfilter)",
        params: &[],
    },
    AdmitterInfo {
        name: "size",
        summary: "admit objects smaller than a size (libCacheSim's size)",
        params: &[ParamInfo {
            name: "below",
            default: "1048576",
            help: "admit sizes strictly below this, in capacity units, 1..=2^32",
        }],
    },
    AdmitterInfo {
        name: "doorkeeper",
        summary: "TinyLFU's doorkeeper alone: admit the second miss within a window",
        params: &[ParamInfo {
            name: "window",
            default: "65536",
            help: "misses between two clearings of the Bloom filter, 1..=2^30",
        }],
    },
    AdmitterInfo {
        name: "adaptsize",
        summary: "AdaptSize with fixed c: admit with probability exp(-size/c) (seeded)",
        params: &[ParamInfo {
            name: "c",
            default: "65536",
            help: "size scale in capacity units, 1..=2^40",
        }],
    },
];

/// An admission filter as written on the command line (`prob:p=0.1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionSpec {
    /// Filter name, lower case.
    pub name: String,
    /// (name, value) pairs as given.
    pub params: Vec<(String, String)>,
}

impl AdmissionSpec {
    /// Parse `name[:k=v...]`.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let (name, params) = crate::params::split_spec(text)?;
        Ok(AdmissionSpec { name, params })
    }

    /// The spec as it would be written (for reports).
    pub fn label(&self) -> String {
        crate::params::join_spec(&self.name, &self.params)
    }

    /// Check the name and every parameter without building anything, so that a typo is
    /// reported before a trace is read.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.build(&BuildContext::new(1, 0)).map(|_| ())
    }

    /// Build the filter; `ctx.seed` seeds the random ones.
    pub fn build(&self, ctx: &BuildContext) -> Result<Admitter, ConfigError> {
        let info = ADMITTERS
            .iter()
            .find(|a| a.name == self.name)
            .ok_or_else(|| ConfigError::UnknownModule {
                kind: "admission filter",
                name: self.name.clone(),
                known: ADMITTERS
                    .iter()
                    .map(|a| a.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let p = Params::new(info.name, info.params, self.params.clone())?;
        let rng = || Xoshiro256PlusPlus::seed_from_u64(mix(ctx.seed ^ 0xad_1155));
        Ok(match info.name {
            "always" => Admitter::Always,
            "prob" => Admitter::Probabilistic {
                p: p.fraction("p", 0.0, 1.0)?,
                rng: rng(),
            },
            "secondhit" => Admitter::SecondHit {
                seen: BitSet::default(),
            },
            "size" => Admitter::Size {
                below: p.integer("below", 1, 1 << 32)?,
            },
            "doorkeeper" => {
                let window = p.integer("window", 1, 1 << 30)?;
                Admitter::Doorkeeper {
                    filter: Bloom::for_items(window as usize),
                    window,
                    since_clear: 0,
                }
            }
            "adaptsize" => Admitter::AdaptSize {
                c: p.integer("c", 1, 1 << 40)? as f64,
                rng: rng(),
            },
            other => unreachable!("admission filter {other} is catalogued but not built"),
        })
    }
}

impl std::str::FromStr for AdmissionSpec {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AdmissionSpec::parse(s)
    }
}

impl std::fmt::Display for AdmissionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// A built admission filter. An enum rather than a trait object: it is consulted on every
/// miss of the replay loop, and a `match` on a small enum costs less than a virtual call.
#[derive(Clone, Debug, Default)]
pub enum Admitter {
    /// Admit everything.
    #[default]
    Always,
    /// Admit with probability `p`.
    Probabilistic {
        /// The probability.
        p: f64,
        /// Seeded stream.
        rng: Xoshiro256PlusPlus,
    },
    /// Admit keys missed before.
    SecondHit {
        /// Keys missed at least once.
        seen: BitSet,
    },
    /// Admit sizes below `below`.
    Size {
        /// Exclusive bound.
        below: u64,
    },
    /// Admit keys the Bloom filter has seen since its last clearing.
    Doorkeeper {
        /// The filter.
        filter: Bloom,
        /// Misses between clearings.
        window: u64,
        /// Misses since the last clearing.
        since_clear: u64,
    },
    /// Admit with probability e^(-size/c).
    AdaptSize {
        /// Size scale.
        c: f64,
        /// Seeded stream.
        rng: Xoshiro256PlusPlus,
    },
}

impl Admitter {
    /// Whether the missed object of `access` may be inserted. Called once per miss.
    #[inline]
    pub fn admit(&mut self, access: &Access) -> bool {
        match self {
            Admitter::Always => true,
            Admitter::Probabilistic { p, rng } => rng.gen::<f64>() < *p,
            Admitter::SecondHit { seen } => seen.insert(access.key),
            Admitter::Size { below } => u64::from(access.size) < *below,
            Admitter::Doorkeeper {
                filter,
                window,
                since_clear,
            } => {
                if *since_clear == *window {
                    filter.clear();
                    *since_clear = 0;
                }
                *since_clear += 1;
                filter.insert(access.key)
            }
            Admitter::AdaptSize { c, rng } => {
                rng.gen::<f64>() < (-f64::from(access.size) / *c).exp()
            }
        }
    }

    /// True for [`Admitter::Always`], so a driver may skip the call.
    pub fn is_always(&self) -> bool {
        matches!(self, Admitter::Always)
    }
}

/// A growable set of keys as bits: exact for dense ids (the replay engine's), and for
/// arbitrary keys through a hash table once a key is too large to index.
#[derive(Clone, Debug, Default)]
pub struct BitSet {
    words: Vec<u64>,
    sparse: hashbrown::HashSet<u64>,
}

/// Keys below this are bits in a vector (8 MiB at most); larger ones go to a hash set.
const DENSE_KEYS_MAX: u64 = 1 << 26;

impl BitSet {
    /// Add `key`; returns whether it was already present.
    pub fn insert(&mut self, key: u64) -> bool {
        if key >= DENSE_KEYS_MAX {
            return !self.sparse.insert(key);
        }
        let (w, b) = ((key / 64) as usize, key % 64);
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let was = self.words[w] >> b & 1 == 1;
        self.words[w] |= 1 << b;
        was
    }
}

/// A Bloom filter of fixed size: 10 bits and 7 probes per expected item, which keeps false
/// positives near 1% (Broder & Mitzenmacher's rule m/n = 10, k = m/n · ln 2).
#[derive(Clone, Debug)]
pub struct Bloom {
    bits: Vec<u64>,
    mask: u64,
}

const BLOOM_PROBES: u32 = 7;

impl Bloom {
    /// A filter sized for `items` insertions between clearings.
    pub fn for_items(items: usize) -> Self {
        let bits = (items.max(1) * 10).next_power_of_two().max(64);
        Bloom {
            bits: vec![0; bits / 64],
            mask: bits as u64 - 1,
        }
    }

    /// Add `key`; returns whether every probed bit was already set (seen, or a false
    /// positive).
    pub fn insert(&mut self, key: u64) -> bool {
        // Double hashing (Kirsch & Mitzenmacher): probe i is h1 + i·h2.
        let h1 = mix(key);
        let h2 = mix(key ^ 0x9e37_79b9_7f4a_7c15) | 1;
        let mut all = true;
        for i in 0..u64::from(BLOOM_PROBES) {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) & self.mask;
            let (w, b) = ((bit / 64) as usize, bit % 64);
            all &= self.bits[w] >> b & 1 == 1;
            self.bits[w] |= 1 << b;
        }
        all
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        self.bits.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(text: &str) -> Admitter {
        AdmissionSpec::parse(text)
            .unwrap()
            .build(&BuildContext::new(10, 7))
            .unwrap()
    }

    fn decisions(a: &mut Admitter, keys: &[(u64, u32)]) -> Vec<bool> {
        keys.iter()
            .enumerate()
            .map(|(t, &(key, size))| {
                let mut acc = Access::unit(key, t as u64);
                acc.size = size;
                a.admit(&acc)
            })
            .collect()
    }

    #[test]
    fn second_hit_admits_from_the_second_miss() {
        let mut a = build("secondhit");
        let keys = [
            (1, 1),
            (2, 1),
            (1, 1),
            (1, 1),
            (1 << 40, 1),
            (1 << 40, 1),
            (2, 1),
        ];
        assert_eq!(
            decisions(&mut a, &keys),
            [false, false, true, true, false, true, true]
        );
    }

    #[test]
    fn a_refused_miss_takes_no_room_and_evicts_nothing() {
        // LRU of 2 behind secondhit, keys 1 2 1 3 1 2 3:
        // 1 m(refused) 2 m(refused) 1 m(in) 3 m(refused) 1 h 2 m(in: [1 2]) 3 m(in, evicts 1).
        let mut cache = crate::Cache::new(crate::Lru::new(2), 2).with_admission(build("secondhit"));
        let outcomes: Vec<crate::Outcome> = [1, 2, 1, 3, 1, 2, 3]
            .iter()
            .enumerate()
            .map(|(t, &k)| cache.access(&Access::unit(k, t as u64)))
            .collect();
        let miss = |admitted, evictions| crate::Outcome::Miss {
            admitted,
            evictions,
        };
        assert_eq!(
            outcomes,
            [
                miss(false, 0),
                miss(false, 0),
                miss(true, 0),
                miss(false, 0),
                crate::Outcome::Hit,
                miss(true, 0),
                miss(true, 1),
            ]
        );
        assert_eq!(cache.evicted(), [1]);
    }

    #[test]
    fn size_admits_strictly_below_the_bound() {
        let mut a = build("size:below=100");
        let keys = [(1, 99), (2, 100), (3, 101), (4, 0)];
        assert_eq!(decisions(&mut a, &keys), [true, false, false, true]);
    }

    #[test]
    fn doorkeeper_forgets_at_the_end_of_each_window() {
        // Window 3: misses 1 2 1 | 1 2 2 | 1.
        // 1 new, 2 new, 1 seen; cleared; 1 new, 2 new, 2 seen; cleared; 1 new.
        let mut a = build("doorkeeper:window=3");
        let keys = [(1, 1), (2, 1), (1, 1), (1, 1), (2, 1), (2, 1), (1, 1)];
        assert_eq!(
            decisions(&mut a, &keys),
            [false, false, true, false, false, true, false]
        );
    }

    #[test]
    fn probabilities_at_the_ends_are_exact_and_seeded_runs_repeat() {
        let keys: Vec<(u64, u32)> = (0..1000).map(|k| (k, 1)).collect();
        assert!(decisions(&mut build("prob:p=1"), &keys).iter().all(|&d| d));
        assert!(decisions(&mut build("prob:p=0"), &keys).iter().all(|&d| !d));
        let half = decisions(&mut build("prob:p=0.5"), &keys);
        assert_eq!(half, decisions(&mut build("prob:p=0.5"), &keys));
        let admitted = half.iter().filter(|&&d| d).count();
        // Binomial(1000, 0.5): 5 standard deviations either side.
        assert!((420..=580).contains(&admitted), "{admitted}");
    }

    #[test]
    fn adaptsize_prefers_small_objects() {
        let small: Vec<(u64, u32)> = (0..2000).map(|k| (k, 100)).collect();
        let large: Vec<(u64, u32)> = (0..2000).map(|k| (k, 400_000)).collect();
        let mut a = build("adaptsize:c=100000");
        let n_small = decisions(&mut a, &small).iter().filter(|&&d| d).count();
        let n_large = decisions(&mut a, &large).iter().filter(|&&d| d).count();
        // e^-0.001 ≈ 0.999 and e^-4 ≈ 0.018.
        assert!(n_small > 1950, "{n_small}");
        assert!(n_large < 80, "{n_large}");
    }

    #[test]
    fn bad_specs_are_refused_with_the_known_names_or_the_range() {
        let ctx = BuildContext::new(10, 0);
        let err = AdmissionSpec::parse("bloom")
            .unwrap()
            .build(&ctx)
            .unwrap_err();
        assert!(
            err.to_string().contains("known: always, prob, secondhit"),
            "{err}"
        );
        let err = AdmissionSpec::parse("prob:p=2")
            .unwrap()
            .build(&ctx)
            .unwrap_err();
        assert!(
            matches!(err, ConfigError::BadValue { param: "p", .. }),
            "{err}"
        );
        assert!(AdmissionSpec::parse("size:max=3").unwrap().check().is_err());
        assert_eq!(
            AdmissionSpec::parse("PROB: p = 0.25").unwrap().label(),
            "prob:p=0.25"
        );
    }
}
