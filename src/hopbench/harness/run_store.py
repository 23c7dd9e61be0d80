"""A run's folder: config.yaml, predictions.jsonl appended as questions finish, metrics.json last.

metrics.json is written atomically and marks the run complete; predictions.jsonl lets a killed
run resume where it stopped. Three rules keep every number computed once and never lost:

- one process at a time works on a run: `RunStore.lock()` holds an flock on a sibling file
  (`.<hash>.lock`), which the kernel releases when the process dies, however it dies;
- `force=true` recomputes into a staging folder beside the run (`.<hash>.rerun/`) and
  replaces the finished run only once the new one is complete (`promote`); a staging folder
  found under the lock was left by a killed rerun and is removed (the next rerun starts afresh);
- reading predictions keeps the first row of each question id and skips a corrupt line
  (that question is computed again), as the KG extraction log does.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

from hopbench.core.atomic import fsync_path, write_json, write_text
from hopbench.core.locks import Busy, exclusive
from hopbench.core.metrics_file import read_metrics
from hopbench.core.private import private_opener
from hopbench.core.records import Row, read_rows, row_line

log = logging.getLogger(__name__)

SYNC_EVERY_S = 1.0


def config_hash(semantic_config: dict) -> str:
    blob = json.dumps(semantic_config, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


RunBusyError = Busy  # raised by `RunStore.lock(wait=False)` when another process holds the run


class RunStore:
    def __init__(self, run_dir: str | Path):
        self.dir = Path(run_dir)
        self.predictions_path = self.dir / "predictions.jsonl"
        self.metrics_path = self.dir / "metrics.json"
        self.config_path = self.dir / "config.yaml"
        self._fh = None

    # ---- siblings: lock, staging for force=true, the old run while it is replaced ----------
    def _sibling(self, suffix: str) -> Path:
        return self.dir.parent / f".{self.dir.name}.{suffix}"

    @property
    def lock_path(self) -> Path:
        return self._sibling("lock")

    def staging(self) -> "RunStore":
        """Where `force=true` computes the new run while the finished one stays in place."""
        return RunStore(self._sibling("rerun"))

    @property
    def complete(self) -> bool:
        """metrics.json is there and readable. One that is empty or cut short (a power cut
        before it reached the disk) does not count: the run is finished again from its rows."""
        return read_metrics(self.metrics_path) is not None

    @contextmanager
    def lock(self, wait: bool = True):
        """Hold the run exclusively; another launch of the same run waits here (then finds it
        complete and skips it, or resumes what is left). Released when the process dies."""
        with exclusive(self.lock_path, str(self.dir), wait=wait):
            self._recover_interrupted_promote()
            self._remove_stale_leftovers()
            yield self

    def tidy(self) -> None:
        """Remove a killed process's leftovers when no one holds the run (a complete run that is
        skipped takes the lock only for this; a rerun in progress keeps its staging folder)."""
        try:
            with self.lock(wait=False):
                pass
        except Busy:
            pass

    def _remove_stale_leftovers(self) -> None:
        """What a killed process left that no one will finish, found under the run's lock (so
        its writer is dead): a `force=true` staging folder (a new `force=true` starts afresh;
        without force the finished run stands) and atomic writes' temporary files."""
        staged = self._sibling("rerun")
        if staged.exists():
            log.warning("removing %s, left by a force=true rerun that was killed", staged)
            shutil.rmtree(staged)
        for p in self.dir.glob(".*.tmp") if self.dir.is_dir() else ():
            p.unlink(missing_ok=True)

    def _recover_interrupted_promote(self) -> None:
        old = self._sibling("old")
        if old.exists():
            if self.dir.exists():
                shutil.rmtree(old)
            else:
                log.warning("restoring %s from %s (a replacement was interrupted)", self.dir, old)
                os.replace(old, self.dir)

    def promote(self, staged: "RunStore") -> None:
        """Replace this run by the complete `staged` one (two renames; recovered under the lock)."""
        if not staged.complete:
            raise RuntimeError(f"{staged.dir} is not complete; refusing to replace {self.dir}")
        old = self._sibling("old")
        if self.dir.exists():
            os.replace(self.dir, old)
        os.replace(staged.dir, self.dir)
        fsync_path(self.dir.parent)
        shutil.rmtree(old, ignore_errors=True)

    # ---- contents -------------------------------------------------------------------------
    def write_config(self, yaml_text: str) -> None:
        write_text(self.config_path, yaml_text)

    def load_predictions(self) -> list[dict]:
        """Rows already written, one per question id; the file is rewritten without the corrupt
        lines and duplicates, so that appending goes on from a clean file."""
        if not self.predictions_path.exists():
            return []
        rows, corrupt, dupes = read_rows(self.predictions_path)
        if corrupt or dupes:
            log.warning(
                "%s: skipped %d corrupt line(s) and %d duplicate row(s); %d rows kept "
                "(the skipped questions are computed again)",
                self.predictions_path,
                corrupt,
                dupes,
                len(rows),
            )
        if corrupt or dupes or not _ends_with_newline(self.predictions_path):
            write_text(self.predictions_path, "".join(map(row_line, rows)))
        return rows

    def append(self, row: Row | dict) -> None:
        """Write one row. Flushed at once (a killed process loses nothing: the kernel has it);
        synced to disk at most once a second and on close (a power cut loses at most that
        second, whose questions a resume computes again), so fast runs do not wait on the disk."""
        if self._fh is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.predictions_path, "a", encoding="utf-8", opener=private_opener)
            self._synced = time.monotonic()
        self._fh.write(row_line(row))
        self._fh.flush()
        if time.monotonic() - self._synced >= SYNC_EVERY_S:
            os.fsync(self._fh.fileno())
            self._synced = time.monotonic()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None

    def write_metrics(self, metrics: dict) -> None:
        self.close()
        write_json(self.metrics_path, metrics)


def _ends_with_newline(path: Path) -> bool:
    if path.stat().st_size == 0:
        return True
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"
