#!/usr/bin/env python3
"""CPU time per hit, one thread: `bufcache bench pool --bench pin-hit` builds and vmcache's
micro-benchmark, alternated, so that a loaded machine (other processes taking turns on the
cores) changes the figures less than wall time does.

    scripts/vmcache/cpu_per_op.py CACHED_MIB ROUNDS MICRO NAME=BUFCACHE [NAME=BUFCACHE ...]

MICRO is scripts/vmcache/micro.cpp built as run.sh builds it. For each bufcache build, one
run of `bench pool --bench pin-hit --scheme mapped --threads 1 --repeat 1 --duration-ms
3000`: each of its rows (pin + unpin, then through page hints, then an 8-byte optimistic
read, then through page hints; a build without hints has only the first and third) runs on
a worker thread of its own, whose user time is read from /proc every 20 ms; CPU per
operation is that time over the row's operations (ops/s x 3 s). For vmcache, one run of `MODE=pinhit`
(fixS + unfixS, fixX + unfixX, optimistic 8 B, one after the other on one thread): the
process's user time is read as each phase prints its line, and a run with RUNMS=1 gives
the set-up to subtract from the first phase. Prints one line a run, with the load average.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")
RUN_MS = 3000


def utime(pid, tid=None):
    path = f"/proc/{pid}/task/{tid}/stat" if tid else f"/proc/{pid}/stat"
    try:
        fields = open(path).read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) / TICK


def load():
    return open("/proc/loadavg").read().split()[0]


def bufcache(binary, cached, work):
    """CPU ns per operation and wall ns per operation, by the rows' variants."""
    p = subprocess.Popen(
        [binary, "bench", "pool", "--bench", "pin-hit", "--scheme", "mapped", "--threads", "1",
         "--repeat", "1", "--duration-ms", str(RUN_MS), "--cached-mib", str(cached),
         "--dir", work, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    threads = {}
    while p.poll() is None:
        try:
            for tid in os.listdir(f"/proc/{p.pid}/task"):
                u = utime(p.pid, tid)
                if u is not None:
                    first = threads.get(tid, (time.monotonic(), 0))[0]
                    threads[tid] = (first, u)
        except OSError:
            pass
        time.sleep(0.02)
    rows = [json.loads(line) for line in p.stdout.read().splitlines() if line.startswith("{")]
    # The two workers are the threads that ran for seconds, in the order they started.
    workers = [u for _, u in sorted(v for v in threads.values() if v[1] > 0.5 * RUN_MS / 3000)]
    ops = [r["ops_per_s"] * RUN_MS / 1000 for r in rows]
    cpu = {r["variant"]: u / n * 1e9 for r, u, n in zip(rows, workers, ops)}
    return cpu, {r["variant"]: 1e9 / r["ops_per_s"] for r in rows}


def line(cpu, wall, names):
    """`name cpu` for each variant measured, then the wall times in brackets."""
    got = [(short, v) for short, v in names if v in cpu]
    return (" ".join(f"{short} {cpu[v]:.1f}" for short, v in got)
            + " (wall " + " ".join(f"{wall[v]:.1f}" for _, v in got) + ")")


POOL = [("pin", "pin"), ("pin-hinted", "pin-hinted"), ("optimistic", "optimistic"),
        ("optimistic-hinted", "optimistic-hinted")]
VMCACHE = [("pin", "fixS+unfixS"), ("optimistic", "optimistic")]


def vmcache(micro, cached, work):
    """CPU ns per operation of each phase of micro's pinhit mode, and wall ns per op."""
    def run(run_ms):
        block = os.path.join(work, "bm")
        open(block, "w").close()
        env = dict(os.environ, BLOCK=block, MODE="pinhit", THREADS="1", PHYSGB="4", VIRTGB="4",
                   DATAMB=str(cached), RUNMS=str(run_ms), REPEAT="1")
        p = subprocess.Popen([micro], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        out = []
        for line in p.stdout:
            if line.startswith("{"):
                u = utime(p.pid)
                try:
                    out.append((u, json.loads(line)))
                except ValueError:  # a 1 ms run may print a non-number rate
                    out.append((u, {}))
        p.wait()
        return out
    before = run(1)[0][0]
    cpu, wall = {}, {}
    for u, row in run(RUN_MS):
        cpu[row["variant"]] = (u - before) / (row["ops_per_s"] * RUN_MS / 1000) * 1e9
        wall[row["variant"]] = 1e9 / row["ops_per_s"]
        before = u
    return cpu, wall


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    cached, rounds, micro = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    builds = [arg.split("=", 1) for arg in sys.argv[4:]]
    with tempfile.TemporaryDirectory(prefix="bufcache-cpu-") as work:
        for r in range(1, rounds + 1):
            for name, binary in builds:
                at = (time.strftime("%H:%M:%S", time.gmtime()), load())
                cpu, wall = bufcache(binary, cached, work)
                print(f"round {r} {at[0]} load {at[1]} {name}: CPU ns/op "
                      f"{line(cpu, wall, POOL)}", flush=True)
            at = (time.strftime("%H:%M:%S", time.gmtime()), load())
            cpu, wall = vmcache(micro, cached, work)
            print(f"round {r} {at[0]} load {at[1]} vmcache: CPU ns/op "
                  f"{line(cpu, wall, VMCACHE)}", flush=True)


if __name__ == "__main__":
    main()
