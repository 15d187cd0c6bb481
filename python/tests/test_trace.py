"""Readers, request iteration and statistics."""

import pytest

import bufcache
from conftest import SLICE, SLICE_CSV, SLICE_TXT


def test_oracle_slice_stats_match_its_readme(slice_trace):
    s = slice_trace.stats()
    # tests/data/README.md: the first 20,000 records of the CloudPhysics trace.
    assert s["requests"] == 20_000
    assert s["reads"] == 20_000
    assert s["deletes"] == 0
    assert len(slice_trace) == 20_000


def test_iteration_yields_every_request_in_order(slice_trace):
    reqs = list(slice_trace)
    assert len(reqs) == 20_000
    # The first record of the file, decoded by hand (u32 time, u64 id, u32 size).
    raw = SLICE.read_bytes()[:24]
    assert reqs[0].time == int.from_bytes(raw[0:4], "little")
    assert reqs[0].key == int.from_bytes(raw[4:12], "little")
    assert reqs[0].size == int.from_bytes(raw[12:16], "little")
    assert reqs[0].op == "read"
    assert len({r.key for r in reqs}) == slice_trace.stats()["distinct_keys"]


def test_text_trace_counts_lines():
    t = bufcache.Trace.open(SLICE_TXT)
    lines = [l for l in SLICE_TXT.read_text().splitlines() if l.strip()]
    assert t.stats()["requests"] == len(lines)
    assert t.stats()["distinct_keys"] == len(set(lines))
    assert [r.key for r in t][:5] == [int(l) for l in lines[:5]]


def test_csv_preset_and_mapping_read_the_same_requests():
    detected = bufcache.Trace.open(SLICE_CSV)
    preset = bufcache.Trace.open(SLICE_CSV, csv="cloudphysics")
    assert detected.stats() == preset.stats()
    assert detected.stats()["requests"] > 0


def test_page_size_splits_block_requests():
    small = bufcache.Trace.open(SLICE_CSV, page_size=512)
    large = bufcache.Trace.open(SLICE_CSV, page_size=4096)
    assert small.stats()["requests"] >= large.stats()["requests"]


def test_synthetic_is_seeded():
    a = bufcache.Trace.synthetic("zipf(keys=100,alpha=0.9)", 1000, seed=7)
    b = bufcache.Trace.synthetic("zipf(keys=100,alpha=0.9)", 1000, seed=7)
    c = bufcache.Trace.synthetic("zipf(keys=100,alpha=0.9)", 1000, seed=8)
    keys = lambda t: [r.key for r in t]
    assert keys(a) == keys(b)
    assert keys(a) != keys(c)
    assert a.stats()["requests"] == 1000
    assert all(r.size == 4096 for r in a)


def test_loop_workload_by_hand():
    t = bufcache.Trace.synthetic("loop(keys=3)", 7)
    keys = [r.key for r in t]
    assert len(set(keys[:3])) == 3
    assert keys[3:] == keys[:4]
    assert t.stats()["distinct_keys"] == 3


def test_missing_file_is_oserror(tmp_path):
    with pytest.raises(OSError, match="No such file"):
        bufcache.Trace.open(tmp_path / "absent.oracleGeneral.bin")


def test_unknown_format_and_bad_options_are_valueerror(tmp_path):
    p = tmp_path / "trace.weird"
    p.write_text("1\n")
    with pytest.raises(ValueError):
        bufcache.Trace.open(p)
    with pytest.raises(ValueError):
        bufcache.Trace.open(SLICE, format="nosuchformat")
    with pytest.raises(ValueError):
        bufcache.Trace.open(SLICE_CSV, csv="nosuchcolumn=9")
    with pytest.raises(ValueError):
        bufcache.Trace.open(SLICE, page_size=0)
    with pytest.raises(ValueError):
        bufcache.Trace.synthetic("zipf(keys=10,beta=1)", 10)


def test_truncated_oracle_record_is_valueerror(tmp_path):
    p = tmp_path / "cut.oracleGeneral.bin"
    p.write_bytes(SLICE.read_bytes()[:30])
    with pytest.raises(ValueError):
        bufcache.Trace.open(p)


def test_compressed_files_read_the_same_requests(tmp_path, slice_trace, cli):
    import gzip
    import subprocess

    gz = tmp_path / "slice.oracleGeneral.bin.gz"
    gz.write_bytes(gzip.compress(SLICE.read_bytes()))
    zst = tmp_path / "slice.oracleGeneral.zst"
    subprocess.run([cli, "trace", "convert", str(SLICE), str(zst)], check=True, capture_output=True)
    keys = [r.key for r in slice_trace]
    for path in (gz, zst):
        t = bufcache.Trace.open(path)
        assert t.stats() == slice_trace.stats()
        assert [r.key for r in t] == keys
    assert bufcache.Trace.open(zst, format="oraclezst").stats() == slice_trace.stats()
