//! `bufcache mirror-replay`: mirror models scored offline against a `bufcache serve
//! --trace` log (`serve::replay`), so that models can be compared on one real run
//! without running the server again.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serve::config::parse_size;
use serve::replay::{self, Feed, Score, Scoring};
use serve::replay_bank::{evaluate_bank, phase_specs, stats_period, Judge};
use serve::trace_log::read_log;

use crate::util;

/// `bufcache mirror-replay`.
#[derive(Args, Debug)]
pub struct MirrorReplayArgs {
    /// The log written by `bufcache serve --trace FILE` (its statistics flushes, logged
    /// by servers with --mirror-flush-events, go to models with stats_events=true).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    /// The mirrors' sizes, comma-separated (e.g. 70M,80M).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "80M"
    )]
    pub sizes: Vec<String>,
    /// The mirrors' policies, comma-separated (any online policy of `bufcache policies`).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "clock,lru,linux"
    )]
    pub policies: Vec<String>,
    /// When pages enter the mirror: scheduled, scheduled-wait, completed, timed
    /// (comma-separated; timed is a diagnostic bound, not a live mirror).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "scheduled,scheduled-wait,completed,timed"
    )]
    pub feeds: Vec<String>,
    /// Requests at the start of the schedule that feed the models but are not scored
    /// (the load generator's warm-up: `bufcache load --warmup N`).
    #[arg(long, default_value_t = 0)]
    pub skip: u64,
    /// Score against what the cache held when each request was chosen (logged by
    /// `--trace` servers) instead of when its service began.
    #[arg(long)]
    pub at_choice: bool,
    /// For each policy with a statistics period (`linux:stats_ms=P`), also score a bank
    /// of this many copies whose flushes fall at 0, 1/N, ... of the period, the phase
    /// chosen online from the logged read times (`serve::replay_bank`; the `scheduled`
    /// feed). The kernel's phase is unknown to a mirror; this learns it as a live one
    /// could. 0: no bank.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub phase_bank: u64,
    /// With --phase-bank: judge a logged service a hit when it took at most this many
    /// µs (start to end of service); default: the adaptive mirror's judgement of a read
    /// (50 µs plus a copy at 4 GB/s), which the logged span, holding more than the read,
    /// rarely meets under load.
    #[arg(long, value_name = "US")]
    pub judge_us: Option<u64>,
    /// One JSON object per model instead of the table.
    #[arg(long)]
    pub json: bool,
}

fn row(label: &str, s: &Score) -> String {
    format!(
        "{label:<34} {:>7.1}% {:>7.1}% {:>6} {:>7} {:>7} {:>6}\n",
        100.0 * s.agreement(),
        100.0 * s.agreement_joined(),
        s.false_hits,
        s.false_hits_joined,
        s.false_misses,
        s.compared
    )
}

/// One model's `--json` line (`phase_bank` 0: a single model).
fn json_line(policy: &str, bytes: u64, feed: &str, phase_bank: u64, s: &Score) -> Result<String> {
    let line = serde_json::to_string(&serde_json::json!({
        "policy": policy,
        "size_bytes": bytes,
        "feed": feed,
        "phase_bank": phase_bank,
        "agreement": s.agreement(),
        "agreement_joined": s.agreement_joined(),
        "score": s,
    }))?;
    Ok(line + "\n")
}

/// Run `bufcache mirror-replay`.
pub fn run(a: MirrorReplayArgs) -> Result<()> {
    let log = read_log(&a.trace)?;
    let (trace, flushes) = (&log.records, &log.flushes_us);
    let scoring = Scoring {
        scored_from: a.skip,
        at_choice: a.at_choice,
    };
    let feeds = a
        .feeds
        .iter()
        .map(|f| Feed::parse(f))
        .collect::<Result<Vec<_>, _>>()?;
    let mut table = format!(
        "{} requests logged{}\n{:<34} {:>8} {:>8} {:>6} {:>7} {:>7} {:>6}\n",
        trace.len(),
        if flushes.is_empty() {
            String::new()
        } else {
            format!(", {} statistics flushes", flushes.len())
        },
        "model",
        "agree",
        "+joined",
        "f.hits",
        "joined",
        "f.miss",
        "n"
    );
    let mut json = String::new();
    let recorded = replay::recorded(trace, scoring);
    if recorded.compared > 0 {
        table.push_str(&row("(the live predictions)", &recorded));
    }
    for size in &a.sizes {
        let bytes = parse_size(size)?;
        for policy in &a.policies {
            for &feed in &feeds {
                let s = replay::evaluate(trace, flushes, policy, bytes, feed, scoring)?;
                let label = format!("{policy} {size} {}", feed.name());
                table.push_str(&row(&label, &s));
                json.push_str(&json_line(policy, bytes, feed.name(), 0, &s)?);
            }
            let Some(period) = stats_period(policy).filter(|_| a.phase_bank > 0) else {
                continue;
            };
            let specs = phase_specs(policy, period, a.phase_bank);
            let judge = a.judge_us.map_or(Judge::Adaptive, Judge::Within);
            let s = evaluate_bank(trace, flushes, &specs, bytes, judge, scoring)?;
            let label = format!("{policy} {size} bank of {} phases", a.phase_bank);
            table.push_str(&row(&label, &s));
            json.push_str(&json_line(policy, bytes, "scheduled", a.phase_bank, &s)?);
        }
    }
    if a.json {
        return util::emit(&json);
    }
    let d = replay::miss_depths(trace);
    table.push_str(&format!(
        "logged misses by pages cached at service start: none {}, up to 1/4 {}, up to 1/2 {}, up to 3/4 {}, more {}\n",
        d[0], d[1], d[2], d[3], d[4]
    ));
    util::emit(&table)
}
