#!/usr/bin/env python3
"""Accuracy and cost of the sampled miss-ratio curves against the exact ones (docs/mrc.md).

    scripts/mrc-accuracy.py TRACE shards
    scripts/mrc-accuracy.py TRACE minisim POLICY,... [RATE]

The exact LRU curve is computed at 20 sizes spaced evenly in log from 0.1% to 100% of the
working set; its capacities are then given to every sampled run, so all curves share the
same points. Prints each method's mean absolute error over the 20 points, wall and user
seconds and peak resident memory (GNU time), and the SHARDS summary. `minisim` compares
against the sweep (a full replay per size) of the same policies. BUFCACHE names the
binary (default target/release/bufcache).
"""
import json, os, subprocess, sys, time
B=os.environ.get("BUFCACHE","target/release/bufcache")
def run(args):
    t=time.time()
    p=subprocess.run(["/usr/bin/time","-f","%e %M %U",B,"mrc","--ignore-size","--json"]+args,capture_output=True,text=True)
    if p.returncode: print(p.stderr); sys.exit(1)
    el,rss,user=p.stderr.strip().split("\n")[-1].split()
    rows=[json.loads(l) for l in p.stdout.splitlines()]
    return rows,float(el),int(rss)*1024,float(user)
def curves(rows):
    c={}
    for r in rows:
        if r.get("summary"): continue
        c.setdefault(r["policy"],[]).append(r["miss_ratio"])
    return c
def mae(a,b): return sum(abs(x-y) for x,y in zip(a,b))/len(a)
trace=sys.argv[1]; mode=sys.argv[2]
fr=[0.001*(1000**(i/19)) for i in range(20)]
frs=",".join("%.6f"%f for f in fr)
ex,te,re_,ue=run(["--trace",trace,"--sizes",frs])
caps=",".join(str(r["capacity"]) for r in ex)
exc=curves(ex)["lru"]
print(f"{trace}: exact lru {te:.2f}s wall {ue:.2f}s user rss {re_/2**20:.0f}MiB; caps {caps}")
if mode=="shards":
    for args,name in [(["--method","shards","--rate","0.01"],"shards R=0.01"),(["--method","shards","--rate","0.1"],"shards R=0.1"),(["--method","shards","--rate","0.001"],"shards R=0.001"),(["--method","shards-fixed","--samples","32768"],"fixed 32768"),(["--method","shards","--rate","0.01","--no-adjust"],"shards R=0.01 noadj")]:
        rows,t,rss,u=run(["--trace",trace,"--sizes",caps]+args)
        s=[r for r in rows if r.get("summary")][0]
        print(f"  {name}: MAE {mae(curves(rows)['lru'],exc):.5f}  {t:.2f}s wall {u:.2f}s user (exact/this wall {te/t:.1f}x) rss {rss/2**20:.0f}MiB state {s['shards_state_bytes']/2**20:.2f}MiB rate {s['rate']:.5f} ws {s['working_set_objects']:.0f}")
else:
    pols=sys.argv[3]
    sw,ts,rs,us=run(["--trace",trace,"--sizes",caps,"--policy",pols])
    swc=curves(sw)
    rows,t,rss,u=run(["--trace",trace,"--sizes",caps,"--policy",pols,"--method","minisim","--rate",sys.argv[4] if len(sys.argv)>4 else "0.01"])
    mc=curves(rows)
    print(f"  sweep {ts:.1f}s wall {us:.1f}s user; minisim {t:.2f}s wall {u:.2f}s user; ratio wall {ts/t:.1f}x user {us/u:.1f}x rss sweep {rs/2**20:.0f}MiB minisim {rss/2**20:.0f}MiB")
    for p in pols.split(","):
        print(f"    {p}: MAE {mae(mc[p],swc[p]):.5f}")
