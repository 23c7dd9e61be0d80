"""results/claims.yaml, read and checked (issue #57): the methods' headline claims as data.

Each claim names the paper's wording, number and source, the hopbench rows that test it and the
metric; hopbench.report.claims tests it. A field that is missing or of the wrong kind is a
`DataError` naming the file, the claim and the field (exit code 2 from `hopbench claims`), so
a typo never turns into a silent "no rows yet".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from hopbench.core.errors import DataError
from hopbench.evaluate import metric_registry

TEXT_FIELDS = ("id", "method", "claim", "number", "source", "metric", "direction")
DIRECTIONS = ("higher", "lower")
CHECK_KINDS = ("ratio", "zero")
ID_PATTERN = re.compile(r"^[a-z0-9_]+$")


@dataclass(frozen=True)
class RowSpec:
    """Which reference rows stand for a method: a retriever, optionally its graph and the
    `params_diff` labels allowed ("" is the defaults); None allows any."""

    retriever: str
    graph: str | None = None
    params_diff: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Check:
    kind: str  # ratio: baseline / method of `column` >= min; zero: the method's column is 0
    column: str
    min: float | None = None


@dataclass(frozen=True)
class Claim:
    id: str
    method: str
    claim: str
    number: str
    source: str
    metric: str
    direction: str
    row: RowSpec
    baseline: RowSpec
    checks: tuple[Check, ...] = field(default_factory=tuple)


def _text(path, record, entry: dict, key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DataError(path, record, key, f"expected a non-empty text, got {value!r}")
    return value


def _row_spec(path, record, entry: dict, key: str) -> RowSpec:
    spec = entry.get(key)
    if not isinstance(spec, dict):
        raise DataError(path, record, key, f"expected a mapping with a retriever, got {spec!r}")
    unknown = set(spec) - {"retriever", "graph", "params_diff"}
    if unknown:
        raise DataError(path, record, f"{key}.{sorted(unknown)[0]}", "unknown field")
    retriever = _text(path, record, spec, "retriever") if "retriever" in spec else None
    if retriever is None:
        raise DataError(path, record, f"{key}.retriever", "missing")
    graph = spec.get("graph")
    if graph is not None and not isinstance(graph, str):
        raise DataError(path, record, f"{key}.graph", f"expected a text, got {graph!r}")
    labels = spec.get("params_diff")
    if labels is not None and (
        not isinstance(labels, list) or not all(isinstance(x, str) for x in labels)
    ):
        raise DataError(
            path, record, f"{key}.params_diff", f"expected a list of texts, got {labels!r}"
        )
    return RowSpec(retriever, graph, None if labels is None else tuple(labels))


def _check(path, record, i: int, entry) -> Check:
    where = f"checks[{i}]"
    if not isinstance(entry, dict):
        raise DataError(path, record, where, f"expected a mapping, got {entry!r}")
    kind = entry.get("kind")
    if kind not in CHECK_KINDS:
        raise DataError(
            path, record, f"{where}.kind", f"expected one of {CHECK_KINDS}, got {kind!r}"
        )
    column = entry.get("column")
    if not isinstance(column, str) or not column:
        raise DataError(path, record, f"{where}.column", f"expected a column name, got {column!r}")
    minimum = entry.get("min")
    if kind == "ratio" and (
        not isinstance(minimum, (int, float)) or isinstance(minimum, bool) or minimum <= 0
    ):
        raise DataError(path, record, f"{where}.min", f"expected a number > 0, got {minimum!r}")
    return Check(kind, column, None if minimum is None else float(minimum))


def parse_claim(path, i: int, entry) -> Claim:
    """One entry of `claims:`, checked field by field."""
    record = f"claims[{i}]"
    if not isinstance(entry, dict):
        raise DataError(path, record, None, f"expected a mapping, got {entry!r}")
    texts = {k: _text(path, record, entry, k) for k in TEXT_FIELDS}
    record = f"claims[{i}] ({texts['id']})"
    if not ID_PATTERN.match(texts["id"]):
        raise DataError(path, record, "id", "lower-case letters, digits and _ only")
    if texts["metric"] not in metric_registry.names():
        raise DataError(path, record, "metric", f"{texts['metric']!r} is no declared metric")
    if texts["direction"] not in DIRECTIONS:
        raise DataError(path, record, "direction", f"expected one of {DIRECTIONS}")
    checks = entry.get("checks") or []
    if not isinstance(checks, list):
        raise DataError(path, record, "checks", f"expected a list, got {checks!r}")
    return Claim(
        **texts,
        row=_row_spec(path, record, entry, "row"),
        baseline=_row_spec(path, record, entry, "baseline"),
        checks=tuple(_check(path, record, j, c) for j, c in enumerate(checks)),
    )


def load_claims(path) -> list[Claim]:
    """Every claim of the file, in its order; DataError at the first that does not check."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(path, "file", None, "missing") from exc
    except yaml.YAMLError as exc:
        raise DataError(path, "file", None, f"not valid YAML ({exc})") from exc
    entries = doc.get("claims") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise DataError(path, "file", "claims", "expected a non-empty list of claims")
    claims = [parse_claim(path, i, e) for i, e in enumerate(entries)]
    seen: set[str] = set()
    for i, c in enumerate(claims):
        if c.id in seen:
            raise DataError(path, f"claims[{i}] ({c.id})", "id", "used by an earlier claim")
        seen.add(c.id)
    return claims
