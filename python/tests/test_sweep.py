"""bufcache.sweep and the driver pieces: the same file as `bufcache sweep`, byte for byte;
a file cut anywhere resumes to the same bytes; a spec as a dict equals its TOML file;
tasks appended in any order give the local file; bad input raises the right exception."""

import random
import subprocess

import pytest

import bufcache

POLICIES = ["lru", "s3fifo", "random", "arc"]
SIZES = ["0.1", "0.3", "5"]


def write_traces(directory, count=3, requests=400):
    """Small skewed text traces, each from its own fixed seed (distinct digests)."""
    for t in range(count):
        rng = random.Random(t)
        keys = [rng.randrange(8) if rng.random() < 0.5 else rng.randrange(60) for _ in range(requests)]
        (directory / f"t{t}.txt").write_text("".join(f"{k}\n" for k in keys))


def write_spec(directory):
    policies = ", ".join(f'"{p}"' for p in POLICIES)
    sizes = ", ".join(f'"{s}"' for s in SIZES)
    spec = directory / "sweep.toml"
    spec.write_text(
        f'traces = ["t*.txt"]\npolicies = [{policies}]\nsizes = [{sizes}]\n'
        'warmup = "0.1"\nseed = 5\nignore_size = true\n'
    )
    return spec


@pytest.fixture
def sweep_dir(tmp_path):
    write_traces(tmp_path)
    write_spec(tmp_path)
    return tmp_path


def test_sweep_equals_the_cli_byte_for_byte(sweep_dir, cli):
    spec = sweep_dir / "sweep.toml"
    subprocess.run([cli, "sweep", str(spec), "-o", str(sweep_dir / "cli.csv")], check=True, capture_output=True)
    summary = bufcache.sweep(str(spec), sweep_dir / "py.csv", threads=2)
    assert (sweep_dir / "py.csv").read_bytes() == (sweep_dir / "cli.csv").read_bytes()
    cells = 3 * len(POLICIES) * len(SIZES)
    assert summary["traces"] == 3 and summary["traces_skipped"] == 0
    assert summary["rows_written"] == summary["rows_total"] == cells
    # A second run finds every cell done.
    again = bufcache.sweep(spec, sweep_dir / "py.csv")
    assert (again["traces_skipped"], again["rows_written"]) == (3, 0)


def test_a_dict_spec_equals_its_toml_file(sweep_dir, monkeypatch):
    bufcache.sweep(sweep_dir / "sweep.toml", sweep_dir / "toml.csv")
    monkeypatch.chdir(sweep_dir)
    spec = {
        "traces": ["t*.txt"],
        "policies": POLICIES,
        "sizes": [0.1, 0.3, 5],  # numbers are written as Python prints them
        "warmup": 0.1,
        "seed": 5,
        "ignore_size": True,
    }
    bufcache.sweep(spec, "dict.csv")
    assert (sweep_dir / "dict.csv").read_bytes() == (sweep_dir / "toml.csv").read_bytes()


def test_a_truncated_file_resumes_to_the_same_bytes(sweep_dir):
    full = sweep_dir / "full.csv"
    bufcache.sweep(sweep_dir / "sweep.toml", full)
    clean = full.read_bytes()
    header = clean.index(b"\n") + 1
    # Mid-header, just after it, mid-row, on a row boundary, one byte short of the end.
    second_row = clean.index(b"\n", header) + 1
    for cut in [5, header, header + 17, second_row, len(clean) // 2, len(clean) - 1]:
        cut_file = sweep_dir / f"cut{cut}.csv"
        cut_file.write_bytes(clean[:cut])
        summary = bufcache.sweep(sweep_dir / "sweep.toml", cut_file)
        assert cut_file.read_bytes() == clean, f"cut at byte {cut}"
        assert summary["rows_total"] == 3 * len(POLICIES) * len(SIZES)


def test_driver_pieces_in_any_order_give_the_local_file(sweep_dir):
    spec = sweep_dir / "sweep.toml"
    bufcache.sweep(spec, sweep_dir / "local.csv")
    driver = bufcache.SweepDriver(spec, sweep_dir / "driven.csv")
    units = driver.units()
    assert [u["index"] for u in units] == [0, 1, 2]
    assert all(u["missing"] == u["cells"] == len(POLICIES) * len(SIZES) for u in units)
    assert all(bufcache.sweep_memory_estimate(driver.spec_json, u["path"]) > 0 for u in units)
    for u in reversed(units):
        assert driver.append(bufcache.sweep_task(driver.spec_json, u["path"])) == u["cells"]
    # A retried task's rows are already there: nothing is written twice.
    assert driver.append(bufcache.sweep_task(driver.spec_json, units[0]["path"], threads=1)) == 0
    driver.finish()
    assert (sweep_dir / "driven.csv").read_bytes() == (sweep_dir / "local.csv").read_bytes()
    with pytest.raises(ValueError, match="finished"):
        driver.units()


def test_bad_input_raises_the_right_exception(sweep_dir, monkeypatch):
    monkeypatch.chdir(sweep_dir)
    good = {"traces": ["t0.txt"], "policies": ["lru"], "sizes": ["0.5"]}
    with pytest.raises(ValueError, match="unknown field"):
        bufcache.sweep({**good, "sizez": ["1"]}, "x.csv")
    with pytest.raises(ValueError, match="nosuch"):
        bufcache.sweep({**good, "policies": ["nosuch"]}, "x.csv")
    with pytest.raises(OSError, match="does not exist"):
        bufcache.sweep({**good, "traces": ["missing.txt"]}, "x.csv")
    with pytest.raises(OSError):
        bufcache.sweep(sweep_dir / "no-spec.toml", "x.csv")
    with pytest.raises(TypeError):
        bufcache.sweep(42, "x.csv")
    (sweep_dir / "other.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="header"):
        bufcache.sweep(good, "other.csv")
    driver = bufcache.SweepDriver(good, "held.csv")
    with pytest.raises(OSError, match="locked"):
        bufcache.sweep(good, "held.csv")
    with pytest.raises(ValueError, match="bad rows"):
        driver.append(b"not,a,row\n")
    driver.close()
