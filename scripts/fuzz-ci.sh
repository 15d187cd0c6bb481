#!/usr/bin/env bash
# Builds the parser fuzz targets of crates/trace/fuzz with libFuzzer instrumentation and
# AddressSanitizer on a nightly toolchain, with the flags `cargo fuzz build` uses (no need
# for cargo-fuzz), then runs each target for SECONDS seconds from its committed seeds
# (crates/trace/fuzz/corpus/<target>/seed-*). A crash, panic, heap beyond the targets'
# bound, RSS over 2 GiB or an input running over 10 s fails the script; the input is
# saved in crates/trace/fuzz/artifacts/<target>/ (replay: run the target binary on it).
#
# usage: scripts/fuzz-ci.sh [SECONDS [TARGET...]]     (default: 30 s each, every target)
#
# Each run takes a fresh libFuzzer seed and prints it (`-seed=N` in FUZZ_ARGS replays a
# run's mutations). FUZZ_ARGS adds libFuzzer flags. The toolchain is the pinned nightly of
# scripts/nightly.sh, installed through rustup if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/nightly.sh

seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(text csv oracle oracle_zst)

ensure_nightly

fuzz=crates/trace/fuzz
host=$(rustup run "$nightly" rustc -vV | sed -n 's/^host: //p')
# The flags `cargo fuzz build -O -a` passes (release, debug assertions): SanitizerCoverage
# feeding libFuzzer (8-bit edge counters, PC table, comparison operands), `cfg(fuzzing)`,
# assertions and overflow checks, AddressSanitizer. Left out: its tuning flags
# (-Ccodegen-units=1, -Clink-dead-code, ...), which make the build slower.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions \
-Coverflow-checks -Zsanitizer=address"
export ASAN_OPTIONS="detect_odr_violation=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# `--target-dir`: the binaries are run from there below, whatever CARGO_TARGET_DIR says.
# `--target`: RUSTFLAGS then apply to the targets and their dependencies only, not to
# build scripts (which are not linked with libFuzzer or ASan).
cargo "+$nightly" build --release --manifest-path "$fuzz/Cargo.toml" --target "$host" \
    --target-dir "$fuzz/target" --bins

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
for t in "${targets[@]}"; do
    mkdir -p "$fuzz/artifacts/$t" "$work/$t"
    log="$work/$t.log"
    # New inputs go to the scratch corpus (first directory); the seeds stay untouched.
    # shellcheck disable=SC2086
    if "$fuzz/target/$host/release/$t" "$work/$t" "$fuzz/corpus/$t" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$fuzz/artifacts/$t/" -print_final_stats=1 ${FUZZ_ARGS:-} \
        >"$log" 2>&1; then
        status=ok
    else
        status=FAILED
        failed+=("$t")
    fi
    seed=$(sed -n 's/^INFO: Seed: //p' "$log" | head -n 1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    echo "fuzz $t: $status, ${execs:-?} executions in ${seconds} s, ${cov:-cov: ?}, seed ${seed:-?}"
    if [ "$status" != ok ]; then
        tail -n 60 "$log"
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failing targets: ${failed[*]} (inputs in $fuzz/artifacts/)"
    exit 1
fi
