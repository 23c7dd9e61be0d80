"""Reading JSON files and checking records, with errors that name file, record and field."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hopbench.errors import DataError


def read_json(path: str | Path) -> Any:
    path = Path(path)
    if not path.exists():
        raise DataError(path, "-", None, "file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(path, "-", None, f"not valid UTF-8 at byte {exc.start}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, "-", None, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def file_digest(path: str | Path | None) -> str:
    if path is None:
        return "-"
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def require_list(path, data, what: str) -> list:
    if not isinstance(data, list):
        raise DataError(path, "-", None, f"expected a JSON list of {what}, got {type(data).__name__}")
    return data


def field(path, record_label, rec: Any, name: str, kind: type | tuple[type, ...], *, non_empty: bool = False):
    """Return rec[name], checking presence, type and (for strings/lists) non-emptiness."""
    if not isinstance(rec, dict):
        raise DataError(path, record_label, None, f"expected an object, got {type(rec).__name__}")
    if name not in rec:
        raise DataError(path, record_label, name, "missing field")
    value = rec[name]
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind):
        expected = " or ".join(k.__name__ for k in _as_tuple(kind))
        raise DataError(path, record_label, name, f"expected {expected}, got {type(value).__name__}")
    if non_empty and isinstance(value, (str, list)) and not (value.strip() if isinstance(value, str) else value):
        raise DataError(path, record_label, name, "is empty")
    return value


def _as_tuple(kind) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def record_label(index: int, rec: Any, id_field: str) -> str:
    """'#12 (id=abc)' when the id is readable, '#12' otherwise."""
    if isinstance(rec, dict) and isinstance(rec.get(id_field), (str, int)):
        return f"#{index} (id={rec[id_field]})"
    return f"#{index}"


def check_unique_ids(path, ids_with_labels: list[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for qid, label in ids_with_labels:
        if qid in seen:
            raise DataError(path, label, "id", f"duplicate id '{qid}' (first seen at record {seen[qid]})")
        seen[qid] = label
