"""Your runs against the committed reference: which of them are reference rows (same dataset,
retriever and config hash), and whether each came back with the same numbers.

Why: "regenerated from the committed code, data and reply file" is a claim a reader should be
able to check in one command (`hopbench report --check-reference`), not by eye. Compared are the
quality metrics and the question counts; latency, cost, intervals and paired tests are not (they
depend on the machine, or on which other rows are in the table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from hopbench.evaluate import metric_registry

KEY = ("dataset", "retriever", "config_hash")
COUNTS = ("n_questions", "n_retrieval_scored", "n_answer_scored")
TOLERANCE = 1e-9  # means of the same per-question scores: equal up to float summation order


@dataclass
class Comparison:
    label: str  # dataset/retriever/config_hash
    differences: dict[str, tuple[object, object]] = field(default_factory=dict)  # col: (yours, ref)
    new: list[str] = field(
        default_factory=list
    )  # metrics declared since the reference row was made

    @property
    def identical(self) -> bool:
        return not self.differences


def compared_columns(yours: pd.DataFrame, reference: pd.DataFrame) -> list[str]:
    """The question counts and every declared metric either table has."""
    metrics = [m for m in metric_registry.names() if m in yours or m in reference]
    return [c for c in COUNTS if c in yours or c in reference] + metrics


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _same(a, b) -> bool:
    a_missing, b_missing = _missing(a), _missing(b)
    if a_missing or b_missing:
        return a_missing and b_missing
    return abs(float(a) - float(b)) <= TOLERANCE


def compare(yours: pd.DataFrame, reference: pd.DataFrame) -> list[Comparison]:
    """One Comparison per row of `yours` that is a reference row (same KEY), in `yours`' order."""
    if yours.empty or reference.empty:
        return []
    ref = {tuple(r[k] for k in KEY): r for r in reference.to_dict("records")}
    cols = compared_columns(yours, reference)
    out = []
    for row in yours.to_dict("records"):
        key = tuple(row[k] for k in KEY)
        if key not in ref:
            continue
        c = Comparison("/".join(map(str, key)))
        for col in cols:
            mine, theirs = row.get(col), ref[key].get(col)
            if col not in COUNTS and col not in reference.columns and not _missing(mine):
                c.new.append(
                    col
                )  # a metric the reference table has no column for: not a difference
                continue
            if not _same(mine, theirs):
                c.differences[col] = (mine, theirs)
        out.append(c)
    return out


def not_rerun(yours: pd.DataFrame, reference: pd.DataFrame) -> list[str]:
    """The reference rows none of `yours` made again (dataset/retriever/config_hash)."""
    if reference.empty:
        return []
    mine = set() if yours.empty else {tuple(r[k] for k in KEY) for r in yours.to_dict("records")}
    return [
        "/".join(map(str, key))
        for key in (tuple(r[k] for k in KEY) for r in reference.to_dict("records"))
        if key not in mine
    ]


def summary(comparisons: list[Comparison], n_runs: int) -> list[str]:
    """Lines for the terminal: a count, then each row that differs with its columns."""
    differ = [c for c in comparisons if not c.identical]
    lines = [
        f"reference check: {len(comparisons)} of your {n_runs} run(s) are reference rows; "
        f"{len(comparisons) - len(differ)} identical, {len(differ)} differ "
        f"(question counts and metrics, within {TOLERANCE:g})"
    ]
    new = sorted({m for c in comparisons for m in c.new})
    if new:
        lines.append(f"  not compared (the reference has no column yet): {', '.join(new)}")
    for c in differ:
        shown = ", ".join(f"{k} {a} vs {b}" for k, (a, b) in list(c.differences.items())[:6])
        more = len(c.differences) - 6
        lines.append(f"  differs: {c.label}: {shown}" + (f" (+{more} more)" if more > 0 else ""))
    return lines
