//! Dust's integration tests, one binary: each file is a module (one link and one
//! copy of the generic code they instantiate for all of them, instead of one per file).

mod noise;
mod other_policies;
mod pool;
mod replay;
mod size;
mod verdicts;
