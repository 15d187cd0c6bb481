//! Named experiments: each reproduces a paper's headline result with the simulator and
//! returns its data points (`run`), describes its figures as data (`figures`, a
//! `Vec<report::FigureFile>`) and its summary as a `report::Table`; the CLI writes the
//! points as CSV or JSON lines and renders the figures, drawing nothing itself.
//!
//! Every point is independent, so points run in parallel (rayon) and come back in a fixed
//! order: the output does not depend on the number of threads.

pub mod burnett_ordering;
pub mod kotz_ellis;
pub mod nelson;
pub mod ubc;
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
    ExperimentInfo {
        name: "nelson",
        summary: "Nelson 1990: file cache and virtual memory negotiating one memory, ECD and IFS (Figures 1-6, Tables 2-4)",
    },
    ExperimentInfo {
        name: "ubc",
        summary: "Silvers 2000 (UBC): Table 1's dd series on a split buffer cache + page cache and on a unified one (simulated)",
    },
];
