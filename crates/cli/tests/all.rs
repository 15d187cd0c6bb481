//! The CLI's integration tests, one binary: each file is a module (one link and one
//! copy of the generic code they instantiate for all of them, instead of one per file).

mod cli;
mod common;
mod des_cli;
mod doc_commands;
mod dust;
mod every_driver;
mod inforeplace_cli;
mod interrupt;
mod mirror_replay;
mod ordering_real;
mod real_inputs;
mod replay_time;
mod serve_cli;
mod sweep_cli;
mod test_layout;
