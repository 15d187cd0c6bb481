//! From an axis spec and the data on it to the numeric range the plot spans, checking
//! what the drawing library would otherwise draw wrongly or silently drop: NaN, infinite
//! values, and zero or negative values on a log axis.

use std::ops::Range;

use crate::error::{AxisName, ReportError};
use crate::figure::{Axis, Bounds, Figure, Scale};

/// The x and y ranges of `figure`, or why it cannot be drawn.
pub(crate) fn resolve(figure: &Figure) -> Result<(Range<f64>, Range<f64>), ReportError> {
    let values = |pick: fn(&(f64, f64)) -> f64| -> Vec<f64> {
        figure
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(pick))
            .collect()
    };
    let x = axis_range(&figure.title, AxisName::X, &figure.x, &values(|p| p.0))?;
    let y = axis_range(&figure.title, AxisName::Y, &figure.y, &values(|p| p.1))?;
    Ok((x, y))
}

fn axis_range(
    title: &str,
    name: AxisName,
    axis: &Axis,
    values: &[f64],
) -> Result<Range<f64>, ReportError> {
    let check = |value: f64| -> Result<(), ReportError> {
        if !value.is_finite() {
            return Err(ReportError::NonFinite {
                title: title.to_string(),
                axis: name,
                value,
            });
        }
        if axis.scale == Scale::Log && value <= 0.0 {
            return Err(ReportError::NonPositiveOnLogAxis {
                title: title.to_string(),
                axis: name,
                value,
            });
        }
        Ok(())
    };
    for &v in values {
        check(v)?;
    }
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    // Without data a linear axis spans 0..1 and a log axis one decade.
    let fallback = match axis.scale {
        Scale::Linear => 0.0..1.0,
        Scale::Log => 1.0..10.0,
    };
    let range = match axis.bounds {
        Bounds::Data if max > min => min..max,
        Bounds::Data => fallback,
        Bounds::FromZero { headroom } if max > 0.0 => 0.0..max * (1.0 + headroom),
        Bounds::FromZero { .. } => 0.0..1.0,
        Bounds::Fixed { min, max } => {
            check(min)?;
            check(max)?;
            if min >= max {
                return Err(ReportError::EmptyBounds {
                    title: title.to_string(),
                    axis: name,
                    min,
                    max,
                });
            }
            min..max
        }
    };
    check(range.start)?;
    Ok(range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Series;

    fn figure(x: Axis, y: Axis, points: Vec<(f64, f64)>) -> Figure {
        Figure::new("t", x, y).with_series(Series::line("s", points))
    }

    #[test]
    fn data_bounds_span_the_points_of_every_series() {
        let f = figure(Axis::new("x"), Axis::new("y"), vec![(2.0, 5.0), (4.0, 1.0)])
            .with_series(Series::line("other", vec![(1.0, 3.0)]));
        assert_eq!(resolve(&f).unwrap(), (1.0..4.0, 1.0..5.0));
    }

    #[test]
    fn from_zero_adds_headroom_and_fixed_is_exact() {
        let f = figure(
            Axis::new("x").bounds(Bounds::FromZero { headroom: 0.0 }),
            Axis::new("y").bounds(Bounds::FromZero { headroom: 0.5 }),
            vec![(3.0, 2.0), (8.0, 4.0)],
        );
        assert_eq!(resolve(&f).unwrap(), (0.0..8.0, 0.0..6.0));
        let f = figure(
            Axis::new("x").bounds(Bounds::Fixed {
                min: -1.0,
                max: 1.0,
            }),
            Axis::new("y"),
            vec![(0.0, 0.0), (0.5, 1.0)],
        );
        assert_eq!(resolve(&f).unwrap().0, -1.0..1.0);
    }

    #[test]
    fn empty_and_single_point_figures_fall_back() {
        let f = Figure::new("t", Axis::new("x"), Axis::new("y").log());
        assert_eq!(resolve(&f).unwrap(), (0.0..1.0, 1.0..10.0));
        let f = figure(
            Axis::new("x"),
            Axis::new("y").bounds(Bounds::FromZero { headroom: 0.1 }),
            vec![(7.0, 0.0)],
        );
        assert_eq!(resolve(&f).unwrap(), (0.0..1.0, 0.0..1.0));
    }

    #[test]
    fn log_axes_reject_zero_and_negative_values_and_bounds() {
        let f = figure(
            Axis::new("x"),
            Axis::new("y").log(),
            vec![(1.0, 2.0), (2.0, 0.0)],
        );
        match resolve(&f) {
            Err(ReportError::NonPositiveOnLogAxis { axis, value, .. }) => {
                assert_eq!((axis, value), (AxisName::Y, 0.0));
            }
            other => panic!("{other:?}"),
        }
        let f = figure(Axis::new("x").log(), Axis::new("y"), vec![(-3.0, 1.0)]);
        assert!(matches!(
            resolve(&f),
            Err(ReportError::NonPositiveOnLogAxis {
                axis: AxisName::X,
                ..
            })
        ));
        let f = figure(
            Axis::new("x"),
            Axis::new("y")
                .log()
                .bounds(Bounds::FromZero { headroom: 0.0 }),
            vec![(1.0, 1.0)],
        );
        assert!(matches!(
            resolve(&f),
            Err(ReportError::NonPositiveOnLogAxis { value, .. }) if value == 0.0
        ));
    }

    #[test]
    fn nan_and_empty_fixed_bounds_are_errors() {
        let f = figure(Axis::new("x"), Axis::new("y"), vec![(1.0, f64::NAN)]);
        assert!(matches!(
            resolve(&f),
            Err(ReportError::NonFinite {
                axis: AxisName::Y,
                ..
            })
        ));
        let f = figure(
            Axis::new("x").bounds(Bounds::Fixed { min: 2.0, max: 2.0 }),
            Axis::new("y"),
            vec![],
        );
        let e = resolve(&f).unwrap_err();
        assert_eq!(
            e.to_string(),
            "figure `t`: the x axis bounds 2..2 are empty"
        );
    }
}
