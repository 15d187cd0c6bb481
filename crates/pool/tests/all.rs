//! The pool's integration tests, one binary: each file is a module (one link and one
//! copy of the generic code they instantiate for all of them, instead of one per file).

mod basic;
mod budget;
mod common;
mod crash;
mod crash_ordering;
mod errors;
mod faults;
mod hints;
mod model;
mod ordering;
mod real_files;
mod regressions;
mod stress;
