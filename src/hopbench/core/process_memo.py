"""What a process has loaded, kept for its next run: one load per sweep.

A Hydra multirun runs its points one after another in one process (the basic launcher) or in a
few worker processes (joblib, Ray, submitit). Points that differ only in settings that change no
graph and no vectors (decay, depth, damping, top-k, thresholds) would otherwise each load the
same graph, encoder model and vectors again. Each memo is keyed by the content key of what it
holds (a graph's folder, an embedding cache file, a model's settings), so a point whose key
differs loads its own; and each holds at most `max_entries` things (least recently used out
first), so a sweep over graphs keeps one graph in memory, not all of them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def file_stamp(path: str | Path) -> tuple:
    """(path, and the size and modification time of the file or of each file in the folder): in
    a memo's key, so a file rewritten or damaged since it was read is read again, and its
    checksum checked, as it would be without the memo. () for a path that is gone."""
    path = Path(path)
    try:
        files = sorted(path.iterdir()) if path.is_dir() else [path]
        stats = tuple((f.name, *_size_time(f)) for f in files)
    except OSError:
        return ()
    return (str(path.resolve()), stats)


def _size_time(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


class ProcessMemo:
    """A bounded least-recently-used memo; `loads` counts the values made, `hits` the reuses."""

    def __init__(self, what: str, max_entries: int):
        if max_entries < 1:
            raise ValueError(f"{what}: max_entries must be at least 1, got {max_entries}")
        self.what = what
        self.max_entries = max_entries
        self.loads = 0
        self.hits = 0
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, key: Hashable) -> Any:
        """The value kept for `key` (counted as a reuse), or None (always for the empty key)."""
        with self._lock:
            if key == () or key not in self._values:
                return None
            self._values.move_to_end(key)
            self.hits += 1
            label = key[0] if isinstance(key, tuple) else key  # a file stamp: its path
            log.info("%s reused from this process's memo (%s)", self.what, label)
            return self._values[key]

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value kept for `key`, else `make()` kept (the oldest dropped past the bound)."""
        value = self.find(key)
        if value is not None:
            return value
        value = make()
        self.put(key, value)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        """Keep a value the caller made (counted in `loads`) for the next run."""
        with self._lock:
            self.loads += 1
            if key == ():  # a file gone since it was read: nothing to key it by
                return
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.max_entries:
                self._values.popitem(last=False)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._values

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
