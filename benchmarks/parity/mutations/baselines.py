"""Each method's tests on an unmutated copy (the baseline), run once, when first needed.

A mutation counts as caught only if the same tests pass without it, so every stage a mutation
runs needs its baseline: the method's whole selection, or with `--table-first` its rows of the
defaults table alone. Run lazily, a table-first run that never falls through to a method's
whole selection never pays for that selection's baseline (minutes per method under load).
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from benchmarks.parity.mutations import scratch


class Baselines:
    def __init__(self, tests: dict, work: Path, worktree: bool, timeout: float):
        self.tests, self.work, self.worktree, self.timeout = tests, work, worktree, timeout
        self.results: dict[str, dict] = {}  # "catrag", "catrag (defaults table)": run_tests' dict
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def passed(self, method: str, table_only: bool = False) -> bool:
        """Whether the method's selection (or its table rows) passes unmutated; runs it once."""
        key = f"{method} (defaults table)" if table_only else method
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self.results:
                selection = self.tests[method]
                if table_only:
                    selection = scratch.table_only(selection)
                got = self._run(key, selection, method)
                with self._guard:
                    self.results[key] = got
                print(f"baseline {key}: passed={got['passed']} {got['seconds']} s", flush=True)
            return self.results[key]["passed"]

    def snapshot(self) -> dict:
        with self._guard:
            return dict(self.results)

    def _run(self, key: str, selection: dict, method: str) -> dict:
        root = self.work / ("baseline-" + key.replace(" ", "_").strip("()"))
        scratch.make_copy(root, self.worktree)
        try:
            scratch.imported_from(root)
            return scratch.run_tests(root, selection, method, self.timeout)
        finally:
            shutil.rmtree(root, ignore_errors=True)
