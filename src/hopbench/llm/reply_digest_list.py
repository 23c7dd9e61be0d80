"""The digest list's format: where it lies beside a reply file, how it is written and parsed.

Apart from `reply_digests` (which checks a reply file against it) so that the reply file's
writer can write it without importing its reader: the list is written with the file, in step.

    llm_replies.jsonl.gz  ->  llm_replies.sha256

A comment line, then per line of the decompressed reply file `<sha256> <what>` (`header` for
line 1, the entry's key after it), then `<sha256> file`: the digest of those digests in order,
so the list as a whole stands for the file's whole contents.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from hopbench.core.atomic import atomic_path
from hopbench.core.errors import HopbenchError

COMMENT = (
    "# sha256 of each line of {name}, decompressed (line 1: its header), then of all of them; "
    "written by `hopbench replies export`, checked by `hopbench replies import` and "
    "`hopbench paper`\n"
)
_LINE_BYTES = 64 + 1 + 64 + 1  # digest, space, key, newline


class DigestListError(HopbenchError):
    """A digest list that is missing or not one: which file, which line."""

    def __init__(self, path, problem: str, line: int | None = None):
        super().__init__(f"{path}{f', line {line}' if line is not None else ''}: {problem}")


def digests_path(reply_path: str | Path) -> Path:
    """`x.jsonl.gz` -> `x.sha256` (also for `x.jsonl` and `x.gz`)."""
    p = Path(reply_path)
    stem = p.name
    for suffix in (".gz", ".jsonl"):
        stem = stem.removesuffix(suffix)
    return p.with_name(stem + ".sha256")


def line_digest(raw: bytes) -> str:
    """sha256 of one line of the decompressed reply file, its newline included."""
    return hashlib.sha256(raw).hexdigest()


def whole_digest(digests: list[str]) -> str:
    """The digest of the line digests in order: the list's last line."""
    return hashlib.sha256("".join(digests).encode("ascii")).hexdigest()


def write_digests(reply_path: str | Path, digests: list[str], keys: list[str]) -> Path:
    """Write the list for a reply file whose lines have `digests` (header first, then `keys`)."""
    out = digests_path(reply_path)
    names = ["header", *keys]
    with atomic_path(out) as tmp, open(tmp, "w", encoding="ascii", newline="\n") as fh:
        fh.write(COMMENT.format(name=Path(reply_path).name))
        for d, name in zip(digests, names, strict=True):
            fh.write(f"{d} {name}\n")
        fh.write(f"{whole_digest(digests)} file\n")
    return out


def read_list(path: Path, n_lines: int) -> list[tuple[str, str]]:
    """The (digest, what) pairs of a list, read no further than a list for `n_lines` lines."""
    if not path.is_file():
        raise DigestListError(
            path,
            "no such file: the digest list of the reply file beside it (written by `hopbench "
            "replies export`; without it a changed reply would go unnoticed)",
        )
    limit = len(COMMENT) + 4096 + (n_lines + 1) * _LINE_BYTES
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise DigestListError(path, f"longer than a digest list of {n_lines} lines")
    try:
        lines = data.decode("ascii").splitlines()
    except UnicodeDecodeError:
        raise DigestListError(path, "not ASCII text (not a digest list)") from None
    pairs = []
    for n, line in enumerate(lines, start=1):
        if n == 1 and line.startswith("#"):
            continue
        digest, _, what = line.partition(" ")
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not what:
            raise DigestListError(path, "expected `<sha256> <what>`", n)
        pairs.append((digest, what))
    return pairs
