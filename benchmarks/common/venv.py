"""The virtual environment an authors' reference implementation runs in (never a hopbench dependency).

Made once with --system-site-packages (torch, numpy, ... come from this machine), then `pins`
installed. When the benchmark itself runs in a virtual environment (hopbench installed there, the
base interpreter bare), --system-site-packages alone would not see that environment's packages:
a `.pth` file appends its site-packages after the new venv's own, so the pins still win; a marker
file holds the pins, so a changed list reinstalls and an unchanged one costs
nothing. Shared by the parity/<method>/compare.py benchmarks.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path


def ensure_venv(venv: Path, pins: list[str], *, no_deps: bool) -> Path:
    """The venv's python, with `pins` installed (`no_deps`: exactly those, nothing they pull in)."""
    py = venv / "bin" / "python"
    marker = venv / ".hopbench-pins"
    if py.exists() and marker.exists() and marker.read_text() == "\n".join(pins):
        return py
    if not py.exists():
        print(f"creating {venv} (--system-site-packages)", flush=True)
        subprocess.run(
            [sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True
        )
        if sys.prefix != sys.base_prefix:  # run from a venv: its packages, after the new venv's own
            site = subprocess.run(
                [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            Path(site, "zz_parent_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", *(["--no-deps"] if no_deps else []), *pins],
        check=True,
    )
    marker.write_text("\n".join(pins))
    return py
