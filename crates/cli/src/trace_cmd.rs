//! `bufcache trace stats|convert|generate`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use sim::mrc::StackDistances;
use trace::synth::Workload;
use trace::Format;

use crate::input::{self, ReadArgs};
use crate::util;

/// `bufcache trace ...`
#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Request counts, working set and reuse distances of a trace.
    Stats(StatsArgs),
    /// Rewrite a trace in another format.
    Convert(ConvertArgs),
    /// Write a seeded synthetic trace.
    Generate(GenerateArgs),
}

/// Arguments of `bufcache trace stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The trace file.
    pub file: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    /// One JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `bufcache trace convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input trace.
    pub input: PathBuf,
    /// Output trace (written atomically).
    pub output: PathBuf,
    /// Input format (default: from the input's name).
    #[arg(long, value_name = "F")]
    pub from: Option<Format>,
    /// Output format (default: from the output's name).
    #[arg(long, value_name = "F")]
    pub to: Option<Format>,
    /// Page size in bytes for block traces.
    #[arg(long, value_name = "B", default_value_t = 4096)]
    pub page_size: u32,
    /// CSV column mapping of the input (as `replay --csv-columns`).
    #[arg(short = 't', long = "csv-columns", value_name = "SPEC", value_parser = trace::CsvMapping::parse_spec)]
    pub csv_columns: Option<trace::CsvMapping>,
}

/// Arguments of `bufcache trace generate`.
#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Workload kind: uniform, zipf, scan, loop, zipfscan, shift; or a full spec such as
    /// `mix(0.7*zipf(keys=1000,alpha=0.9),0.3*scan(keys=500))`.
    pub kind: String,
    /// Number of requests.
    #[arg(long, default_value_t = 1_000_000)]
    pub requests: u64,
    /// Number of distinct keys.
    #[arg(long, default_value_t = 100_000)]
    pub keys: u64,
    /// Zipf exponent (zipf and mix).
    #[arg(long)]
    pub alpha: Option<f64>,
    /// zipfscan: Zipf requests between scans; shift: requests between moves of the hot set.
    #[arg(long)]
    pub every: Option<u64>,
    /// zipfscan: new keys per scan.
    #[arg(long)]
    pub scan: Option<u64>,
    /// shift: keys the Zipf ranking moves by at each move (hot keys cool, cold ones heat).
    #[arg(long)]
    pub shift: Option<u64>,
    /// Size of every object in bytes.
    #[arg(long, default_value_t = 4096)]
    pub object_size: u32,
    /// Seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Output file; its name picks the format (`.txt`, `.csv`, `.oracleGeneral.bin`,
    /// `.oracleGeneral.zst`).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Output format, overriding the file name.
    #[arg(long, value_name = "F")]
    pub format: Option<Format>,
}

/// Run `bufcache trace ...`.
pub fn run(cmd: TraceCommand) -> Result<()> {
    match cmd {
        TraceCommand::Stats(a) => stats(a),
        TraceCommand::Convert(a) => convert(a),
        TraceCommand::Generate(a) => generate(a),
    }
}

#[derive(Serialize)]
struct Stats {
    trace: String,
    requests: u64,
    reads: u64,
    writes: u64,
    deletes: u64,
    distinct_keys: u64,
    footprint_bytes: u64,
    bytes_requested: u64,
    first_access_fraction: f64,
    stack_distance_median: Option<u64>,
    stack_distance_p90: Option<u64>,
    stack_distance_p99: Option<u64>,
    keys_hashed: bool,
    key_collision_probability: f64,
}

fn stats(a: StatsArgs) -> Result<()> {
    let (trace, keys_hashed) = input::load_keyed(&a.file, &a.read)?;
    let s = *trace.summary();
    // Reuse distances come from the one-pass LRU stack; a trace with deletes has none
    // (see sim::mrc), so they are left out rather than approximated.
    let distances = StackDistances::compute(&trace).ok();
    let q = |p: f64| distances.as_ref().and_then(|d| d.quantile(p));
    let first = if s.requests == 0 {
        0.0
    } else {
        s.distinct_keys as f64 / s.requests as f64
    };
    let st = Stats {
        trace: input::describe(&a.file),
        requests: s.requests,
        reads: s.reads,
        writes: s.writes,
        deletes: s.deletes,
        distinct_keys: s.distinct_keys,
        footprint_bytes: s.footprint_bytes,
        bytes_requested: s.bytes_requested,
        first_access_fraction: first,
        stack_distance_median: q(0.5),
        stack_distance_p90: q(0.9),
        stack_distance_p99: q(0.99),
        keys_hashed,
        // Hashed keys may collide; numeric keys are the trace's own and cannot.
        key_collision_probability: if keys_hashed {
            trace::keyhash::collision_probability(s.distinct_keys)
        } else {
            0.0
        },
    };
    if a.json {
        return util::emit(&(serde_json::to_string(&st)? + "\n"));
    }
    let opt = |v: Option<u64>| match (v, &distances) {
        (Some(v), _) => util::thousands(v),
        (None, None) => "n/a (trace has deletes)".into(),
        (None, Some(_)) => "n/a (no key is reused)".into(),
    };
    let n = util::thousands;
    let rows: Vec<[String; 2]> = vec![
        ["requests".into(), n(st.requests)],
        ["  reads".into(), n(st.reads)],
        ["  writes".into(), n(st.writes)],
        ["deletes".into(), n(st.deletes)],
        ["distinct keys".into(), n(st.distinct_keys)],
        [
            "keys".into(),
            if st.keys_hashed {
                format!(
                    "strings hashed to 64 bits (XXH3); chance of a collision {:.1e}",
                    st.key_collision_probability
                )
            } else {
                "numbers".into()
            },
        ],
        [
            "footprint".into(),
            format!(
                "{} ({} bytes)",
                util::human_bytes(st.footprint_bytes),
                n(st.footprint_bytes)
            ),
        ],
        [
            "bytes requested".into(),
            util::human_bytes(st.bytes_requested),
        ],
        [
            "first accesses".into(),
            format!("{:.2}% of requests", 100.0 * st.first_access_fraction),
        ],
        [
            "LRU stack distance p50".into(),
            opt(st.stack_distance_median),
        ],
        ["LRU stack distance p90".into(), opt(st.stack_distance_p90)],
        ["LRU stack distance p99".into(), opt(st.stack_distance_p99)],
    ];
    let mut out = format!("trace: {}\n", st.trace);
    let width = rows.iter().map(|r| r[0].len()).max().unwrap_or(0);
    for r in &rows {
        out.push_str(&format!("  {:<width$}  {}\n", r[0], r[1]));
    }
    util::emit(&out)
}

fn output_format(path: &std::path::Path, given: Option<Format>) -> Result<Format> {
    given.or_else(|| Format::from_path(path)).with_context(|| {
        format!(
            "cannot tell the output format from the name {}: give --to/--format ({})",
            path.display(),
            trace::KNOWN_FORMATS
        )
    })
}

/// Whether `format` stores next-access times (so the whole trace must be known first).
fn needs_next_access(format: Format) -> bool {
    matches!(format, Format::OracleGeneral | Format::OracleGeneralZst)
}

fn convert(a: ConvertArgs) -> Result<()> {
    let to = output_format(&a.output, a.to)?;
    let read = ReadArgs {
        format: a.from,
        page_size: a.page_size,
        csv_columns: a.csv_columns,
    };
    let n = if needs_next_access(to) {
        let mut requests = input::load_requests(&a.input, &read)?;
        trace::fill_next_access(&mut requests);
        trace::write_trace(&a.output, to, requests.into_iter().map(Ok))
    } else {
        let reader = input::reader(&a.input, &read)
            .with_context(|| format!("cannot open trace {}", a.input.display()))?;
        trace::write_trace(&a.output, to, trace::Requests::new(reader))
    }
    .with_context(|| format!("cannot write {}", a.output.display()))?;
    util::emit_note(
        &a.output,
        &format!(
            "{} requests: {} -> {} ({to})\n",
            util::thousands(n),
            a.input.display(),
            a.output.display()
        ),
    )
}

fn generate(a: GenerateArgs) -> Result<()> {
    let to = output_format(&a.output, a.format)?;
    let workload = if a.kind.contains('(') {
        a.kind.parse::<Workload>()
    } else {
        let keys = a.keys.to_string();
        let alpha = a.alpha.map(|v| v.to_string());
        let every = a.every.map(|v| v.to_string());
        let scan = a.scan.map(|v| v.to_string());
        let shift = a.shift.map(|v| v.to_string());
        let mut params: Vec<(&str, &str)> = vec![("keys", &keys)];
        for (name, v) in [
            ("alpha", &alpha),
            ("every", &every),
            ("scan", &scan),
            ("shift", &shift),
        ] {
            if let Some(v) = v {
                params.push((name, v));
            }
        }
        Workload::from_params(&a.kind, &params)
    }
    .with_context(|| format!("bad workload `{}`", a.kind))?;
    let requests = trace::synth::try_generate(&workload, a.requests, a.seed, a.object_size)?;
    let n = if needs_next_access(to) {
        // oracleGeneral records carry each request's next access, known only once the
        // whole trace is: this output is built in memory, so check it fits first.
        let bytes = a
            .requests
            .saturating_mul(std::mem::size_of::<trace::Request>() as u64);
        util::ensure_fits_in_memory(bytes, &format!("--requests {}", a.requests))?;
        let mut requests: Vec<trace::Request> = requests.collect();
        trace::fill_next_access(&mut requests);
        trace::write_trace(&a.output, to, requests.into_iter().map(Ok))
    } else {
        // Other formats stream: memory stays flat whatever --requests says.
        trace::write_trace(&a.output, to, requests.map(Ok))
    }
    .with_context(|| format!("cannot write {}", a.output.display()))?;
    util::emit_note(
        &a.output,
        &format!(
            "{} requests of {workload} (seed {}) -> {} ({to})\n",
            util::thousands(n),
            a.seed,
            a.output.display()
        ),
    )
}
