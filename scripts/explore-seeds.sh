#!/usr/bin/env bash
# Runs the exploring randomized tests ROUNDS more times (default 2), each time with fresh
# seeds: what CI adds after the main test run. A failure prints its seed and the command
# that replays it (BUFCACHE_SEED=N cargo test ...); docs/TESTING.md lists these tests.
# Release mode, like the main run, so that CI reuses its build.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-2}"
if [[ -n "${BUFCACHE_SEED:-}" ]]; then
    echo "BUFCACHE_SEED is set: every round would replay the same seed" >&2
    exit 2
fi
for ((round = 1; round <= rounds; round++)); do
    echo "-- round $round of $rounds"
    cargo test -q -p bufcache-pool --release --test stress --test crash
    cargo test -q -p bufcache-sim --release --test dense_keys
    cargo test -q -p bufcache-policy --release --lib -- \
        clockpro::tests::invariants_hold_at_extreme_parameters \
        clockpro::tests::structures_stay_consistent_under_random_operations \
        ghost::tests::agrees_with_a_deque_model \
        growth_tests::every_policy_grows_past_its_preallocation
done
