#!/usr/bin/env python3
"""Instructions per operation of the timed loops of `bufcache bench pool` and of vmcache's
micro-benchmark, counted by callgrind (exact, whatever the load).

    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --demangle=no \
        --callgrind-out-file=OUT BINARY ARGS...
    scripts/vmcache/loop_instructions.py OUT BINARY

Both benchmarks time their loops for a fixed duration, so the number of operations is
not known in advance (and the rate a loop reports under valgrind is not its count). It is
found from the loops' random generator instead: each draw of SplitMix64 is inlined, so
its `z ^ (z >> 30)` step (`shr $0x1e`) has an address of its own that runs once per
operation (vmcache's read draws twice, at two addresses, each once per read). For each
function whose most-run copy of that step ran more than 1000 times, the script prints the
function's instructions, calls included (vmcache's read calls `memcpy`), over that count.
A function holds one benchmark loop (each loop runs on threads of its own), so each line
is one loop.
"""
import re
import subprocess
import sys

STEP = "shr    $0x1e,"


def costs(path):
    """Per function: each event's total (calls included), the events' names, and the
    executions of each address."""
    names, total, at, events = {}, {}, {}, ["Ir"]
    fn, addr, call = None, 0, False
    for line in open(path):
        if line.startswith("events:"):
            events = line.split()[1:]
            continue
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3).strip()
            if m.group(1) == "fn":
                fn = names.get(m.group(2))
            continue
        if line.startswith("calls="):
            call = True
            continue
        m = re.match(r"(0x[0-9a-f]+|\+\d+|-\d+|\*)\s+\S+((?:\s+\d+)+)", line)
        if not m or fn is None:
            continue
        a = m.group(1)
        if a.startswith("0x"):
            addr = int(a, 16)
        elif a[0] in "+-":
            addr += int(a)
        n = [int(x) for x in m.group(2).split()]
        t = total.setdefault(fn, [0] * len(events))
        for i, x in enumerate(n):
            t[i] += x
        if not call:
            at.setdefault(fn, {})
            at[fn][addr] = at[fn].get(addr, 0) + n[0]
        call = False
    return total, at, events


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, binary = sys.argv[1], sys.argv[2]
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                         capture_output=True, text=True, check=True).stdout
    steps = {int(l.split(":")[0], 16) for l in dis.splitlines() if STEP in l and ":" in l}
    total, at, events = costs(out)
    for fn in sorted(total, key=lambda f: -total[f][0]):
        ops = max((n for a, n in at.get(fn, {}).items() if a in steps), default=0)
        if ops > 1000:
            misses = "".join(f" {e} {total[fn][events.index(e)] / ops:.2f}"
                             for e in ("D1mr", "DLmr") if e in events)
            print(f"{total[fn][0] / ops:7.1f} instructions/op{misses} over {ops:,.0f} ops: "
                  f"{fn[:100]}")


if __name__ == "__main__":
    main()
