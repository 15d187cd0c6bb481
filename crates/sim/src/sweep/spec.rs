//! What a sweep runs, as a user writes it ([`SweepSpec`], TOML or JSON) and as it runs
//! ([`SweepPlan`]: globs expanded, policies and sizes parsed and checked).
//!
//! Everything that can be wrong with a spec is found by [`SweepSpec::resolve`], before a
//! single trace is read: an unknown key, a policy name or parameter, a size, a warm-up, a
//! trace that does not exist, a glob that matches nothing. A sweep of a thousand traces
//! must not fail on the last one because of a typo.

use std::path::{Path, PathBuf};

use policy::{BuildContext, ConfigError, PolicySpec};
use serde::{Deserialize, Serialize};
use trace::{Format, ReadOptions};

use super::SweepError;
use crate::replay::{Grid, ReplayOptions, Schedule};
use crate::size::CacheSize;
use crate::trace_time::Warmup;

/// The default root seed, as `bufcache replay`'s.
pub const DEFAULT_SEED: u64 = 42;

/// A sweep as written in its spec file. Unknown keys are refused (a misspelt `sizes`
/// would otherwise silently run nothing).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// Trace files or globs (`traces/*.oracleGeneral.zst`); relative ones are taken from
    /// the directory of the spec file.
    pub traces: Vec<String>,
    /// Policies, each `name[:param=value...]` as `bufcache replay --policy` takes them.
    pub policies: Vec<String>,
    /// Cache sizes: fractions of each trace's working set (`0.001` .. `0.8`), counts or
    /// byte sizes, as `bufcache replay --size` takes them.
    pub sizes: Vec<String>,
    /// Operations served before counting starts: a count (`"100000"`) or a fraction of
    /// each trace (`"0.2"`). Default none.
    #[serde(default)]
    pub warmup: Option<String>,
    /// Root seed of every randomized policy.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Unit mode: every object occupies one unit and sizes count objects.
    #[serde(default)]
    pub ignore_size: bool,
    /// Trace format (`text`, `csv`, `oracle`, `oraclezst`, `msr`); default from each name.
    #[serde(default)]
    pub format: Option<String>,
    /// Page size in bytes that block traces are split into.
    #[serde(default = "default_page_size")]
    pub page_size: u32,
}

fn default_seed() -> u64 {
    DEFAULT_SEED
}

fn default_page_size() -> u32 {
    4096
}

/// A sweep's warm-up: a count or a fraction of each trace ([`Warmup::parse`], shared with
/// `replay`); spans of trace time are refused (the sweep reads no timestamps).
fn parse_warmup(text: &str) -> Result<Warmup, SweepError> {
    match Warmup::parse(text) {
        Ok(w @ (Warmup::Requests(_) | Warmup::Fraction(_))) => Ok(w),
        Ok(Warmup::Seconds(_)) | Err(_) => Err(SweepError::Warmup {
            text: text.to_string(),
        }),
    }
}

impl SweepSpec {
    /// Read a spec file: TOML, or JSON when the name ends in `.json`.
    pub fn from_file(path: &Path) -> Result<Self, SweepError> {
        let text = std::fs::read_to_string(path).map_err(|source| SweepError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let json = path.extension().is_some_and(|e| e == "json");
        Self::from_text(&text, json).map_err(|reason| SweepError::Spec {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// Parse a spec from text (TOML, or JSON if `json`); the error is the parser's message.
    pub fn from_text(text: &str, json: bool) -> Result<Self, String> {
        if json {
            serde_json::from_str(text).map_err(|e| e.to_string())
        } else {
            toml::from_str(text).map_err(|e| e.to_string())
        }
    }

    /// Check everything and expand the globs; relative trace paths are taken from `base`.
    pub fn resolve(&self, base: &Path) -> Result<SweepPlan, SweepError> {
        if self.traces.is_empty() {
            return Err(SweepError::Empty { what: "traces" });
        }
        let mut plan = self.resolve_grid()?;
        for pattern in &self.traces {
            expand(base, pattern, &mut plan.traces)?;
        }
        Ok(plan)
    }

    /// The plan of this spec's grid over the one trace at `path`, whatever `traces` says:
    /// what a task of a distributed sweep runs, given a path its driver resolved (and
    /// written into rows exactly as given, so they match the driver's own).
    pub fn resolve_one(&self, path: PathBuf) -> Result<SweepPlan, SweepError> {
        let mut plan = self.resolve_grid()?;
        plan.traces.push(path);
        Ok(plan)
    }

    /// Everything but the traces: policies, sizes, warm-up, format, page size.
    fn resolve_grid(&self) -> Result<SweepPlan, SweepError> {
        let empty = |what: &'static str| SweepError::Empty { what };
        if self.policies.is_empty() {
            return Err(empty("policies"));
        }
        if self.sizes.is_empty() {
            return Err(empty("sizes"));
        }
        let policies = self
            .policies
            .iter()
            .map(|text| check_policy(text, self.seed))
            .collect::<Result<Vec<_>, _>>()?;
        let sizes = self
            .sizes
            .iter()
            .map(|text| CacheSize::parse(text).map_err(SweepError::Size))
            .collect::<Result<Vec<_>, _>>()?;
        for size in &sizes {
            // A byte size in unit mode is wrong for every trace: say so now. (A fraction's
            // working set, the only thing still unknown, cannot make it right.)
            if let (true, crate::size::SizeKind::Bytes(_)) = (self.ignore_size, size.kind) {
                return Err(SweepError::Size(crate::SizeError::BytesInUnitMode {
                    text: size.text.clone(),
                }));
            }
        }
        let warmup = self.warmup.as_deref().map(parse_warmup).transpose()?;
        let format = self
            .format
            .as_deref()
            .map(str::parse::<Format>)
            .transpose()
            .map_err(SweepError::Trace)?;
        if self.page_size == 0 {
            return Err(SweepError::PageSize);
        }
        Ok(SweepPlan {
            traces: Vec::new(),
            policies,
            sizes,
            warmup,
            warmup_text: self.warmup.clone().unwrap_or_else(|| "0".into()),
            seed: self.seed,
            ignore_size: self.ignore_size,
            format,
            page_size: self.page_size,
        })
    }
}

/// Parse a policy and build it once at a small capacity, so that an unknown name,
/// parameter or value fails before any trace is read (capacity errors wait for the real
/// sizes, which depend on each trace).
fn check_policy(text: &str, seed: u64) -> Result<PolicySpec, SweepError> {
    let bad = |error| SweepError::Policy {
        policy: text.to_string(),
        error: Box::new(error),
    };
    let spec = PolicySpec::parse(text).map_err(bad)?;
    match spec.build(&BuildContext::new(64, seed)) {
        Ok(_) | Err(ConfigError::Capacity { .. }) => Ok(spec),
        Err(e) => Err(bad(e)),
    }
}

/// Appends the files `pattern` names: itself if it has no glob characters (and must then
/// exist), or every match in name order (and must match something).
fn expand(base: &Path, pattern: &str, out: &mut Vec<PathBuf>) -> Result<(), SweepError> {
    let full = base.join(pattern);
    if !pattern.contains(['*', '?', '[']) {
        if !full.is_file() {
            return Err(SweepError::MissingTrace { path: full });
        }
        out.push(full);
        return Ok(());
    }
    let text = full.to_string_lossy().into_owned();
    let bad = |reason: String| SweepError::Glob {
        pattern: text.clone(),
        reason,
    };
    let paths = glob::glob(&text).map_err(|e| bad(e.to_string()))?;
    let before = out.len();
    for entry in paths {
        let path = entry.map_err(|e| bad(e.to_string()))?;
        if path.is_file() {
            out.push(path);
        }
    }
    if out.len() == before {
        return Err(bad("matches no file".into()));
    }
    Ok(())
}

/// A checked sweep: the traces to run, and the grid every one of them runs.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// Trace files, globs expanded (each glob's matches in name order).
    pub traces: Vec<PathBuf>,
    /// Policies, in output order.
    pub policies: Vec<PolicySpec>,
    /// Sizes, in output order within each policy.
    pub sizes: Vec<CacheSize>,
    /// Warm-up, if any.
    pub warmup: Option<Warmup>,
    /// The warm-up as written (`0` for none), as it appears in result rows.
    pub warmup_text: String,
    /// Root seed.
    pub seed: u64,
    /// Unit mode.
    pub ignore_size: bool,
    /// Trace format, or `None` to tell from each file's name.
    pub format: Option<Format>,
    /// Page size for block traces.
    pub page_size: u32,
}

impl SweepPlan {
    /// How each trace is read.
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            page_size: self.page_size,
            ..ReadOptions::default()
        }
    }

    /// The replay grid over a trace of `ops` operations (deletes included).
    pub fn grid<'a>(
        &'a self,
        admission: &'a policy::AdmissionSpec,
        ops: u64,
    ) -> Result<Grid<'a>, SweepError> {
        let warmup = self.warmup.and_then(|w| w.positions(ops)).unwrap_or(0);
        if warmup >= ops && ops > 0 {
            return Err(SweepError::WarmupTooLong { warmup, ops });
        }
        Ok(Grid {
            policies: &self.policies,
            sizes: &self.sizes,
            admission,
            prefetch: None,
            options: ReplayOptions {
                ignore_size: self.ignore_size,
                seed: self.seed,
            },
            schedule: Schedule {
                warmup,
                interval: crate::replay::Intervals::None,
            },
        })
    }

    /// Cells per trace.
    pub fn cells_per_trace(&self) -> usize {
        self.policies.len() * self.sizes.len()
    }
}
