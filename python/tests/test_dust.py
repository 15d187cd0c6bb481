"""dust(): Dust against a simulated target gives the command's report."""

import json
import subprocess

import pytest

import bufcache
from conftest import cli_binary


def test_fifo_is_found_and_agrees_with_the_command():
    r = bufcache.dust("sim:fifo:pages=500", iterations=40, seed=7)
    assert r["verdict"]["verdict"] == "fifo"
    assert r["size"]["pages"] == 500, "a simulated target's size is measured exactly"
    assert len(r["probes"]) > 0
    out = subprocess.run(
        [cli_binary(), "dust", "--target", "sim:fifo:pages=500", "--iterations", "40",
         "--seed", "7", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    line = json.loads(out)
    assert line["verdict"] == r["verdict"]["verdict"]
    assert line["confidence"] == r["verdict"]["confidence"]
    assert line["size_estimate_pages"] == r["size"]["pages"]
    assert line["probes"] == len(r["probes"])


def test_lru_k_and_a_size_hint():
    r = bufcache.dust("sim:lruk:k=2:pages=1000", iterations=40, size_hint=1000)
    assert r["verdict"]["verdict"] == "lruk"
    assert r["size"]["pages"] == 1000


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="sim:POLICY"):
        bufcache.dust("nfs:/x")
    with pytest.raises(ValueError, match=r"pages=N"):
        bufcache.dust("sim:lru")
    with pytest.raises(ValueError, match="unknown judge"):
        bufcache.dust("sim:lru:pages=100", judge="guess")
