//! The one error type of the crate: every failure names the figure or file it concerns,
//! so the CLI can print it as it is.

use std::fmt;
use std::path::PathBuf;

/// Which axis of a figure an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisName {
    /// The horizontal axis.
    X,
    /// The vertical axis.
    Y,
}

impl fmt::Display for AxisName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AxisName::X => "x",
            AxisName::Y => "y",
        })
    }
}

/// What can go wrong while drawing a figure or writing a result file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A logarithmic axis was given zero or a negative number (as a point or a bound).
    #[error("figure `{title}`: {value} on the logarithmic {axis} axis (a log axis takes only positive values)")]
    NonPositiveOnLogAxis {
        /// The figure's title.
        title: String,
        /// The axis.
        axis: AxisName,
        /// The offending value.
        value: f64,
    },
    /// A point or a bound is NaN or infinite.
    #[error("figure `{title}`: {value} on the {axis} axis is not a finite number")]
    NonFinite {
        /// The figure's title.
        title: String,
        /// The axis.
        axis: AxisName,
        /// The offending value.
        value: f64,
    },
    /// Fixed bounds whose minimum is not below their maximum.
    #[error("figure `{title}`: the {axis} axis bounds {min}..{max} are empty")]
    EmptyBounds {
        /// The figure's title.
        title: String,
        /// The axis.
        axis: AxisName,
        /// The lower bound given.
        min: f64,
        /// The upper bound given.
        max: f64,
    },
    /// The drawing library refused (it reports its errors as text).
    #[error("drawing figure `{title}`: {message}")]
    Draw {
        /// The figure's title.
        title: String,
        /// What the drawing library said.
        message: String,
    },
    /// Creating, writing, syncing or renaming the file failed; nothing was left behind.
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The destination.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A row could not be encoded as CSV.
    #[error("encoding CSV: {0}")]
    Csv(#[from] csv::Error),
    /// A row could not be encoded as JSON.
    #[error("encoding JSON: {0}")]
    Json(#[from] serde_json::Error),
}
