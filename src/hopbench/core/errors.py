"""Errors that tell the user exactly where their input is wrong."""

from __future__ import annotations


class HopbenchError(Exception):
    """Base class for errors meant to be shown to the user without a traceback."""


class DataError(HopbenchError):
    """Malformed dataset input; always names the file, the record and the field."""

    def __init__(self, path, record, field: str | None, problem: str):
        self.path = str(path)
        self.record = record
        self.field = field
        self.problem = problem
        where = self.path if record in (None, "-", "file") else f"{self.path}: record {record}"
        if field:
            where += f", field '{field}'"
        super().__init__(one_line(f"{where}: {problem}"))


def one_line(text: str) -> str:
    """`text` with every character that is not printable (a newline, a lone surrogate from a
    dataset's value) escaped: one line that any terminal can print."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
