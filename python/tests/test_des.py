"""des_run(): the simulator's scenarios from Python equal `bufcache des --json`."""

import json
import subprocess

import pytest

import bufcache
from conftest import ROOT

SCENARIO = ROOT / "scenarios" / "disk-schedulers.toml"


def test_equals_the_cli(cli):
    out = subprocess.run([cli, "des", str(SCENARIO), "--json"], check=True,
                         capture_output=True, text=True).stdout
    expected = [json.loads(l) for l in out.splitlines() if l.strip()]
    assert bufcache.des_run(SCENARIO) == expected


def test_sweep_gives_one_run_per_value():
    runs = bufcache.des_run(SCENARIO)
    assert [r["value"] for r in runs] == ['"fifo"', '"sstf"', '"look"', '"clook"']
    # Kotz & Ellis: every scheduler writes the same blocks; only the time differs.
    assert len({r["report"]["disk_writes"] for r in runs}) == 1
    assert all(r["report"]["violations"] == 0 for r in runs)


def test_bad_scenarios(tmp_path):
    with pytest.raises(OSError):
        bufcache.des_run(tmp_path / "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("seed = 'x'\n")
    with pytest.raises(ValueError):
        bufcache.des_run(bad)
