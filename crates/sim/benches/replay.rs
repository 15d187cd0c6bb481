//! Criterion benchmarks of replay (written below).
fn main() {}
