#!/usr/bin/env python3
"""Cut the committed slices of the CloudPhysics trace from ../shared/traces.

Usage, from the repository root:  python3 tests/data/slice.py [N]   (N defaults to 20000)

Every slice holds the same first N requests of the trace:

- cloudPhysicsIO.<N/1000>k.oracleGeneral.bin: the first N 24-byte records, with each
  record's next-access field cut to the slice (a next request past the slice becomes -1,
  "never"), so that the slice is a trace of its own and an offline policy (Belady) sees
  the same future in bufcache and in libCacheSim;
- cloudPhysicsIO.<N/1000>k.csv: the header line and the first N rows, unchanged;
- cloudPhysicsIO.<N/1000>k.txt: the first N lines (object ids), unchanged.

The script only copies and truncates; it checks that the three sources agree record for
record (time and object id) before writing anything.
"""

import struct
import sys
from pathlib import Path

RECORD = struct.Struct("<IQIq")  # clock_time, obj_id, obj_size, next_access_vtime


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    root = Path(__file__).resolve().parents[2]
    source = root.parent / "shared" / "traces"
    out = root / "tests" / "data"
    stem = f"cloudPhysicsIO.{n // 1000}k"

    raw = (source / "cloudPhysicsIO.oracleGeneral.bin").read_bytes()[: n * RECORD.size]
    records = [RECORD.unpack_from(raw, i * RECORD.size) for i in range(n)]
    with open(source / "cloudPhysicsIO.csv", encoding="ascii") as f:
        csv_lines = [next(f) for _ in range(n + 1)]
    with open(source / "cloudPhysicsIO.txt", encoding="ascii") as f:
        txt_lines = [next(f) for _ in range(n)]

    for i, (rec, row, line) in enumerate(zip(records, csv_lines[1:], txt_lines)):
        _, time, _, _, lbn = row.strip().split(",")
        if (rec[0], rec[1]) != (int(time), int(lbn)) or rec[1] != int(line):
            sys.exit(f"request {i}: the sources disagree: {rec} / {row!r} / {line!r}")

    # next_access_vtime counts requests from 1: a value above n points past the slice.
    cut = b"".join(
        RECORD.pack(t, obj, size, nxt if 0 < nxt <= n else -1)
        for t, obj, size, nxt in records
    )
    (out / f"{stem}.oracleGeneral.bin").write_bytes(cut)
    (out / f"{stem}.csv").write_text("".join(csv_lines), encoding="ascii")
    (out / f"{stem}.txt").write_text("".join(txt_lines), encoding="ascii")


if __name__ == "__main__":
    main()
