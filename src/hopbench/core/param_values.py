"""Hyper-parameter values as tables hold them: labels, equality across types, parsing back.

A table column of mixed types stores text, so 3 and 3.0, '1e-10' and 1e-10, 'False' and False
must compare equal (but True is not 1); labels are what leaderboard.md prints.
"""

from __future__ import annotations

import json
import math
import numbers

import numpy as np
import yaml


def _fmt_value(v) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return str(v)


def params_label(params: dict) -> str:
    """'decay=0.5 depth=2' — every parameter, sorted (the csv's `params`; see `diff_label`)."""
    return " ".join(f"{k}={_fmt_value(v)}" for k, v in sorted(params.items()))


def diff_label(diff: dict) -> str:
    """'decay=0.3 depth=1' for the differences from the defaults; '' when there are none."""
    return params_label(diff)


def parse_params_label(label) -> dict:
    """'decay=0.5 depth=2' back to {'decay': 0.5, 'depth': 2} (YAML scalars), for tables that
    hold only the label."""
    if not isinstance(label, str) or not label.strip():
        return {}
    out = {}
    for item in label.split(" "):
        key, sep, value = item.partition("=")
        if not sep:
            continue
        try:
            out[key] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[key] = value
    return out


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def same_value(a, b) -> bool:
    """Equal as hyper-parameters: 3 == 3.0, '1e-10' == 1e-10, 'False' == False (a table column
    of mixed types stores text), but True != 1."""
    if _is_bool(a) and isinstance(b, str) or _is_bool(b) and isinstance(a, str):
        return str(a).lower() == str(b).lower()
    if _is_bool(a) or _is_bool(b):
        return _is_bool(a) and _is_bool(b) and bool(a) == bool(b)
    if (
        isinstance(a, str)
        and isinstance(b, numbers.Number)
        or isinstance(b, str)
        and isinstance(a, numbers.Number)
    ):
        try:
            a, b = float(a), float(b)
        except ValueError:
            return False
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return a == b


def plain_value(v):
    """numpy scalars as Python values (so 3 prints '3', not 'np.int64(3)')."""
    return v.item() if isinstance(v, np.generic) else v


def flat_params(params: dict, prefix: str = "") -> dict:
    """A component's nested settings node as dotted keys ({'seeding': {'filter': False}} ->
    {'seeding.filter': False}), as a command line names them: one table column per setting."""
    out: dict = {}
    for k, v in params.items():
        if isinstance(v, dict) and v:
            out.update(flat_params(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out
