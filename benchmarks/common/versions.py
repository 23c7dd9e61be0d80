"""The installed versions a benchmark records beside its figures (standard library only, so a
worker in an authors' venv records its side the same way)."""

from __future__ import annotations

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
