"""Benchmark: a sweep on Ray in local mode against the same sweep run locally (numbers and
commands in docs/python.md).

    python sweep_bench.py DIR [--traces 8] [--requests 200000] [--pairs 5] [--cpus 2]

Writes DIR/t*.txt (seeded Zipf-like traces, one seed per trace, kept if already there)
and a spec of every online policy at 8 sizes (fractions of each trace's working set),
starts Ray once (`ray.init(num_cpus=CPUS)`, timed apart), then runs PAIRS pairs of
`bufcache.sweep(threads=CPUS)` and `bufcache.ray_sweep(cpus_per_task=1)`, each into a
fresh file, alternating which goes first, and checks that both files are identical. It
prints each pair's times and the ratio Ray / local; on a loaded machine only the paired
ratios mean anything.
"""

import argparse
import pathlib
import statistics
import time

import numpy as np

import bufcache

SIZES = ["0.001", "0.003", "0.01", "0.03", "0.1", "0.2", "0.4", "0.8"]


def write_traces(directory: pathlib.Path, traces: int, requests: int) -> None:
    for t in range(traces):
        path = directory / f"t{t}.txt"
        if path.exists():
            continue
        rng = np.random.default_rng(1000 + t)
        # Zipf(1.2) ranks over a keyspace of a tenth of the requests, shuffled per trace.
        keys = requests // 10
        ranks = rng.zipf(1.2, requests) % keys
        ids = rng.permutation(keys)[ranks]
        path.write_text("\n".join(map(str, ids.tolist())) + "\n")


def spec(directory: pathlib.Path) -> dict:
    online = [p["name"] for p in bufcache.policies() if p["name"] != "belady"]
    return {
        "traces": [str(directory / "t*.txt")],
        "policies": online,
        "sizes": SIZES,
        "ignore_size": True,
    }


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", type=pathlib.Path)
    p.add_argument("--traces", type=int, default=8)
    p.add_argument("--requests", type=int, default=200_000)
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--cpus", type=int, default=2)
    args = p.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    write_traces(args.dir, args.traces, args.requests)
    s = spec(args.dir)
    cells = args.traces * len(s["policies"]) * len(SIZES)
    print(f"{args.traces} traces x {len(s['policies'])} policies x {len(SIZES)} sizes = {cells} cells")

    import ray

    init_s = timed(lambda: ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False))
    print(f"ray.init: {init_s:.2f} s (not counted below)")
    try:
        ratios = []
        for i in range(args.pairs):
            local_out, ray_out = args.dir / "local.csv", args.dir / "ray.csv"
            for f in (local_out, ray_out):
                f.unlink(missing_ok=True)
            local = lambda: bufcache.sweep(s, local_out, threads=args.cpus)
            on_ray = lambda: bufcache.ray_sweep(s, ray_out, progress=False, cpus_per_task=1)
            if i % 2 == 0:
                local_s, ray_s = timed(local), timed(on_ray)
            else:
                ray_s, local_s = timed(on_ray), timed(local)
            assert local_out.read_bytes() == ray_out.read_bytes(), "Ray's file differs"
            ratios.append(ray_s / local_s)
            print(f"pair {i + 1}: local {local_s:.2f} s, ray {ray_s:.2f} s, ratio {ratios[-1]:.3f}")
        print(f"median ratio ray/local: {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
