"""Sweeps on a Ray cluster: one Ray task per trace, each running the trace's whole grid
inside Rust, with the results file kept by this process exactly as ``bufcache sweep``
keeps it.

The driver (``ray_sweep``) opens the results file through ``SweepDriver`` (which locks it
and cuts off a torn last line), submits a task for every trace that still has missing
cells, and appends each task's rows as soon as it returns: the append is the local
sweep's own fsynced batch write, so a driver that dies loses only the traces in flight,
and running it again skips every trace already written. At the end the file is rewritten
in the spec's order, so its bytes equal a local sweep's whatever order tasks returned in.

``ray`` is imported only when ``ray_sweep`` runs (``pip install bufcache[ray]``).
"""

import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ._bufcache import SweepDriver, sweep_memory_estimate, sweep_task

# A progress callback: (traces done, traces to run, the unit just finished).
Progress = Callable[[int, int, Dict[str, Any]], None]


def _run_unit(
    spec_json: str, path: str, threads: int, crash_marker: Optional[str]
) -> bytes:
    """The body of one Ray task: the trace's grid in Rust, its rows as bytes."""
    if crash_marker is not None and not os.path.exists(crash_marker):
        # Test hook: the first attempt dies as a lost worker does, without a goodbye.
        with open(crash_marker, "w"):
            pass
        os._exit(1)
    return sweep_task(spec_json, path, threads=threads)


def _print_progress(done: int, total: int, unit: Dict[str, Any], started: float) -> None:
    sys.stderr.write(
        f"\rsweep on ray: {done}/{total} traces, {time.monotonic() - started:.1f} s"
        + ("\n" if done == total else "")
    )
    sys.stderr.flush()


def _memory_cap_bytes(ray: Any) -> Optional[int]:
    """The most memory any one node offers Ray: no task may ask for more, or it would
    wait forever for a node that cannot exist."""
    sizes = [n.get("Resources", {}).get("memory", 0) for n in ray.nodes() if n.get("Alive")]
    return int(max(sizes)) if sizes else None


def ray_sweep(
    spec: Union[Dict[str, Any], str, "os.PathLike[str]"],
    out: Union[str, "os.PathLike[str]"],
    *,
    max_in_flight: Optional[int] = None,
    max_retries: int = 3,
    progress: Union[bool, Progress] = True,
    cpus_per_task: int = 1,
    _crash_first_attempt: Optional[Tuple[int, str]] = None,
) -> Dict[str, Any]:
    """Run the sweep ``spec`` (a dict or a TOML/JSON spec file, as ``bufcache.sweep``
    takes it) on Ray into the CSV file ``out``; returns ``sweep``'s summary dict.

    One task per trace with missing cells, each declaring ``num_cpus=cpus_per_task`` and
    ``memory=`` the trace's estimate (capped at the largest node's memory); at most
    ``max_in_flight`` tasks are submitted at once (default: twice the cluster's CPUs over
    ``cpus_per_task``). A task whose worker dies, or that raises ``OSError``, is retried up
    to ``max_retries`` times; any other error stops the sweep (rows already appended stay).
    ``progress`` is True for a line on stderr, False for none, or a callable
    ``(done, total, unit)``. Ray is initialised with defaults if it is not already.
    ``_crash_first_attempt=(index, marker_path)`` is a test hook: the first attempt of the
    task of trace ``index`` exits its worker.
    """
    import ray  # lazily: the rest of bufcache does not need Ray

    if cpus_per_task < 1:
        raise ValueError("cpus_per_task must be at least 1")
    if max_retries < 0:
        raise ValueError("max_retries must be at least 0")
    if not ray.is_initialized():
        ray.init()
    if max_in_flight is None:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        max_in_flight = max(1, 2 * cpus // cpus_per_task)
    if max_in_flight < 1:
        raise ValueError("max_in_flight must be at least 1")
    started = time.monotonic()
    if progress is True:
        report: Optional[Progress] = lambda d, t, u: _print_progress(d, t, u, started)
    elif progress is False:
        report = None
    else:
        report = progress

    driver = SweepDriver(spec, out)
    in_flight: Dict[Any, Dict[str, Any]] = {}
    try:
        todo: List[Dict[str, Any]] = [u for u in driver.units() if u["missing"] > 0]
        todo.reverse()  # popped from the end: spec order
        total, done = len(todo), 0
        cap = _memory_cap_bytes(ray)
        task = ray.remote(_run_unit)
        while todo or in_flight:
            while todo and len(in_flight) < max_in_flight:
                unit = todo.pop()
                memory = sweep_memory_estimate(driver.spec_json, unit["path"])
                if cap is not None:
                    memory = min(memory, cap)
                marker = None
                if _crash_first_attempt is not None and _crash_first_attempt[0] == unit["index"]:
                    marker = _crash_first_attempt[1]
                ref = task.options(
                    num_cpus=cpus_per_task,
                    memory=max(memory, 1),
                    max_retries=max_retries,
                    retry_exceptions=[OSError],
                ).remote(driver.spec_json, unit["path"], cpus_per_task, marker)
                in_flight[ref] = unit
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in ready:
                unit = in_flight.pop(ref)
                driver.append(ray.get(ref))
                done += 1
                if report is not None:
                    report(done, total, unit)
        return driver.finish()
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        driver.close()
