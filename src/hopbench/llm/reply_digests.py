"""The digest list beside a reply file: the sha256 of each of its lines, and of all of them.

Why: a reply changed after export (same key, new text) would otherwise be replayed as if the
model had said it; only a comparison of the finished rows with the reference would notice. The
list is written by `hopbench replies export` with the file (`write_reply_file`), committed
beside it, and checked by `hopbench replies import` and `hopbench paper` before they use the
file: a line whose digest differs is named (line, key), and nothing is imported.

    llm_replies.jsonl.gz  ->  llm_replies.sha256

Format: a comment line, then per line of the decompressed reply file `<sha256> <what>` (`header`
for line 1, the entry's key after it), then `<sha256> file`: the digest of those digests in
order, so the list as a whole stands for the file's whole contents.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from hopbench.core.atomic import atomic_path
from hopbench.llm.reply_file import Reply, ReplyFileError, read_with_digests

COMMENT = (
    "# sha256 of each line of {name}, decompressed (line 1: its header), then of all of them; "
    "written by `hopbench replies export`, checked by `hopbench replies import` and "
    "`hopbench paper`\n"
)
_LINE_BYTES = 64 + 1 + 64 + 1  # digest, space, key, newline


def digests_path(reply_path: str | Path) -> Path:
    """`x.jsonl.gz` -> `x.sha256` (also for `x.jsonl` and `x.gz`)."""
    p = Path(reply_path)
    stem = p.name
    for suffix in (".gz", ".jsonl"):
        stem = stem.removesuffix(suffix)
    return p.with_name(stem + ".sha256")


def _whole(digests: list[str]) -> str:
    return hashlib.sha256("".join(digests).encode("ascii")).hexdigest()


def write_digests(reply_path: str | Path, digests: list[str], keys: list[str]) -> Path:
    """Write the list for a reply file whose lines have `digests` (header first, then `keys`)."""
    out = digests_path(reply_path)
    names = ["header", *keys]
    with atomic_path(out) as tmp, open(tmp, "w", encoding="ascii", newline="\n") as fh:
        fh.write(COMMENT.format(name=Path(reply_path).name))
        for d, name in zip(digests, names, strict=True):
            fh.write(f"{d} {name}\n")
        fh.write(f"{_whole(digests)} file\n")
    return out


def _read_list(path: Path, n_lines: int) -> list[tuple[str, str]]:
    """The (digest, what) pairs of a list, read no further than a list for `n_lines` lines."""
    if not path.is_file():
        raise ReplyFileError(
            path,
            "no such file: the digest list of the reply file beside it (written by `hopbench "
            "replies export`; without it a changed reply would go unnoticed)",
        )
    limit = len(COMMENT) + 4096 + (n_lines + 1) * _LINE_BYTES
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ReplyFileError(path, f"longer than a digest list of {n_lines} lines")
    try:
        lines = data.decode("ascii").splitlines()
    except UnicodeDecodeError:
        raise ReplyFileError(path, "not ASCII text (not a digest list)") from None
    pairs = []
    for n, line in enumerate(lines, start=1):
        if n == 1 and line.startswith("#"):
            continue
        digest, _, what = line.partition(" ")
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not what:
            raise ReplyFileError(path, "expected `<sha256> <what>`", n)
        pairs.append((digest, what))
    return pairs


def check_digests(reply_path: str | Path, digests: list[str], keys: list[str]) -> None:
    """Raise `ReplyFileError` naming the first line of the reply file that its list does not
    match (or the list itself, when it is missing or damaged)."""
    listed = digests_path(reply_path)
    pairs = _read_list(listed, len(digests))
    names = ["header", *keys]
    for n, (got, name) in enumerate(zip(digests, names), start=1):
        if n > len(pairs) or pairs[n - 1] != (got, name):
            raise ReplyFileError(
                reply_path,
                f"does not match its digest in {listed} ({name}): changed since it was "
                "exported? Export it again, or restore both files from the repository",
                n,
            )
    if pairs[len(digests) :] != [(_whole(digests), "file")]:
        raise ReplyFileError(
            listed,
            f"does not end with the digest of the {len(digests)} lines of {reply_path} "
            "(lines added or removed?)",
        )


def read_verified(path: str | Path) -> tuple[dict, list[Reply]]:
    """(header, entries) of a reply file, every line checked, and the file checked against its
    digest list: what import and `hopbench paper` use."""
    head, replies, digests = read_with_digests(path)
    check_digests(path, digests, [r.key for r in replies])
    return head, replies
