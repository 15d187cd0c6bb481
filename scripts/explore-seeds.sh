#!/usr/bin/env bash
# Runs the exploring randomized tests ROUNDS more times (default 2), each time with fresh
# seeds: what CI adds after the main test run. A failure prints its seed and the command
# that replays it (BUFCACHE_SEED=N cargo test ...); docs/TESTING.md lists these tests.
# Release mode and `--workspace`, like the main run, so that CI reuses its build: a lone
# package (`-p`) resolves other features (the policy crate's `testkit`, rustix's) and would
# compile every crate again. `--test all` runs each package's integration-test binary, and the
# filters pick the modules (a file of tests/ is a module of it).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-2}"
if [[ -n "${BUFCACHE_SEED:-}" ]]; then
    echo "BUFCACHE_SEED is set: every round would replay the same seed" >&2
    exit 2
fi
for ((round = 1; round <= rounds; round++)); do
    echo "-- round $round of $rounds"
    cargo test -q --workspace --release --test all -- stress:: crash:: dense_keys::
    cargo test -q --workspace --release --lib -- \
        clockpro::tests::invariants_hold_at_extreme_parameters \
        clockpro::tests::structures_stay_consistent_under_random_operations \
        ghost::tests::agrees_with_a_deque_model \
        growth_tests::every_policy_grows_past_its_preallocation
done
