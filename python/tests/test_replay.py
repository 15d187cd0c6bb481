"""replay() against the bufcache command, and its arguments."""

import json
import subprocess

import numpy as np
import pytest

import bufcache
from conftest import SLICE, shared_trace

ALL_POLICIES = [p["name"] for p in bufcache.policies()]


def cli_replay(cli, path, policies, sizes, ignore_size):
    cmd = [cli, "replay", "--trace", str(path), "--policy", ",".join(policies),
           "--size", ",".join(sizes), "--json"]
    if ignore_size:
        cmd.append("--ignore-size")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def assert_same(rows, table):
    assert table["policy"] == [r["policy"] for r in rows]
    assert table["size"] == [r["size"] for r in rows]
    for col in ("capacity", "requests", "hits", "misses", "bytes_missed"):
        assert table[col].tolist() == [r[col] for r in rows], col
    assert table["miss_ratio"].tolist() == [r["miss_ratio"] for r in rows]


@pytest.mark.parametrize("ignore_size", [True, False])
def test_every_policy_equals_the_cli_on_the_slice(cli, slice_trace, ignore_size):
    sizes = ["0.01", "0.1"]
    rows = cli_replay(cli, SLICE, ALL_POLICIES, sizes, ignore_size)
    table = bufcache.replay(slice_trace, ALL_POLICIES, sizes, ignore_size=ignore_size)
    assert len(rows) == len(ALL_POLICIES) * len(sizes)
    assert_same(rows, table)


@pytest.mark.parametrize("name", ["cloudPhysicsIO.oracleGeneral.bin", "cloudPhysicsIO.csv"])
def test_equals_the_cli_on_the_shared_traces(cli, name):
    path = shared_trace(name)
    policies = ["lru", "fifo", "s3fifo", "s3fifo:variant=libcachesim", "sieve", "arc", "belady"]
    sizes = ["0.001", "0.01", "0.1", "64MiB"]
    rows = cli_replay(cli, path, policies, sizes, False)
    assert_same(rows, bufcache.replay(bufcache.Trace.open(path), policies, sizes))


def test_table_shape_and_types(slice_trace):
    t = bufcache.replay(slice_trace, "lru", [0.1, "1MiB", bufcache.Size("0.2")])
    assert t["policy"] == ["lru"] * 3
    assert t["size"] == ["0.1", "1MiB", "0.2"]
    assert t["capacity"].dtype == np.uint64 and t["miss_ratio"].dtype == np.float64
    assert (t["hits"] + t["misses"] == t["requests"]).all()
    records = bufcache.to_records(t)
    assert records[1]["capacity"] == 1 << 20
    assert isinstance(records[0]["hits"], int)


def test_larger_lru_never_misses_more(slice_trace):
    t = bufcache.replay(slice_trace, ["lru"], [0.01, 0.05, 0.1, 0.2, 0.5, 1.0], ignore_size=True)
    assert (np.diff(t["misses"].astype(np.int64)) <= 0).all()
    # At the whole working set only first accesses miss.
    assert t["misses"][-1] == slice_trace.stats()["distinct_keys"]


def test_belady_is_optimal(slice_trace):
    names = ["belady", "lru", "fifo", "arc", "s3fifo", "sieve"]
    t = bufcache.replay(slice_trace, names, ["0.05"], ignore_size=True)
    assert t["misses"][0] == t["misses"].min()


def test_threads_and_seed_do_not_change_deterministic_results(slice_trace):
    a = bufcache.replay(slice_trace, ["random", "lru"], ["0.1"], threads=1, seed=3)
    b = bufcache.replay(slice_trace, ["random", "lru"], ["0.1"], threads=2, seed=3)
    assert a["hits"].tolist() == b["hits"].tolist()


def test_warmup_excludes_requests(slice_trace):
    t = bufcache.replay(slice_trace, "lru", "0.1", warmup=5000)
    assert t["requests"][0] == 15_000


def test_bad_arguments(slice_trace):
    with pytest.raises(ValueError, match="unknown policy"):
        bufcache.replay(slice_trace, ["lru", "nosuch"], ["0.1"])
    with pytest.raises(ValueError, match="cache size"):
        bufcache.replay(slice_trace, ["lru"], ["0.1", "ten"])
    with pytest.raises(ValueError):
        bufcache.replay(slice_trace, ["lru"], ["100MiB"], ignore_size=True)
    with pytest.raises(ValueError):
        bufcache.replay(slice_trace, ["lru"], ["0.1"], admission="nosuch")
    with pytest.raises(ValueError):
        bufcache.replay(slice_trace, ["lru"], ["0.1"], threads=0)
    with pytest.raises(ValueError, match="no requests"):
        empty = bufcache.Trace.synthetic("zipf(keys=10,alpha=0.9)", 0)
        bufcache.replay(empty, ["lru"], ["1"])
