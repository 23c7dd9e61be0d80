"""Reads the "Defaults against the authors" table of a docs/methods/<method>.md (issue #55).

The table records, per retriever config and setting, hopbench's default, the authors' value and
where their code sets it (commit, file:line), with a note wherever the two differ. The test
`test_authors_defaults.py` composes each config and compares; this module only parses, and
names the file, line and column of anything it cannot read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

HEADING = "Defaults against the authors"
COLUMNS = ("config", "setting", "hopbench default", "authors' value", "commit", "file:line", "note")
NONE = {"—", "-", ""}  # an empty cell: the authors have no such setting / no source line
COMMIT = re.compile(r"^[0-9a-f]{40}$")
FILE_LINE = re.compile(r"^[\w./-]+:\d+(-\d+)?$")


class TableError(ValueError):
    """A row the test cannot read: file, line and column in the message."""


@dataclass(frozen=True)
class Row:
    configs: tuple[str, ...]  # the config cell: one name, or several separated by commas
    setting: str  # dotted path into the composed retriever config
    hopbench: object
    authors: object  # None: the authors have no such setting
    has_authors: bool
    commit: str | None
    file_line: str | None
    note: str
    where: str  # "docs/methods/x.md:123", for messages

    @property
    def differs(self) -> bool:
        return not self.has_authors or not same_value(self.hopbench, self.authors)


def cell_value(text: str) -> object:
    """A cell as a YAML scalar; `1e-10` as a float (YAML 1.1 reads it as a string)."""
    value = yaml.safe_load(text.strip().strip("`"))
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def same_value(a: object, b: object, rel_tol: float = 1e-12) -> bool:
    """Equal, floats within a relative 1e-12 (a printed default, not a computed one)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= rel_tol * max(abs(a), abs(b))
    return a == b


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_table(path: Path) -> list[Row]:
    """Every row of the table under the heading `HEADING` in `path`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(
        (
            i
            for i, ln in enumerate(lines)
            if ln.lstrip("#").strip() == HEADING and ln.startswith("#")
        ),
        None,
    )
    if start is None:
        raise TableError(f"{path}: no heading '{HEADING}'")
    i = start + 1
    while i < len(lines) and not lines[i].startswith("|"):
        i += 1
    if i >= len(lines) or tuple(_cells(lines[i])) != COLUMNS:
        raise TableError(f"{path}:{i + 1}: the table's header must be | {' | '.join(COLUMNS)} |")
    rows: list[Row] = []
    for n in range(i + 2, len(lines)):
        if not lines[n].startswith("|"):
            break
        rows.append(_row(path, n + 1, _cells(lines[n])))
    return rows


def _row(path: Path, lineno: int, cells: list[str]) -> Row:
    where = f"{path.name}:{lineno}"
    if len(cells) != len(COLUMNS):
        raise TableError(f"{where}: {len(cells)} cells, expected {len(COLUMNS)}")
    config, setting, hop, auth, commit, file_line, note = cells
    configs = tuple(c.strip().strip("`") for c in config.split(","))
    setting = setting.strip("`")
    has_authors = auth not in NONE
    commit = None if commit.strip("`") in NONE else commit.strip("`")
    file_line = None if file_line.strip("`") in NONE else file_line.strip("`")
    if has_authors and (commit is None or not COMMIT.match(commit)):
        raise TableError(f"{where}: column commit: the authors' value needs a 40-hex commit")
    if has_authors and (file_line is None or not FILE_LINE.match(file_line)):
        raise TableError(f"{where}: column file:line: the authors' value needs path:line")
    row = Row(
        configs=configs,
        setting=setting,
        hopbench=cell_value(hop),
        authors=cell_value(auth) if has_authors else None,
        has_authors=has_authors,
        commit=commit,
        file_line=file_line,
        note=note,
        where=where,
    )
    if row.differs and not note:
        raise TableError(
            f"{where}: column note: hopbench's {setting} = {row.hopbench!r} is not the authors' "
            f"({row.authors!r} or none): the note must say why"
        )
    return row
