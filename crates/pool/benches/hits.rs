//! Criterion benchmarks of the pool's hit paths (filled in below).
fn main() {}
