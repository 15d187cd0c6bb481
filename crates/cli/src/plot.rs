//! Line charts as SVG: the one drawing routine every figure uses (miss-ratio curves,
//! experiment figures), rendered in memory and written atomically.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use crate::util;

/// One line of a chart.
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Draw dashed (reference lines such as a model's prediction).
    pub dashed: bool,
}

impl Series {
    /// A solid line.
    pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            dashed: false,
        }
    }

    /// A dashed reference line.
    pub fn reference(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            dashed: true,
        }
    }
}

/// A chart: title, axis descriptions and its lines. The y axis starts at 0.
pub struct Chart<'a> {
    /// Caption.
    pub title: &'a str,
    /// X axis description.
    pub x_desc: &'a str,
    /// Y axis description.
    pub y_desc: &'a str,
    /// The lines.
    pub series: Vec<Series>,
    /// Fixed y range top (None: fit the data).
    pub y_max: Option<f64>,
}

/// Render `chart` and write it to `path` (temporary file, then rename).
pub fn write_svg(path: &Path, chart: &Chart<'_>) -> Result<()> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        let draw = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("drawing {}: {e:?}", chart.title);
        root.fill(&WHITE).map_err(draw)?;
        let xs = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let (x_min, x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
            (x_min, x_max)
        } else {
            (0.0, 1.0)
        };
        let y_top = chart.y_max.unwrap_or_else(|| {
            let m = chart
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .fold(0.0f64, f64::max);
            if m > 0.0 {
                m * 1.05
            } else {
                1.0
            }
        });
        let mut ctx = ChartBuilder::on(&root)
            .caption(chart.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x_min..x_max, 0f64..y_top)
            .map_err(draw)?;
        ctx.configure_mesh()
            .x_desc(chart.x_desc)
            .y_desc(chart.y_desc)
            .draw()
            .map_err(draw)?;
        for (i, s) in chart.series.iter().enumerate() {
            let color = if s.dashed {
                BLACK.to_rgba()
            } else {
                Palette99::pick(i).to_rgba()
            };
            let style = color.stroke_width(2);
            if s.dashed {
                ctx.draw_series(DashedLineSeries::new(s.points.iter().copied(), 6, 4, style))
                    .map_err(draw)?
                    .label(s.label.clone())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
            } else {
                ctx.draw_series(LineSeries::new(s.points.iter().copied(), style))
                    .map_err(draw)?;
                ctx.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, style.filled())))
                    .map_err(draw)?
                    .label(s.label.clone())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
            }
        }
        ctx.configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(draw)?;
        root.present().map_err(draw)?;
    }
    util::write_atomic(path, svg.as_bytes())
}
