"""Scratch copies of the repository and the method's tests run inside one.

A copy holds what the tests read (src, configs, tests, docs, benchmarks, pyproject.toml), from
the commit HEAD (`git archive`, so the result names a commit) or from the working tree. The
tests run with the copy's src first on PYTHONPATH; `hopbench.__file__` is checked to be inside
the copy (the editable install points at the checkout, which must never be what is tested).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common.paths import REPO

PARTS = ["src", "configs", "tests", "docs", "benchmarks", "pyproject.toml"]
MARKERS = "not slow and not neo4j and not llm"


def make_copy(dest: Path, worktree: bool) -> None:
    """The repository's PARTS into `dest` (made; must not exist)."""
    dest.mkdir(parents=True)
    if worktree:
        for part in PARTS:
            src = REPO / part
            if src.is_dir():
                ignore = shutil.ignore_patterns("__pycache__", "results", ".cache")
                shutil.copytree(src, dest / part, ignore=ignore)
            else:
                shutil.copy2(src, dest / part)
        return
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD", *PARTS],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def env_for(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), str(root)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # the data the checkout's tests read (tests/conftest.py's default is beside the checkout)
    data = os.environ.get("HOPBENCH_DATA_DIR") or str(REPO.parent / "shared" / "datasets")
    env["HOPBENCH_DATA_DIR"] = str(Path(data).resolve())
    return env


def imported_from(root: Path) -> Path:
    """Where `import hopbench` resolves with the copy's environment; refuses anything else."""
    out = subprocess.run(
        [sys.executable, "-c", "import hopbench; print(hopbench.__file__)"],
        cwd=root,
        env=env_for(root),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    where = Path(out).resolve()
    if root.resolve() not in where.parents:
        raise RuntimeError(f"hopbench imported from {where}, not from the copy {root}")
    return where


TABLE_TEST = "tests/retrieve/test_authors_defaults.py::test_defaults_against_the_authors"


def table_only(selection: dict) -> dict:
    """The selection cut to the method's rows of the defaults table (`--table-first`); a
    deselected table row stays deselected."""
    rows = [d for d in selection.get("deselect", []) if d.startswith(TABLE_TEST)]
    return {"paths": [], "table": True, "deselect": rows}


def pytest_argv(selection: dict, method: str) -> list[str]:
    """The method's tests, its rows of the defaults table last (-x: the first failure stops)."""
    argv = [*selection["paths"]]
    for node in selection.get("deselect", []):  # failing before any mutation: said in the yaml
        argv += ["--deselect", node]
    expr = ""
    if selection.get("table"):
        argv.append(TABLE_TEST)
        expr = f"not test_defaults_against_the_authors or {method}-"
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", MARKERS]
    return cmd + (["-k", expr] if expr else []) + argv


def run_tests(root: Path, selection: dict, method: str, timeout: float) -> dict:
    """Runs the selection in the copy: passed (bool), the failing tests, seconds."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            pytest_argv(selection, method),
            cwd=root,
            env=env_for(root),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"passed": False, "failed": ["(timeout)"], "seconds": round(timeout, 1)}
    failed = [
        ln.split(" ", 1)[1].split(" - ")[0]
        for ln in proc.stdout.splitlines()
        if ln.startswith(("FAILED ", "ERROR "))
    ]
    tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
    return {
        "passed": proc.returncode == 0,
        "failed": failed
        or ([f"(exit {proc.returncode}) {' '.join(tail)}"] if proc.returncode else []),
        "seconds": round(time.perf_counter() - t0, 1),
    }
