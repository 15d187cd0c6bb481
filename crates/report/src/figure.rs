//! Figure specs: what a figure shows, as plain data. Building one draws nothing, so an
//! experiment can describe its figures next to its data and a test can inspect them;
//! [`crate::render_svg`] turns a spec into a picture.

/// One chart: a title, two axes, its series and where the legend goes.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// Caption above the plot.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// Drawn in order; a series' position picks its colour when it has none of its own.
    pub series: Vec<Series>,
    /// Where the legend box goes (it lists the series that have a label).
    pub legend: Legend,
    /// Canvas size and text sizes.
    pub layout: Layout,
}

impl Figure {
    /// A figure with no series yet, the legend at the middle right, the wide layout.
    pub fn new(title: impl Into<String>, x: Axis, y: Axis) -> Self {
        Figure {
            title: title.into(),
            x,
            y,
            series: Vec::new(),
            legend: Legend::MiddleRight,
            layout: Layout::Wide,
        }
    }

    /// Add a series (drawn after those already there).
    pub fn with_series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }

    /// Add several series in order.
    pub fn with_all_series(mut self, series: impl IntoIterator<Item = Series>) -> Self {
        self.series.extend(series);
        self
    }

    /// Put the legend elsewhere, or hide it.
    pub fn with_legend(mut self, legend: Legend) -> Self {
        self.legend = legend;
        self
    }

    /// Use another canvas size.
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }
}

/// One axis: its label, the range it spans and how values map onto it.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The axis title (with the unit: `cache size (MB)`).
    pub label: String,
    /// The range the axis spans.
    pub bounds: Bounds,
    /// Linear or logarithmic.
    pub scale: Scale,
    /// How many tick labels to aim for (None: the drawing library's choice).
    pub ticks: Option<usize>,
    /// Print tick labels rounded to whole numbers (for counts: pages, objects, bytes).
    pub whole_numbers: bool,
}

impl Axis {
    /// A linear axis spanning the data.
    pub fn new(label: impl Into<String>) -> Self {
        Axis {
            label: label.into(),
            bounds: Bounds::Data,
            scale: Scale::Linear,
            ticks: None,
            whole_numbers: false,
        }
    }

    /// A linear axis for a measured quantity (a time, a count): from zero to 5% above the
    /// largest value, so that values are read against zero.
    pub fn from_zero(label: impl Into<String>) -> Self {
        Self::new(label).bounds(Bounds::FromZero { headroom: 0.05 })
    }

    /// Span `bounds` instead of the data.
    pub fn bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = bounds;
        self
    }

    /// A logarithmic axis: every value on it, and its bounds, must be positive.
    pub fn log(mut self) -> Self {
        self.scale = Scale::Log;
        self
    }

    /// Aim for `n` tick labels.
    pub fn ticks(mut self, n: usize) -> Self {
        self.ticks = Some(n);
        self
    }

    /// Label ticks with whole numbers.
    pub fn whole_numbers(mut self) -> Self {
        self.whole_numbers = true;
        self
    }
}

/// The range an axis spans.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bounds {
    /// From the smallest to the largest value of every series on this axis (0..1 when
    /// there is no data or a single value: an empty figure still draws).
    Data,
    /// From 0 to the largest value times `1 + headroom` (0..1 without positive data), so
    /// that bars of counts and times are read against zero.
    FromZero {
        /// Space above the largest value, as a fraction of it (0.05: five percent).
        headroom: f64,
    },
    /// Exactly this range.
    Fixed {
        /// Lower end.
        min: f64,
        /// Upper end (above `min`).
        max: f64,
    },
}

/// How values map onto an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Equal distances for equal differences.
    Linear,
    /// Equal distances for equal ratios (latencies spanning orders of magnitude).
    Log,
}

/// One set of points and how to draw them.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text; a series without one is left out of the legend.
    pub label: Option<String>,
    /// `(x, y)` in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Line, dashed reference or points.
    pub style: Style,
    /// Colour (by default the palette colour of the series' position).
    pub color: Color,
    /// Line width or marker outline, pixels.
    pub width: u32,
}

impl Series {
    fn styled(label: Option<String>, points: Vec<(f64, f64)>, style: Style, color: Color) -> Self {
        Series {
            label,
            points,
            style,
            color,
            width: 2,
        }
    }

    /// A solid line through the points.
    pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self::styled(
            Some(label.into()),
            points,
            Style::Line { markers: false },
            Color::Auto,
        )
    }

    /// A solid line with a dot on every point (measured data at a few sizes).
    pub fn marked_line(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            style: Style::Line { markers: true },
            ..Self::line(label, points)
        }
    }

    /// A black dashed line: a model's prediction or a bound to compare against.
    pub fn reference(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self::styled(Some(label.into()), points, Style::Dashed, Color::Black)
    }

    /// Unconnected dots of `radius` pixels, unlabelled (a scatter of raw observations).
    pub fn points(points: Vec<(f64, f64)>, radius: u32) -> Self {
        Self::styled(None, points, Style::Points { radius }, Color::Auto)
    }

    /// A thin black unlabelled line, to mark a value (an estimate, a threshold).
    pub fn rule(from: (f64, f64), to: (f64, f64)) -> Self {
        Series {
            width: 1,
            ..Self::styled(
                None,
                vec![from, to],
                Style::Line { markers: false },
                Color::Black,
            )
        }
    }

    /// Draw in `color` instead.
    pub fn color(mut self, color: Color) -> Self {
        self.color = color;
        self
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A solid line, with or without a dot on every point.
    Line {
        /// Dot every point.
        markers: bool,
    },
    /// A dashed line.
    Dashed,
    /// Dots only.
    Points {
        /// Dot radius, pixels.
        radius: u32,
    },
}

/// The colours figures use. Few on purpose: hits and misses, references, and a palette.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// The palette colour of the series' position in the figure.
    Auto,
    /// Black (references, rules).
    Black,
    /// Blue (hits, fits).
    Blue,
    /// Red (misses, overflows).
    Red,
}

/// Where the legend box goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Legend {
    /// No legend.
    Hidden,
    /// Top left corner.
    UpperLeft,
    /// Top right corner.
    UpperRight,
    /// Right edge, halfway up.
    MiddleRight,
    /// Bottom left corner.
    LowerLeft,
    /// Bottom right corner.
    LowerRight,
}

/// Canvas size and text sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// 900 × 560 pixels: curves with a legend (experiments, miss-ratio curves).
    Wide,
    /// 760 × 420 pixels with smaller text: scatters of many probes (Dust).
    Compact,
}

/// A figure and the file name it is written under (`fig1-gw.svg`), so a producer decides
/// the names and the caller only chooses the folder.
#[derive(Clone, Debug, PartialEq)]
pub struct FigureFile {
    /// File name, without a folder.
    pub file_name: String,
    /// The figure.
    pub figure: Figure,
}

impl FigureFile {
    /// Pair a file name with a figure.
    pub fn new(file_name: impl Into<String>, figure: Figure) -> Self {
        FigureFile {
            file_name: file_name.into(),
            figure,
        }
    }
}
