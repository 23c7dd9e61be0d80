"""Per-passage extraction results and the append-only JSONL log that makes extraction resumable.

One line per passage, written (and flushed) as soon as the passage is done, so a build that is
killed keeps everything extracted so far. A torn last line (the kill landed mid-write) is
dropped and overwritten; a bad line anywhere else is corruption and is reported.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.core.private import private_opener


@dataclass
class PassageExtraction:
    """What an extractor found in one passage. Surface forms, not yet normalised."""

    passage_id: str
    entities: list[str] = field(default_factory=list)
    triples: list[list[str]] = field(default_factory=list)  # [subject, relation, object]
    status: str = "ok"  # "ok" | "failed"
    error: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict) -> PassageExtraction:
        return cls(
            passage_id=d["passage_id"],
            entities=list(d.get("entities", [])),
            triples=[list(t) for t in d.get("triples", [])],
            status=d.get("status", "ok"),
            error=d.get("error"),
        )


class ExtractionLog:
    """Append-only JSONL of PassageExtraction records, keyed by passage id."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.records: dict[str, PassageExtraction] = {}
        self._fh = None
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        good_end = 0  # byte offset just after the last complete, valid line
        offset = 0
        for i, line in enumerate(lines):
            is_last = i == len(lines) - 1
            end = offset + len(line) + (0 if is_last else 1)
            if line.strip():
                try:
                    rec = PassageExtraction.from_dict(json.loads(line.decode("utf-8")))
                except (ValueError, KeyError, TypeError) as exc:
                    if is_last or all(not rest.strip() for rest in lines[i + 1 :]):
                        break  # torn tail from an interrupted write: drop it
                    raise HopbenchError(
                        f"{self.path}: line {i + 1} is not a valid extraction record "
                        f"({exc}); delete the file to re-extract"
                    ) from None
                if is_last:
                    break  # valid JSON but no trailing newline: treat as torn and redo it
                self.records[rec.passage_id] = rec
            good_end = end
            offset = end
        if good_end < len(raw):
            with open(self.path, "r+b") as fh:
                fh.truncate(good_end)

    def __contains__(self, passage_id: str) -> bool:
        return passage_id in self.records

    def append(self, rec: PassageExtraction) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8", opener=private_opener)  # noqa: SIM115 - kept open; close()
        self._fh.write(rec.to_json() + "\n")
        self._fh.flush()
        self.records[rec.passage_id] = rec

    def sync(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self.sync()
            self._fh.close()
            self._fh = None
