"""bufcache from Python: traces, every replacement policy, replays and miss-ratio curves.

Every call runs bufcache's Rust engine (the same code as the ``bufcache`` command), so a
miss ratio computed here equals the command's. Replays, curves and sweeps release the GIL
while they run; ``ray_sweep`` runs a sweep on a Ray cluster (``pip install bufcache[ray]``).
See docs/python.md in the repository for a tour.
"""

from typing import Any, Dict, List, Mapping, Sequence

from ._bufcache import (
    Cache,
    Plugin,
    Request,
    Requests,
    Size,
    SweepDriver,
    Trace,
    __version__,
    des_run,
    dust,
    mrc,
    policies,
    replay,
    sweep,
    sweep_memory_estimate,
    sweep_task,
)
from .ray_driver import ray_sweep

__all__ = [
    "Cache",
    "Plugin",
    "Request",
    "Requests",
    "Size",
    "SweepDriver",
    "Trace",
    "__version__",
    "des_run",
    "dust",
    "mrc",
    "policies",
    "ray_sweep",
    "replay",
    "sweep",
    "sweep_memory_estimate",
    "sweep_task",
    "to_records",
]


def to_records(table: Mapping[str, Sequence[Any]]) -> List[Dict[str, Any]]:
    """Turn a table of columns (what ``replay`` and ``mrc`` return) into a list of rows.

    NumPy scalars become plain Python numbers, so the rows serialize to JSON as they are.
    """
    columns = list(table)
    if not columns:
        return []
    rows = len(table[columns[0]])
    out = []
    for i in range(rows):
        row = {}
        for c in columns:
            v = table[c][i]
            row[c] = v.item() if hasattr(v, "item") else v
        out.append(row)
    return out
