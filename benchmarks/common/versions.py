"""The installed versions and thread settings a benchmark records beside its figures (standard
library only at import, so a worker in an authors' venv records its side the same way)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib import metadata


def package_versions(names: Sequence[str], *, python: bool = False) -> dict:
    """Installed version of each distribution in `names` (None where it is not installed),
    after the interpreter's own version when `python`."""
    out: dict = {"python": sys.version.split()[0]} if python else {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def thread_settings(env_vars: Sequence[str] = THREAD_VARS) -> dict:
    """The thread variables as set (None: unset), torch's intra-op threads and each BLAS pool's
    (threadpoolctl), None where the library is not installed: what a timing ran with."""
    out: dict = {k: os.environ.get(k) for k in env_vars}
    try:
        import torch

        out["torch"] = torch.get_num_threads()
    except ImportError:  # pragma: no cover - every venv here has torch
        out["torch"] = None
    try:
        from threadpoolctl import threadpool_info

        out["blas"] = sorted(
            {(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info()}
        )
    except ImportError:  # pragma: no cover
        out["blas"] = None
    return out
