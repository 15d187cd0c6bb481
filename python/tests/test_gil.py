"""replay() and mrc() release the GIL: another Python thread runs while they do.

No timing threshold: the check is an ordering. While the Rust side runs (the interval
[start, start + wall] that replay itself reports), the main thread must finish a small
piece of Python work. If replay held the GIL, that work could only finish after replay
returned.
"""

import threading
import time

import bufcache


def run_and_watch(work):
    """Runs `work` (returning its seconds inside Rust) on a thread; returns how far into
    it the main thread finished 200 GIL-needing steps, and that duration."""
    started = threading.Event()
    out = {}

    def body():
        out["start"] = time.perf_counter()
        started.set()
        out["rust_s"] = work()

    t = threading.Thread(target=body)
    t.start()
    started.wait()
    total = 0
    for i in range(200):
        total += sum(range(50))
        time.sleep(0)
    done = time.perf_counter()
    t.join()
    assert total == 200 * sum(range(50))
    return done - out["start"], out["rust_s"]


def test_replay_releases_the_gil():
    trace = bufcache.Trace.synthetic("zipf(keys=200000,alpha=0.8)", 2_000_000, seed=1)
    policies = ["lru", "arc", "s3fifo", "lirs"]

    def work():
        t = bufcache.replay(trace, policies, ["0.1"], threads=1)
        return float(t["wall_s"].sum())

    main_done_after, rust_s = run_and_watch(work)
    # Held GIL: main_done_after > rust_s. Released: the main thread's steps take a tiny
    # fraction of the replay.
    assert rust_s > 0.05, "the replay is too short to show anything"
    assert main_done_after < rust_s / 2, (main_done_after, rust_s)
