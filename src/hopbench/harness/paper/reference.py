"""The committed reference leaderboard against the plan: its rows no planned run makes, and those
a planned LLM run makes without replies in the reply file."""

from __future__ import annotations

import csv
from pathlib import Path

from hopbench.core.paths import REPO_REFERENCE
from hopbench.harness.paper.plan import Planned

REFERENCE_LEADERBOARD = REPO_REFERENCE / "leaderboard.csv"


def unmatched_reference(reference_csv: str | Path, planned: list[Planned]) -> list[dict]:
    """The rows of a leaderboard (dataset, retriever, config_hash) that no planned run produces."""
    made = {(p.row.dataset, p.row.retriever, p.config_hash) for p in planned if p.config_hash}
    return [r for r in _reference_rows(reference_csv) if _row_key(r) not in made]


def reference_without_replies(
    reference_csv: str | Path, planned: list[Planned], reply_runs: set[str]
) -> list[dict]:
    """The rows of a leaderboard that a planned LLM run makes but whose replies are not in the
    reply file (`reply_runs`: its header's `dataset/retriever/hash` labels). A fresh clone could
    not bring such a row back without the model: it waits for a rerun and an export."""
    llm = {(p.row.dataset, p.row.retriever, p.config_hash) for p in planned if p.needs_llm}
    return [
        r
        for r in _reference_rows(reference_csv)
        if _row_key(r) in llm and "/".join(_row_key(r)) not in reply_runs
    ]


def _reference_rows(reference_csv: str | Path) -> list[dict]:
    with open(reference_csv, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _row_key(r: dict) -> tuple[str, str, str]:
    """A leaderboard row's run: (dataset, retriever, config_hash), as a planned run names it."""
    return r["dataset"], r["retriever"], r["config_hash"]
