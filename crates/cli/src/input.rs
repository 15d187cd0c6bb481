//! Where requests come from: a trace file, or a seeded synthetic workload.

use std::path::Path;

use anyhow::{Context, Result};
use clap::Args;
use sim::{CompactTrace, TraceBuilder};
use trace::{CsvMapping, Format, ReadOptions, Request};

/// How to read a trace file (shared by every subcommand that reads one).
#[derive(Args, Debug, Clone)]
pub struct ReadArgs {
    /// Trace format: text, csv, oracle, oraclezst, msr (default: from the file name).
    #[arg(long, value_name = "F")]
    pub format: Option<Format>,
    /// Page size in bytes: block traces are split into pages of this size.
    #[arg(long, value_name = "B", default_value_t = 4096)]
    pub page_size: u32,
    /// CSV column mapping, e.g. `key=2,size=3,delimiter=tab` or libCacheSim's
    /// `time-col=1,obj-id-col=2,obj-size-col=3,delimiter=,,has-header=true` (columns from 1;
    /// see docs/traces.md). Default: detected from the header.
    #[arg(short = 't', long = "csv-columns", value_name = "SPEC", value_parser = parse_mapping)]
    pub csv_columns: Option<CsvMapping>,
}

fn parse_mapping(text: &str) -> Result<CsvMapping, trace::TraceError> {
    CsvMapping::parse_spec(text)
}

impl ReadArgs {
    fn options(&self) -> Result<ReadOptions> {
        anyhow::ensure!(self.page_size > 0, "--page-size must be at least 1 byte");
        Ok(ReadOptions {
            page_size: self.page_size,
            csv: self.csv_columns.clone(),
            ..ReadOptions::default()
        })
    }
}

/// Open a trace file (or `-`) for streaming.
pub fn reader(
    path: &Path,
    read: &ReadArgs,
) -> Result<Box<dyn trace::TraceReader>, trace::TraceError> {
    let options = ReadOptions {
        page_size: read.page_size.max(1),
        csv: read.csv_columns.clone(),
        ..ReadOptions::default()
    };
    trace::open(path, read.format, &options)
}

/// Load a whole trace file into the compact in-memory form.
pub fn load(path: &Path, read: &ReadArgs) -> Result<CompactTrace> {
    Ok(load_keyed(path, read)?.0)
}

/// [`load`], and whether the keys were strings hashed to 64 bits (`trace stats` says so).
pub fn load_keyed(path: &Path, read: &ReadArgs) -> Result<(CompactTrace, bool)> {
    let mut builder = TraceBuilder::new();
    let hashed = push_file(&mut builder, path, read, &mut |_| {})?;
    Ok((builder.finish(), hashed))
}

/// Reads every request of `path` into `builder`, handing each one's timestamp to `watch`
/// on the way (spans of trace time: `sim::trace_time`). Returns whether keys were hashed.
pub fn push_file(
    builder: &mut TraceBuilder,
    path: &Path,
    read: &ReadArgs,
    watch: &mut dyn FnMut(u64),
) -> Result<bool> {
    let options = read.options()?;
    let mut reader = trace::open(path, read.format, &options)
        .with_context(|| format!("cannot open trace {}", path.display()))?;
    let mut batch = vec![Request::default(); 4096];
    loop {
        let n = reader
            .read_batch(&mut batch)
            .with_context(|| format!("cannot read trace {}", path.display()))?;
        if n == 0 {
            break;
        }
        builder.push_batch(&batch[..n]);
        for r in &batch[..n] {
            watch(r.time);
        }
    }
    Ok(reader.keys_hashed())
}

/// Load a whole trace file as requests (for conversion).
pub fn load_requests(path: &Path, read: &ReadArgs) -> Result<Vec<Request>> {
    trace::read_all(path, read.format, &read.options()?)
        .with_context(|| format!("cannot read trace {}", path.display()))
}

/// A synthetic workload described for reports.
pub struct Synthetic {
    /// Human description.
    pub label: String,
    /// The requests.
    pub trace: CompactTrace,
}

/// Stream `workload` into the compact form without materialising `Request`s.
pub fn synthesize(
    workload: &trace::synth::Workload,
    requests: u64,
    seed: u64,
) -> Result<CompactTrace> {
    let mut builder = TraceBuilder::new();
    for r in trace::synth::try_generate(workload, requests, seed, 4096)? {
        builder.push(&r);
    }
    Ok(builder.finish())
}

/// The built-in replay workload: a Zipf(0.9) working set of 100k keys; after every 100k
/// of its requests comes a scan of 20k keys never seen before or again; 2M requests.
/// Seeded, so every run sees the same requests.
pub fn default_replay_workload(seed: u64) -> Result<Synthetic> {
    let mut builder = TraceBuilder::new();
    let label = push_default_workload(&mut builder, seed, &mut |_| {})?;
    Ok(Synthetic {
        label,
        trace: builder.finish(),
    })
}

/// Appends [`default_replay_workload`]'s requests to `builder`, handing each one's
/// timestamp (its index) to `watch`; returns the workload's label.
pub fn push_default_workload(
    builder: &mut TraceBuilder,
    seed: u64,
    watch: &mut dyn FnMut(u64),
) -> Result<String> {
    let workload = trace::synth::Workload::from_params(
        "zipfscan",
        &[
            ("keys", "100000"),
            ("alpha", "0.9"),
            ("every", "100000"),
            ("scan", "20000"),
        ],
    )
    .context("building the built-in workload")?;
    for r in trace::synth::try_generate(&workload, 2_000_000, seed, 4096)? {
        builder.push(&r);
        watch(r.time);
    }
    Ok(format!(
        "synthetic: {workload} (2,000,000 requests, seed {seed})"
    ))
}

/// A name for a trace path in reports.
pub fn describe(path: &Path) -> String {
    path.display().to_string()
}
