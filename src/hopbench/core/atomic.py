"""Atomic file writes: a cache or a results file is either complete or absent, never half-written.

Durable too: the new file's bytes are synced before it is renamed into place, and its folder
after, so that a power cut cannot leave a complete-looking name over empty or missing bytes
(a metrics.json that marks a run complete, a graph manifest).
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np


def fsync_path(path: str | Path) -> None:
    """Flush a file's (or a folder's entries') bytes to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(folder: str | Path) -> None:
    """Every file below `folder`, then every folder bottom-up (before renaming it into place)."""
    folder = Path(folder)
    paths = sorted(folder.rglob("*"), key=lambda p: -len(p.parts))
    for p in [*paths, folder]:
        if not p.is_symlink():
            fsync_path(p)


@contextmanager
def atomic_path(path: str | Path, suffix: str = ""):
    """Yield a temporary path in the same folder; rename it onto `path` only if the block
    succeeds, after syncing it, and sync the folder after the rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix + ".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        fsync_path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_path(path.parent)


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | Path, obj) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def save_npy(path: str | Path, array: np.ndarray) -> None:
    with atomic_path(path, suffix=".npy") as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array, allow_pickle=False)
