//! `bufcache dust`: measure a cache's size and fingerprint its replacement policy.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use dust::{DustConfig, JudgeChoice, Probe, Report, Step};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plotters::prelude::*;

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
    if !r.size.trials.is_empty() {
        util::write_atomic(&dir.join("size.svg"), size_figure(r)?.as_bytes())?;
    }
    let mut steps = vec![Step::ShortTerm, Step::UseBits, Step::History];
    if r.long_term.is_some() {
        steps.push(Step::LongTerm);
    }
    for step in steps {
        let probes: Vec<&Probe> = r.probes.iter().filter(|p| p.step == step).collect();
        let svg = figure(r, step, &probes)?;
        util::write_atomic(&dir.join(format!("{}.svg", step.name())), svg.as_bytes())?;
    }
    Ok(())
}

/// One fingerprint in the style of the thesis's figures 2.6 and 2.8-2.12: every probe as a
/// point, offset in the test region across, probe time (or in cache / on disk for an
/// oracle) up.
fn figure(r: &Report, step: Step, probes: &[&Probe]) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 420)).into_drawing_area();
        let draw = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("drawing the figure: {e:?}");
        root.fill(&WHITE).map_err(draw)?;
        let region = match (step, &r.long_term) {
            (Step::History, _) => r.layout.history_pages,
            (Step::LongTerm, Some(lt)) => lt.layout.region_pages,
            _ => r.layout.region_pages,
        };
        let title = match step {
            Step::ShortTerm => "short-term fingerprint",
            Step::UseBits => "short-term fingerprint, half the use bits set",
            Step::History => "history fingerprint (hot | cold)",
            Step::LongTerm => "2Q long-term queue (Am) fingerprint",
        };
        let caption = format!("{}: {title}", r.target);
        let timed = probes.iter().all(|p| p.latency_ns.is_some()) && !probes.is_empty();
        let mut builder = ChartBuilder::on(&root);
        let chart = builder
            .caption(caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70);
        if timed {
            let max_ms = probes
                .iter()
                .filter_map(|p| p.latency_ns)
                .max()
                .unwrap_or(1) as f64
                / 1e6;
            let mut c = chart
                .build_cartesian_2d(
                    0u64..region,
                    (0.0005f64..max_ms.max(0.01) * 2.0).log_scale(),
                )
                .map_err(draw)?;
            c.configure_mesh()
                .x_desc("offset in test region (pages)")
                .y_desc("probe time (ms)")
                .draw()
                .map_err(draw)?;
            c.draw_series(probes.iter().map(|p| {
                let color = if p.hit { BLUE } else { RED };
                Circle::new(
                    (p.offset, p.latency_ns.unwrap_or(1) as f64 / 1e6),
                    2,
                    color.filled(),
                )
            }))
            .map_err(draw)?;
        } else {
            let mut c = chart
                .build_cartesian_2d(0u64..region, -0.2f64..1.2f64)
                .map_err(draw)?;
            c.configure_mesh()
                .x_desc("offset in test region (pages)")
                .y_desc("in cache (1) / not (0)")
                .y_labels(3)
                .draw()
                .map_err(draw)?;
            // Spread points vertically by iteration so that coinciding probes stay visible.
            let n = r.config.iterations.max(1) as f64;
            c.draw_series(probes.iter().map(|p| {
                let y = if p.hit { 1.0 } else { 0.0 } + (p.iteration as f64 / n - 0.5) * 0.2;
                let color = if p.hit { BLUE } else { RED };
                Circle::new((p.offset, y), 1, color.filled())
            }))
            .map_err(draw)?;
        }
        root.present().map_err(draw)?;
    }
    Ok(svg)
}

/// The size estimate as the thesis's figure 2.1 measures it: for every prefix tried, the
/// fraction of its second pass that was slow, with the estimate marked.
fn size_figure(r: &Report) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 420)).into_drawing_area();
        let draw = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("drawing the figure: {e:?}");
        root.fill(&WHITE).map_err(draw)?;
        let x_max = r
            .size
            .trials
            .iter()
            .map(|t| t.prefix_pages)
            .max()
            .unwrap_or(1)
            .max(1);
        let mut builder = ChartBuilder::on(&root);
        let mut c = builder
            .caption(
                format!("{}: size estimate {} pages", r.target, r.size.pages),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0u64..x_max + x_max / 20, 0f64..1.05f64)
            .map_err(draw)?;
        c.configure_mesh()
            .x_desc("prefix read twice (pages)")
            .y_desc("slow reads in the second pass")
            .draw()
            .map_err(draw)?;
        c.draw_series(r.size.trials.iter().map(|t| {
            let color = if t.fits { BLUE } else { RED };
            Circle::new(
                (t.prefix_pages, t.slow as f64 / t.prefix_pages.max(1) as f64),
                4,
                color.filled(),
            )
        }))
        .map_err(draw)?;
        c.draw_series(std::iter::once(PathElement::new(
            [(r.size.pages, 0.0), (r.size.pages, 1.05)],
            BLACK.stroke_width(1),
        )))
        .map_err(draw)?;
        root.present().map_err(draw)?;
    }
    Ok(svg)
}
