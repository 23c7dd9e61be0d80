"""The rows of runs on disk, for comparing sweeps: by run hash, without the timing fields."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TIMING_KEYS = ("latency_ms", "timings")  # how long, not what: the only fields that may differ


def rows_by_hash(runs: Path, dataset: str, retriever: str) -> dict[str, dict[str, dict]]:
    """{run hash: {question id: row without its timing fields}} of every complete run."""
    out = {}
    for metrics in runs.glob(f"{dataset}/{retriever}/*/metrics.json"):
        lines = (metrics.parent / "predictions.jsonl").read_text().splitlines()
        rows = [json.loads(x) for x in lines if x]
        out[metrics.parent.name] = {
            r["id"]: {k: v for k, v in r.items() if k not in TIMING_KEYS} for r in rows
        }
    return out


def hopbench_run(args: list[str], cwd: Path, env: dict, timeout: int = 1800):
    """`python -m hopbench.run ARGS` in a child process; its exit code must be 0."""
    cmd = [sys.executable, "-m", "hopbench.run", *args]
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, res.stderr[-3000:]
    return res
