//! Prefetchers: after a request, bring in the objects that sequential access says come next.
//!
//! A prefetcher sits beside any replacement policy. [`Cache`](crate::Cache) asks it after
//! every request (hit or miss, as libCacheSim's `cache_get_base` does): when the last `k`
//! requests were to consecutive objects ending just before this one, the next `depth`
//! objects that are not resident are inserted, evicting as an insertion would. A prefetch
//! is not a request: it is not counted as a hit or a miss, it skips the admission filter
//! (libCacheSim's prefetchers insert directly too), and the first request that finds a
//! prefetched object resident counts as a *prefetch hit*; [`PrefetchStats`] keeps the tally.
//!
//! "Next" means the key plus one: the next block of a block trace (the CloudPhysics and MSR
//! traces number blocks), the next page of a file. For object traces whose keys are hashes
//! or unrelated ids, key + 1 is simply another id and sequential detection never fires
//! unless the trace numbers its objects in order. Replay renumbers keys densely, so it hands
//! the cache a [`Successors`] table computed from the original keys; an object that the
//! trace never requests still gets an id and still takes room when prefetched.
//!
//! | name | prefetches | trigger |
//! |---|---|---|
//! | `obl:k=K` | the next object (one-block lookahead, Smith 1978) | the previous K requests were the K objects just before this one (libCacheSim's OBL with `sequential-confidence-k=K`; K = 0 prefetches on every request) |
//! | `readahead:depth=N,k=K` | the next N objects (sequential read-ahead, as XMF-style and Linux read-ahead do) | the same |
//!
//! | `pg:lookahead=L,threshold=T,entries=N` | the objects that followed this one within L requests often enough (a share of its arcs' weight above T), heaviest first | every request: a history-based prefetcher (Griffioen & Appleton's probability graph, counted as libCacheSim's `PG`; [`graph`]) |
//!
//! Mithril and AMP are not implemented.

mod graph;

use std::sync::Arc;

use crate::params::{ConfigError, ParamInfo, Params};

/// Catalogue entry for one prefetcher.
#[derive(Clone, Copy, Debug)]
pub struct PrefetcherInfo {
    /// Short name used on the command line.
    pub name: &'static str,
    /// One line: what it prefetches.
    pub summary: &'static str,
    /// Parameters with defaults.
    pub params: &'static [ParamInfo],
}

const CONFIDENCE: ParamInfo = ParamInfo {
    name: "k",
    default: "1",
    help: "consecutive preceding requests needed to prefetch, 0..=64",
};

/// Every prefetcher, in display order.
pub const PREFETCHERS: &[PrefetcherInfo] = &[
    PrefetcherInfo {
        name: "obl",
        summary: "one-block lookahead: prefetch key+1 after a sequential run (libCacheSim's OBL)",
        params: &[CONFIDENCE],
    },
    PrefetcherInfo {
        name: "readahead",
        summary: "sequential read-ahead: prefetch key+1..=key+depth after a sequential run",
        params: &[
            ParamInfo {
                name: "depth",
                default: "4",
                help: "objects prefetched after a sequential run, 1..=256",
            },
            CONFIDENCE,
        ],
    },
    PrefetcherInfo {
        name: "pg",
        summary: "probability graph: prefetch what followed this object before (Griffioen & Appleton 1994, libCacheSim's PG)",
        params: &[
            ParamInfo {
                name: "lookahead",
                default: "20",
                help: "requests after an object that count as following it, 1..=1024",
            },
            ParamInfo {
                name: "threshold",
                default: "0.05",
                help: "least share of the object's arc weight a successor needs, 0..=1",
            },
            ParamInfo {
                name: "entries",
                default: "1000000",
                help: "most nodes and arcs the graph records (memory: about 40 bytes each), 1..=2^32",
            },
        ],
    },
];

/// A prefetcher as written on the command line (`readahead:depth=8`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefetchSpec {
    /// Prefetcher name, lower case.
    pub name: String,
    /// (name, value) pairs as given.
    pub params: Vec<(String, String)>,
}

impl PrefetchSpec {
    /// Parse `name[:k=v...]`.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let (name, params) = crate::params::split_spec(text)?;
        Ok(PrefetchSpec { name, params })
    }

    /// The spec as it would be written (for reports).
    pub fn label(&self) -> String {
        crate::params::join_spec(&self.name, &self.params)
    }

    /// Check the name and every parameter, so that a typo is reported before a trace is
    /// read.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.build().map(|_| ())
    }

    /// Build the prefetcher (following key + 1 until [`Prefetcher::with_successors`]).
    pub fn build(&self) -> Result<Prefetcher, ConfigError> {
        let info = PREFETCHERS
            .iter()
            .find(|a| a.name == self.name)
            .ok_or_else(|| ConfigError::UnknownModule {
                kind: "prefetcher",
                name: self.name.clone(),
                known: PREFETCHERS
                    .iter()
                    .map(|a| a.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let p = Params::new(info.name, info.params, self.params.clone())?;
        let depth = match info.name {
            "obl" => 1,
            "readahead" => p.integer("depth", 1, 256)? as usize,
            "pg" => {
                let graph = graph::ProbabilityGraph::new(
                    p.integer("lookahead", 1, 1024)? as usize,
                    p.fraction("threshold", 0.0, 1.0)?,
                    p.integer("entries", 1, 1 << 32)? as usize,
                );
                return Ok(Prefetcher {
                    kind: Kind::Graph(Box::new(graph)),
                });
            }
            other => unreachable!("prefetcher {other} is catalogued but not built"),
        };
        let k = p.integer("k", 0, 64)? as usize;
        Ok(Prefetcher {
            kind: Kind::Sequential(Sequential {
                depth,
                k,
                recent: Vec::with_capacity(k),
                successors: None,
            }),
        })
    }
}

impl std::str::FromStr for PrefetchSpec {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PrefetchSpec::parse(s)
    }
}

impl std::fmt::Display for PrefetchSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// The objects that follow each object, for keys that were renumbered: `next(id, j)` is the
/// id of original key + j. Keys the trace never requests get ids from `key_space` up, so
/// the driver's index must hold [`Successors::key_space`] ids.
#[derive(Clone, Debug)]
pub struct Successors {
    depth: usize,
    table: Vec<u64>,
    key_space: usize,
}

impl Successors {
    /// The table for ids `0..originals.len()` whose original keys are `originals`, up to
    /// `depth` objects ahead. Memory: 8 × depth bytes per id, plus a map while building.
    pub fn from_originals(originals: &[u64], depth: usize) -> Self {
        let mut ids: std::collections::HashMap<u64, u64> = originals
            .iter()
            .enumerate()
            .map(|(id, &key)| (key, id as u64))
            .collect();
        let mut table = Vec::with_capacity(originals.len() * depth);
        for &key in originals {
            for j in 1..=depth as u64 {
                let fresh = ids.len() as u64;
                table.push(*ids.entry(key.wrapping_add(j)).or_insert(fresh));
            }
        }
        Successors {
            depth,
            table,
            key_space: ids.len(),
        }
    }

    /// Ids in use, requested and prefetch-only.
    pub fn key_space(&self) -> usize {
        self.key_space
    }

    fn next(&self, id: u64, j: usize) -> u64 {
        self.table[id as usize * self.depth + j - 1]
    }
}

/// A built prefetcher.
#[derive(Clone, Debug)]
pub struct Prefetcher {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// `obl` and `readahead`: key + 1 onwards after a sequential run.
    Sequential(Sequential),
    /// `pg`: what followed the object before.
    Graph(Box<graph::ProbabilityGraph>),
}

/// The trigger's memory of recent requests and how far it reads ahead.
#[derive(Clone, Debug)]
struct Sequential {
    depth: usize,
    k: usize,
    /// The last `k` requested keys, oldest first.
    recent: Vec<u64>,
    successors: Option<Arc<Successors>>,
}

impl Prefetcher {
    /// Follow `table` instead of key + 1 (for densely renumbered keys). Its depth must
    /// cover this prefetcher's. A history-based prefetcher names keys it has seen, so it
    /// needs no table.
    pub fn with_successors(mut self, table: Arc<Successors>) -> Self {
        if let Kind::Sequential(s) = &mut self.kind {
            assert!(table.depth >= s.depth, "successor table too shallow");
            s.successors = Some(table);
        }
        self
    }

    /// How many objects ahead of a key it may prefetch (what a [`Successors`] table must
    /// cover): 0 for a history-based prefetcher, which only names keys it has seen.
    pub fn depth(&self) -> usize {
        match &self.kind {
            Kind::Sequential(s) => s.depth,
            Kind::Graph(_) => 0,
        }
    }

    /// Record a request for `key`, and push onto `out` the keys to prefetch now (in the
    /// order to insert them; the caller skips resident ones). Called once per request.
    pub fn after_request(&mut self, key: u64, out: &mut Vec<u64>) {
        match &mut self.kind {
            Kind::Sequential(s) => s.after_request(key, out),
            Kind::Graph(g) => g.after_request(key, out),
        }
    }
}

impl Sequential {
    /// The key `j` objects after `key`.
    fn ahead(&self, key: u64, j: usize) -> u64 {
        match &self.successors {
            Some(t) => t.next(key, j),
            None => key.wrapping_add(j as u64),
        }
    }

    fn after_request(&mut self, key: u64, out: &mut Vec<u64>) {
        let sequential = self.recent.len() == self.k
            && self
                .recent
                .iter()
                .zip(self.recent.iter().skip(1).chain(std::iter::once(&key)))
                .all(|(&before, &after)| self.ahead(before, 1) == after);
        if self.k > 0 {
            if self.recent.len() == self.k {
                self.recent.remove(0);
            }
            self.recent.push(key);
        }
        if sequential {
            out.extend((1..=self.depth).map(|j| self.ahead(key, j)));
        }
    }
}

/// What prefetching did in one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrefetchStats {
    /// Objects inserted by prefetching.
    pub issued: u64,
    /// Prefetched objects found resident by a later request (counted once each).
    pub used: u64,
    /// Prefetched objects evicted (or invalidated) before any request found them.
    pub evicted_unused: u64,
}

impl PrefetchStats {
    /// Prefetch hits over prefetches (0 when none were issued).
    pub fn accuracy(&self) -> f64 {
        if self.issued == 0 {
            0.0
        } else {
            self.used as f64 / self.issued as f64
        }
    }

    /// The counts since `earlier` (for a run's part after warm-up).
    pub fn since(&self, earlier: &PrefetchStats) -> PrefetchStats {
        PrefetchStats {
            issued: self.issued - earlier.issued,
            used: self.used - earlier.used,
            evicted_unused: self.evicted_unused - earlier.evicted_unused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fired(spec: &str, keys: &[u64]) -> Vec<Vec<u64>> {
        let mut p = PrefetchSpec::parse(spec).unwrap().build().unwrap();
        keys.iter()
            .map(|&k| {
                let mut out = Vec::new();
                p.after_request(k, &mut out);
                out
            })
            .collect()
    }

    #[test]
    fn obl_fires_after_k_consecutive_predecessors() {
        // k=1: 5 follows nothing; 6 follows 5 -> prefetch 7; 9 breaks; 10 -> 11.
        assert_eq!(
            fired("obl", &[5, 6, 9, 10]),
            vec![vec![], vec![7], vec![], vec![11]]
        );
        // k=2 needs two predecessors in a row: only 7 (after 5, 6) and 8 (after 6, 7) fire.
        assert_eq!(
            fired("obl:k=2", &[5, 6, 7, 8, 1]),
            vec![vec![], vec![], vec![8], vec![9], vec![]]
        );
        // k=0 prefetches after every request.
        assert_eq!(fired("obl:k=0", &[3, 9]), vec![vec![4], vec![10]]);
    }

    #[test]
    fn readahead_brings_depth_objects() {
        assert_eq!(
            fired("readahead:depth=3", &[1, 2, 2]),
            vec![vec![], vec![3, 4, 5], vec![]]
        );
    }

    #[test]
    fn successors_follow_original_keys_and_number_unseen_ones() {
        // Original keys 10, 11, 40 as ids 0, 1, 2; 12 and 41 get ids 3 and 4.
        let t = Arc::new(Successors::from_originals(&[10, 11, 40], 1));
        assert_eq!(t.key_space(), 5);
        let mut p = PrefetchSpec::parse("obl")
            .unwrap()
            .build()
            .unwrap()
            .with_successors(t);
        let mut out = Vec::new();
        p.after_request(0, &mut out);
        assert!(out.is_empty());
        p.after_request(1, &mut out);
        assert_eq!(out, vec![3], "11 follows 10, so 12 (id 3) is prefetched");
    }

    #[test]
    fn bad_specs_are_refused() {
        assert!(PrefetchSpec::parse("mithril").unwrap().check().is_err());
        assert!(PrefetchSpec::parse("readahead:depth=0")
            .unwrap()
            .check()
            .is_err());
        assert!(PrefetchSpec::parse("obl:k=1,k=2").unwrap().check().is_err());
        assert!(PrefetchSpec::parse("obl:depth=2").unwrap().check().is_err());
    }
}
