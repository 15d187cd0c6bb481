"""Per-request caches: results worked out by hand, and equality with replay."""

import pytest

import bufcache


def test_lru_by_hand():
    c = bufcache.Cache("lru", 3)
    # 1 2 3 miss, 1 hits (order 2 3 1), 4 evicts 2, 2 misses and evicts 3.
    assert [c.get(k) for k in [1, 2, 3, 1, 4, 2]] == [False, False, False, True, False, False]
    assert c.victims(3) == [1, 4, 2]
    assert 1 in c and c.contains(4) and 3 not in c
    assert len(c) == 3 and c.used == 3 and c.capacity == 3
    assert c.remove(4) is True and c.remove(4) is False
    assert len(c) == 2


def test_fifo_ignores_hits():
    c = bufcache.Cache("fifo", 2)
    assert [c.get(k) for k in [1, 2, 1, 3, 1]] == [False, False, True, False, False]
    assert c.victims(2) == [3, 1]


def test_victims_change_nothing():
    c = bufcache.Cache("s3fifo", 10)
    for k in range(30):
        c.get(k % 13)
    before = c.victims(10)
    assert c.victims(10) == before
    assert sorted(before) == sorted(k for k in range(13) if k in c)


def test_byte_sizes_and_units():
    c = bufcache.Cache("lru", "10KiB")
    assert c.capacity == 10 * 1024
    c.get(1, 4096)
    c.get(2, 4096)
    assert c.used == 8192
    c.get(3, 4096)  # 12 KiB > 10 KiB: evicts 1
    assert 1 not in c and c.used == 8192
    assert c.get(4, 20 * 1024) is False and 4 not in c  # larger than the cache
    assert bufcache.Cache("lru", bufcache.Size.bytes(5000)).capacity == 5000
    assert bufcache.Cache("lru", bufcache.Size.units(7)).capacity == 7
    u = bufcache.Cache("lru", 2, ignore_size=True)
    u.get(1, 10**6)
    u.get(2, 10**6)
    assert u.used == 2


def test_fraction_of_a_trace(slice_trace):
    s = slice_trace.stats()
    c = bufcache.Cache("lru", 0.1, trace=slice_trace)
    assert c.capacity == int(0.1 * s["footprint_bytes"])
    u = bufcache.Cache("lru", "0.5", trace=slice_trace, ignore_size=True)
    assert u.capacity == int(0.5 * s["distinct_keys"])
    assert bufcache.Cache("lru", bufcache.Size.fraction(0.5), trace=slice_trace, ignore_size=True).capacity == u.capacity
    with pytest.raises(ValueError, match="trace="):
        bufcache.Cache("lru", 0.1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown policy"):
        bufcache.Cache("nosuch", 10)
    with pytest.raises(ValueError, match="no parameter"):
        bufcache.Cache("s3fifo:nosuch=1", 10)
    with pytest.raises(ValueError):
        bufcache.Cache("s3fifo:small=2", 10)
    with pytest.raises(ValueError):
        bufcache.Cache("lru", "12 parsecs")
    with pytest.raises(ValueError):
        bufcache.Cache("lru", 0)
    with pytest.raises(ValueError):
        bufcache.Cache("lru", -3)
    with pytest.raises(TypeError):
        bufcache.Cache("lru", True)
    with pytest.raises(TypeError):
        bufcache.Cache("lru", [1])
    with pytest.raises(ValueError, match="offline"):
        bufcache.Cache("belady", 10)
    with pytest.raises(OverflowError):
        bufcache.Cache("lru", 10).get(-1)


def online_policies():
    return [p["name"] for p in bufcache.policies() if p["name"] != "belady"]


@pytest.mark.parametrize("name", online_policies())
def test_get_loop_equals_replay(name, slice_trace):
    """Request by request from Python gives replay's hits, for every online policy."""
    table = bufcache.replay(slice_trace, [name], ["0.05"], ignore_size=True)
    cache = bufcache.Cache(name, int(table["capacity"][0]), ignore_size=True)
    # Replay numbers objects in order of first appearance; policies that hash keys
    # (W-TinyLFU's sketch, pinrange's ranges) must see the same numbers to decide alike.
    ids = {}
    hits = sum(cache.get(ids.setdefault(r.key, len(ids)), r.size) for r in slice_trace)
    assert hits == int(table["hits"][0])
    # process() runs the same loop in Rust.
    again = bufcache.Cache(name, int(table["capacity"][0]), ignore_size=True)
    assert again.process(slice_trace)["hits"] == hits


def test_get_takes_a_request(slice_trace):
    by_request = bufcache.Cache("lru", "1MiB")
    by_key = bufcache.Cache("lru", "1MiB")
    got = [by_request.get(r) for r in slice_trace]
    assert got == [by_key.get(r.key, r.size) for r in slice_trace]
    assert 0 < sum(got) < len(got)
    first = next(iter(slice_trace))
    assert by_request.get(first, 10**9) is False  # an explicit size wins: too large


def test_policies_lists_the_registry():
    names = [p["name"] for p in bufcache.policies()]
    assert "lru" in names and "s3fifo" in names and "belady" in names
    s3 = next(p for p in bufcache.policies() if p["name"] == "s3fifo")
    assert "variant" in s3["params"]
