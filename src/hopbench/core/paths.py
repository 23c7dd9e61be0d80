"""Where things live: the checkout's folders, and the defaults every command shares.

One place for them, so a library module never needs the entry point (`hopbench.run`) to find
the configs, and `hopbench report`, `hopbench show` and a run agree on where runs are.
Kept free of imports beyond the standard library: every layer reads it.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]  # the checkout (src/hopbench/core/ is below it)
CONFIG_DIR = str(REPO_ROOT / "configs")  # Hydra's config tree
RETRIEVER_CONFIGS = REPO_ROOT / "configs" / "retriever"
REPO_REFERENCE = REPO_ROOT / "results" / "reference"  # the committed reference results


def runs_dir_default() -> str:
    """Where runs live for every command: HOPBENCH_RUNS_DIR, else ./runs (as `paths.runs_dir`)."""
    return os.environ.get("HOPBENCH_RUNS_DIR") or "runs"


def cache_dir_default() -> str:
    """The caches' folder, as `paths.cache_dir` defaults: HOPBENCH_CACHE_DIR, else ~/.cache/hopbench."""
    return os.environ.get("HOPBENCH_CACHE_DIR") or os.path.join(
        os.environ.get("HOME") or ".", ".cache", "hopbench"
    )


def results_dir_default() -> str:
    return os.environ.get("HOPBENCH_RESULTS_DIR") or "results"


def run_folder_cell(run_dir: str | Path) -> str:
    """A run folder as the tables name it: relative to the runs folder, `<dataset>/<retriever>/<hash>`
    (an absolute path would name the machine the report ran on)."""
    return "/".join(Path(run_dir).parts[-3:])


def reference_dir_default() -> Path:
    return Path(os.environ.get("HOPBENCH_REFERENCE_DIR") or REPO_REFERENCE)
