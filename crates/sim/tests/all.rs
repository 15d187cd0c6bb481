//! The simulator's integration tests, one binary: each file is a module (one link and one
//! copy of the generic code they instantiate for all of them, instead of one per file).

mod dense_keys;
mod des;
mod des_modules;
mod des_papers;
mod experiment_figures;
mod golden_admission;
mod golden_libcachesim;
mod golden_libcachesim_adaptive;
mod golden_libcachesim_clock2qplus;
mod golden_libcachesim_lhd;
mod golden_libcachesim_more;
mod golden_prefetch;
mod mrc_approx;
mod mrc_hot;
mod mrc_miniature;
mod nelson;
mod ordering;
mod sweep;
mod sweep_session;
