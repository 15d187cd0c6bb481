//! `bufcache mirror-replay`: mirror models scored offline against a `bufcache serve
//! --trace` log (`serve::replay`), so that models can be compared on one real run
//! without running the server again.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serve::config::parse_size;
use serve::replay::{self, Feed, Score, Scoring};
use serve::trace_log::read_trace;

use crate::util;

/// `bufcache mirror-replay`.
#[derive(Args, Debug)]
pub struct MirrorReplayArgs {
    /// The log written by `bufcache serve --trace FILE`.
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

/// Run `bufcache mirror-replay`.
pub fn run(a: MirrorReplayArgs) -> Result<()> {
    let trace = read_trace(&a.trace)?;
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
        "{} requests logged\n{:<34} {:>8} {:>8} {:>6} {:>7} {:>7} {:>6}\n",
        trace.len(),
        "model",
        "agree",
        "+joined",
        "f.hits",
        "joined",
        "f.miss",
        "n"
    );
    let mut json = String::new();
    let recorded = replay::recorded(&trace, scoring);
    if recorded.compared > 0 {
        table.push_str(&row("(the live predictions)", &recorded));
    }
    for size in &a.sizes {
        let bytes = parse_size(size)?;
        for policy in &a.policies {
            for &feed in &feeds {
                let s = replay::evaluate(&trace, policy, bytes, feed, scoring)?;
                let label = format!("{policy} {size} {}", feed.name());
                table.push_str(&row(&label, &s));
                json.push_str(&serde_json::to_string(&serde_json::json!({
                    "policy": policy,
                    "size_bytes": bytes,
                    "feed": feed.name(),
                    "agreement": s.agreement(),
                    "agreement_joined": s.agreement_joined(),
                    "score": s,
                }))?);
                json.push('\n');
            }
        }
    }
    if a.json {
        return util::emit(&json);
    }
    let d = replay::miss_depths(&trace);
    table.push_str(&format!(
        "logged misses by pages cached at service start: none {}, up to 1/4 {}, up to 1/2 {}, up to 3/4 {}, more {}\n",
        d[0], d[1], d[2], d[3], d[4]
    ));
    util::emit(&table)
}
