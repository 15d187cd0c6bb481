//! Dust's figures as specs (drawn by the `report` crate): the size estimate (thesis figure
//! 2.1) and one fingerprint per step (figures 2.6, 2.8-2.12), every probe a dot.

use ::report::{Axis, Bounds, Color, Figure, FigureFile, Legend, Series};

use crate::report::Report;
use crate::steps::{Probe, Step};

/// The lowest probe time the timed fingerprints show, ms: a faster probe is drawn on the
/// axis floor (a log axis cannot show zero).
const FLOOR_MS: f64 = 0.0005;

/// Every figure of `r`: `size.svg` when the size was measured (not hinted), then one
/// `STEP.svg` per step that ran.
pub fn figures(r: &Report) -> Vec<FigureFile> {
    let mut files = Vec::new();
    if !r.size.trials.is_empty() {
        files.push(FigureFile::new("size.svg", size_figure(r)));
    }
    let mut steps = vec![Step::ShortTerm, Step::UseBits, Step::History];
    if r.long_term.is_some() {
        steps.push(Step::LongTerm);
    }
    for step in steps {
        let file_name = format!("{}.svg", step.name());
        files.push(FigureFile::new(file_name, step_figure(r, step)));
    }
    files
}

fn compact(title: String, x: Axis, y: Axis) -> Figure {
    Figure::new(title, x, y)
        .with_layout(::report::Layout::Compact)
        .with_legend(Legend::Hidden)
}

/// Hits blue, misses red, `radius` pixels, at `y(probe)`.
fn hits_and_misses(probes: &[&Probe], radius: u32, y: impl Fn(&Probe) -> f64) -> [Series; 2] {
    let dots = |hit: bool| -> Vec<(f64, f64)> {
        probes
            .iter()
            .filter(|p| p.hit == hit)
            .map(|p| (p.offset as f64, y(p)))
            .collect()
    };
    [
        Series::points(dots(true), radius).color(Color::Blue),
        Series::points(dots(false), radius).color(Color::Red),
    ]
}

/// One fingerprint: every probe of `step` as a dot, offset in the test region across,
/// probe time up (log scale) when every probe was timed, else in cache or not, spread
/// by iteration so that coinciding probes stay visible.
pub fn step_figure(r: &Report, step: Step) -> Figure {
    let probes: Vec<&Probe> = r.probes.iter().filter(|p| p.step == step).collect();
    let region = match (step, &r.long_term) {
        (Step::History, _) => r.layout.history_pages,
        (Step::LongTerm, Some(lt)) => lt.layout.region_pages,
        _ => r.layout.region_pages,
    };
    let what = match step {
        Step::ShortTerm => "short-term fingerprint",
        Step::UseBits => "short-term fingerprint, half the use bits set",
        Step::History => "history fingerprint (hot | cold)",
        Step::LongTerm => "2Q long-term queue (Am) fingerprint",
    };
    let title = format!("{}: {what}", r.target);
    let x = Axis::new("offset in test region (pages)")
        .bounds(Bounds::Fixed {
            min: 0.0,
            max: region.max(1) as f64,
        })
        .whole_numbers();
    let timed = !probes.is_empty() && probes.iter().all(|p| p.latency_ns.is_some());
    if timed {
        let ms = |p: &Probe| p.latency_ns.unwrap_or(0) as f64 / 1e6;
        let max_ms = probes.iter().map(|p| ms(p)).fold(0.0, f64::max);
        let y = Axis::new("probe time (ms)").log().bounds(Bounds::Fixed {
            min: FLOOR_MS,
            max: max_ms.max(0.01) * 2.0,
        });
        compact(title, x, y).with_all_series(hits_and_misses(&probes, 2, |p| ms(p).max(FLOOR_MS)))
    } else {
        let iterations = f64::from(r.config.iterations.max(1));
        let y = Axis::new("in cache (1) / not (0)")
            .bounds(Bounds::Fixed {
                min: -0.2,
                max: 1.2,
            })
            .ticks(3);
        let spread = |p: &Probe| {
            f64::from(u8::from(p.hit)) + (f64::from(p.iteration) / iterations - 0.5) * 0.2
        };
        compact(title, x, y).with_all_series(hits_and_misses(&probes, 1, spread))
    }
}

/// The size estimate as thesis figure 2.1 measures it: for every prefix tried, the
/// fraction of its second pass that was slow (blue: it fitted), and the estimate as a
/// vertical rule.
pub fn size_figure(r: &Report) -> Figure {
    let trials = &r.size.trials;
    let x_max = trials
        .iter()
        .map(|t| t.prefix_pages)
        .max()
        .unwrap_or(1)
        .max(1);
    let dots = |fits: bool| -> Vec<(f64, f64)> {
        trials
            .iter()
            .filter(|t| t.fits == fits)
            .map(|t| {
                let slow = t.slow as f64 / t.prefix_pages.max(1) as f64;
                (t.prefix_pages as f64, slow)
            })
            .collect()
    };
    let estimate = r.size.pages as f64;
    compact(
        format!("{}: size estimate {} pages", r.target, r.size.pages),
        Axis::new("prefix read twice (pages)")
            .bounds(Bounds::Fixed {
                min: 0.0,
                max: (x_max + x_max / 20) as f64,
            })
            .whole_numbers(),
        Axis::new("slow reads in the second pass").bounds(Bounds::Fixed {
            min: 0.0,
            max: 1.05,
        }),
    )
    .with_series(Series::points(dots(true), 4).color(Color::Blue))
    .with_series(Series::points(dots(false), 4).color(Color::Red))
    .with_series(Series::rule((estimate, 0.0), (estimate, 1.05)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fingerprint, DustConfig, SimTarget};

    fn run(target: &str, size_hint: Option<u64>) -> Report {
        let mut t = SimTarget::parse(target, 3).unwrap();
        let config = DustConfig {
            iterations: 4,
            seed: 3,
            size_hint,
            ..DustConfig::default()
        };
        fingerprint(&mut t, &config).unwrap()
    }

    fn dots(f: &Figure) -> usize {
        f.series
            .iter()
            .filter(|s| matches!(s.style, ::report::Style::Points { .. }))
            .map(|s| s.points.len())
            .sum()
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "draws SVG through plotters: minutes under Miri, and no unsafe code of ours"
    )]
    fn a_measured_size_gets_its_figure_and_every_probe_is_a_dot() {
        let r = run("sim:lru:pages=300", None);
        let files = figures(&r);
        let names: Vec<&str> = files.iter().map(|f| f.file_name.as_str()).collect();
        assert_eq!(
            names,
            ["size.svg", "short_term.svg", "use_bits.svg", "history.svg"]
        );
        assert_eq!(dots(&files[0].figure), r.size.trials.len());
        assert!(files[0].figure.title.ends_with("size estimate 300 pages"));
        for (file, step) in files[1..]
            .iter()
            .zip([Step::ShortTerm, Step::UseBits, Step::History])
        {
            let probes = r.probes.iter().filter(|p| p.step == step).count();
            assert_eq!(dots(&file.figure), probes, "{}", file.file_name);
            // An oracle target: in cache or not, on a linear axis.
            assert_eq!(file.figure.y.scale, ::report::Scale::Linear);
            ::report::render_svg(&file.figure).unwrap();
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "draws SVG through plotters: minutes under Miri, and no unsafe code of ours"
    )]
    fn timed_targets_draw_probe_times_on_a_log_axis_and_twoq_adds_its_long_term_queue() {
        let r = run("sim:fifo:pages=500:timing=on", Some(450));
        let files = figures(&r);
        assert_eq!(files[0].file_name, "short_term.svg");
        assert_eq!(files[0].figure.y.scale, ::report::Scale::Log);
        assert!(::report::render_svg(&files[0].figure)
            .unwrap()
            .contains("probe time (ms)"));
        let r = run("sim:twoq:pages=300", Some(300));
        let names: Vec<String> = figures(&r).into_iter().map(|f| f.file_name).collect();
        assert_eq!(names.last().map(String::as_str), Some("long_term.svg"));
    }
}
