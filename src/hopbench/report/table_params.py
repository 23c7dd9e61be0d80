"""The settings columns of a result table: each row's settings and its differences from the
method's defaults (as its run recorded them), rows sorted by them, integer settings as integers.
"""

from __future__ import annotations

import json
import numbers

import numpy as np
import pandas as pd

from hopbench.core.param_values import parse_params_label, plain_value


def is_missing(v) -> bool:
    """None or NaN (a gap in a table column); a string, dict or list is a value."""
    return v is None or (not isinstance(v, (str, dict, list)) and bool(pd.isna(v)))


def row_params(row) -> dict:
    """All hyper-parameters of a leaderboard row, with their types (`params_json`; the `param.*`
    columns or the `params` label for a table that lacks it)."""
    raw = row.get("params_json")
    if isinstance(raw, str) and raw:
        return json.loads(raw)
    if any(c.startswith("param.") for c in row.index):
        return {
            c.removeprefix("param."): plain_value(row[c])
            for c in row.index
            if c.startswith("param.") and not is_missing(row[c])
        }
    return parse_params_label(row.get("params"))


def row_diff(row) -> dict:
    """The row's settings that differ from its method's defaults, as its run recorded them
    (`params_diff_json`; the `params_diff` label, less the graph, for a table that lacks it)."""
    raw = row.get("params_diff_json")
    if isinstance(raw, str) and raw:
        return json.loads(raw)
    diff = parse_params_label(row.get("params_diff"))
    diff.pop("graph", None)
    return diff


def _sortable(v):
    if is_missing(v):
        return (0, 0.0, "")
    if isinstance(v, (bool, np.bool_, numbers.Number)):
        return (1, float(v), "")
    return (2, 0.0, str(v))


def sort_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows by dataset, method, reader, then the values of the parameters that differ from the
    method's defaults in any of its rows (numbers in numeric order), then questions, hash."""
    if df.empty:
        return df.reset_index(drop=True)
    params = {i: row_params(r) for i, r in df.iterrows()}
    keys: dict[str, set] = {}
    for _, r in df.iterrows():
        keys.setdefault(r.get("retriever"), set()).update(row_diff(r))

    def key(i):
        r = df.loc[i]
        vary = sorted(keys.get(r.get("retriever"), ()))
        return (
            str(r.get("dataset")),
            str(r.get("retriever")),
            str(r.get("reader")),
            tuple(_sortable(params[i].get(k)) for k in vary),
            -(r.get("n_questions") if not is_missing(r.get("n_questions")) else 0),
            str(r.get("config_hash")),
        )

    return df.loc[sorted(df.index, key=key)].reset_index(drop=True)


def _integer_column(df: pd.DataFrame, col: str) -> bool:
    """A param.* column whose every value is an integer parameter (by `params_json`, or for
    older tables by the method's default)."""
    values = df[col].dropna()
    key = col.removeprefix("param.")
    if values.empty:
        return False
    for i in values.index:
        v = row_params(df.loc[i]).get(key)
        if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
            return False
    return True


def typed_params(df: pd.DataFrame) -> pd.DataFrame:
    """Integer parameters as nullable integers (parquet int64, csv '3' not '3.0') even where
    other methods' rows leave gaps."""
    out = df.copy()
    for col in [c for c in out.columns if c.startswith("param.")]:
        if out[col].dtype.kind in "iu" or _integer_column(out, col):
            out[col] = pd.array(
                [None if is_missing(v) else int(v) for v in out[col]], dtype="Int64"
            )
    return out
