"""mrc(): exact curves equal replays, approximate ones come close."""

import numpy as np
import pytest

import bufcache


def test_exact_lru_equals_replay_at_every_point(slice_trace):
    curve = bufcache.mrc(slice_trace, points=8, ignore_size=True)
    assert set(curve["method"]) == {"exact"}
    caps = [int(c) for c in curve["capacity"]]
    t = bufcache.replay(slice_trace, "lru", caps, ignore_size=True)
    assert curve["misses"].tolist() == t["misses"].astype(float).tolist()


def test_exact_by_hand():
    # loop over 3 keys, 7 requests: LRU of 1 or 2 misses everything, 3 only the first 3.
    t = bufcache.Trace.synthetic("loop(keys=3)", 7)
    curve = bufcache.mrc(t, sizes=[1, 2, 3], ignore_size=True)
    assert curve["misses"].tolist() == [7.0, 7.0, 3.0]


def test_other_policies_sweep_and_byte_lru_is_one_pass(slice_trace):
    # As the CLI's mrc: plain LRU takes the one-pass curve in byte mode too.
    curve = bufcache.mrc(slice_trace, policy=["fifo", "lru"], sizes=["0.05", "0.2"])
    assert curve["policy"] == ["fifo", "fifo", "lru", "lru"]
    assert curve["method"] == ["sweep", "sweep", "exact", "exact"]
    t = bufcache.replay(slice_trace, ["fifo", "lru"], ["0.05", "0.2"])
    assert curve["miss_ratio"].tolist() == t["miss_ratio"].tolist()


def test_shards_full_rate_equals_exact(slice_trace):
    exact = bufcache.mrc(slice_trace, points=5, ignore_size=True)
    sizes = [int(c) for c in exact["capacity"]]
    shards = bufcache.mrc(slice_trace, method="shards", rate=1.0, sizes=sizes, ignore_size=True)
    np.testing.assert_allclose(shards["miss_ratio"], exact["miss_ratio"], atol=1e-12)


def test_sampled_methods_come_close(slice_trace):
    exact = bufcache.mrc(slice_trace, points=5, ignore_size=True)
    sizes = [int(c) for c in exact["capacity"]]
    for method in ("shards", "shards-fixed", "minisim"):
        approx = bufcache.mrc(
            slice_trace, method=method, rate=0.3, samples=4000, sizes=sizes, ignore_size=True
        )
        lru = [m for p, m in zip(approx["policy"], approx["miss_ratio"]) if p == "lru"]
        assert np.abs(np.array(lru[: len(sizes)]) - exact["miss_ratio"]).max() < 0.1, method


def test_bad_arguments(slice_trace):
    with pytest.raises(ValueError, match="unknown method"):
        bufcache.mrc(slice_trace, method="guess")
    with pytest.raises(ValueError):
        bufcache.mrc(slice_trace, method="shards", rate=0.0)
    with pytest.raises(ValueError):
        bufcache.mrc(slice_trace, points=0)
    with pytest.raises(ValueError):
        bufcache.mrc(slice_trace, policy="nosuch")
