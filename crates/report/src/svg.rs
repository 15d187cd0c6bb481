//! Figure spec to SVG text: the one place that talks to the drawing library (plotters),
//! so every figure of the project shares its canvas, fonts, palette and legend.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::Color as _;

use crate::error::ReportError;
use crate::figure::{Color, Figure, Layout, Legend, Scale, Style};
use crate::range;

/// Render `figure` as an SVG document in memory.
///
/// Fails, without drawing anything, on a NaN or infinite value, on zero or a negative
/// value on a log axis, and on empty fixed bounds; an empty figure draws its axes alone.
pub fn render_svg(figure: &Figure) -> Result<String, ReportError> {
    let (x, y) = range::resolve(figure)?;
    let canvas = Canvas::of(figure.layout);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, canvas.pixels).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(figure, e))?;
        match (figure.x.scale, figure.y.scale) {
            (Scale::Linear, Scale::Linear) => plot(&root, figure, &canvas, x, y),
            (Scale::Linear, Scale::Log) => plot(&root, figure, &canvas, x, y.log_scale()),
            (Scale::Log, Scale::Linear) => plot(&root, figure, &canvas, x.log_scale(), y),
            (Scale::Log, Scale::Log) => plot(&root, figure, &canvas, x.log_scale(), y.log_scale()),
        }?;
        root.present().map_err(|e| draw_error(figure, e))?;
    }
    Ok(svg)
}

/// Pixel sizes of a layout.
struct Canvas {
    pixels: (u32, u32),
    caption_px: u32,
    margin_px: u32,
    x_label_area_px: u32,
    y_label_area_px: u32,
}

impl Canvas {
    fn of(layout: Layout) -> Self {
        match layout {
            Layout::Wide => Canvas {
                pixels: (900, 560),
                caption_px: 22,
                margin_px: 16,
                x_label_area_px: 48,
                y_label_area_px: 72,
            },
            Layout::Compact => Canvas {
                pixels: (760, 420),
                caption_px: 16,
                margin_px: 12,
                x_label_area_px: 40,
                y_label_area_px: 70,
            },
        }
    }
}

fn draw_error<E: std::fmt::Debug>(figure: &Figure, e: E) -> ReportError {
    ReportError::Draw {
        title: figure.title.clone(),
        message: format!("{e:?}"),
    }
}

fn rgba(color: Color, position: usize) -> RGBAColor {
    match color {
        Color::Auto => Palette99::pick(position).to_rgba(),
        Color::Black => BLACK.to_rgba(),
        Color::Blue => BLUE.to_rgba(),
        Color::Red => RED.to_rgba(),
    }
}

fn legend_position(legend: Legend) -> Option<SeriesLabelPosition> {
    Some(match legend {
        Legend::Hidden => return None,
        Legend::UpperLeft => SeriesLabelPosition::UpperLeft,
        Legend::UpperRight => SeriesLabelPosition::UpperRight,
        Legend::MiddleRight => SeriesLabelPosition::MiddleRight,
        Legend::LowerLeft => SeriesLabelPosition::LowerLeft,
        Legend::LowerRight => SeriesLabelPosition::LowerRight,
    })
}

fn whole(v: &f64) -> String {
    format!("{v:.0}")
}

/// Axes, mesh, series and legend, over any pair of linear or log coordinates.
fn plot<X, Y>(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    figure: &Figure,
    canvas: &Canvas,
    x: X,
    y: Y,
) -> Result<(), ReportError>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let fail = |e| draw_error(figure, e);
    let mut chart = ChartBuilder::on(root)
        .caption(&figure.title, ("sans-serif", canvas.caption_px))
        .margin(canvas.margin_px)
        .x_label_area_size(canvas.x_label_area_px)
        .y_label_area_size(canvas.y_label_area_px)
        .build_cartesian_2d(x, y)
        .map_err(fail)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(figure.x.label.as_str())
        .y_desc(figure.y.label.as_str());
    if let Some(n) = figure.x.ticks {
        mesh.x_labels(n);
    }
    if let Some(n) = figure.y.ticks {
        mesh.y_labels(n);
    }
    if figure.x.whole_numbers {
        mesh.x_label_formatter(&whole);
    }
    if figure.y.whole_numbers {
        mesh.y_label_formatter(&whole);
    }
    mesh.draw().map_err(fail)?;
    for (position, series) in figure.series.iter().enumerate() {
        let color = rgba(series.color, position);
        let stroke = color.stroke_width(series.width);
        let points = series.points.iter().copied();
        let dots = |radius: u32| {
            series
                .points
                .iter()
                .map(move |&p| Circle::new(p, radius, stroke.filled()))
        };
        let drawn = match series.style {
            Style::Line { markers: false } => chart.draw_series(LineSeries::new(points, stroke)),
            Style::Line { markers: true } => {
                chart
                    .draw_series(LineSeries::new(points, stroke))
                    .map_err(fail)?;
                chart.draw_series(dots(3))
            }
            Style::Dashed => chart.draw_series(DashedLineSeries::new(points, 6, 4, stroke)),
            Style::Points { radius } => chart.draw_series(dots(radius)),
        }
        .map_err(fail)?;
        if let Some(label) = &series.label {
            drawn
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], stroke));
        }
    }
    let labelled = figure.series.iter().any(|s| s.label.is_some());
    if let (Some(position), true) = (legend_position(figure.legend), labelled) {
        chart
            .configure_series_labels()
            .position(position)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Bounds, Series};

    fn two_lines() -> Figure {
        Figure::new(
            "Figure 9: misses",
            Axis::new("cache size (pages)"),
            Axis::new("miss ratio").bounds(Bounds::Fixed { min: 0.0, max: 1.0 }),
        )
        .with_series(Series::marked_line("lru", vec![(1.0, 0.9), (2.0, 0.5)]))
        .with_series(Series::reference("model", vec![(1.0, 0.8), (2.0, 0.4)]))
    }

    #[test]
    fn svg_holds_title_axis_titles_and_series_labels() {
        let svg = render_svg(&two_lines()).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        for text in [
            "Figure 9: misses",
            "cache size (pages)",
            "miss ratio",
            "lru",
            "model",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // Two markers, one per point of the marked line; the dashed one has none.
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains("stroke-dasharray") || svg.matches("<polyline").count() > 2);
    }

    #[test]
    fn rendering_is_deterministic() {
        assert_eq!(
            render_svg(&two_lines()).unwrap(),
            render_svg(&two_lines()).unwrap()
        );
    }

    #[test]
    fn hidden_legend_and_unlabelled_series_leave_labels_out() {
        let f = two_lines().with_legend(Legend::Hidden);
        let svg = render_svg(&f).unwrap();
        assert!(!svg.contains(">model<"));
        let f = Figure::new("dots", Axis::new("offset"), Axis::new("time").log())
            .with_layout(Layout::Compact)
            .with_series(
                Series::points(vec![(1.0, 0.5), (2.0, 20.0), (3.0, 7.0)], 2).color(Color::Red),
            );
        let svg = render_svg(&f).unwrap();
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("width=\"760\""));
    }

    #[test]
    fn empty_figures_and_empty_series_draw() {
        let f = Figure::new("nothing yet", Axis::new("x"), Axis::new("y"));
        assert!(render_svg(&f).unwrap().contains("nothing yet"));
        let f = Figure::new("empty line", Axis::new("x"), Axis::new("y").log())
            .with_series(Series::line("none", vec![]));
        let svg = render_svg(&f).unwrap();
        assert!(svg.contains("none"));
    }

    #[test]
    fn a_log_axis_with_zero_draws_nothing_and_says_why() {
        let f = Figure::new("latency", Axis::new("x"), Axis::new("time (ms)").log())
            .with_series(Series::line("probe", vec![(1.0, 1.0), (2.0, 0.0)]));
        let e = render_svg(&f).unwrap_err();
        assert_eq!(
            e.to_string(),
            "figure `latency`: 0 on the logarithmic y axis (a log axis takes only positive values)"
        );
    }
}
