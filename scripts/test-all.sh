#!/usr/bin/env bash
# Every test, Rust and Python: the README's test command and what .ci/run runs.
#   scripts/test-all.sh
# 1. the Rust workspace's tests in release mode;
# 2. the Python package (scripts/test-python.sh): a wheel built from this checkout,
#    installed into a venv under target/, and its pytest suites.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test --workspace --release"
cargo test --workspace --release

echo "== Python package"
# The tests' CLI is the binary the workspace tests above just built (and tested).
BUFCACHE_BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/bufcache scripts/test-python.sh
