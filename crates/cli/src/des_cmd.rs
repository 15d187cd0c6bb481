//! `bufcache des SCENARIO.toml`: run a discrete-event simulation scenario.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use sim::des::scenario::METRICS;
use sim::des::Scenario;

use crate::util;

/// Arguments of `bufcache des`.
#[derive(Args, Debug)]
pub struct DesArgs {
    /// The scenario file (TOML; see docs/simulator.md).
    #[arg(value_name = "SCENARIO")]
    pub scenario: PathBuf,
    /// One JSON object per run (with the full system configuration) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One report field as the table shows it: seconds to the millisecond, counts as they are.
/// Read through the report's serialized form, so that a new field needs no code here.
fn metric(report: &serde_json::Value, name: &str) -> String {
    match &report[name] {
        serde_json::Value::Number(n) if n.is_f64() => {
            format!("{:.3}", n.as_f64().unwrap_or(f64::NAN))
        }
        v => v.to_string(),
    }
}

/// Run `bufcache des`.
pub fn run(a: DesArgs) -> Result<()> {
    let scenario = Scenario::load(&a.scenario)?;
    // Each simulated buffer costs the cache at least its key, size, state and policy
    // metadata; 64 bytes is a floor, so a scenario refused here could never have run.
    const BUFFER_BYTES_MIN: u64 = 64;
    for system in scenario.systems(&a.scenario)? {
        let buffers = u64::from(system.cache.buffers);
        util::ensure_fits_in_memory(
            buffers.saturating_mul(BUFFER_BYTES_MIN),
            &format!("a cache of {buffers} buffers"),
        )?;
    }
    let points = scenario.run(&a.scenario)?;
    let mut out = String::new();
    if a.json {
        for p in &points {
            out.push_str(&serde_json::to_string(p)?);
            out.push('\n');
        }
        util::emit(&out)?;
        let broken: u64 = points.iter().map(|p| p.report.violations).sum();
        anyhow::ensure!(
            broken == 0,
            "the ordering checker found {broken} violations"
        );
        return Ok(());
    }
    let metrics: Vec<&str> = if scenario.measure.metrics.is_empty() {
        METRICS.to_vec()
    } else {
        scenario
            .measure
            .metrics
            .iter()
            .map(String::as_str)
            .collect()
    };
    let mut header = Vec::new();
    if let Some(s) = &scenario.measure.sweep {
        header.push(s.key.clone());
    }
    header.extend(metrics.iter().map(|m| m.to_string()));
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let mut row = Vec::new();
            if let Some(v) = &p.value {
                row.push(v.trim_matches('"').to_string());
            }
            let report = serde_json::to_value(&p.report).unwrap_or_default();
            row.extend(metrics.iter().map(|m| metric(&report, m)));
            row
        })
        .collect();
    out.push_str(&util::table(&header, &rows));
    if points.len() == 1 {
        let disks = &points[0].report.disks;
        let busiest = disks.iter().map(|d| d.utilization).fold(0.0, f64::max);
        let mean = disks.iter().map(|d| d.utilization).sum::<f64>() / disks.len().max(1) as f64;
        out.push_str(&format!(
            "\n{} disks: mean utilization {:.1}%, busiest {:.1}%\n",
            disks.len(),
            mean * 100.0,
            busiest * 100.0
        ));
    }
    util::emit(&out)?;
    let broken: u64 = points.iter().map(|p| p.report.violations).sum();
    if let Some(first) = points
        .iter()
        .find_map(|p| p.report.first_violation.as_deref())
    {
        anyhow::bail!("the ordering checker found {broken} violations; the first: {first}");
    }
    Ok(())
}
