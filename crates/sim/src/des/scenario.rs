//! Scenario files: a system, a workload and what to measure, in TOML.
//!
//! ```toml
//! seed = 7                      # the policy's random numbers
//!
//! [system]
//! final_sync = true
//! [system.cache]
//! block_bytes = 1024
//! buffers = 80
//! policy = "toss"
//! write_policy = "writefull"
//! [system.disks]
//! count = 20
//! service = { kind = "constant", ms = 30 }
//!
//! [workload]
//! kind = "kotz"                 # kotz | xmf | trace
//! pattern = "gw"
//!
//! [measure]
//! metrics = ["time_s", "disk_writes", "rewrite_mistakes"]
//! sweep = { key = "cache.buffers", values = [20, 40, 80] }
//! ```
//!
//! Unknown keys are errors (a typo must not silently fall back to a default), and every
//! error names the file and the key.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::SystemConfig;
use super::engine::{simulate, Report, RunError};
use super::from_trace::TraceWorkload;
use super::kotz::KotzWorkload;
use super::ops::Workload;
use super::tpcb::TpcbWorkload;
use super::xmf::XmfWorkload;

/// Which workload generator, with its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WorkloadSpec {
    /// Kotz & Ellis write patterns.
    Kotz(KotzWorkload),
    /// Serial writes and temporary files (XMF appendix).
    Xmf(XmfWorkload),
    /// Requests from a trace file.
    Trace(TraceWorkload),
    /// Burnett's TPC-B-like transactions with an ordering mechanism.
    Tpcb(TpcbWorkload),
    /// A system-call trace (see [`super::syscalls`]).
    Syscalls(SyscallsWorkload),
}

/// A system-call trace as a workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyscallsWorkload {
    /// The trace file (relative to the scenario file).
    pub path: PathBuf,
    /// Bytes per block (must match the cache's).
    #[serde(default = "default_block")]
    pub block_bytes: u64,
}

fn default_block() -> u64 {
    4096
}

impl WorkloadSpec {
    /// The block size the workload was generated for.
    pub fn block_bytes(&self) -> u64 {
        match self {
            WorkloadSpec::Kotz(k) => k.block_bytes,
            WorkloadSpec::Xmf(x) => x.block_bytes,
            WorkloadSpec::Trace(t) => t.block_bytes,
            WorkloadSpec::Tpcb(t) => t.block_bytes,
            WorkloadSpec::Syscalls(t) => t.block_bytes,
        }
    }

    fn validate(&self) -> Result<(), (String, String)> {
        match self {
            WorkloadSpec::Kotz(k) => k.validate(),
            WorkloadSpec::Xmf(x) => x.validate(),
            WorkloadSpec::Trace(t) if t.path.as_os_str().is_empty() => Err((
                "path".into(),
                "a trace workload needs the trace file's path".into(),
            )),
            WorkloadSpec::Trace(_) => Ok(()),
            WorkloadSpec::Tpcb(t) => t.validate(),
            WorkloadSpec::Syscalls(_) => Ok(()),
        }
    }

    /// Generate (or read) the scripts; errors are messages that name the trace file.
    pub fn build(&self) -> Result<Workload, String> {
        match self {
            WorkloadSpec::Kotz(k) => Ok(k.build()),
            WorkloadSpec::Xmf(x) => Ok(x.build()),
            WorkloadSpec::Trace(t) => t.build().map_err(|e| e.to_string()),
            WorkloadSpec::Tpcb(t) => Ok(t.build()),
            WorkloadSpec::Syscalls(s) => super::syscalls::load(&s.path).map_err(|e| e.to_string()),
        }
    }
}

/// Vary one system key over a list of values; one run per value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// Dotted key inside `[system]` (`cache.buffers`, `cache.write_policy`,
    /// `disks.scheduler`).
    pub key: String,
    /// The values, as they would be written for that key.
    pub values: Vec<toml::Value>,
}

/// What to measure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Measure {
    /// Report fields to print (all when empty); see [`Report`].
    pub metrics: Vec<String>,
    /// Optional sweep of one system key.
    pub sweep: Option<Sweep>,
}

/// A whole scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Seed of the policy's random numbers.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The simulated system.
    #[serde(default)]
    pub system: SystemConfig,
    /// The processes and what they do.
    pub workload: WorkloadSpec,
    /// What to measure.
    #[serde(default)]
    pub measure: Measure,
}

fn default_seed() -> u64 {
    1
}

/// A scenario that cannot be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The scenario file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The TOML does not parse or does not fit the scenario's shape.
    #[error("{}: {message}", path.display())]
    Parse {
        /// The scenario file.
        path: PathBuf,
        /// The parser's message (line, column, key and what was expected).
        message: String,
    },
    /// A value is out of range.
    #[error("{}: {key}: {message}", path.display())]
    Invalid {
        /// The scenario file.
        path: PathBuf,
        /// The dotted key.
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// The run could not finish.
    #[error("{}: {message}", path.display())]
    Run {
        /// The scenario file.
        path: PathBuf,
        /// What happened.
        message: String,
    },
    /// The trace of a trace workload could not be read.
    #[error("{}: workload trace: {message}", path.display())]
    Trace {
        /// The scenario file.
        path: PathBuf,
        /// The trace error (it names the trace file and the record or line).
        message: String,
    },
}

/// Every report field a scenario may ask for.
pub const METRICS: &[&str] = &[
    "time_s",
    "processes_done_s",
    "events",
    "hits",
    "misses",
    "disk_reads",
    "disk_writes",
    "rewrite_mistakes",
    "readahead_reads",
    "admission_refused",
    "prefetch_reads",
    "prefetch_used",
    "flusher_writes",
    "cleaner_writes",
    "dirty_discarded",
    "duplicates",
    "violations",
];

/// One run of a scenario: the swept value (if any) and the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// The swept key's value for this run, as TOML text.
    pub value: Option<String>,
    /// The system this run used.
    pub system: SystemConfig,
    /// What it measured.
    pub report: Report,
}

impl Scenario {
    /// Parse scenario text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ScenarioError> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| ScenarioError::Parse {
            path: path.to_path_buf(),
            message: one_line(&e.to_string()),
        })?;
        scenario.validate(path)?;
        Ok(scenario)
    }

    /// Read and parse a scenario file. A relative trace path is taken relative to the
    /// scenario file's folder, so a scenario and its trace can move together.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut scenario = Self::parse(&text, path)?;
        let trace_path = match &mut scenario.workload {
            WorkloadSpec::Trace(t) => Some(&mut t.path),
            WorkloadSpec::Syscalls(s) => Some(&mut s.path),
            _ => None,
        };
        if let Some(p) = trace_path {
            if p.is_relative() {
                if let Some(dir) = path.parent() {
                    *p = dir.join(&*p);
                }
            }
        }
        Ok(scenario)
    }

    fn validate(&self, path: &Path) -> Result<(), ScenarioError> {
        let invalid = |key: String, message: String| ScenarioError::Invalid {
            path: path.to_path_buf(),
            key,
            message,
        };
        self.workload
            .validate()
            .map_err(|(k, m)| invalid(format!("workload.{k}"), m))?;
        for system in self.systems(path)? {
            system
                .validate()
                .map_err(|p| invalid(format!("system.{}", p.key), p.message))?;
            if system.cache.buffers > 0
                && u64::from(system.cache.block_bytes) != self.workload.block_bytes()
            {
                return Err(invalid(
                    "workload.block_bytes".into(),
                    format!(
                        "is {} but system.cache.block_bytes is {}; they must match",
                        self.workload.block_bytes(),
                        system.cache.block_bytes
                    ),
                ));
            }
        }
        for m in &self.measure.metrics {
            if !METRICS.contains(&m.as_str()) {
                return Err(invalid(
                    "measure.metrics".into(),
                    format!("unknown metric `{m}`; known: {}", METRICS.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// The system of each run: one, or one per swept value.
    pub fn systems(&self, path: &Path) -> Result<Vec<SystemConfig>, ScenarioError> {
        let Some(sweep) = &self.measure.sweep else {
            return Ok(vec![self.system.clone()]);
        };
        let invalid = |message: String| ScenarioError::Invalid {
            path: path.to_path_buf(),
            key: format!("measure.sweep (system.{})", sweep.key),
            message,
        };
        if sweep.values.is_empty() {
            return Err(invalid("needs at least one value".into()));
        }
        let base = toml::Value::try_from(&self.system).map_err(|e| invalid(e.to_string()))?;
        sweep
            .values
            .iter()
            .map(|v| {
                let mut tree = base.clone();
                set_path(&mut tree, &sweep.key, v.clone()).map_err(&invalid)?;
                SystemConfig::deserialize(tree).map_err(|e| invalid(format!("value {v}: {e}")))
            })
            .collect()
    }

    /// Run every point (in parallel when there is a sweep), in sweep order.
    pub fn run(&self, path: &Path) -> Result<Vec<Point>, ScenarioError> {
        use rayon::prelude::*;
        let workload = self
            .workload
            .build()
            .map_err(|message| ScenarioError::Trace {
                path: path.to_path_buf(),
                message,
            })?;
        let systems = self.systems(path)?;
        let values: Vec<Option<String>> = match &self.measure.sweep {
            Some(s) => s.values.iter().map(|v| Some(v.to_string())).collect(),
            None => vec![None],
        };
        systems
            .into_par_iter()
            .zip(values)
            .map(|(system, value)| {
                let report = simulate(&system, &workload, self.seed).map_err(|e| match e {
                    RunError::Config(p) => ScenarioError::Invalid {
                        path: path.to_path_buf(),
                        key: format!("system.{}", p.key),
                        message: p.message,
                    },
                    RunError::Workload(m) => ScenarioError::Invalid {
                        path: path.to_path_buf(),
                        key: "workload".into(),
                        message: m,
                    },
                    e @ (RunError::Stuck { .. } | RunError::TimeOverflow { .. }) => {
                        ScenarioError::Run {
                            path: path.to_path_buf(),
                            message: e.to_string(),
                        }
                    }
                })?;
                Ok(Point {
                    value,
                    system,
                    report,
                })
            })
            .collect()
    }
}

/// The parser's message on one line: "TOML parse error at line L, column C: what" (its
/// middle lines only quote the input).
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    match (lines.first(), lines.last()) {
        (Some(first), Some(last)) if lines.len() > 1 => format!("{first}: {last}"),
        _ => message.trim().to_string(),
    }
}

/// Keys of the system that are absent unless set (they serialize to nothing when unset).
const OPTIONAL_KEYS: &[&str] = &["cache.admission", "cache.prefetch"];

/// Set `key` (dotted) in a TOML table tree; the key must already exist (or be one of the
/// [`OPTIONAL_KEYS`]), so a typo is an error rather than a new, ignored field.
fn set_path(tree: &mut toml::Value, key: &str, value: toml::Value) -> Result<(), String> {
    let mut node = tree;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let table = node
            .as_table_mut()
            .ok_or_else(|| format!("`{}` is not a table", parts[..i].join(".")))?;
        // An optional key left out of the base system is absent from its tree, yet may be
        // swept.
        let here = parts[..i].join(".");
        let optional: Vec<&str> = OPTIONAL_KEYS
            .iter()
            .filter_map(|k| k.rsplit_once('.'))
            .filter(|(table, _)| *table == here)
            .map(|(_, name)| name)
            .collect();
        let settable = i + 1 == parts.len() && optional.contains(part);
        if !table.contains_key(*part) && !settable {
            let mut known: Vec<&str> = table.keys().map(String::as_str).collect();
            known.extend(optional.iter().filter(|k| !table.contains_key(**k)));
            known.sort_unstable();
            return Err(format!("no key `{part}` here; known: {}", known.join(", ")));
        }
        if i + 1 == parts.len() {
            table.insert((*part).to_string(), value);
            return Ok(());
        }
        node = table.get_mut(*part).expect("checked above");
    }
    Err("empty key".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
        [system.cache]
        block_bytes = 1024
        buffers = 80
        policy = "toss"
        write_policy = "writefull"
        [system.disks]
        count = 20
        service = { kind = "constant", ms = 30 }
        [workload]
        kind = "kotz"
        pattern = "gw"
        total_blocks = 200
        [measure]
        sweep = { key = "cache.buffers", values = [20, 40] }
    "#;

    fn err(text: &str) -> String {
        Scenario::parse(text, Path::new("s.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_good_scenario_runs_every_sweep_point() {
        let s = Scenario::parse(GOOD, Path::new("s.toml")).unwrap();
        let points = s.run(Path::new("s.toml")).unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].system.cache.buffers, 20);
        assert_eq!(points[1].system.cache.buffers, 40);
        assert_eq!(points[0].report.disk_writes, 200);
    }

    #[test]
    fn unknown_keys_and_values_are_named() {
        let e = err(&GOOD.replace("buffers = 80", "bufers = 80"));
        assert!(e.contains("s.toml") && e.contains("bufers"), "{e}");
        let e = err(&GOOD.replace("\"writefull\"", "\"writesome\""));
        assert!(e.contains("writesome") && e.contains("writethru"), "{e}");
        let e = err(&GOOD.replace("kind = \"kotz\"", "kind = \"nope\""));
        assert!(e.contains("nope") && e.contains("kotz"), "{e}");
        let e = err(&GOOD.replace("cache.buffers", "cache.bufers"));
        assert!(e.contains("measure.sweep") && e.contains("bufers"), "{e}");
        let e = err(&GOOD.replace("block_bytes = 1024", "block_bytes = 4096"));
        assert!(e.contains("workload.block_bytes"), "{e}");
        let e = err(&GOOD.replace("count = 20", "count = 0"));
        assert!(e.contains("system.disks.count"), "{e}");
        let e = err(&GOOD.replace("[measure]", "[measure]\nmetrics = [\"speed\"]"));
        assert!(e.contains("speed") && e.contains("time_s"), "{e}");
    }

    #[test]
    fn admission_and_prefetch_may_be_swept_though_absent_and_are_checked_up_front() {
        let sweep = |values: &str| {
            GOOD.replace(
                "{ key = \"cache.buffers\", values = [20, 40] }",
                &format!("{{ key = \"cache.admission\", values = {values} }}"),
            )
        };
        let s =
            Scenario::parse(&sweep("[\"always\", \"secondhit\"]"), Path::new("s.toml")).unwrap();
        let systems = s.systems(Path::new("s.toml")).unwrap();
        assert_eq!(systems[1].cache.admission.as_deref(), Some("secondhit"));
        assert_eq!(systems[0].cache.prefetch, None);
        let e = err(&sweep("[\"bloom\"]"));
        assert!(
            e.contains("system.cache.admission") && e.contains("secondhit"),
            "{e}"
        );
        // A misspelt optional key is still an error that lists it.
        let e = err(&GOOD.replace("cache.buffers", "cache.admision"));
        assert!(
            e.contains("admision") && e.contains("admission, block_bytes"),
            "{e}"
        );
    }

    #[test]
    fn times_the_clock_cannot_hold_are_named() {
        let e = err(&GOOD.replace("ms = 30", "ms = 1e300"));
        assert!(
            e.contains("system.disks.service") && e.contains("2^64 ns"),
            "{e}"
        );
        let e = err(&GOOD.replace(
            "pattern = \"gw\"",
            "pattern = \"gw\"\ncompute_max_ms = 1e300",
        ));
        assert!(
            e.contains("workload.compute_max_ms") && e.contains("2^64 ns"),
            "{e}"
        );
        let e = err(&GOOD.replace(
            "kind = \"kotz\"\n        pattern = \"gw\"\n        total_blocks = 200",
            "kind = \"xmf\"\n        block_bytes = 1024\n        compute_ms = 1e300",
        ));
        assert!(
            e.contains("workload.compute_ms") && e.contains("2^64 ns"),
            "{e}"
        );
    }
}
