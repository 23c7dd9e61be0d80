"""Which response cache entries runs used: the `llm_keys` their rows record.

Why from the rows: a row is what a run keeps of a question, and a resumed run keeps the first
row of each question, so the union of its rows' keys is exactly what its results depend on
(questions redone after an interruption are counted once, and a question a killed process
had not finished records nothing). Rows written before keys were recorded, with LLM calls,
are counted apart: their keys are unknown (a `force=true` rerun records them, from the cache).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.core.records import LLM_CALLS, LLM_KEYS, read_rows
from hopbench.core.run_folders import run_folders

_TRACES = ("trace", "reader_trace")


@dataclass
class RunKeys:
    label: str  # dataset/retriever/config hash
    dir: Path
    keys: list[str]  # sorted, each once
    unrecorded_rows: int  # rows with LLM calls and no recorded keys (an older version)
    complete: bool


def run_label(run_dir: Path) -> str:
    """`dataset/retriever/hash`, the run folder's last three parts (how the reply file names it)."""
    return "/".join(Path(run_dir).resolve().parts[-3:])


def complete_runs(runs_dir: str | Path) -> list[Path]:
    """Every complete run under `runs_dir/<dataset>/<retriever>/<hash>/`, as `hopbench report`
    finds them (run_folders): a link out of the runs folder or a `<hash>.bak` copy would put
    another folder's replies under a run's label."""
    return run_folders(runs_dir, "the reply file")


def run_keys(run_dir: str | Path) -> RunKeys:
    """The request keys the rows of one run used, retrieval and reader."""
    run_dir = Path(run_dir)
    predictions = run_dir / "predictions.jsonl"
    if not predictions.is_file():
        raise HopbenchError(f"{run_dir}: not a run folder (no predictions.jsonl)")
    rows, _, _ = read_rows(predictions)
    keys: set[str] = set()
    unrecorded = 0
    for row in rows:
        row_keys, calls = [], 0
        for part in _TRACES:
            trace = row.get(part) or {}
            row_keys += [k for k in trace.get(LLM_KEYS) or [] if isinstance(k, str)]
            calls += int((trace.get("llm_cost") or {}).get(LLM_CALLS, 0) or 0)
        keys.update(row_keys)
        unrecorded += bool(calls and not row_keys)
    return RunKeys(
        run_label(run_dir), run_dir, sorted(keys), unrecorded, (run_dir / "metrics.json").is_file()
    )


def reference_hashes(leaderboard_csv: str | Path) -> set[str]:
    """The config hashes of a leaderboard's rows (e.g. results/reference/leaderboard.csv)."""
    try:
        with open(leaderboard_csv, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if "config_hash" not in (reader.fieldnames or []):
                raise HopbenchError(f"{leaderboard_csv}: no config_hash column (not a leaderboard)")
            return {r["config_hash"] for r in reader if r.get("config_hash")}
    except OSError as exc:
        raise HopbenchError(f"{leaderboard_csv}: cannot be read ({exc.strerror})") from None
