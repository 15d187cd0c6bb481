"""Benchmarks of the Python package (numbers and commands in docs/python.md).

    python bench.py replay TRACE [--policies P,...|ALL] [--sizes S,...]
        Trace.open + replay: time the whole process, or read the time it prints from the
        trace's opening to the table, against
        `bufcache replay --trace TRACE --policy P,... --size S,... --json`.
    python bench.py get TRACE [--lib bufcache|libcachesim] [--policy lru] [--size 0.1]
        The per-request loop `for req in trace: cache.get(...)`, timed inside the process
        around the loop only; prints requests per second and the miss ratio (which must
        agree between the two libraries for the comparison to mean anything).

Timings here are for comparing runs on the same machine; on a loaded machine only paired
ratios of many runs mean anything.
"""

import argparse
import sys
import time


def policy_list(bufcache, text):
    """`text` split at commas; `ALL` is every registered policy but the offline one."""
    if text == "ALL":
        return [p["name"] for p in bufcache.policies() if p["name"] != "belady"]
    return text.split(",")


def bench_replay(args):
    import bufcache

    # Timed from the trace's opening to the table: the replay's own throughput, without
    # the interpreter's start and NumPy's import (constant per process).
    start = time.perf_counter()
    trace = bufcache.Trace.open(args.trace)
    table = bufcache.replay(trace, policy_list(bufcache, args.policies), args.sizes.split(","))
    inside = time.perf_counter() - start
    requests = int(table["requests"].sum())
    print(f"{len(table['policy'])} runs, {requests} requests, {inside:.3f} s inside the process")


def loop_bufcache(args):
    import bufcache

    trace = bufcache.Trace.open(args.trace)
    cache = bufcache.Cache(args.policy, float(args.size), trace=trace)
    start = time.perf_counter()
    n = hits = 0
    get = cache.get
    for req in trace:
        hits += get(req.key, req.size)
        n += 1
    return n, hits, time.perf_counter() - start


def loop_libcachesim(args):
    import libcachesim as lcs

    reader = lcs.TraceReader(trace=args.trace, trace_type=lcs.TraceType.ORACLE_GENERAL_TRACE)
    wss = reader.get_working_set_size()[1]
    cls = {"lru": lcs.LRU, "fifo": lcs.FIFO, "s3fifo": lcs.S3FIFO, "sieve": lcs.Sieve}[args.policy]
    cache = cls(cache_size=int(float(args.size) * wss))
    reader.reset()
    start = time.perf_counter()
    n = hits = 0
    get = cache.get
    for req in reader:
        hits += get(req)
        n += 1
    return n, hits, time.perf_counter() - start


def bench_get(args):
    loop = loop_bufcache if args.lib == "bufcache" else loop_libcachesim
    n, hits, secs = loop(args)
    print(f"{args.lib} {args.policy}@{args.size}: {n} requests, miss ratio {1 - hits / n:.6f}, "
          f"{secs:.3f} s, {n / secs / 1e3:.1f} k requests/s")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay")
    r.add_argument("trace")
    r.add_argument("--policies", default="lru,fifo,clock,arc,s3fifo,sieve,twoq,belady")
    r.add_argument("--sizes", default="0.01,0.05,0.1,0.2")
    g = sub.add_parser("get")
    g.add_argument("trace")
    g.add_argument("--lib", choices=["bufcache", "libcachesim"], default="bufcache")
    g.add_argument("--policy", default="lru")
    g.add_argument("--size", default="0.1")
    args = p.parse_args()
    {"replay": bench_replay, "get": bench_get}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
