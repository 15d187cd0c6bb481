//! Experiments (filled in below).
