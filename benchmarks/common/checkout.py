"""The commit of an authors' checkout, recorded in every parity result (the code is never in this
repository, so the commit is what makes a result reproducible)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def checkout_commit(src: Path | str) -> str:
    """A `COMMIT` file's content (for a copy that is not a git checkout), else `git rev-parse
    HEAD` of the folder, else "unknown"."""
    f = Path(src) / "COMMIT"
    if f.exists():
        return f.read_text().strip()
    r = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"
