"""Policies written in Python, checked against the built-in ones they reimplement."""

import collections

import pytest

import bufcache


def lru_plugin():
    def init(capacity):
        return collections.OrderedDict()

    def hit(state, key, size):
        state.move_to_end(key)

    def miss(state, key, size):
        state[key] = size

    def evict(state, key, size):
        victim, _ = state.popitem(last=False)
        return victim

    def remove(state, key):
        del state[key]

    return bufcache.Plugin(init, hit, miss, evict, remove, name="py-lru")


def fifo_plugin():
    return bufcache.Plugin(
        lambda capacity: collections.deque(),
        lambda state, key, size: None,
        lambda state, key, size: state.append(key),
        lambda state, key, size: state.popleft(),
        name="py-fifo",
    )


@pytest.mark.parametrize("make,native", [(lru_plugin, "lru"), (fifo_plugin, "fifo")])
@pytest.mark.parametrize("ignore_size,size", [(True, "0.05"), (False, "0.02")])
def test_plugin_equals_native(make, native, ignore_size, size, slice_trace):
    table = bufcache.replay(slice_trace, [native], [size], ignore_size=ignore_size)
    cap = int(table["capacity"][0])
    py = bufcache.Cache(make(), cap, ignore_size=ignore_size)
    got = py.process(slice_trace)
    assert got["hits"] == int(table["hits"][0])
    assert got["bytes_missed"] == int(table["bytes_missed"][0])
    assert py.policy.startswith("py-")


def test_plugin_per_request_and_remove():
    c = bufcache.Cache(lru_plugin(), 3)
    assert [c.get(k) for k in [1, 2, 3, 1, 4, 2]] == [False, False, False, True, False, False]
    assert c.remove(1) and 1 not in c
    with pytest.raises(NotImplementedError):
        c.victims(1)


def test_hook_exceptions_reach_the_caller():
    def boom(state, key, size):
        raise RuntimeError("hook failed")

    c = bufcache.Cache(bufcache.Plugin(lambda cap: None, boom, lambda s, k, z: None, boom), 2)
    c.get(1)
    with pytest.raises(RuntimeError, match="hook failed"):
        c.get(1)  # hit hook
    c.get(2)
    with pytest.raises(RuntimeError, match="hook failed"):
        c.get(3)  # evict hook
    assert 3 not in c


def test_evicting_a_key_not_in_the_cache_is_valueerror():
    c = bufcache.Cache(
        bufcache.Plugin(lambda cap: None, lambda s, k, z: None, lambda s, k, z: None, lambda s, k, z: 999),
        1,
    )
    c.get(1)
    with pytest.raises(ValueError, match="999"):
        c.get(2)
    assert 1 in c and 2 not in c


def test_init_failure_raises():
    def init(capacity):
        raise KeyError("no state")

    with pytest.raises(KeyError):
        bufcache.Cache(bufcache.Plugin(init, None, None, None), 1)
