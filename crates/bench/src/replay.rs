//! Single-threaded replay throughput: how many requests per second a policy serves, and
//! how fast a trace file can be read.
//!
//! Replay throughput is measured on one thread over a trace already in memory, so it
//! shows the cost of the policy and of [`policy::Cache`]'s map, not of I/O or of rayon.
//! Each measurement first warms up (a throwaway replay of the first tenth of the trace, at
//! most [`WARMUP_MAX`] requests, to fault in the trace's pages and train caches and branch
//! predictors), then times one full replay into a fresh cache through
//! [`sim::replay::serve`], the very loop `bufcache replay` runs. Timings are reported,
//! never asserted.

use std::path::Path;
use std::time::Instant;

use policy::registry::PolicyVisitor;
use policy::{BuildContext, Cache, Policy, PolicySpec};
use serde::Serialize;
use sim::replay::serve;
use sim::{CacheSize, CompactTrace, Counts, ReplayError};
use trace::{Format, ReadOptions, Request, TraceError};

use crate::per_second;

/// Default number of requests of the benchmark workload.
pub const DEFAULT_REQUESTS: u64 = 20_000_000;
/// Default number of distinct keys of the benchmark workload.
pub const DEFAULT_KEYS: u64 = 1_000_000;
/// Default Zipf exponent of the benchmark workload.
pub const DEFAULT_ALPHA: f64 = 1.0;
/// Default seed of the benchmark workload.
pub const DEFAULT_SEED: u64 = 42;
/// Default cache size as a fraction of the distinct keys.
pub const DEFAULT_FRACTION: f64 = 0.1;
/// Upper bound on warm-up requests.
pub const WARMUP_MAX: usize = 2_000_000;

/// Why the synthetic workload of `bufcache bench replay` cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// Zipf over no keys at all.
    #[error("--keys must be at least 1")]
    NoKeys,
    /// The generator refused the parameters (a negative exponent, say).
    #[error("bad benchmark workload")]
    Params(#[source] TraceError),
}

/// The synthetic workload of `bufcache bench replay`: Zipf over `keys` keys with exponent
/// `alpha` (the issue's reference workload is 1M keys at α = 1.0).
pub fn zipf_workload(keys: u64, alpha: f64) -> Result<trace::synth::Workload, WorkloadError> {
    if keys == 0 {
        return Err(WorkloadError::NoKeys);
    }
    trace::synth::Workload::from_params(
        "zipf",
        &[("keys", &keys.to_string()), ("alpha", &alpha.to_string())],
    )
    .map_err(WorkloadError::Params)
}

/// The cache size of a run: `size` if given, else [`DEFAULT_FRACTION`] of the distinct
/// keys. Benchmarks count objects, not bytes: the policies' cost per request is what is
/// measured.
pub fn capacity(
    size: Option<&CacheSize>,
    trace: &CompactTrace,
    ignore_size: bool,
) -> Result<u64, sim::SizeError> {
    let default;
    let size = match size {
        Some(s) => s,
        None => {
            default = CacheSize::parse(&DEFAULT_FRACTION.to_string())?;
            &default
        }
    };
    size.resolve(ignore_size, trace.working_set())
}

/// What a cache size counts in unit mode (`ignore_size`) or byte mode: the `mode` of a
/// [`ReplayThroughput`] and the unit of its size.
pub fn mode_name(ignore_size: bool) -> &'static str {
    if ignore_size {
        "objects"
    } else {
        "bytes"
    }
}

/// The policies to measure: those given, or every registered policy with its defaults.
pub fn policies_or_all(given: &[PolicySpec]) -> Vec<PolicySpec> {
    if !given.is_empty() {
        return given.to_vec();
    }
    policy::POLICIES
        .iter()
        .map(|p| PolicySpec {
            name: p.name.to_string(),
            params: Vec::new(),
        })
        .collect()
}

/// One policy's replay throughput.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayThroughput {
    /// The policy as written.
    pub policy: String,
    /// Cache size in units.
    #[serde(rename = "size")]
    pub capacity: u64,
    /// Requests timed.
    pub requests: u64,
    /// Seconds of the timed replay.
    pub seconds: f64,
    /// `requests / seconds`.
    pub requests_per_s: f64,
    /// Miss ratio of the timed replay.
    pub miss_ratio: f64,
    /// `objects` (unit mode: every object one unit, the size a count) or `bytes` (byte
    /// mode: an object occupies its size, the size is in bytes).
    pub mode: &'static str,
}

/// Warms up, then times one whole replay on the concrete policy type handed over by
/// [`policy::AnyPolicy::visit`] (so the loop is compiled for that policy).
struct Timed<'a> {
    trace: &'a CompactTrace,
    capacity: u64,
    ignore_size: bool,
}

impl PolicyVisitor for Timed<'_> {
    type Output = (Counts, f64);
    fn visit<P: Policy + Clone + Send>(self, policy: P) -> (Counts, f64) {
        let future = policy.needs_future().then(|| self.trace.next_access());
        let warm = (self.trace.len() / 10).min(WARMUP_MAX);
        let mut scratch =
            Cache::with_index(policy.clone(), self.capacity, self.trace.dense_index());
        let mut ignored = Counts::default();
        serve(
            &mut scratch,
            self.trace,
            0..warm,
            self.ignore_size,
            future,
            &mut ignored,
            &|_| {},
        );
        drop(scratch);
        let mut cache = Cache::with_index(policy, self.capacity, self.trace.dense_index());
        let mut counts = Counts::default();
        let start = Instant::now();
        serve(
            &mut cache,
            self.trace,
            0..self.trace.len(),
            self.ignore_size,
            future,
            &mut counts,
            &|_| {},
        );
        (counts, start.elapsed().as_secs_f64())
    }
}

/// Time one policy over `trace` on the calling thread.
pub fn replay_throughput(
    trace: &CompactTrace,
    spec: &PolicySpec,
    capacity: u64,
    ignore_size: bool,
    seed: u64,
) -> Result<ReplayThroughput, ReplayError> {
    let built = spec
        .build(&BuildContext::new(capacity, seed).with_key_space(trace.key_space() as u64))
        .map_err(|error| ReplayError::Policy {
            policy: spec.label(),
            size: capacity.to_string(),
            error: Box::new(error),
        })?;
    let (counts, seconds) = built.visit(Timed {
        trace,
        capacity,
        ignore_size,
    });
    Ok(ReplayThroughput {
        policy: spec.label(),
        capacity,
        requests: counts.requests,
        seconds,
        requests_per_s: per_second(counts.requests, seconds),
        miss_ratio: counts.miss_ratio(),
        mode: mode_name(ignore_size),
    })
}

/// How fast a trace file reads. Fields in the order the JSON has always had them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReadThroughput {
    /// The format read: the one asked for, else the one the file name says, else `?`.
    pub format: String,
    /// Records read.
    pub records: u64,
    /// `records / seconds`.
    pub records_per_s: f64,
    /// Seconds of the timed pass.
    pub seconds: f64,
    /// The trace file.
    pub trace: String,
}

/// The name of the format `path` is read in (`?` when neither given nor recognizable).
pub fn format_name(path: &Path, format: Option<Format>) -> String {
    format
        .or_else(|| Format::from_path(path))
        .map_or("?".to_string(), |f| f.to_string())
}

/// Read `path` start to end in batches, twice (the first pass warms the OS page cache and
/// is not timed), and time the second pass.
pub fn read_throughput(
    path: &Path,
    format: Option<Format>,
    options: &ReadOptions,
) -> Result<ReadThroughput, TraceError> {
    let mut batch = vec![Request::default(); 4096];
    let mut pass = || -> Result<(u64, f64), TraceError> {
        let start = Instant::now();
        let mut reader = trace::open(path, format, options)?;
        let mut records = 0u64;
        loop {
            let n = reader.read_batch(&mut batch)?;
            if n == 0 {
                break;
            }
            records += n as u64;
        }
        Ok((records, start.elapsed().as_secs_f64()))
    };
    pass()?;
    let (records, seconds) = pass()?;
    Ok(ReadThroughput {
        format: format_name(path, format),
        records,
        records_per_s: per_second(records, seconds),
        seconds,
        trace: path.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cyclic(requests: u64, keys: u64) -> CompactTrace {
        let reqs: Vec<Request> = (0..requests)
            .map(|i| Request {
                key: (i * 7) % keys,
                size: 1,
                ..Request::default()
            })
            .collect();
        CompactTrace::from_requests(&reqs)
    }

    #[test]
    fn counts_match_a_plain_replay() {
        // Throughput numbers are not asserted; the miss ratio and request count are.
        let t = cyclic(10_000, 100);
        let lru = PolicySpec::parse("lru").unwrap();
        let b = replay_throughput(&t, &lru, 50, true, 0).unwrap();
        let r = sim::replay(
            &t,
            std::slice::from_ref(&lru),
            &[CacheSize::units(50)],
            sim::ReplayOptions {
                ignore_size: true,
                seed: 0,
            },
            &|_| {},
        )
        .unwrap();
        assert_eq!(b.requests, 10_000);
        assert_eq!(b.capacity, 50);
        assert_eq!(b.miss_ratio, r[0].miss_ratio());
        // A cyclic scan over 100 keys in a 50-object LRU misses every time.
        assert_eq!(b.miss_ratio, 1.0);
    }

    #[test]
    fn a_bad_policy_parameter_is_an_error_naming_the_policy() {
        let t = cyclic(100, 10);
        let spec = PolicySpec::parse("gclock:max=0").unwrap();
        let e = replay_throughput(&t, &spec, 5, true, 0).unwrap_err();
        assert!(e.to_string().contains("gclock"), "{e}");
    }

    #[test]
    fn default_capacity_is_a_tenth_of_the_distinct_keys() {
        let t = cyclic(1_000, 100);
        assert_eq!(capacity(None, &t, true).unwrap(), 10);
        assert_eq!(capacity(Some(&CacheSize::units(7)), &t, true).unwrap(), 7);
        // Bytes make no sense when every object counts as one unit.
        let bytes = CacheSize::parse("1MiB").unwrap();
        assert!(capacity(Some(&bytes), &t, true).is_err());
        // In byte mode they are the capacity, and a fraction is of the working set's bytes.
        assert_eq!(capacity(Some(&bytes), &t, false).unwrap(), 1 << 20);
        let bytes_of_all = t.working_set().bytes;
        assert_eq!(capacity(None, &t, false).unwrap(), bytes_of_all / 10);
    }

    #[test]
    fn no_policy_given_means_every_registered_policy() {
        let all = policies_or_all(&[]);
        assert_eq!(all.len(), policy::POLICIES.len());
        assert!(all.iter().all(|p| p.params.is_empty()));
        let one = [PolicySpec::parse("s3fifo:small=0.2").unwrap()];
        assert_eq!(policies_or_all(&one), one.to_vec());
    }

    #[test]
    fn zipf_workload_refuses_an_empty_key_space() {
        let w = zipf_workload(1000, 0.9).unwrap();
        assert_eq!(w.to_string(), "zipf(keys=1000,alpha=0.9)");
        let e = zipf_workload(0, 1.0).unwrap_err();
        assert!(e.to_string().contains("--keys"), "{e}");
        assert!(zipf_workload(10, -1.0).is_err());
    }

    #[test]
    fn reading_a_file_counts_its_records_and_names_its_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        std::fs::write(&path, "1\n2\n3\n2\n").unwrap();
        let r = read_throughput(&path, None, &ReadOptions::default()).unwrap();
        assert_eq!(r.records, 4);
        assert_eq!(r.format, "text");
        assert_eq!(r.trace, path.display().to_string());
        assert_eq!(format_name(Path::new("x.unknown"), None), "?");
    }

    #[test]
    fn json_fields_keep_their_names_and_order() {
        let r = ReplayThroughput {
            policy: "lru".into(),
            capacity: 3,
            requests: 4,
            seconds: 0.5,
            requests_per_s: 8.0,
            miss_ratio: 0.25,
            mode: "objects",
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"policy":"lru","size":3,"requests":4,"seconds":0.5,"requests_per_s":8.0,"miss_ratio":0.25,"mode":"objects"}"#
        );
    }
}
