"""A run's folder: config.yaml, predictions.jsonl appended as questions finish, metrics.json last.

metrics.json is written atomically and marks the run complete; predictions.jsonl lets a killed
run resume where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from hopbench.atomic import write_json, write_text

log = logging.getLogger(__name__)


def config_hash(semantic_config: dict) -> str:
    blob = json.dumps(semantic_config, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


class RunStore:
    def __init__(self, run_dir: str | Path):
        self.dir = Path(run_dir)
        self.predictions_path = self.dir / "predictions.jsonl"
        self.metrics_path = self.dir / "metrics.json"
        self.config_path = self.dir / "config.yaml"
        self._fh = None

    @property
    def complete(self) -> bool:
        return self.metrics_path.exists()

    def write_config(self, yaml_text: str) -> None:
        write_text(self.config_path, yaml_text)

    def load_predictions(self) -> list[dict]:
        """Rows already written; a torn last line (killed mid-write) is dropped and the file repaired."""
        if not self.predictions_path.exists():
            return []
        rows, good_bytes = [], 0
        with open(self.predictions_path, "rb") as fh:
            for line in fh:
                try:
                    rows.append(json.loads(line))
                except (json.JSONDecodeError, UnicodeDecodeError):
                    log.warning("%s: dropping a torn line after %d complete rows", self.predictions_path, len(rows))
                    break
                if not line.endswith(b"\n"):
                    # complete JSON but no newline: keep it and add the newline below
                    good_bytes += len(line)
                    break
                good_bytes += len(line)
        if good_bytes != self.predictions_path.stat().st_size or (rows and not _ends_with_newline(self.predictions_path)):
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            write_text(self.predictions_path, text)
        return rows

    def append(self, row: dict) -> None:
        if self._fh is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.predictions_path, "a", encoding="utf-8")
        self._fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def write_metrics(self, metrics: dict) -> None:
        self.close()
        write_json(self.metrics_path, metrics)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"
