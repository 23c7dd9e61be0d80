"""The reply file: response cache entries (request key -> reply and its recorded cost) in a file.

Why: the rows of the LLM methods are exact only through the response cache, which lives on one
machine. A reply file carries the entries a set of runs used, so a fresh clone loads them into
its cache (`hopbench replies import`) and regenerates every LLM row from cache hits, without a
model or a server, and a reader can audit any reply. Prompts are not stored: the key is the
SHA-256 of the model identity, messages, sampling parameters and schema
(`hopbench.llm.cache.request_key`), so the run that asks again finds its reply. The cache keeps
only the reply text (the parsed JSON is read from it), so that is what is stored.

Format, version 3: gzip-compressed UTF-8 JSON lines.

  line 1   {"format": "hopbench-llm-replies", "version": 2, "n_entries": N, "n_failed": F,
            "models": {model identity: entries}, "runs": {"dataset/retriever/hash": keys used},
            and "incomplete_runs": {"dataset/retriever/hash": keys the file holds for it} for
            runs the file alone cannot bring back (keys let through by `--allow-missing`, or a
            run exported before it finished): those are not in "runs"; and "unlabelled_runs":
            [labels] for runs kept by `--update` from a version 1 or 2 file, whose entries do
            not name them}
  then     {"key", "model", "text", "prompt_tokens", "completion_tokens", "seconds"} per entry,
           sorted by key, each key once; a reply that failed its check (the cache's
           `failed_replies`: replayed by `llm.replay_failed=true`, so the row it gave comes
           back) also has "failed": true and "truncated" (the server cut it off at max_tokens);
           "runs": the labels of the runs (of "runs" or "incomplete_runs") that used the key

Versions 1 and 2 (no "runs" per entry; version 1 without failed replies and "n_failed") are still
read. The "runs" of the entries are what says which runs a file brings back (`covered_runs`): a
run the header lists is covered only when as many entries name it as the header counts, so a
header that claims more than the file holds does not pass for replies.

Written deterministically (no time or file name in the gzip header, sorted keys): the same
entries give the same bytes; beside it, the digest list of its lines (`reply_digests`). Read
strictly and within bounds (a line at most `MAX_LINE_BYTES`, a reply's text at most the live
client's 1 MiB, the decompressed file at most `MAX_FILE_BYTES`, checked while streaming, so a
small gzip file cannot expand into gigabytes): anything else is one `ReplyFileError` naming the
file, the line and the field.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from hopbench.core.atomic import atomic_path
from hopbench.core.errors import HopbenchError
from hopbench.core.http_transport import MAX_REPLY_BYTES
from hopbench.llm.reply_digest_list import line_digest, write_digests

FORMAT = "hopbench-llm-replies"
VERSION = 3
READS = (1, 2, 3)
FIELDS = ("key", "model", "text", "prompt_tokens", "completion_tokens", "seconds")
FAILED_FIELDS = ("failed", "truncated")  # version 2, on failed replies only
RUNS_FIELD = "runs"  # version 3: the runs that used the entry
UNLABELLED = "unlabelled_runs"  # version 3 header: runs kept from a version 1 or 2 file
_KEY = re.compile(r"[0-9a-f]{64}")
MiB = 1 << 20
# a reply's text is at most the live client's cap; JSON escapes (\uXXXX) make a line at most
# 6 times that, plus the other fields
MAX_LINE_BYTES = 8 * MiB
MAX_FILE_BYTES = 128 * MiB  # decompressed: 27 times the committed file (4.7 MB)


@dataclass(frozen=True)
class Reply:
    """One cache entry: its request key, the model identity that made it, the reply text and
    what it cost when first made (the cache's `latency_s` as `seconds`)."""

    key: str
    model: str
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    failed: bool = False  # the reply failed its check (kept so a replay meets it again)
    truncated: bool = False  # a failed reply the server cut off at max_tokens
    runs: tuple[str, ...] = ()  # labels of the runs that used it (version 3)

    def as_line(self) -> dict:
        line = {f: getattr(self, f) for f in FIELDS}
        if self.failed:
            line.update(failed=True, truncated=self.truncated)
        line[RUNS_FIELD] = sorted(set(self.runs))
        return line


class ReplyFileError(HopbenchError):
    """A file that is not a reply file this version reads: where, which field, what is wrong."""

    def __init__(self, path, problem: str, line: int | None = None, field: str | None = None):
        where = (
            str(path)
            + (f", line {line}" if line is not None else "")
            + (f", {field}" if field else "")
        )
        super().__init__(f"{where}: {problem}")
        self.path, self.line, self.field, self.problem = str(path), line, field, problem


def header(
    replies: list[Reply],
    runs: dict[str, int],
    incomplete: dict[str, int] | None = None,
    unlabelled: Iterable[str] = (),
) -> dict:
    models: dict[str, int] = {}
    for r in replies:
        models[r.model] = models.get(r.model, 0) + 1
    head = {
        "format": FORMAT,
        "version": VERSION,
        "n_entries": len(replies),
        "n_failed": sum(r.failed for r in replies),
        "models": dict(sorted(models.items())),
        "runs": dict(sorted(runs.items())),
    }
    if incomplete:  # only when there are some: a complete file's bytes stay as they were
        head["incomplete_runs"] = dict(sorted(incomplete.items()))
    if unlabelled := sorted(set(unlabelled)):
        head[UNLABELLED] = unlabelled
    return head


def _line(obj: dict) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def write_reply_file(
    path: str | Path,
    replies: Iterable[Reply],
    runs: dict[str, int],
    incomplete: dict[str, int] | None = None,
    unlabelled: Iterable[str] = (),
) -> dict:
    """Write the entries sorted by key (atomically: the file is whole or absent), and the digest
    list beside them; return the header. `unlabelled`: runs carried over from a version 1 or 2
    file, whose entries do not name them (`covered_runs`)."""
    entries = sorted(replies, key=lambda r: r.key)
    for a, b in zip(entries, entries[1:]):
        if a.key == b.key:
            raise ValueError(f"reply {a.key} given twice")
    if both := set(runs) & set(incomplete or {}):
        raise ValueError(f"run {sorted(both)[0]} given as complete and as incomplete")
    listed = set(runs) | set(incomplete or {})
    for r in entries:
        if unknown := sorted(set(r.runs) - listed):
            raise ValueError(f"reply {r.key} names run {unknown[0]}, which the file does not list")
    unlabelled = set(unlabelled)
    if unknown := sorted(unlabelled - listed):
        raise ValueError(f"run {unknown[0]} given as unlabelled but not listed")
    head = header(entries, runs, incomplete, unlabelled)
    digests = []
    with (
        atomic_path(path, suffix=".gz") as tmp,
        open(tmp, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz,
    ):
        for line in (_line(head), *(_line(r.as_line()) for r in entries)):
            gz.write(line)
            digests.append(line_digest(line))
    write_digests(path, digests, [r.key for r in entries])
    return head


# ---- reading -------------------------------------------------------------------------------
def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of the file, gzip or plain, each line and the whole within bounds
    (read at most one line past them, so a gzip bomb stops early); a damaged gzip stream is one
    error."""
    with open(path, "rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
    opener = gzip.open if gzipped else open
    total = 0
    try:
        with opener(path, "rb") as fh:
            for n in itertools.count(1):
                raw = fh.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    return
                if len(raw) > MAX_LINE_BYTES:
                    raise ReplyFileError(
                        path, f"longer than {MAX_LINE_BYTES // MiB} MiB (too large for a reply)", n
                    )
                total += len(raw)
                if total > MAX_FILE_BYTES:
                    raise ReplyFileError(
                        path,
                        f"the file is larger than {MAX_FILE_BYTES // MiB} MiB decompressed "
                        "(more than a reply file holds)",
                        n,
                    )
                yield n, raw
    except EOFError:
        raise ReplyFileError(path, "the gzip stream is cut short (an incomplete copy?)") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise ReplyFileError(path, f"not a readable gzip file ({exc})") from None


def _json(path: Path, n: int, raw: bytes) -> dict:
    try:
        obj = json.loads(raw.decode("utf-8"))  # UTF-8 only: json.loads would guess UTF-16 too
    except UnicodeDecodeError:
        raise ReplyFileError(path, "not UTF-8 text", n) from None
    except json.JSONDecodeError as exc:
        raise ReplyFileError(path, f"not valid JSON ({exc.msg})", n) from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ReplyFileError(path, f"not a value this reader takes ({exc})", n) from None
    except RecursionError:
        raise ReplyFileError(path, "not valid JSON (nested too deeply)", n) from None
    if not isinstance(obj, dict):
        raise ReplyFileError(path, f"expected a JSON object, got {type(obj).__name__}", n)
    for name, value in obj.items():
        if not _valid_unicode(name) or not _valid_unicode(value):
            raise ReplyFileError(
                path,
                "not valid Unicode (a lone surrogate such as \\ud83d, which cannot be stored)",
                n,
                name if _valid_unicode(name) else None,
            )
    return obj


def _valid_unicode(value) -> bool:
    """No string in `value` holds a lone surrogate (JSON's \\ud83d alone), so all of it can be
    written as UTF-8 (SQLite, the terminal). Walked without recursion: JSON can nest deeply."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return True


def _check_header(path: Path, head: dict) -> None:
    if head.get("format") != FORMAT:
        raise ReplyFileError(
            path,
            f"expected {FORMAT!r}, got {head.get('format')!r} (not a hopbench reply file)",
            1,
            "format",
        )
    version = head.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ReplyFileError(path, f"expected an integer, got {version!r}", 1, "version")
    if version not in READS:
        newer = " (written by a newer hopbench: update this one)" if version > VERSION else ""
        raise ReplyFileError(
            path,
            f"version {version} is not read by this hopbench (it reads versions "
            f"{', '.join(map(str, READS))}){newer}",
            1,
            "version",
        )
    for name in ("n_entries", "n_failed") if version >= 2 else ("n_entries",):
        n = head.get(name)
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ReplyFileError(path, f"expected a count, got {n!r}", 1, name)
    for name in ("models", "runs"):
        if not isinstance(head.get(name), dict):
            raise ReplyFileError(
                path, f"expected an object, got {repr(head.get(name))[:80]}", 1, name
            )
    if not isinstance(head.get("incomplete_runs", {}), dict):
        raise ReplyFileError(
            path,
            f"expected an object, got {repr(head['incomplete_runs'])[:80]}",
            1,
            "incomplete_runs",
        )
    unlabelled = head.get(UNLABELLED, [])
    listed = set(head["runs"]) | set(head.get("incomplete_runs", {}))
    if not (isinstance(unlabelled, list) and all(label in listed for label in unlabelled)):
        raise ReplyFileError(
            path, f"expected labels of runs it lists, got {repr(unlabelled)[:80]}", 1, UNLABELLED
        )
    for name in ("models", "runs", "incomplete_runs"):
        for label, n in head.get(name, {}).items():
            if not _count(n):
                raise ReplyFileError(
                    path, f"expected a count for {label[:80]!r}, got {repr(n)[:80]}", 1, name
                )


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _reply(path: Path, n: int, obj: dict, version: int, listed: set[str]) -> Reply:
    for f in FIELDS:
        if f not in obj:
            raise ReplyFileError(path, "missing", n, f)
    known = FIELDS + FAILED_FIELDS if version >= 2 else FIELDS
    if version >= 3:
        known += (RUNS_FIELD,)
        if RUNS_FIELD not in obj:
            raise ReplyFileError(path, "missing", n, RUNS_FIELD)
    extra = sorted(set(obj) - set(known))
    if extra:
        raise ReplyFileError(
            path, f"unknown field (version {version} has {', '.join(known)})", n, extra[0]
        )
    if "failed" in obj or "truncated" in obj:
        for f in FAILED_FIELDS:
            if f not in obj:
                raise ReplyFileError(
                    path, "missing (a failed reply has failed and truncated)", n, f
                )
            if not isinstance(obj[f], bool):
                raise ReplyFileError(path, f"expected true or false, got {obj[f]!r}", n, f)
        if not obj["failed"]:
            raise ReplyFileError(
                path, "expected true (written only on failed replies)", n, "failed"
            )
    checks = {
        "key": lambda v: isinstance(v, str) and _KEY.fullmatch(v) is not None,
        "model": lambda v: isinstance(v, str) and v != "",
        "text": lambda v: isinstance(v, str),
        "prompt_tokens": _count,
        "completion_tokens": _count,
        "seconds": lambda v: (
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
        ),
    }
    wanted = {
        "key": "64 lower-case hex digits",
        "model": "a model identity",
        "text": "a string",
        "prompt_tokens": "a count",
        "completion_tokens": "a count",
        "seconds": "a number of seconds",
    }
    for f, ok in checks.items():
        if not ok(obj[f]):
            shown = repr(obj[f])
            raise ReplyFileError(path, f"expected {wanted[f]}, got {shown[:80]}", n, f)
    if len(obj["text"].encode("utf-8")) > MAX_REPLY_BYTES:
        raise ReplyFileError(
            path, f"longer than {MAX_REPLY_BYTES // MiB} MiB (the live client's cap)", n, "text"
        )
    runs = obj.get(RUNS_FIELD, [])
    if not (
        isinstance(runs, list)
        and all(isinstance(label, str) and label in listed for label in runs)
        and runs == sorted(set(runs))
    ):
        raise ReplyFileError(
            path,
            f"expected the sorted labels of runs the header lists, got {repr(runs)[:80]}",
            n,
            RUNS_FIELD,
        )
    return Reply(
        obj["key"],
        obj["model"],
        obj["text"],
        obj["prompt_tokens"],
        obj["completion_tokens"],
        float(obj["seconds"]),
        failed=bool(obj.get("failed", False)),
        truncated=bool(obj.get("truncated", False)),
        runs=tuple(runs),
    )


def read_reply_header(path: str | Path) -> dict:
    """The header line alone, checked: which runs and models a file carries, without reading its
    entries (the paper plan asks it of every row)."""
    path = Path(path)
    if not path.is_file():
        raise ReplyFileError(path, "no such file")
    for n, raw in _lines(path):
        head = _json(path, n, raw)
        _check_header(path, head)
        return head
    raise ReplyFileError(path, "empty: no header line", 1)


def read_reply_file(path: str | Path) -> tuple[dict, list[Reply]]:
    """(header, entries) of a reply file, every line checked (see the module's docstring); its
    digest list is not (`hopbench.llm.reply_digests.read_verified` checks both)."""
    head, replies, _ = read_with_digests(path)
    return head, replies


def read_with_digests(path: str | Path) -> tuple[dict, list[Reply], list[str]]:
    """(header, entries, `line_digest` of each line) of a reply file, every line checked."""
    path = Path(path)
    if not path.is_file():
        raise ReplyFileError(path, "no such file")
    head: dict | None = None
    replies: list[Reply] = []
    digests: list[str] = []
    listed: set[str] = set()
    for n, raw in _lines(path):
        if not raw.strip():
            raise ReplyFileError(path, "blank line", n)
        obj = _json(path, n, raw)
        digests.append(line_digest(raw))
        if head is None:
            _check_header(path, obj)
            head = obj
            listed = set(head["runs"]) | set(head.get("incomplete_runs", {}))
            continue
        r = _reply(path, n, obj, head["version"], listed)
        if replies and r.key <= replies[-1].key:
            raise ReplyFileError(
                path,
                "not after the previous line's key (entries are sorted by key, each once)",
                n,
                "key",
            )
        replies.append(r)
    if head is None:
        raise ReplyFileError(path, "empty: no header line", 1)
    if len(replies) != head["n_entries"]:
        raise ReplyFileError(
            path,
            f"the header says {head['n_entries']} entries, the file has "
            f"{len(replies)} (cut short?)",
            1,
            "n_entries",
        )
    if head["version"] >= 2 and sum(r.failed for r in replies) != head["n_failed"]:
        raise ReplyFileError(
            path,
            f"the header says {head['n_failed']} failed replies, the file has "
            f"{sum(r.failed for r in replies)}",
            1,
            "n_failed",
        )
    return head, replies, digests


def covered_runs(head: dict, replies: list[Reply]) -> set[str]:
    """The runs of the header's `runs` whose replies the file holds, counted from its entries:
    as many entries name the run as the header counts (version 3). Versions 1 and 2 do not say
    which entry a run used, nor does a version 3 file for the runs it kept from one
    (`unlabelled_runs`); there a run counts as covered when the file holds at least as many
    entries as the header says it used."""
    if head["version"] >= 3:
        held = Counter(label for r in replies for label in r.runs)
        unlabelled = set(head.get(UNLABELLED, []))
    else:
        held, unlabelled = Counter(), set(head["runs"])
    return {
        label
        for label, n in head["runs"].items()
        if n > 0 and (held[label] == n or (label in unlabelled and n <= len(replies)))
    }
