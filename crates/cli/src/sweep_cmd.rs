//! `bufcache sweep`: many traces through one grid of policies and sizes, into a results
//! file that a rerun completes instead of starting over (the work is `sim::sweep`'s).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::ProgressStyle;
use sim::sweep::{self, LocalOptions, SweepSpec, TraceEvent};

use crate::util;

/// Arguments of `bufcache sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Sweep spec, TOML (or JSON if it ends in .json); see docs/sweep.md. Flags below
    /// replace its fields; without a spec, --trace, --policy and --size are needed.
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// Results file (CSV). Cells already in it are skipped; new rows are appended.
    #[arg(short = 'o', long, value_name = "FILE", default_value = "results.csv")]
    pub output: PathBuf,
    /// Worker threads for the runs (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Traces worked on at once (default: the number of threads); the memory budget may
    /// hold fewer.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub traces_at_once: Option<u64>,
    /// Estimated memory of the traces held at once, in MiB (default: half the machine's).
    #[arg(long, value_name = "MIB")]
    pub memory_budget_mib: Option<u64>,
    /// Trace files or globs, comma-separated (replaces the spec's `traces`; relative to
    /// the current directory).
    #[arg(long = "trace", value_name = "GLOB", value_delimiter = ',')]
    pub traces: Vec<String>,
    /// Policies, comma-separated, each `name[:param=value...]`.
    #[arg(long = "policy", value_name = "P", value_delimiter = ',')]
    pub policies: Vec<String>,
    /// Cache sizes, comma-separated: fractions of each trace's working set (0.01), counts
    /// or byte sizes.
    #[arg(long = "size", value_name = "S", value_delimiter = ',')]
    pub sizes: Vec<String>,
    /// Warm-up: a count of operations or a fraction of each trace.
    #[arg(long, value_name = "N|F")]
    pub warmup: Option<String>,
    /// Root seed of the randomized policies.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Unit mode: every object occupies one unit, whatever its size.
    #[arg(long)]
    pub ignore_size: bool,
}

/// The spec file with the flags laid over it, and the directory its relative trace paths
/// are taken from.
fn spec(args: &SweepArgs) -> Result<(SweepSpec, PathBuf)> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (mut spec, mut base) = match &args.spec {
        Some(path) => {
            let spec = SweepSpec::from_file(path)?;
            let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
            (spec, cwd.join(dir))
        }
        None => (
            SweepSpec {
                seed: sweep::spec::DEFAULT_SEED,
                page_size: 4096,
                ..SweepSpec::default()
            },
            cwd.clone(),
        ),
    };
    if !args.traces.is_empty() {
        // Paths typed on the command line are the shell's, so relative to where it is.
        spec.traces = args
            .traces
            .iter()
            .map(|t| cwd.join(t).to_string_lossy().into_owned())
            .collect();
        base = cwd;
    }
    if !args.policies.is_empty() {
        spec.policies = args.policies.clone();
    }
    if !args.sizes.is_empty() {
        spec.sizes = args.sizes.clone();
    }
    if let Some(w) = &args.warmup {
        spec.warmup = Some(w.clone());
    }
    if let Some(s) = args.seed {
        spec.seed = s;
    }
    spec.ignore_size |= args.ignore_size;
    Ok((spec, base))
}

/// Run `bufcache sweep`.
pub fn run(args: SweepArgs) -> Result<()> {
    let (spec, base) = spec(&args)?;
    let plan = spec.resolve(&base)?;
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n as usize)
            .build_global()
            .context("setting up --threads")?;
    }
    let options = LocalOptions::for_machine(
        args.traces_at_once.map(|n| n as usize),
        args.memory_budget_mib
            .map(|mib| mib.saturating_mul(1 << 20)),
    );
    let bar = util::progress(plan.traces.len() as u64, "sweep");
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} traces (eta {eta})")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let summary = sweep::run_local(&plan, &args.output, options, &|event| match event {
        TraceEvent::Skipped { .. } | TraceEvent::Done { .. } => bar.inc(1),
        TraceEvent::Served(_) => {}
    })
    .with_context(|| format!("sweep into {}", args.output.display()))?;
    bar.finish_and_clear();
    let mut out = format!(
        "sweep: {} traces x {} policies x {} sizes = {} cells\n",
        summary.traces,
        plan.policies.len(),
        plan.sizes.len(),
        summary.traces * plan.cells_per_trace(),
    );
    out.push_str(&format!(
        "ran {} traces, skipped {} already complete; wrote {} rows, {} in {}\n",
        summary.traces - summary.traces_skipped,
        summary.traces_skipped,
        summary.rows_written,
        summary.rows_total,
        args.output.display(),
    ));
    if summary.dropped_bytes > 0 {
        out.push_str(&format!(
            "dropped a partial last line ({} bytes) left by an interrupted run\n",
            summary.dropped_bytes
        ));
    }
    out.push_str(&format!("{:.2} s\n", summary.wall_s));
    util::emit(&out)
}
