"""Shared fixtures: the repository's trace slice, the shared full traces, the CLI binary."""

import os
import pathlib
import shutil

import pytest

import bufcache

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLICE = ROOT / "tests" / "data" / "cloudPhysicsIO.20k.oracleGeneral.bin"
SLICE_CSV = ROOT / "tests" / "data" / "cloudPhysicsIO.20k.csv"
SLICE_TXT = ROOT / "tests" / "data" / "cloudPhysicsIO.20k.txt"
# The full traces live outside the repository (see ../shared/traces/README.md).
SHARED = pathlib.Path(os.environ.get("BUFCACHE_TRACES", ROOT.parent / "shared" / "traces"))


@pytest.fixture(scope="session")
def slice_trace():
    return bufcache.Trace.open(SLICE)


def cli_binary():
    """The `bufcache` command: $BUFCACHE_BIN, else the workspace's release or debug build."""
    env = os.environ.get("BUFCACHE_BIN")
    if env:
        return env
    for profile in ("release", "debug"):
        p = ROOT / "target" / profile / "bufcache"
        if p.exists():
            return str(p)
    return shutil.which("bufcache")


@pytest.fixture(scope="session")
def cli():
    path = cli_binary()
    if path is None:
        pytest.skip(
            "no bufcache binary: build it (cargo build --release -p bufcache-cli) "
            "or set BUFCACHE_BIN; scripts/test-all.sh does"
        )
    return path


def shared_trace(name):
    p = SHARED / name
    if not p.exists():
        pytest.skip(f"{p} is missing: the shared traces are not part of a clone")
    return p
