#!/usr/bin/env bash
# Miri over the unit tests (`--lib`) of the pool (its frame arena is the project's unsafe
# code) and Dust's pool target (which drives the pool through its latches). Dust's other
# unit tests (classification, judging, probe steps, the simulated target) are safe code of
# ours over safe crates: Miri has nothing of ours to check there, and they took about 45 s
# of CI's time under it, so they are skipped here (they run in the normal test suite).
# Tests Miri cannot run (real files, mmap, mincore, io_uring) are marked
# `#[cfg_attr(miri, ignore = "...")]`.
#
# Installs the pinned nightly (scripts/nightly.sh) with Miri through rustup if missing.
# Every run takes a fresh Miri seed (thread schedules, weak-memory outcomes, float
# rounding) and prints it; `MIRI_SEED=N scripts/miri-ci.sh` replays a run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/nightly.sh
ensure_nightly miri rust-src

seed=${MIRI_SEED:-$RANDOM}
echo "miri seed: $seed (replay: MIRI_SEED=$seed scripts/miri-ci.sh)"
# parking_lot_core keeps a pointer in a usize; permissive provenance only silences Miri's
# warning about that cast (it is Miri's default behaviour).
export MIRIFLAGS="-Zmiri-seed=$seed -Zmiri-permissive-provenance ${MIRIFLAGS:-}"
# `--skip` matches a substring of the test's path: these modules exist in Dust only.
cargo "+$nightly" miri test -p bufcache-pool -p bufcache-dust --lib -- \
    --skip classify:: --skip judge:: --skip steps:: --skip sim::tests::
