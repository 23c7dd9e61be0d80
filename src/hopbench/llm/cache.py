"""SQLite response cache: one row per request, keyed by sha256 of everything that shapes the reply.

WAL mode lets several Hydra jobs read while one writes; each insert is its own short
transaction, and `INSERT OR IGNORE` makes two jobs racing on the same request harmless
(at temperature 0 they produced the same reply anyway). Usage and latency are stored with
the reply so a cached rerun still reports what the request cost when it was made.

The cache stores what it is given; the client gives it only replies that passed their
checks, and overwrites (`replace=True`) a stored reply that no longer does.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

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


def request_key(model_identity: str, messages: list[dict], params: dict, schema: dict | None) -> str:
    """sha256 of the canonical JSON of model identity, messages, sampling parameters and schema."""
    blob = json.dumps({"model": model_identity, "messages": messages, "params": params,
                       "schema": schema}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
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
    truncated: bool = False   # the server stopped at max_tokens (fresh replies only; not stored)


class ResponseCache:
    """Content-addressed store of LLM replies in `<cache_dir>/llm/responses.sqlite`."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 60.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), timeout=busy_timeout_s, check_same_thread=False,
                                     isolation_level=None)
        # a row that is not valid UTF-8 (written by an older version, or damaged) is read with
        # its bad bytes as lone surrogates, which the client's check refuses: a miss, not a crash
        self._conn.text_factory = _text
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        self._conn.execute(_SCHEMA)

    @classmethod
    def in_dir(cls, cache_dir: str | Path) -> "ResponseCache":
        return cls(Path(cache_dir) / "llm" / "responses.sqlite")

    def get(self, key: str) -> CachedResponse | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT response_text, prompt_tokens, completion_tokens, latency_s FROM responses "
                "WHERE key = ?", (key,)).fetchone()
        return CachedResponse(*row) if row else None

    def put(self, key: str, model_identity: str, request: dict, response: CachedResponse,
            replace: bool = False) -> None:
        """Store a reply; the first write wins unless `replace` (overwriting a bad stored reply)."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self._lock:
            self._conn.execute(
                f"{verb} INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, model_identity, json.dumps(request, sort_keys=True, ensure_ascii=False),
                 response.text, response.prompt_tokens, response.completion_tokens,
                 response.latency_s, time.time()))

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
