//! Helpers shared by the CLI test files: run the built binary, check success or a clean
//! failure, parse JSON lines.
#![allow(dead_code)] // each test file uses a different subset

use std::process::{Command, Output};

pub fn bufcache(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bufcache"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the binary runs")
}

pub fn ok(args: &[&str]) -> String {
    let out = bufcache(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Fails with a message containing every `needle`, and without a panic.
pub fn fails(args: &[&str], needles: &[&str]) {
    let out = bufcache(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(!err.contains("stack backtrace"), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err:?}");
    }
}

pub fn json_lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}
