//! `bufcache dust`: measure a cache's size and fingerprint its replacement policy.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use dust::{DustConfig, JudgeChoice, Report};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::util;

/// How hits are judged.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum JudgeArg {
    /// Timing when the target times reads, otherwise its oracle.
    Auto,
    /// The target's ground truth.
    Oracle,
    /// Calibrated timing.
    Timing,
}

/// Arguments of `bufcache dust`.
#[derive(Args, Debug)]
pub struct DustArgs {
    /// What to probe: `sim:POLICY[:param=value...]:pages=N[:timing=on]` (policies and
    /// parameters as in `bufcache policies`), the real buffer pool
    /// `pool:POLICY[:param=value...]:frames=N[:blocks=M][:file=PATH][:reserve=R][:timing=on]`,
    /// or `linux:PATH`.
    #[arg(long, value_name = "TARGET")]
    pub target: String,
    /// Cache size in pages to use instead of measuring it.
    #[arg(long, value_name = "PAGES")]
    pub size_hint: Option<u64>,
    /// Iterations of the short-term, use-bit and history steps (20 probes each).
    #[arg(long, default_value_t = 300)]
    pub iterations: u32,
    /// Seed of the probe placement and of simulated targets.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// How hits are judged.
    #[arg(long, value_enum, default_value = "auto")]
    pub judge: JudgeArg,
    /// Write the raw probes (CSV), the report (JSON) and the figures (SVG) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// End with one JSON object on the last line of stdout.
    #[arg(long)]
    pub json: bool,
}

/// Run `bufcache dust`.
pub fn run(args: DustArgs) -> Result<()> {
    let mut target = dust::target_from_spec(&args.target, args.seed)?;
    let config = DustConfig {
        iterations: args.iterations,
        seed: args.seed,
        size_hint: args.size_hint,
        judge: match args.judge {
            JudgeArg::Auto => JudgeChoice::Auto,
            JudgeArg::Oracle => JudgeChoice::Oracle,
            JudgeArg::Timing => JudgeChoice::Timing,
        },
        ..DustConfig::default()
    };
    let started = std::time::Instant::now();
    let bar = iteration_bar(u64::from(args.iterations));
    let report = dust::fingerprint_with_progress(target.as_mut(), &config, &mut |i| {
        bar.set_position(u64::from(i))
    })
    .with_context(|| format!("fingerprinting {}", args.target))?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    if let Some(dir) = &args.out {
        write_outputs(dir, &report)?;
    }
    let mut out = String::new();
    if !args.json {
        out.push_str(&summary(&report, seconds));
        if let Some(dir) = &args.out {
            let _ = writeln!(out, "raw data and figures written to {}", dir.display());
        }
    } else {
        out.push_str(&serde_json::to_string(&json_line(&report, seconds))?);
        out.push('\n');
    }
    util::emit(&out)
}

/// A progress bar over iterations on stderr, drawn only when stderr is a terminal (the
/// size estimate before the first iteration shows as an empty bar).
fn iteration_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("dust [{bar:40}] {pos}/{len} iterations (eta {eta})")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// The one-line JSON result.
fn json_line(r: &Report, seconds: f64) -> serde_json::Value {
    serde_json::json!({
        "target": r.target,
        "verdict": r.verdict.verdict,
        "attributes": r.verdict.attributes,
        "confidence": r.verdict.confidence,
        "size_estimate_pages": r.size.pages,
        "size_source": r.size.source,
        "layout_estimate_pages": r.layout.estimate_pages,
        "iterations": r.config.iterations,
        "seed": r.config.seed,
        "judge": r.judge,
        "judge_agreement": r.judge_agreement,
        "probes": r.probes.len(),
        "features": r.features,
        "reasons": r.verdict.reasons,
        "long_term": r.long_term,
        "seconds": seconds,
    })
}

fn summary(r: &Report, seconds: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "target: {}", r.target);
    match &r.calibration {
        Some(c) => {
            let _ = writeln!(
                s,
                "judge: timing, threshold {} ns (hot median {} ns, cold median {} ns; {} hot and {} cold of {} calibration reads misjudged)",
                c.threshold_ns, c.hot_median_ns, c.cold_median_ns, c.hot_misjudged, c.cold_misjudged, c.samples
            );
        }
        None => {
            let _ = writeln!(s, "judge: oracle");
        }
    }
    if let Some(a) = r.judge_agreement {
        let _ = writeln!(
            s,
            "timing agrees with the ground truth on {:.2}% of probes",
            a * 100.0
        );
    }
    let _ = writeln!(
        s,
        "cache size: {} pages ({}, {} trials)",
        util::thousands(r.size.pages),
        r.size.source,
        r.size.trials.len()
    );
    for c in &r.fit_checks {
        let _ = writeln!(
            s,
            "  test region check at {} pages: {:.0}% of probes resident",
            util::thousands(c.estimate_pages),
            c.hit_fraction * 100.0
        );
    }
    let l = &r.layout;
    let _ = writeln!(
        s,
        "layout: {} stripes of {} pages, eviction scan {} pages, history hot+cold {} pages",
        dust::steps::STRIPES,
        util::thousands(l.stripe_pages),
        util::thousands(l.evict_pages),
        util::thousands(l.history_pages)
    );
    let f = &r.features;
    let header = [
        "step",
        "survival",
        "initial",
        "recency",
        "frequency",
        "mixed",
        "by stripe",
    ]
    .map(String::from);
    let row = |name: &str, x: &dust::classify::StepFeatures| {
        vec![
            name.to_string(),
            format!("{:.2}", x.survival),
            format!("{:.2}", x.initial),
            format!("{:.2}", x.recency),
            format!("{:.2}", x.frequency),
            format!("{:.2}", dust::classify::normalised_mixedness(x)),
            x.profile
                .iter()
                .map(|p| char::from(b'0' + (p * 9.0).round() as u8))
                .collect(),
        ]
    };
    let mut rows = vec![
        row("short_term", &f.short_term),
        row("use_bits", &f.use_bits),
    ];
    if let Some(lt) = &r.long_term {
        rows.push(row("long_term", &lt.features));
    }
    s.push_str(&util::table(&header, &rows));
    let _ = writeln!(
        s,
        "use-bit shift {:.2}; history: hot survives {:.2}, cold {:.2}",
        f.use_bit_shift, f.hot_survival, f.cold_survival
    );
    let attrs: Vec<&str> = r.verdict.attributes.iter().map(|a| a.name()).collect();
    let _ = writeln!(
        s,
        "verdict: {} (confidence {:.2}; attributes: {})",
        r.verdict.verdict,
        r.verdict.confidence,
        if attrs.is_empty() {
            "none".to_string()
        } else {
            attrs.join(", ")
        }
    );
    for reason in &r.verdict.reasons {
        let _ = writeln!(s, "  - {reason}");
    }
    if let Some(lt) = &r.long_term {
        let _ = writeln!(
            s,
            "2Q's long-term queue (Am): {} (recency {:.2}, initial access {:.2}, frequency {:.2})",
            lt.order, lt.features.recency, lt.features.initial, lt.features.frequency
        );
    }
    let _ = writeln!(
        s,
        "{} iterations, {} probes, {seconds:.2} s",
        r.config.iterations,
        r.probes.len()
    );
    s
}

fn write_outputs(dir: &Path, r: &Report) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut csv = String::from("step,iteration,offset,stripe,hit,latency_ns,resident\n");
    for p in &r.probes {
        csv.push_str(&util::csv_line(&[
            p.step.name().to_string(),
            p.iteration.to_string(),
            p.offset.to_string(),
            r.layout.stripe_of(p.offset).to_string(),
            u8::from(p.hit).to_string(),
            p.latency_ns.map(|t| t.to_string()).unwrap_or_default(),
            p.resident
                .map(|b| u8::from(b).to_string())
                .unwrap_or_default(),
        ]));
    }
    util::write_atomic(&dir.join("probes.csv"), csv.as_bytes())?;
    let mut trials = String::from("prefix_pages,slow,fits\n");
    for t in &r.size.trials {
        trials.push_str(&util::csv_line(&[
            t.prefix_pages.to_string(),
            t.slow.to_string(),
            t.fits.to_string(),
        ]));
    }
    util::write_atomic(&dir.join("size.csv"), trials.as_bytes())?;
    // The report without the probes (they are in probes.csv).
    let mut value = serde_json::to_value(r)?;
    if let Some(o) = value.as_object_mut() {
        o.remove("probes");
    }
    util::write_atomic(
        &dir.join("report.json"),
        serde_json::to_string_pretty(&value)?.as_bytes(),
    )?;
    for figure in dust::figures::figures(r) {
        figure.write_into(dir)?;
    }
    Ok(())
}
