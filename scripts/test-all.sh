#!/usr/bin/env bash
# Every test, Rust and Python: the README's test command and what .ci/run runs.
#   scripts/test-all.sh
# 1. the Rust workspace's tests in release mode;
# 2. the Python package (scripts/test-python.sh): a wheel built from this checkout,
#    installed into a venv under target/, and its pytest suites.
# The Rust tests run while the Python side prepares (pip's downloads, the wheel's own
# compile in its own target directory): the tests leave a core idle much of the time, and
# the wheel's build would otherwise come after them. Its output is printed when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-$PWD/target}

echo "== cargo test --workspace --release: build"
cargo test --workspace --release --no-run

echo "== Python package: venv, packages and wheel, in the background"
mkdir -p target
prepare_log=target/python-prepare.log
# Its own session, so that it and its compilers can be stopped together if a test fails.
setsid scripts/test-python.sh --prepare >"$prepare_log" 2>&1 &
prepare=$!
trap 'kill -- "-$prepare" 2>/dev/null || true' EXIT

echo "== cargo test --workspace --release"
cargo test --workspace --release

echo "== Python package"
prepared=0
wait "$prepare" || prepared=$?
trap - EXIT
cat "$prepare_log"
if [[ $prepared != 0 ]]; then
    echo "preparing the Python package failed (exit $prepared)" >&2
    exit 1
fi
# The tests' CLI is the binary the workspace tests above just built (and tested).
BUFCACHE_BIN=$target/release/bufcache scripts/test-python.sh --pytest
