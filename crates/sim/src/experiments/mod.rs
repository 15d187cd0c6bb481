//! Named experiments: each reproduces a paper's headline result with the simulator and
//! returns its data points; the CLI writes them as CSV, JSON and SVG figures.
//!
//! Every point is independent, so points run in parallel (rayon) and come back in a fixed
//! order: the output does not depend on the number of threads.

pub mod burnett_ordering;
pub mod kotz_ellis;
pub mod xmf_cleaning;

/// A named experiment, for listings.
#[derive(Clone, Copy, Debug)]
pub struct ExperimentInfo {
    /// Name on the command line.
    pub name: &'static str,
    /// One line: what it reproduces.
    pub summary: &'static str,
}

/// Every experiment.
pub const EXPERIMENTS: &[ExperimentInfo] = &[
    ExperimentInfo {
        name: "kotz-ellis",
        summary: "Kotz & Ellis 1992: caching and write policies on 20 parallel disks (table, Figures 1-5)",
    },
    ExperimentInfo {
        name: "burnett-ordering",
        summary: "Burnett 2006 ch.4: fsync, file-system barriers and asynchronous graphs on TPC-B (Figures 4.12-4.19)",
    },
    ExperimentInfo {
        name: "inforeplace",
        summary: "Burnett 2006 ch.3: InfoReplace's accuracy and overhead, PinRange on B-tree index lookups over O_DIRECT (Figures 3.1, 3.2)",
    },
    ExperimentInfo {
        name: "xmf-cleaning",
        summary: "XMF 1989 appendix I: getnewbuf's eager cleaning against a clock daemon's free pool (Figure 21)",
    },
];
