"""The virtual environment an authors' reference implementation runs in (never a hopbench dependency).

Made once with --system-site-packages (torch, numpy, ... come from this machine), then `pins`
installed; a marker file holds the pins, so a changed list reinstalls and an unchanged one costs
nothing. Shared by the compare_official_*.py benchmarks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def ensure_venv(venv: Path, pins: list[str], *, no_deps: bool) -> Path:
    """The venv's python, with `pins` installed (`no_deps`: exactly those, nothing they pull in)."""
    py = venv / "bin" / "python"
    marker = venv / ".hopbench-pins"
    if py.exists() and marker.exists() and marker.read_text() == "\n".join(pins):
        return py
    if not py.exists():
        print(f"creating {venv} (--system-site-packages)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", *(["--no-deps"] if no_deps else []), *pins],
                   check=True)
    marker.write_text("\n".join(pins))
    return py
