"""bufcache.ray_sweep on a real Ray in local mode (2 CPUs, one cluster for the module):
the file equals the local sweep's byte for byte; a worker that dies mid-sweep is retried
and changes nothing (and without retries the sweep fails, so the hook does kill it); a
driver stopped after one trace resumes, skipping it, to the same file.

Ray comes from python/requirements-ray.txt, which scripts/test-python.sh installs and
where it sets BUFCACHE_REQUIRE_RAY=1, so that a missing Ray fails there instead of
skipping."""

import os

import pytest

import bufcache

from test_sweep import POLICIES, SIZES, write_spec, write_traces

if os.environ.get("BUFCACHE_REQUIRE_RAY"):
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -r python/requirements-ray.txt")

CELLS = 3 * len(POLICIES) * len(SIZES)


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def sweep_dir(tmp_path):
    write_traces(tmp_path)
    write_spec(tmp_path)
    bufcache.sweep(tmp_path / "sweep.toml", tmp_path / "local.csv")
    return tmp_path


def test_a_ray_sweep_equals_the_local_sweep(sweep_dir):
    summary = bufcache.ray_sweep(sweep_dir / "sweep.toml", sweep_dir / "ray.csv", progress=False)
    assert (sweep_dir / "ray.csv").read_bytes() == (sweep_dir / "local.csv").read_bytes()
    assert (summary["traces"], summary["rows_written"], summary["rows_total"]) == (3, CELLS, CELLS)


def test_a_killed_worker_is_retried_to_the_same_file(sweep_dir):
    marker = sweep_dir / "crashed"
    bufcache.ray_sweep(
        sweep_dir / "sweep.toml",
        sweep_dir / "ray.csv",
        progress=False,
        _crash_first_attempt=(1, str(marker)),
    )
    assert marker.exists(), "the first attempt of trace 1 did not run"
    assert (sweep_dir / "ray.csv").read_bytes() == (sweep_dir / "local.csv").read_bytes()


def test_without_retries_a_killed_worker_fails_the_sweep(sweep_dir):
    with pytest.raises(ray.exceptions.RayError):
        bufcache.ray_sweep(
            sweep_dir / "sweep.toml",
            sweep_dir / "ray.csv",
            progress=False,
            max_retries=0,
            max_in_flight=1,
            _crash_first_attempt=(1, str(sweep_dir / "crashed")),
        )
    # Trace 0 finished before the crash and stays; the rerun skips it.
    summary = bufcache.ray_sweep(sweep_dir / "sweep.toml", sweep_dir / "ray.csv", progress=False)
    assert (summary["traces_skipped"], summary["rows_written"]) == (1, CELLS * 2 // 3)
    assert (sweep_dir / "ray.csv").read_bytes() == (sweep_dir / "local.csv").read_bytes()


class Interrupted(Exception):
    pass


def test_an_interrupted_driver_resumes_to_the_same_file(sweep_dir):
    seen = []

    def stop_after_first(done, total, unit):
        seen.append((done, total, unit["index"]))
        raise Interrupted

    with pytest.raises(Interrupted):
        bufcache.ray_sweep(
            sweep_dir / "sweep.toml", sweep_dir / "ray.csv", max_in_flight=1, progress=stop_after_first
        )
    assert seen == [(1, 3, 0)]
    # One trace's rows are in the file, durable; the lock was released.
    driver = bufcache.SweepDriver(sweep_dir / "sweep.toml", sweep_dir / "ray.csv")
    assert [u["missing"] for u in driver.units()] == [0, CELLS // 3, CELLS // 3]
    driver.close()
    summary = bufcache.ray_sweep(sweep_dir / "sweep.toml", sweep_dir / "ray.csv", progress=False)
    assert (summary["traces_skipped"], summary["rows_written"]) == (1, CELLS * 2 // 3)
    assert (sweep_dir / "ray.csv").read_bytes() == (sweep_dir / "local.csv").read_bytes()
