"""A reply file checked against its digest list: the sha256 of each of its lines, and of all.

Why: a reply changed after export (same key, new text) would otherwise be replayed as if the
model had said it; only a comparison of the finished rows with the reference would notice. The
list is written by `hopbench replies export` with the file (`write_reply_file`), committed
beside it, and checked here by `hopbench replies import` and `hopbench paper` before they use
the file: a line whose digest differs is named (line, key), and nothing is imported. The list's
format is `reply_digest_list`'s.
"""

from __future__ import annotations

from pathlib import Path

from hopbench.llm.reply_digest_list import (
    DigestListError,
    digests_path,
    read_list,
    whole_digest,
    write_digests,
)
from hopbench.llm.reply_file import Reply, ReplyFileError, read_with_digests

__all__ = ["DigestListError", "check_digests", "digests_path", "read_verified", "write_digests"]


def check_digests(reply_path: str | Path, digests: list[str], keys: list[str]) -> None:
    """Raise `ReplyFileError` naming the first line of the reply file that its list does not
    match (`DigestListError` when the list itself is missing or damaged)."""
    listed = digests_path(reply_path)
    pairs = read_list(listed, len(digests))
    names = ["header", *keys]
    for n, (got, name) in enumerate(zip(digests, names), start=1):
        if n > len(pairs) or pairs[n - 1] != (got, name):
            raise ReplyFileError(
                reply_path,
                f"does not match its digest in {listed} ({name}): changed since it was "
                "exported? Export it again, or restore both files from the repository",
                n,
            )
    if pairs[len(digests) :] != [(whole_digest(digests), "file")]:
        raise DigestListError(
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
