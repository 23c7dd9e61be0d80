"""Timing figures the benchmarks report the same way: percentiles of per-query times and the
machine's load average (the machine is shared, so every table states the load it ran under)."""

from __future__ import annotations

import os

import numpy as np


def loadavg() -> list[float]:
    """The 1, 5 and 15 minute load averages, rounded to 2 decimals."""
    return [round(x, 2) for x in os.getloadavg()]


def pct(ms: list[float]) -> dict:
    """p50, p90 and mean of per-query times (milliseconds in, the same unit out)."""
    a = np.array(ms)
    return {
        "p50": float(np.percentile(a, 50)),
        "p90": float(np.percentile(a, 90)),
        "mean": float(a.mean()),
    }
