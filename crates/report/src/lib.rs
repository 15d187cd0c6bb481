//! Figures and tables for bufcache: what every experiment, miss-ratio curve and Dust
//! fingerprint draws or prints goes through this crate, so the drawing code exists once.
//!
//! The map:
//!
//! - [`figure`] — figure *specs*, plain data: a [`Figure`] has a title, two [`Axis`]es
//!   (label, [`Bounds`], linear or log [`Scale`], tick hints) and [`Series`] drawn as a
//!   line, a marked line, a dashed reference, dots or a rule, plus a [`Legend`] placement
//!   and a [`Layout`]. A [`FigureFile`] pairs a figure with its file name. Producers
//!   (`sim::experiments`, `dust::figures`, the CLI's `mrc`) return these and draw nothing.
//! - [`render_svg`] — a spec to an SVG document in memory (the only code that uses the
//!   drawing library, plotters). It refuses NaN, and zero or negatives on a log axis,
//!   with a [`ReportError`] instead of drawing a wrong picture.
//! - [`write_atomic`], [`write_svg`], [`FigureFile::write_into`] — files written by the
//!   project's one output rule (`trace::Output`): through a temporary file and a rename,
//!   so a failed run never leaves half a file; `-` is standard output.
//! - [`Table`] — header and rows of text, as aligned text, CSV or Markdown (the papers'
//!   tables beside ours, summaries).
//! - [`csv_bytes`], [`write_csv`], [`json_lines`], [`csv_line`] — result rows as CSV and
//!   JSON lines, from `serde` rows or from formatted fields.
//!
//! How to add a figure: build it where its data is made, as a function returning
//! `Vec<FigureFile>` (see `sim::experiments::xmf_cleaning::figures`), and let the command
//! write each with [`FigureFile::write_into`]:
//!
//! ```
//! use report::{Axis, Bounds, Figure, FigureFile, Series};
//!
//! let misses = vec![(64.0, 0.61), (128.0, 0.42), (256.0, 0.30)];
//! let figure = Figure::new(
//!     "Misses against cache size",
//!     Axis::new("cache size (pages)").whole_numbers(),
//!     Axis::new("miss ratio").bounds(Bounds::Fixed { min: 0.0, max: 1.0 }),
//! )
//! .with_series(Series::marked_line("lru", misses))
//! .with_series(Series::reference("model", vec![(64.0, 0.6), (256.0, 0.3)]));
//! let file = FigureFile::new("misses.svg", figure);
//!
//! let svg = report::render_svg(&file.figure).unwrap();
//! assert!(svg.contains("miss ratio") && svg.contains("lru"));
//! # let dir = tempfile::tempdir().unwrap();
//! let path = file.write_into(dir.path()).unwrap();
//! assert!(path.ends_with("misses.svg"));
//! ```

mod error;
pub mod figure;
mod range;
mod records;
mod svg;
mod table;
mod write;

pub use error::{AxisName, ReportError};
pub use figure::{Axis, Bounds, Color, Figure, FigureFile, Layout, Legend, Scale, Series, Style};
pub use records::{csv_bytes, csv_field, csv_line, json_lines, write_csv};
pub use svg::render_svg;
pub use table::Table;
pub use write::{write_atomic, write_svg};
