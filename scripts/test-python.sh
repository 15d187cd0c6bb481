#!/usr/bin/env bash
# Builds the Python package's wheel from this checkout and runs its pytest suites against
# the installed wheel (not the source tree), as a user's `pip install` would see it.
#   scripts/test-python.sh [PYTEST ARGS...]   both steps
#   scripts/test-python.sh --prepare          the venv, its packages and the wheel only
#   scripts/test-python.sh --pytest [ARGS...] pytest only, on what --prepare installed
# The venv lives in target/py-venv (PYTHON picks the interpreter, default python3). The
# wheel is compiled in its own target directory (target/python-wheel, or under
# CARGO_TARGET_DIR): built alone, the Python crate resolves other features of the shared
# crates than `cargo test --workspace` does (the policy crate's `testkit`, rustix's), so
# it compiles every crate again whatever the directory, and a directory of its own lets
# scripts/test-all.sh build it while the Rust tests run. The replay tests compare with a
# release `bufcache` binary: BUFCACHE_BIN if set (scripts/test-all.sh passes the one the
# workspace tests were built with), else built here. Ray, for the tests of
# bufcache.ray_sweep in local mode, comes from python/requirements-ray.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/py-venv
python=${PYTHON:-python3}
mode=all
case ${1:-} in
--prepare) mode=prepare; shift ;;
--pytest) mode=pytest; shift ;;
esac

if [[ $mode != pytest ]]; then
    if [[ ! -x $venv/bin/python ]]; then
        "$python" -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet -r python/requirements-test.txt -r python/requirements-ray.txt

    echo "== maturin build --release"
    rm -rf target/wheels
    CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}/python-wheel \
        "$venv/bin/maturin" build --release --manifest-path python/Cargo.toml --out target/wheels \
        --interpreter "$venv/bin/python"
    "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps target/wheels/bufcache-*.whl
fi
[[ $mode == prepare ]] && exit 0

if [[ -z ${BUFCACHE_BIN:-} ]]; then
    echo "== the bufcache binary the tests compare with"
    cargo build --release -p bufcache-cli
    BUFCACHE_BIN=${CARGO_TARGET_DIR:-$root/target}/release/bufcache
fi

echo "== pytest"
# From outside the source tree, so that `import bufcache` finds the installed wheel.
cd "$root/target"
"$venv/bin/python" -c 'import bufcache, sys; print("testing", bufcache.__file__)'
# BUFCACHE_REQUIRE_RAY: the Ray tests fail, rather than skip, if Ray did not install.
BUFCACHE_REQUIRE_RAY=1 BUFCACHE_BIN=$BUFCACHE_BIN "$venv/bin/python" -m pytest -q \
    -p no:cacheprovider "$root/python/tests" "$@"
