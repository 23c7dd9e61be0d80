"""SQLite response cache: one row per request, keyed by sha256 of everything that shapes the reply.

WAL mode (on a local disk; a rollback journal on a network file system, where WAL does
not work: `hopbench.core.storage`) lets several Hydra jobs read while one writes; each insert is its
own short transaction, and `INSERT OR IGNORE` makes two jobs racing on the same request harmless:
the first reply stored wins and `put` hands it back, so the loser uses it too (at temperature 0
two requests can still get different replies: llama.cpp decoding two sequences in one batch,
or a server's nondeterministic kernels). Usage and latency are stored with
the reply so a cached rerun still reports what the request cost when it was made.

The cache stores what it is given; the client gives it only replies that passed their
checks, and overwrites (`replace=True`) a stored reply that no longer does. Replies that failed
their checks are kept apart (`failed_replies`, with whether the server cut them off, and their
requests in `failed_requests`): a normal
run never reads them, so a rerun asks the server again; a run with `llm.replay_failed=true`
(`hopbench paper`) replays them, so a row computed with a failure regenerates identically.

Each row's checksum (`hopbench.core.checksum.digest_text` of reply, tokens, latency) is kept in a
table of its own (so versions without it still write rows): a row that does not match it is
deleted and reported as a miss, so the reply is asked again instead of replayed. A row written
without one (an older version) gets it the first time it is read. A file SQLite cannot read is
one error naming it, not a traceback.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hopbench.core.checksum import digest_text
from hopbench.core.errors import HopbenchError
from hopbench.core.private import make_private, private_umask
from hopbench.core.storage import journal_mode_for, warn_once

log = logging.getLogger(__name__)

_CHECKSUMS = "CREATE TABLE IF NOT EXISTS checksums (key TEXT PRIMARY KEY, digest TEXT NOT NULL)"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model_identity TEXT NOT NULL,
    request TEXT NOT NULL,
    response_text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    created_at REAL NOT NULL
)
"""


_FAILED = """
CREATE TABLE IF NOT EXISTS failed_replies (
    key TEXT PRIMARY KEY,
    model_identity TEXT NOT NULL,
    response_text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    truncated INTEGER NOT NULL,
    created_at REAL NOT NULL
)
"""


# the request of a failed reply (for audits), in a table of its own so that versions that record
# failed replies without it still write theirs
_FAILED_REQUESTS = (
    "CREATE TABLE IF NOT EXISTS failed_requests (key TEXT PRIMARY KEY, request TEXT NOT NULL)"
)


def request_key(
    model_identity: str, messages: list[dict], params: dict, schema: dict | None
) -> str:
    """sha256 of the canonical JSON of model identity, messages, sampling parameters and schema."""
    blob = json.dumps(
        {"model": model_identity, "messages": messages, "params": params, "schema": schema},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class CachedResponse:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    truncated: bool = False  # the server stopped at max_tokens (fresh replies only; not stored)


class ResponseCache:
    """Content-addressed store of LLM replies in `<cache_dir>/llm/responses.sqlite`."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 60.0):
        self.path = Path(path)
        private_umask()  # the folder and SQLite's -wal/-shm files (created with the file's mode)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for p in (self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm"))):
            if p == self.path or p.exists():
                make_private(p)
        self._lock = threading.Lock()
        with self._readable():
            self._open(busy_timeout_s)

    @contextmanager
    def _readable(self):
        """sqlite3's errors (a damaged file, a full disk) as one line naming the file."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise HopbenchError(
                f"{self.path}: the LLM response cache cannot be used ({exc}); "
                f"free disk space, or move the file aside to start an empty "
                f"cache"
            ) from None

    def _open(self, busy_timeout_s: float) -> None:
        self._conn = sqlite3.connect(
            str(self.path), timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        warn_once(str(self.path.parent), "the LLM response cache")
        # a row that is not valid UTF-8 (written by an older version, or damaged) is read with
        # its bad bytes as lone surrogates, which the client's check refuses: a miss, not a crash
        self._conn.text_factory = _text
        self._conn.execute(
            f"PRAGMA journal_mode={journal_mode_for(self.path)}"
        )  # WAL: local disks only
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        self._conn.execute(_SCHEMA)
        self._conn.execute(_CHECKSUMS)
        self._conn.execute(_FAILED)
        self._conn.execute(_FAILED_REQUESTS)

    @classmethod
    def in_dir(cls, cache_dir: str | Path) -> "ResponseCache":
        return cls(Path(cache_dir) / "llm" / "responses.sqlite")

    def get(self, key: str) -> CachedResponse | None:
        """The stored reply, or None (not stored, or damaged: then it is deleted)."""
        with self._lock, self._readable():
            row = self._conn.execute(
                "SELECT r.response_text, r.prompt_tokens, r.completion_tokens, r.latency_s, c.digest "
                "FROM responses r LEFT JOIN checksums c ON c.key = r.key WHERE r.key = ?",
                (key,),
            ).fetchone()
            if row is None:
                return None
            *values, want = row
            got = digest_text(*values)
            if want is None:  # written by a version without checksums
                self._conn.execute("INSERT OR IGNORE INTO checksums VALUES (?, ?)", (key, got))
            elif want != got:
                log.warning(
                    "%s: cached LLM reply %s does not match its checksum; asking again",
                    self.path,
                    key[:12],
                )
                self._conn.execute("DELETE FROM responses WHERE key = ?", (key,))
                self._conn.execute("DELETE FROM checksums WHERE key = ?", (key,))
                return None
        return CachedResponse(*values)

    def model_identity(self, key: str) -> str | None:
        """The model identity a stored reply was made by (None: not stored)."""
        with self._lock, self._readable():
            row = self._conn.execute(
                "SELECT model_identity FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else row[0]

    def put(
        self,
        key: str,
        model_identity: str,
        request: dict,
        response: CachedResponse,
        replace: bool = False,
    ) -> CachedResponse:
        """Store a reply and its checksum; the first write wins unless `replace` (overwriting a
        bad stored reply). The checksum is of the row stored, whichever process wrote it.
        Returns the reply stored: another process's, when it stored this key first (the caller
        must use that one, so every use of a key is the reply a rerun will find)."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self._lock, self._readable():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(
                    f"{verb} INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        model_identity,
                        json.dumps(request, sort_keys=True, ensure_ascii=False),
                        response.text,
                        response.prompt_tokens,
                        response.completion_tokens,
                        response.latency_s,
                        time.time(),
                    ),
                )
                stored = self._conn.execute(
                    "SELECT response_text, prompt_tokens, completion_tokens, latency_s FROM responses "
                    "WHERE key = ?",
                    (key,),
                ).fetchone()
                self._conn.execute(
                    "INSERT OR REPLACE INTO checksums VALUES (?, ?)", (key, digest_text(*stored))
                )
                self._conn.execute("COMMIT")
            except BaseException:
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # nothing open (the failed statement ended it)
                raise
        return CachedResponse(*stored)

    def put_failed(
        self, key: str, model_identity: str, response: CachedResponse, request: dict | None = None
    ) -> None:
        """Record a reply that failed its check (and its request, when given), apart from the
        replies that passed; the latest failure for a key wins (it is the one the latest run of
        that key saw)."""
        with self._lock, self._readable():
            if request is not None:
                self._conn.execute(
                    "INSERT OR REPLACE INTO failed_requests VALUES (?, ?)",
                    (key, json.dumps(request, sort_keys=True, ensure_ascii=False)),
                )
            self._conn.execute(
                "INSERT OR REPLACE INTO failed_replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model_identity,
                    response.text,
                    response.prompt_tokens,
                    response.completion_tokens,
                    response.latency_s,
                    int(response.truncated),
                    time.time(),
                ),
            )

    def get_failed(self, key: str) -> tuple[str, CachedResponse] | None:
        """(model identity, the recorded failed reply with its `truncated` flag), or None."""
        with self._lock, self._readable():
            row = self._conn.execute(
                "SELECT model_identity, response_text, prompt_tokens, completion_tokens, latency_s, "
                "truncated FROM failed_replies WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        identity, text, p, c, s, cut = row
        return identity, CachedResponse(text, p, c, s, truncated=bool(cut))

    def request(self, key: str) -> dict | None:
        """The request stored with a reply, passed or failed (None: not stored)."""
        with self._lock, self._readable():
            row = self._conn.execute(
                "SELECT request FROM responses WHERE key = ? UNION ALL "
                "SELECT request FROM failed_requests WHERE key = ?",
                (key, key),
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def failed_count(self) -> int:
        with self._lock, self._readable():
            return self._conn.execute("SELECT COUNT(*) FROM failed_replies").fetchone()[0]

    def __len__(self) -> int:
        with self._lock, self._readable():
            return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
