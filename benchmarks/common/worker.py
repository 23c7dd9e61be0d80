"""Starting a worker in an authors' virtual environment: a clean environment, its output in a
log, and on failure the log's tail in the error, so every parity script reports it the same way.

A worker starts as `python -m benchmarks.parity.<method>.worker`: PYTHONPATH holds the
repository root (for `benchmarks.common`) after the folders the authors' code is imported from,
and nothing of the caller's PYTHONPATH (hopbench's own code must not leak into their side).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from benchmarks.common.paths import REPO, module_name

ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def one_thread_by_default() -> None:
    """Numeric libraries at one thread unless the caller set otherwise; call before numpy loads."""
    for var, value in ONE_THREAD.items():
        os.environ.setdefault(var, value)


def worker_env(env: Mapping[str, str] | None = None, pythonpath: Iterable[Path | str] = ()) -> dict:
    """This process's environment without its PYTHONPATH, plus `env`, with PYTHONPATH set to
    `pythonpath` (the authors' code) then the repository root."""
    out = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out.update(env or {})
    out["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), str(REPO)])
    return out


def worker_command(py: Path, worker: str | Path, *args) -> list[str]:
    """`py -m <the worker's module> args...`."""
    return [str(py), "-m", module_name(worker), *map(str, args)]


def run_worker(
    py: Path,
    worker: str | Path,
    args: Iterable = (),
    *,
    log: Path | None,
    env: Mapping[str, str] | None = None,
    pythonpath: Iterable[Path | str] = (),
    what: str = "the authors' code",
    tail: int = 20,
) -> None:
    """Run the worker file `worker` with the venv's python `py`; its output goes to `log` (None:
    to this terminal). A failure ends the benchmark with `what` failed and the log's last lines."""
    cmd = worker_command(py, worker, *args)
    full_env = worker_env(env, pythonpath)
    if log is None:
        rc = subprocess.run(cmd, env=full_env).returncode
        if rc:
            raise SystemExit(f"{what} failed (exit {rc}): {' '.join(cmd)}")
        return
    with open(log, "w") as fh:
        rc = subprocess.run(cmd, env=full_env, stdout=fh, stderr=subprocess.STDOUT).returncode
    if rc:
        raise SystemExit(
            f"{what} failed; see {log}:\n" + "\n".join(log.read_text().splitlines()[-tail:])
        )
