"""Wall and CPU seconds per build stage, recorded in a graph's manifest (`timings`).

On a shared machine the CPU figure is the one that says what a stage costs; both graph
constructions (kg/assembly.py, kg/hipporag2.py) and the extraction step time their stages here.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (spaCy workers count once joined)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextmanager
def timed(timings: dict, stage: str):
    """Record wall seconds as `stage` and CPU seconds as `cpu_<stage>`: on a shared machine the
    CPU figure is the one that says what the stage costs (wall time depends on the load)."""
    t, c = time.perf_counter(), cpu_seconds()
    try:
        yield
    finally:
        timings[stage] = time.perf_counter() - t
        timings[f"cpu_{stage}"] = cpu_seconds() - c
