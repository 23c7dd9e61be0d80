"""Reading JSON / JSON Lines files and checking records, with errors that name file, record and field.

Types are checked strictly and nothing is coerced: a string is a JSON string, a boolean is
`true`/`false` (never `"false"` or `0`), an integer is not a boolean, a list holds elements of
the stated type. The first bad value raises one `DataError` naming the file, the record and the
field.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from hopbench.core.errors import DataError
from hopbench.data.text_limit import check_text_length

JSONL_SUFFIXES = (".jsonl", ".ndjson")


class JsonLines(list):
    """The records of a JSON Lines file; `lines[i]` is the 1-based line number of record i."""

    def __init__(self, records: list, lines: list[int]):
        super().__init__(records)
        self.lines = lines


def read_json(path: str | Path) -> Any:
    """The file's JSON value, or a `JsonLines` list when the content is JSON Lines.

    JSON Lines is recognised from the content: a file that is not one JSON value, whose first
    line is one. A single-line file is one JSON value; it is read as a one-record JSON Lines
    file only when it holds an object and its name ends in .jsonl / .ndjson.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, "-", None, "file not found")
    if path.is_dir():
        raise DataError(path, "-", None, "is a directory, not a file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(path, "-", None, f"not valid UTF-8 at byte {exc.start}") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and _first_line_is_json(text):
            return _read_lines(path, text)
        raise DataError(
            path, "-", None, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except (RecursionError, ValueError) as exc:
        raise DataError(path, "-", None, f"invalid JSON: {unreadable_json(exc)}") from None
    if (
        isinstance(value, dict)
        and path.suffix.lower() in JSONL_SUFFIXES
        and "\n" not in text.strip()
    ):
        return JsonLines([value], [_first_content_line(text)])
    return value


def unreadable_json(exc: RecursionError | ValueError) -> str:
    """Why json.loads gave up on text that is JSON: a value nested deeper than its recursion
    limit (200,000 levels gave a RecursionError traceback, issue #54), or an integer with more
    digits than Python converts (a ValueError that is not a JSONDecodeError)."""
    if isinstance(exc, RecursionError):
        return f"nested deeper than the parser reads (about {sys.getrecursionlimit():,} levels)"
    return f"a number with more digits than Python converts ({exc})"


def _first_line_is_json(text: str) -> bool:
    for line in text.split("\n"):
        if line.strip():
            try:
                json.loads(line)
            except (json.JSONDecodeError, RecursionError, ValueError):
                return False
            return True
    return False


def _first_content_line(text: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if line.strip())


def _read_lines(path: Path, text: str) -> JsonLines:
    records, lines = [], []
    # split on "\n" only: str.splitlines would also split on U+2028 or U+0085 inside strings
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DataError(
                path,
                f"#{len(records)} (line {n})",
                None,
                f"invalid JSON Lines record: {exc.msg} (column {exc.colno})",
            ) from None
        except (RecursionError, ValueError) as exc:
            raise DataError(
                path, f"#{len(records)} (line {n})", None, f"invalid JSON: {unreadable_json(exc)}"
            ) from None
        lines.append(n)
    return JsonLines(records, lines)


def file_digest(path: str | Path | None) -> str:
    if path is None:
        return "-"
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def require_list(path, data, what: str) -> list:
    if not isinstance(data, list):
        hint = ""
        if isinstance(data, dict):
            hint = " (one JSON object; a list needs [...], or JSON Lines: one object a line)"
        raise DataError(
            path, "-", None, f"expected a JSON list of {what}, got {type(data).__name__}{hint}"
        )
    if not data:
        raise DataError(path, "-", None, f"holds no {what} (an empty list)")
    return data


_PLURAL = {str: "strings", int: "integers", bool: "booleans", list: "lists", dict: "objects"}


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _is(value: Any, kind: tuple[type, ...]) -> bool:
    """isinstance, except that a bool is never an int (or float)."""
    if isinstance(value, bool):
        return bool in kind
    return isinstance(value, kind)


def _as_tuple(kind) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def _expected(kind: tuple[type, ...]) -> str:
    return " or ".join("boolean (true/false)" if k is bool else k.__name__ for k in kind)


def require_object(path, record_label, rec: Any, where: str | None = None) -> dict:
    if not isinstance(rec, dict):
        raise DataError(
            path, record_label, where, f"expected an object, got {_type_name(rec)} {rec!r:.60}"
        )
    return rec


def field(
    path,
    record_label,
    rec: Any,
    name: str,
    kind: type | tuple[type, ...],
    *,
    non_empty: bool = False,
    optional: bool = False,
    default: Any = None,
    where: str | None = None,
):
    """Return rec[name], checking presence, type and (for strings/lists) non-emptiness.

    `optional`: an absent field or JSON null gives `default`. `where`: the path of `rec` inside
    the record (e.g. "paragraphs[3]"), so that errors name "paragraphs[3].is_supporting".
    """
    shown, present, value = _lookup(path, record_label, rec, name, optional, where)
    if not present:
        return default
    return check_value(path, record_label, shown, value, kind, non_empty=non_empty)


def _lookup(
    path, record_label, rec: Any, name: str, optional: bool, where: str | None
) -> tuple[str, bool, Any]:
    """(the field's name as shown in errors, whether it is given, its value)."""
    require_object(path, record_label, rec, where)
    shown = f"{where}.{name}" if where else name
    if name not in rec or (optional and rec[name] is None):
        if optional:
            return shown, False, None
        raise DataError(path, record_label, shown, "missing field")
    return shown, True, rec[name]


def check_value(
    path,
    record_label,
    name: str,
    value: Any,
    kind: type | tuple[type, ...],
    *,
    non_empty: bool = False,
):
    kind = _as_tuple(kind)
    if not _is(value, kind):
        raise DataError(
            path,
            record_label,
            name,
            f"expected {_expected(kind)}, got {_type_name(value)} {value!r:.60}",
        )
    if (
        non_empty
        and isinstance(value, (str, list))
        and not (value.strip() if isinstance(value, str) else value)
    ):
        raise DataError(path, record_label, name, "is empty")
    if isinstance(value, str):
        check_unicode(path, record_label, name, value)
        check_text_length(path, record_label, name, value)
    return value


def check_unicode(path, record_label, name: str, text: str) -> str:
    """`text`, when it is valid Unicode. JSON can escape a lone surrogate ("\\ud83d"), which no
    UTF-8 file, cache key or prompt can hold: refused here, not as a crash later in the run."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DataError(
            path,
            record_label,
            name,
            f"not valid Unicode text: a lone surrogate "
            f"U+{ord(text[exc.start]):04X} at character {exc.start}",
        ) from None
    return text


def list_field(
    path,
    record_label,
    rec: Any,
    name: str,
    element: type | tuple[type, ...],
    *,
    non_empty: bool = False,
    optional: bool = False,
    where: str | None = None,
) -> list:
    """rec[name] as a list whose every element has type `element` (an optional field gives [])."""
    shown, present, value = _lookup(path, record_label, rec, name, optional, where)
    if not present:
        return []
    of = " or ".join(_PLURAL.get(k, k.__name__) for k in _as_tuple(element))
    if not isinstance(value, list):
        raise DataError(
            path,
            record_label,
            shown,
            f"expected a list of {of}, got {_type_name(value)} {value!r:.60}",
        )
    if non_empty and not value:
        raise DataError(path, record_label, shown, "is empty")
    for j, item in enumerate(value):
        check_value(path, record_label, f"{shown}[{j}]", item, element)
    return value


def id_field(path, record_label, rec: Any, name: str) -> str:
    """An id: a non-empty string or an integer (not a boolean), returned as a string."""
    return str(field(path, record_label, rec, name, (str, int), non_empty=True))


def shown(value: Any, n: int = 80) -> str:
    """`value` for an error message: at most `n` characters of it (a dataset value can be
    megabytes long; issue #54), with its length when cut."""
    text = str(value)
    return text if len(text) <= n else f"{text[:n]}... ({len(text):,} characters)"


def record_label(index: int, rec: Any, id_field: str | None, records: list | None = None) -> str:
    """'#12 (id=abc)' when the id is readable, '#12' otherwise; JSON Lines records add their line."""
    parts = []
    if isinstance(records, JsonLines):
        parts.append(f"line {records.lines[index]}")
    if id_field and isinstance(rec, dict) and _is(rec.get(id_field), (str, int)):
        parts.append(f"id={shown(rec[id_field])}")
    return f"#{index} ({', '.join(parts)})" if parts else f"#{index}"


def check_unique_ids(path, ids_with_labels: list[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for qid, label in ids_with_labels:
        if qid in seen:
            raise DataError(
                path, label, "id", f"duplicate id '{shown(qid)}' (first seen at record {seen[qid]})"
            )
        seen[qid] = label
