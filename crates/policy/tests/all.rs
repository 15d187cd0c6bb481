//! The policy crate's integration tests, one binary: each file is a module (one link and one
//! copy of the generic code they instantiate for all of them, instead of one per file).

mod hit_path;
mod invariants;
mod opt_bound;
mod prefetch;
mod reference;
mod reference_a;
mod reference_adaptive;
mod reference_b;
mod reference_c;
mod reference_clock2qplus;
mod reference_d;
mod reference_e;
mod resize;
