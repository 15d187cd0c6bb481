#!/usr/bin/env bash
# Miri over the unit tests (`--lib`) of the pool (its frame arena is the project's unsafe
# code) and of Dust (which drives the pool through its latches). Tests Miri cannot run
# (real files, mmap, mincore, io_uring) are marked `#[cfg_attr(miri, ignore = "...")]`.
#
# Installs a nightly toolchain with Miri through rustup if it is missing. Every run takes a
# fresh Miri seed (thread schedules, weak-memory outcomes, float rounding) and prints it;
# `MIRI_SEED=N scripts/miri-ci.sh` replays a run. `BUFCACHE_NIGHTLY` names another
# toolchain than `nightly` (a dated one, to pin Miri).
set -euo pipefail
cd "$(dirname "$0")/.."

toolchain=${BUFCACHE_NIGHTLY:-nightly}
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    rustup toolchain install "$toolchain" --profile minimal
fi
if ! cargo "+$toolchain" miri --version >/dev/null 2>&1; then
    rustup component add --toolchain "$toolchain" miri rust-src
fi

seed=${MIRI_SEED:-$RANDOM}
echo "miri seed: $seed (replay: MIRI_SEED=$seed scripts/miri-ci.sh)"
# parking_lot_core keeps a pointer in a usize; permissive provenance only silences Miri's
# warning about that cast (it is Miri's default behaviour).
export MIRIFLAGS="-Zmiri-seed=$seed -Zmiri-permissive-provenance ${MIRIFLAGS:-}"
cargo "+$toolchain" miri test -p bufcache-pool -p bufcache-dust --lib
