"""Sweeps in the leaderboard: runs of one method that differ in one numeric parameter only.

Why apart from the figures: which runs form a sweep is a question about the table (the same
dataset, reader, questions, models and every other parameter), answered without matplotlib;
`sensitivity.csv` and the sensitivity figures (`hopbench.report.plots`) both read it from here.
A sweep's line joins the runs that share every other parameter; a line needs two values of the
swept parameter, and of two runs with the same value the most recent stands for it.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hopbench.evaluate import metric_registry
from hopbench.report.table_params import row_params

SWEEP_PARAMS = ("depth", "decay", "damping")  # the sensitivity table's methods (sensitivity.csv)


def sensitivity_table(df: pd.DataFrame) -> pd.DataFrame:
    """Leaderboard rows of methods that have a depth, decay or damping hyper-parameter."""
    cols = [f"param.{p}" for p in SWEEP_PARAMS if f"param.{p}" in df]
    if not cols:
        return df.iloc[0:0]
    return df[df[cols].notna().any(axis=1)].reset_index(drop=True)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, (bool, np.bool_))


@dataclass
class Sweep:
    """Runs of one method that differ only in `param`: one line per setting of the others."""

    dataset: str
    method: str
    reader: str
    param: str
    integer: bool
    lines: list[tuple[dict, pd.DataFrame]] = field(
        default_factory=list
    )  # (fixed params, rows by value)

    @property
    def values(self) -> list:
        return sorted({v for _, rows in self.lines for v in rows["_x"]})

    def line_labels(self) -> list[str]:
        """The parameters that tell the lines apart ('decay=0.3'); '' for a single line."""
        if len(self.lines) <= 1:
            return [""] * len(self.lines)
        keys = sorted({k for fixed, _ in self.lines for k in fixed})
        vary = [
            k
            for k in keys
            if len(
                {json.dumps(fixed.get(k), sort_keys=True, default=str) for fixed, _ in self.lines}
            )
            > 1
        ]
        return [" ".join(f"{k}={fixed.get(k)}" for k in vary) for fixed, _ in self.lines]


def _key(v) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def sweeps(df: pd.DataFrame, metrics=None) -> list[Sweep]:
    """Every sweep in the table: for each dataset x method x reader x question count x models and
    numeric parameter p, the runs grouped by all their other parameters; a group is a line when
    it has at least two values of p, a sweep has at least one line."""
    # by default the metrics the figures show (metric_registry.FIGURES)
    metrics = [m for m in (metrics or metric_registry.shown_in(metric_registry.FIGURES)) if m in df]
    if df.empty or not metrics:
        return []
    df = df[df[metrics].notna().any(axis=1)]
    out = []
    group_cols = [c for c in ("dataset", "retriever", "reader", "n_questions", "models") if c in df]
    for keys, part in df.groupby(group_cols, sort=True, dropna=False):
        dataset, method, reader = keys[:3]
        params = {i: row_params(r) for i, r in part.iterrows()}
        names = sorted({k for p in params.values() for k in p})
        for name in names:
            values = [p.get(name) for p in params.values()]
            if not all(_is_number(v) for v in values) or len(set(values)) < 2:
                continue
            groups: dict[str, list] = {}
            for i, p in params.items():
                fixed = {k: v for k, v in p.items() if k != name}
                groups.setdefault(_key(fixed), []).append(i)
            lines = []
            for ids in groups.values():
                rows = part.loc[ids].assign(_x=[params[i][name] for i in ids])
                # one run per value: the most recent (a rerun of the same settings)
                order = (
                    rows["finished_at"].astype(str)
                    if "finished_at" in rows
                    else rows["config_hash"]
                )
                rows = (
                    rows.assign(_order=order)
                    .sort_values("_order")
                    .drop_duplicates("_x", keep="last")
                )
                if rows["_x"].nunique() >= 2:
                    fixed = {k: v for k, v in params[ids[0]].items() if k != name}
                    lines.append((fixed, rows.sort_values("_x").drop(columns="_order")))
            if lines:
                lines.sort(
                    key=lambda line: [
                        (
                            _is_number(line[0].get(k)),
                            line[0].get(k) if _is_number(line[0].get(k)) else str(line[0].get(k)),
                        )
                        for k in sorted(line[0])
                    ]
                )
                integer = all(isinstance(v, (int, np.integer)) for v in values)
                out.append(Sweep(str(dataset), str(method), str(reader), name, integer, lines))
    return out
