//! Seeded synthetic workloads, generated lazily (nothing is materialised).
//!
//! | workload | spec | what it is |
//! |---|---|---|
//! | uniform | `uniform(keys=K)` | independent draws, each key in `[0, K)` equally likely |
//! | zipf | `zipf(keys=K,alpha=A)` | independent draws, the rank-r key has probability ∝ r^-A (A > 0, A = 1 allowed); ranks map to keys through a seeded bijection of `[0, K)`, so hot keys are scattered |
//! | scan | `scan(keys=K)` | the sequential scan `0, 1, ..., K-1` repeated: spatially sequential, reuse distance exactly K |
//! | loop | `loop(keys=K)` | a fixed seeded permutation of `[0, K)` repeated: the same reuse distance K without spatial order (defeats read-ahead and sequence detection, LRU's worst case when K exceeds the cache) |
//! | zipfscan | `zipfscan(keys=K,alpha=A,every=N,scan=M)` | a Zipf working set over `[0, K)`; after every N Zipf requests, a scan of M *new* keys (`K, K+1, ...`, never seen before or again) — the one-time-scan pattern that pollutes LRU; scan requests have stream 1 |
//! | shift | `shift(keys=K,alpha=A,every=N,shift=M)` | a Zipf(A) working set whose hot keys move: the rank-r key is key `(r - 1 + o) mod K` (through a seeded bijection), and the offset `o` grows by M after every N requests, so the hottest keys cool off and keys that were cold become hot — the shifting hot set of real traces, which a curve fitted to one phase misses |
//! | mix | `mix(0.7*zipf(keys=1000,alpha=0.9),0.3*scan(keys=500))` | each request comes from one component chosen independently with probability ∝ weight; component i's keys get `i << 56` so components never share keys, and its stream is i. Mixes do not nest |
//!
//! Every request is a read of `size` bytes (4096 unless [`generate_sized`] says otherwise)
//! with `time` = its index and `next_access` = [`NEVER`] (use [`crate::fill_next_access`]).
//! The same (workload, count, seed) always yields the same requests.

mod bijection;
mod zipf;

use std::fmt;
use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

pub use bijection::Bijection;
pub use zipf::Zipf;

use crate::{Op, Request, TraceError, NEVER};

/// Bits below a mix component's index in its keys.
pub const MIX_SHIFT: u32 = 56;

/// Largest key space a workload may have (the bijection's limit, and below `1 << 56` so
/// that mixes can tag keys).
pub const MAX_KEYS: u64 = 1 << 48;

/// A synthetic workload. See the module docs for each kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// Uniform over `[0, keys)`.
    Uniform {
        /// Key space.
        keys: u64,
    },
    /// Zipf(alpha) over `keys` scrambled keys.
    Zipf {
        /// Key space.
        keys: u64,
        /// Exponent, > 0.
        alpha: f64,
    },
    /// `0..keys` repeated.
    Scan {
        /// Scan length.
        keys: u64,
    },
    /// A seeded permutation of `0..keys` repeated.
    Loop {
        /// Loop length.
        keys: u64,
    },
    /// Zipf working set interrupted by scans of new keys.
    ZipfScan {
        /// Working-set key space.
        keys: u64,
        /// Zipf exponent.
        alpha: f64,
        /// Zipf requests between scans.
        every: u64,
        /// Keys per scan.
        scan: u64,
    },
    /// Zipf working set whose ranking moves by `shift` keys every `every` requests.
    Shift {
        /// Key space.
        keys: u64,
        /// Zipf exponent.
        alpha: f64,
        /// Requests between moves.
        every: u64,
        /// Keys the ranking moves by.
        shift: u64,
    },
    /// Weighted mixture (weight, component).
    Mix(Vec<(f64, Workload)>),
}

fn bad<T>(msg: impl Into<String>) -> Result<T, TraceError> {
    Err(TraceError::BadWorkload(msg.into()))
}

impl Workload {
    /// Checks parameters: key spaces in `1..=2^48`, alpha finite and > 0, `every` and
    /// `scan` >= 1, mix weights finite and > 0, at most 255 components and no nesting.
    pub fn validate(&self) -> Result<(), TraceError> {
        let keys_ok = |k: u64| {
            if (1..=MAX_KEYS).contains(&k) {
                Ok(())
            } else {
                bad(format!("keys must be in 1..=2^48, got {k}"))
            }
        };
        let alpha_ok = |a: f64| {
            if a > 0.0 && a.is_finite() {
                Ok(())
            } else {
                bad(format!("alpha must be finite and > 0, got {a}"))
            }
        };
        match self {
            Workload::Uniform { keys } | Workload::Scan { keys } | Workload::Loop { keys } => {
                keys_ok(*keys)
            }
            Workload::Zipf { keys, alpha } => keys_ok(*keys).and(alpha_ok(*alpha)),
            // The scan length and the move both count keys, and both must be at least 1.
            Workload::ZipfScan {
                keys,
                alpha,
                every,
                scan: step,
            }
            | Workload::Shift {
                keys,
                alpha,
                every,
                shift: step,
            } => {
                keys_ok(*keys)?;
                alpha_ok(*alpha)?;
                if *every == 0 || *step == 0 {
                    let name = if matches!(self, Workload::Shift { .. }) {
                        "shift"
                    } else {
                        "scan"
                    };
                    return bad(format!("every and {name} must be at least 1"));
                }
                Ok(())
            }
            Workload::Mix(parts) => {
                if parts.is_empty() || parts.len() > 255 {
                    return bad("a mix needs 1..=255 components");
                }
                for (w, p) in parts {
                    if !(*w > 0.0 && w.is_finite()) {
                        return bad(format!("mix weights must be finite and > 0, got {w}"));
                    }
                    if matches!(p, Workload::Mix(_)) {
                        return bad("mixes do not nest");
                    }
                    p.validate()?;
                }
                Ok(())
            }
        }
    }

    /// Builds a workload from a kind and named parameters (what CLI flags give):
    /// `from_params("zipf", &[("keys", "1000"), ("alpha", "0.9")])`. Mixes need the
    /// [`FromStr`] spec syntax.
    pub fn from_params(kind: &str, params: &[(&str, &str)]) -> Result<Self, TraceError> {
        let get = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        for (k, _) in params {
            let allowed: &[&str] = match kind {
                "uniform" | "scan" | "loop" => &["keys"],
                "zipf" => &["keys", "alpha"],
                "zipfscan" => &["keys", "alpha", "every", "scan"],
                "shift" => &["keys", "alpha", "every", "shift"],
                _ => &[],
            };
            if !allowed.is_empty() && !allowed.contains(k) {
                return bad(format!(
                    "{kind} has no parameter {k:?} (has: {})",
                    allowed.join(", ")
                ));
            }
        }
        let int = |name: &str| -> Result<u64, TraceError> {
            let v = get(name)
                .ok_or_else(|| TraceError::BadWorkload(format!("{kind} needs {name}=")))?;
            v.trim().replace('_', "").parse::<u64>().map_err(|_| {
                TraceError::BadWorkload(format!(
                    "{name}: expected an unsigned integer, found {v:?}"
                ))
            })
        };
        let float = |name: &str| -> Result<f64, TraceError> {
            let v = get(name)
                .ok_or_else(|| TraceError::BadWorkload(format!("{kind} needs {name}=")))?;
            v.trim().parse::<f64>().map_err(|_| {
                TraceError::BadWorkload(format!("{name}: expected a number, found {v:?}"))
            })
        };
        let w = match kind {
            "uniform" => Workload::Uniform { keys: int("keys")? },
            "zipf" => Workload::Zipf {
                keys: int("keys")?,
                alpha: float("alpha")?,
            },
            "scan" => Workload::Scan { keys: int("keys")? },
            "loop" => Workload::Loop { keys: int("keys")? },
            "zipfscan" => Workload::ZipfScan {
                keys: int("keys")?,
                alpha: float("alpha")?,
                every: int("every")?,
                scan: int("scan")?,
            },
            "shift" => Workload::Shift {
                keys: int("keys")?,
                alpha: float("alpha")?,
                every: int("every")?,
                shift: int("shift")?,
            },
            _ => {
                return bad(format!(
                    "unknown workload {kind:?} (known: uniform, zipf, scan, loop, zipfscan, shift, mix)"
                ))
            }
        };
        w.validate()?;
        Ok(w)
    }
}

impl fmt::Display for Workload {
    /// The spec syntax [`FromStr`] accepts (so a report can record it and rerun it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Workload::Uniform { keys } => write!(f, "uniform(keys={keys})"),
            Workload::Zipf { keys, alpha } => write!(f, "zipf(keys={keys},alpha={alpha})"),
            Workload::Scan { keys } => write!(f, "scan(keys={keys})"),
            Workload::Loop { keys } => write!(f, "loop(keys={keys})"),
            Workload::ZipfScan {
                keys,
                alpha,
                every,
                scan,
            } => write!(
                f,
                "zipfscan(keys={keys},alpha={alpha},every={every},scan={scan})"
            ),
            Workload::Shift {
                keys,
                alpha,
                every,
                shift,
            } => write!(
                f,
                "shift(keys={keys},alpha={alpha},every={every},shift={shift})"
            ),
            Workload::Mix(parts) => {
                f.write_str("mix(")?;
                for (i, (w, p)) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{w}*{p}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Splits `s` at top-level commas (not inside parentheses).
fn split_top(s: &str) -> Result<Vec<&str>, TraceError> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return bad(format!("unbalanced ')' in {s:?}"));
                }
            }
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return bad(format!("unbalanced '(' in {s:?}"));
    }
    parts.push(&s[start..]);
    Ok(parts)
}

impl FromStr for Workload {
    type Err = TraceError;

    /// `kind(name=value,...)`, or `kind` alone if it has no parameters, or
    /// `mix(weight*spec,...)`. Whitespace around tokens is ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (kind, inner) = match s.find('(') {
            Some(i) if s.ends_with(')') => (s[..i].trim(), &s[i + 1..s.len() - 1]),
            Some(_) => return bad(format!("expected `kind(...)`, found {s:?}")),
            None => (s, ""),
        };
        let kind = kind.to_ascii_lowercase();
        let args: Vec<&str> = if inner.trim().is_empty() {
            Vec::new()
        } else {
            split_top(inner)?
        };
        if kind == "mix" {
            let mut parts = Vec::new();
            for a in args {
                let (w, spec) = a.split_once('*').ok_or_else(|| {
                    TraceError::BadWorkload(format!("mix part {a:?} needs weight*spec"))
                })?;
                let w: f64 = w.trim().parse().map_err(|_| {
                    TraceError::BadWorkload(format!("mix weight {:?} is not a number", w.trim()))
                })?;
                parts.push((w, spec.parse::<Workload>()?));
            }
            let w = Workload::Mix(parts);
            w.validate()?;
            return Ok(w);
        }
        let mut params = Vec::new();
        for a in args {
            let (k, v) = a.split_once('=').ok_or_else(|| {
                TraceError::BadWorkload(format!("parameter {a:?} needs name=value"))
            })?;
            params.push((k.trim(), v.trim()));
        }
        Workload::from_params(&kind, &params)
    }
}

/// Per-workload generator state.
enum State {
    Uniform {
        keys: u64,
    },
    Zipf {
        zipf: Zipf,
        perm: Bijection,
    },
    Scan {
        keys: u64,
        next: u64,
    },
    Loop {
        perm: Bijection,
        keys: u64,
        next: u64,
    },
    ZipfScan {
        zipf: Zipf,
        perm: Bijection,
        every: u64,
        scan: u64,
        since_scan: u64,
        scan_left: u64,
        next_new: u64,
    },
    Shift {
        zipf: Zipf,
        perm: Bijection,
        keys: u64,
        every: u64,
        shift: u64,
        since_shift: u64,
        offset: u64,
    },
    Mix {
        cumulative: Vec<f64>,
        parts: Vec<State>,
    },
}

impl State {
    /// `salt` separates the bijection seeds of mix components.
    fn new(w: &Workload, seed: u64, salt: u64) -> State {
        let perm_seed = bijection::mix64(seed ^ bijection::mix64(salt.wrapping_add(0x5eed)));
        // validate() ran before: keys and alpha are in range, so these cannot fail.
        let perm = |k| Bijection::new(k, perm_seed).expect("validated key space");
        let zipf = |k, a| Zipf::new(k, a).expect("validated zipf parameters");
        match *w {
            Workload::Uniform { keys } => State::Uniform { keys },
            Workload::Zipf { keys, alpha } => State::Zipf {
                zipf: zipf(keys, alpha),
                perm: perm(keys),
            },
            Workload::Scan { keys } => State::Scan { keys, next: 0 },
            Workload::Loop { keys } => State::Loop {
                perm: perm(keys),
                keys,
                next: 0,
            },
            Workload::ZipfScan {
                keys,
                alpha,
                every,
                scan,
            } => State::ZipfScan {
                zipf: zipf(keys, alpha),
                perm: perm(keys),
                every,
                scan,
                since_scan: 0,
                scan_left: 0,
                next_new: keys,
            },
            Workload::Shift {
                keys,
                alpha,
                every,
                shift,
            } => State::Shift {
                zipf: zipf(keys, alpha),
                perm: perm(keys),
                keys,
                every,
                // Moving by a whole multiple of the key space would not move at all.
                shift: shift % keys,
                since_shift: 0,
                offset: 0,
            },
            Workload::Mix(ref parts) => {
                let total: f64 = parts.iter().map(|(w, _)| w).sum();
                let mut acc = 0.0;
                let cumulative = parts
                    .iter()
                    .map(|(w, _)| {
                        acc += w / total;
                        acc
                    })
                    .collect();
                let parts = parts
                    .iter()
                    .enumerate()
                    .map(|(i, (_, p))| State::new(p, seed, salt * 256 + i as u64 + 1))
                    .collect();
                State::Mix { cumulative, parts }
            }
        }
    }

    /// Next (key, stream).
    fn next(&mut self, rng: &mut Xoshiro256PlusPlus) -> (u64, u32) {
        match self {
            State::Uniform { keys } => (rng.gen_range(0..*keys), 0),
            State::Zipf { zipf, perm } => (perm.apply(zipf.sample(rng) - 1), 0),
            State::Scan { keys, next } | State::Loop { keys, next, .. } => {
                let k = *next;
                *next = if k + 1 == *keys { 0 } else { k + 1 };
                match self {
                    State::Loop { perm, .. } => (perm.apply(k), 0),
                    _ => (k, 0),
                }
            }
            State::ZipfScan {
                zipf,
                perm,
                every,
                scan,
                since_scan,
                scan_left,
                next_new,
                ..
            } => {
                if *scan_left > 0 {
                    *scan_left -= 1;
                    let k = *next_new;
                    *next_new += 1;
                    return (k, 1);
                }
                let k = perm.apply(zipf.sample(rng) - 1);
                *since_scan += 1;
                if *since_scan == *every {
                    *since_scan = 0;
                    *scan_left = *scan;
                }
                (k, 0)
            }
            State::Shift {
                zipf,
                perm,
                keys,
                every,
                shift,
                since_shift,
                offset,
            } => {
                // rank - 1 < keys and offset < keys, so the sum cannot overflow 2^49.
                let k = perm.apply((zipf.sample(rng) - 1 + *offset) % *keys);
                *since_shift += 1;
                if *since_shift == *every {
                    *since_shift = 0;
                    *offset = (*offset + *shift) % *keys;
                }
                (k, 0)
            }
            State::Mix { cumulative, parts } => {
                let u = zipf::unit_f64(rng);
                // Rounding can leave the last cumulative weight a hair under 1.
                let i = cumulative
                    .iter()
                    .position(|&c| u < c)
                    .unwrap_or(parts.len() - 1);
                let (k, _) = parts[i].next(rng);
                debug_assert!(k < 1 << MIX_SHIFT);
                ((i as u64) << MIX_SHIFT | k, i as u32)
            }
        }
    }
}

/// A lazily generated synthetic trace.
pub struct Generator {
    state: State,
    rng: Xoshiro256PlusPlus,
    index: u64,
    count: u64,
    size_bytes: u32,
}

impl Iterator for Generator {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        if self.index == self.count {
            return None;
        }
        let (key, stream) = self.state.next(&mut self.rng);
        let r = Request {
            time: self.index,
            key,
            size: self.size_bytes,
            op: Op::Read,
            next_access: NEVER,
            stream,
        };
        self.index += 1;
        Some(r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.count - self.index).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// `requests` requests of `workload` with 4096-byte sizes. Panics only if the workload is
/// invalid; use [`try_generate`] (or parse, which validates) for user input.
pub fn generate(workload: &Workload, requests: u64, seed: u64) -> Generator {
    generate_sized(workload, requests, seed, 4096)
}

/// Like [`generate`] with a request size.
pub fn generate_sized(workload: &Workload, requests: u64, seed: u64, size_bytes: u32) -> Generator {
    try_generate(workload, requests, seed, size_bytes).expect("invalid workload")
}

/// Validates, then generates.
pub fn try_generate(
    workload: &Workload,
    requests: u64,
    seed: u64,
    size_bytes: u32,
) -> Result<Generator, TraceError> {
    workload.validate()?;
    Ok(Generator {
        state: State::new(workload, seed, 0),
        rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        index: 0,
        count: requests,
        size_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(w: &str, n: u64, seed: u64) -> Vec<u64> {
        generate(&w.parse().unwrap(), n, seed)
            .map(|r| r.key)
            .collect()
    }

    #[test]
    fn scan_and_loop_exact() {
        assert_eq!(keys("scan(keys=3)", 7, 1), [0, 1, 2, 0, 1, 2, 0]);
        let l = keys("loop(keys=4)", 12, 9);
        let mut first: Vec<u64> = l[..4].to_vec();
        assert_eq!(&l[4..8], &first[..]);
        assert_eq!(&l[8..12], &first[..]);
        first.sort();
        assert_eq!(first, [0, 1, 2, 3]);
    }

    #[test]
    fn shift_moves_the_hot_keys() {
        // Zipf 2 over 1,000 keys: rank 1 takes 61% of the requests. Over 4,000 requests
        // with a move of 500 keys every 2,000, the hottest key of the first half is some
        // key h = perm(0); in the second half rank 1 is perm(500), and h is rank 501,
        // requested about 0.6 / 501^2 of the time: almost never.
        let w: Workload = "shift(keys=1000,alpha=2,every=2000,shift=500)"
            .parse()
            .unwrap();
        assert_eq!(
            w.to_string(),
            "shift(keys=1000,alpha=2,every=2000,shift=500)"
        );
        let ks = keys(&w.to_string(), 4000, 7);
        let hottest = |part: &[u64]| {
            let mut counts = std::collections::HashMap::new();
            for &k in part {
                *counts.entry(k).or_insert(0u32) += 1;
            }
            counts.into_iter().max_by_key(|&(k, c)| (c, k)).unwrap()
        };
        let (first, n1) = hottest(&ks[..2000]);
        let (second, n2) = hottest(&ks[2000..]);
        assert_ne!(first, second);
        assert!(n1 > 1000 && n2 > 1000, "{n1} {n2}");
        let again = ks[2000..].iter().filter(|&&k| k == first).count();
        assert!(again < 5, "the old hottest key came back {again} times");
        assert!(ks.iter().all(|&k| k < 1000));
        // The same seed gives the same trace; a move of 0 is refused.
        assert_eq!(ks, keys(&w.to_string(), 4000, 7));
        assert!("shift(keys=10,alpha=1,every=5,shift=0)"
            .parse::<Workload>()
            .is_err());
    }

    #[test]
    fn zipfscan_structure() {
        let w: Workload = "zipfscan(keys=10,alpha=1,every=3,scan=2)".parse().unwrap();
        let g: Vec<Request> = generate(&w, 11, 5).collect();
        let streams: Vec<u32> = g.iter().map(|r| r.stream).collect();
        assert_eq!(streams, [0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0]);
        let scan_keys: Vec<u64> = g.iter().filter(|r| r.stream == 1).map(|r| r.key).collect();
        assert_eq!(scan_keys, [10, 11, 12, 13]);
        assert!(g.iter().filter(|r| r.stream == 0).all(|r| r.key < 10));
        assert_eq!(
            g.iter().map(|r| r.time).collect::<Vec<_>>(),
            (0..11).collect::<Vec<_>>()
        );
    }

    #[test]
    fn deterministic_per_seed() {
        for spec in [
            "uniform(keys=100)",
            "zipf(keys=1000,alpha=0.9)",
            "loop(keys=50)",
            "mix(1*zipf(keys=10,alpha=1),2*uniform(keys=5))",
        ] {
            assert_eq!(keys(spec, 500, 3), keys(spec, 500, 3), "{spec}");
            assert_ne!(keys(spec, 500, 3), keys(spec, 500, 4), "{spec}");
        }
    }

    #[test]
    fn zipf_rank_frequency_after_scrambling() {
        // Scrambling must only relabel: sorted key frequencies follow the rank law.
        // 1000 keys, alpha 1, 400k samples: the top rank has p = 1/H(1000) = 0.1336, so
        // its count has sd sqrt(400k·p·(1-p)) ≈ 215; allow 5 sd. The hottest key must not
        // be key 0 for this seed (scrambled), and all keys stay below 1000.
        let n = 400_000;
        let ks = keys("zipf(keys=1000,alpha=1)", n, 11);
        let mut counts = vec![0u64; 1000];
        for k in &ks {
            counts[*k as usize] += 1;
        }
        let hottest = (0..1000).max_by_key(|&k| counts[k]).unwrap();
        assert_ne!(hottest, 0);
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let z = Zipf::new(1000, 1.0).unwrap();
        for rank in [1u64, 2, 10] {
            let p = z.pmf(rank);
            let e = n as f64 * p;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            let got = counts[rank as usize - 1] as f64;
            assert!((got - e).abs() < 5.0 * sd, "rank {rank}: {got} vs {e}");
        }
    }

    #[test]
    fn mix_tags_components() {
        let w: Workload = "mix(3*scan(keys=2), 1*uniform(keys=4))".parse().unwrap();
        let g: Vec<Request> = generate(&w, 4000, 1).collect();
        let scans = g.iter().filter(|r| r.stream == 0).count();
        // Binomial(4000, 0.75): mean 3000, sd 27; 5 sd bound.
        assert!((scans as i64 - 3000).abs() < 137, "{scans}");
        for r in &g {
            match r.stream {
                0 => assert!(r.key < 2),
                1 => assert!(r.key >= 1 << MIX_SHIFT && r.key < (1 << MIX_SHIFT) + 4),
                s => panic!("stream {s}"),
            }
        }
        // Within the scan component the order is still 0,1,0,1...
        let sk: Vec<u64> = g
            .iter()
            .filter(|r| r.stream == 0)
            .take(4)
            .map(|r| r.key)
            .collect();
        assert_eq!(sk, [0, 1, 0, 1]);
    }

    #[test]
    fn parse_display_round_trip_and_errors() {
        for s in [
            "uniform(keys=10)",
            "zipf(keys=1000,alpha=0.9)",
            "scan(keys=3)",
            "loop(keys=3)",
            "zipfscan(keys=10,alpha=1.2,every=100,scan=50)",
            "mix(0.7*zipf(keys=1000,alpha=0.9),0.3*scan(keys=5000))",
        ] {
            let w: Workload = s.parse().unwrap();
            assert_eq!(w.to_string(), s);
        }
        assert_eq!(
            Workload::from_params("zipf", &[("keys", "1000"), ("alpha", "0.9")]).unwrap(),
            Workload::Zipf {
                keys: 1000,
                alpha: 0.9
            }
        );
        for bad in [
            "zipf(keys=10)",
            "zipf(keys=10,alpha=0)",
            "zipf(keys=10,alpha=-1)",
            "zipf(keys=0,alpha=1)",
            "uniform(keys=x)",
            "uniform(keys=10,alpha=1)",
            "nope(keys=1)",
            "mix()",
            "mix(0*scan(keys=1))",
            "mix(1*mix(1*scan(keys=1)))",
            "mix(1*scan(keys=1)",
            "zipfscan(keys=10,alpha=1,every=0,scan=1)",
        ] {
            assert!(
                matches!(bad.parse::<Workload>(), Err(TraceError::BadWorkload(_))),
                "{bad}"
            );
        }
    }
}
