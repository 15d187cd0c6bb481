#!/usr/bin/env python3
"""Accuracy and cost of the sampled miss-ratio curves against the exact ones (docs/mrc.md).

    scripts/mrc-accuracy.py TRACE shards [RATE ...]
    scripts/mrc-accuracy.py TRACE minisim POLICY,... [RATE]

The exact LRU curve is computed at 20 sizes spaced evenly in log from 0.1% to 100% of the
working set; its capacities are then given to every sampled run, so all curves share the
same points. The exact curve (and the sweep of `minisim`) is kept in TRACE.exact-*.json
next to the trace, so that a second run over a large trace does not recompute it.

For each method it prints the mean absolute error over all 20 points, the same over the
points the method resolves (capacity times rate at least MIN_SAMPLED objects, the rule
`bufcache mrc` prints; see docs/mrc.md), the largest error and where, wall and user
seconds and peak resident memory (GNU time). SEEDS=N repeats every sampled run with
--sample-seed 0..N-1 and prints the mean and the range of the errors (with VERBOSE=1, also
each point's mean error over the seeds, its standard error and how many seeds erred high). MIN_SAMPLED lists
the --min-sampled values every fixed-rate and fixed-size run is made with (default
"0,500": the plain method, then nested rates; docs/mrc.md), and the miniature caches' (or
nested levels') requests of each run are printed (the cost of the raised sizes). RUNS picks the SHARDS runs (default
"rate,fixed,noadj": fixed rate, fixed size, fixed rate unadjusted). HOT lists the --hot values
(stratified sampling, default "0": off) every fixed-rate and fixed-size run is made with. BUFCACHE names the binary (default
target/release/bufcache); VERBOSE=1 prints every point with the rate that served it.
"""
import json, os, subprocess, sys

B = os.environ.get("BUFCACHE", "target/release/bufcache")
SEEDS = int(os.environ.get("SEEDS", "1"))
VERBOSE = os.environ.get("VERBOSE") == "1"
MIN_SAMPLED = os.environ.get("MIN_SAMPLED", "0,500").split(",")
RUNS = os.environ.get("RUNS", "rate,fixed,noadj").split(",")
HOT = os.environ.get("HOT", "0").split(",")


def run(args):
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M %U", B, "mrc", "--ignore-size", "--json"] + args,
                       capture_output=True, text=True)
    if p.returncode:
        print(p.stderr)
        sys.exit(1)
    el, rss, user = p.stderr.strip().split("\n")[-1].split()
    rows = [json.loads(l) for l in p.stdout.splitlines()]
    return {"rows": rows, "wall": float(el), "rss": int(rss) * 1024, "user": float(user)}


def cached(path, args):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    r = run(args)
    with open(path, "w") as f:
        json.dump(r, f)
    return r


def curves(rows):
    c = {}
    for r in rows:
        if r.get("summary"):
            continue
        c.setdefault(r["policy"], []).append((r["capacity"], r["miss_ratio"], r.get("resolved", True),
                                              r.get("rate")))
    return c


def errors(approx, exact):
    """(MAE over all points, MAE over resolved points, count resolved, max error, its capacity)."""
    e = [(abs(a[1] - x[1]), a[0], a[2]) for a, x in zip(approx, exact)]
    res = [v for v, _, ok in e if ok]
    worst = max(e)
    return (sum(v for v, _, _ in e) / len(e), sum(res) / len(res) if res else float("nan"), len(res),
            worst[0], worst[1])


def show(name, results, exact, base_wall, base_user):
    errs = [errors(curves(r["rows"])[pol], exact) for r, pol in results]
    maes = [e[0] for e in errs]
    res = [e[1] for e in errs]
    r0 = results[0][0]
    s = [x for x in r0["rows"] if x.get("summary")]
    extra = ""
    if s:
        s = s[0]
        extra = (f" state {s['shards_state_bytes'] / 2**20:.2f}MiB rate {s['rate']:.5f}"
                 f" hot {s.get('hot_keys', 0):,} keys {s.get('hot_requests', 0):,} requests"
                 f" mini-requests {s.get('miniature_requests', 0):,} of {s['requests']:,} read")
    spread = lambda v: f"{sum(v) / len(v):.5f}" + (f" [{min(v):.5f}..{max(v):.5f}]" if len(v) > 1 else "")
    print(f"  {name}: MAE {spread(maes)} resolved({errs[0][2]}) {spread(res)} max {errs[0][3]:.4f}@{errs[0][4]}"
          f"  {r0['wall']:.2f}s wall {r0['user']:.2f}s user (vs exact: wall {base_wall / max(r0['wall'], 1e-3):.1f}x"
          f" user {base_user / max(r0['user'], 1e-3):.1f}x) rss {r0['rss'] / 2**20:.0f}MiB{extra}")
    if VERBOSE:
        # Each point's error for every seed: its mean over seeds and the standard error of
        # that mean tell a bias (a mean several standard errors from 0) from noise.
        per_seed = [[a[1] - x[1] for a, x in zip(curves(r["rows"])[pol], exact)] for r, pol in results]
        for i, ((c, m, ok, rate), (_, x, _, _)) in enumerate(zip(curves(r0["rows"])[results[0][1]], exact)):
            line = (f"      {c:>12} rate {rate:.4f} exact {x:.4f} approx {m:.4f} err {m - x:+.4f}"
                    f"{'' if ok else ' (unresolved)'}")
            if len(per_seed) > 1:
                e = [s[i] for s in per_seed]
                mean = sum(e) / len(e)
                se = (sum((v - mean) ** 2 for v in e) / (len(e) - 1) / len(e)) ** 0.5
                line += f"  seeds: mean {mean:+.4f} se {se:.4f} positive {sum(v > 0 for v in e)}/{len(e)}"
            print(line)


trace, mode = sys.argv[1], sys.argv[2]
fr = [0.001 * (1000 ** (i / 19)) for i in range(20)]
frs = ",".join("%.6f" % f for f in fr)
ex = cached(trace + ".exact-lru.json", ["--trace", trace, "--sizes", frs])
caps = ",".join(str(c[0]) for c in curves(ex["rows"])["lru"])
exc = curves(ex["rows"])["lru"]
print(f"{trace}: exact lru {ex['wall']:.2f}s wall {ex['user']:.2f}s user rss {ex['rss'] / 2**20:.0f}MiB; caps {caps}")
seeds = [["--sample-seed", str(s)] for s in range(SEEDS)] if SEEDS > 1 else [[]]
if mode == "shards":
    rates = sys.argv[3:] or ["0.01", "0.1", "0.001"]
    configs = [(["--method", "shards", "--rate", r, "--min-sampled", m, "--hot", h],
                f"shards R={r} min-sampled {m} hot {h}")
               for r in rates for m in MIN_SAMPLED for h in HOT] if "rate" in RUNS else []
    configs += [(["--method", "shards-fixed", "--samples", "32768", "--min-sampled", m, "--hot", h],
                 f"fixed 32768 min-sampled {m} hot {h}") for m in MIN_SAMPLED for h in HOT] if "fixed" in RUNS else []
    configs += [(["--method", "shards", "--rate", "0.01", "--no-adjust", "--min-sampled", "0"],
                 "shards R=0.01 noadj")] if "noadj" in RUNS else []
    for args, name in configs:
        results = [(run(["--trace", trace, "--sizes", caps] + args + s), "lru") for s in seeds]
        show(name, results, exc, ex["wall"], ex["user"])
else:
    pols = sys.argv[3]
    rate = sys.argv[4] if len(sys.argv) > 4 else "0.01"
    sw = cached(trace + ".sweep-" + pols.replace(",", "_") + ".json",
                ["--trace", trace, "--sizes", caps, "--policy", pols])
    swc = curves(sw["rows"])
    for m in MIN_SAMPLED:
        runs = [run(["--trace", trace, "--sizes", caps, "--policy", pols, "--method", "minisim", "--rate", rate,
                     "--min-sampled", m] + s)
                for s in seeds]
        t = runs[0]
        print(f"  min-sampled {m}: sweep {sw['wall']:.1f}s wall {sw['user']:.1f}s user; minisim {t['wall']:.2f}s wall"
              f" {t['user']:.2f}s user; ratio wall {sw['wall'] / t['wall']:.1f}x user {sw['user'] / t['user']:.1f}x"
              f" rss sweep {sw['rss'] / 2**20:.0f}MiB minisim {t['rss'] / 2**20:.0f}MiB")
        for p in pols.split(","):
            show(p, [(r, p) for r in runs], swc[p], sw["wall"], sw["user"])
