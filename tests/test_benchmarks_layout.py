"""benchmarks/ stays a house with rooms: every script starts as a module, nothing edits sys.path
or names one machine's folders, workers never import hopbench, and each room's README names the
command behind every results file it holds.

Why: the parity evidence is only worth something if a reader can rerun it; a script that starts
only on its author's disk, or a results file nobody can trace to a command, cannot be rerun.
Each entry point runs `--help` in a subprocess (imports and argument parsing, nothing measured).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_machine_paths import MACHINE_PATH

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
SKIP_PARTS = {"__pycache__", "results"}
# what edits the import path in code (a worker's PYTHONPATH is set by its caller instead)
SYS_PATH_EDIT = re.compile(r"sys\.path\s*(?:\.\s*(?:insert|append|extend|remove)\b|\+?=|\[)")
WORKERS = {"worker.py", "index_worker.py"}  # run inside the authors' venvs


def _files(suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(
        p
        for p in BENCH.rglob("*")
        if p.is_file() and p.suffix in suffixes and not SKIP_PARTS & set(p.relative_to(BENCH).parts)
    )


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _entry_points() -> list[Path]:
    """Scripts a reader starts (a `__main__` block, or a package's __main__.py), workers aside."""
    return [
        p
        for p in _files((".py",))
        if p.name not in WORKERS
        and (p.name == "__main__.py" or 'if __name__ == "__main__"' in p.read_text())
    ]


# Runs each module as `python -m <module> --help` would, all in ONE child process (the heavy
# imports are shared, so the whole walk takes seconds, not minutes); one JSON line per module.
HELP_ALL = """
import contextlib, io, json, runpy, sys
for module in sys.argv[1:]:
    out, code = io.StringIO(), None
    sys.argv = [module, "--help"]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = e.code
    except BaseException as e:
        code, _ = 1, out.write(f"{type(e).__name__}: {e}")
    text = out.getvalue()
    row = {"module": module, "code": code, "usage": "usage:" in text, "out": text[-600:]}
    print(json.dumps(row), flush=True)
"""


def _help_all(paths: list[Path]) -> list[dict]:
    modules = [_module(p).removesuffix(".__main__") for p in paths]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    r = subprocess.run(
        [sys.executable, "-c", HELP_ALL, *modules],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith('{"module"')]
    assert len(rows) == len(modules), r.stdout[-2000:] + r.stderr[-2000:]
    return rows


def test_the_rooms_are_there():
    for room in ("common", "parity", "speed", "studies", "robustness"):
        assert (BENCH / room).is_dir(), f"benchmarks/{room}/ is missing"
    assert [p.name for p in BENCH.glob("*.py")] == ["__init__.py"], "scripts belong in a room"
    for method in ("hipporag", "qasa", "qafd", "catrag", "neuropath"):
        room = BENCH / "parity" / method
        for name in ("compare.py", "worker.py", "README.md"):
            assert (room / name).is_file(), f"benchmarks/parity/{method}/{name} is missing"


def test_every_entry_point_prints_its_help():
    points = _entry_points()
    assert len(points) > 30, "the walk saw the benchmarks"
    failed = [
        f"{row['module']} (exit {row['code']}):\n{row['out']}"
        for row in _help_all(points)
        if row["code"] not in (0, None) or not row["usage"]
    ]
    assert not failed, "these do not start as modules:\n" + "\n".join(failed)


def test_no_script_edits_sys_path():
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in _files((".py", ".sh"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if SYS_PATH_EDIT.search(line)
    ]
    assert not hits, "sys.path edits (run as `python -m benchmarks...` instead):\n" + "\n".join(
        hits
    )


def test_no_file_names_a_machine_folder():
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()[:120]}"
        for p in BENCH.rglob("*")
        if p.is_file()
        and p.suffix in {".py", ".sh", ".md", ".json", ".csv"}
        and "__pycache__" not in p.parts
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if MACHINE_PATH.search(line)
    ]
    assert not hits, "machine paths in benchmarks/:\n" + "\n".join(hits[:40])


def test_workers_never_import_hopbench():
    workers = [p for p in _files((".py",)) if p.name in WORKERS]
    assert len(workers) >= 5
    for p in workers:
        tree = ast.parse(p.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        bad = [n for n in names if n.split(".")[0] == "hopbench"]
        assert not bad, f"{p.relative_to(ROOT)} imports {bad}: it runs in the authors' venv"


def test_each_results_file_is_named_in_its_rooms_readme():
    missing = []
    for results in sorted(BENCH.rglob("results")):
        readme = results.parent / "README.md"
        text = readme.read_text() if readme.exists() else ""
        for f in sorted(results.iterdir()):
            stem = f.name.split(".")[0]
            if f.name not in text and f"results/{stem}." not in text and f"{stem}.{{" not in text:
                missing.append(f"{f.relative_to(ROOT)} (not in {readme.relative_to(ROOT)})")
    assert not missing, "results files without their command in a README:\n" + "\n".join(missing)


def test_readme_commands_name_modules_that_exist():
    """Every `python -m benchmarks.x.y` in the READMEs and the Makefile is a file of the checkout."""
    texts = [p.read_text() for p in BENCH.rglob("README.md")]
    texts += [(ROOT / n).read_text() for n in ("README.md", "Makefile", "CONTRIBUTING.md")]
    texts += [p.read_text() for p in sorted((ROOT / "docs").rglob("*.md"))]
    modules = {m for t in texts for m in re.findall(r"-m (benchmarks(?:\.\w+)+)", t)}
    assert modules, "the READMEs give their commands as modules"
    gone = [
        m
        for m in sorted(modules)
        if not (ROOT / Path(*m.split("."))).with_suffix(".py").is_file()
        and not (ROOT / Path(*m.split(".")) / "__main__.py").is_file()
    ]
    assert not gone, f"commands naming modules that do not exist: {gone}"


def test_no_command_starts_a_benchmark_by_its_path():
    """`python benchmarks/x/y.py` runs with the script's folder, not the repository, on the import
    path, so `benchmarks.common` is not found (or is found in another checkout): every command
    in the READMEs, docs and the scripts' own usage lines starts a module (`python -m ...`).
    Result files are left out: they quote the command they were made with."""
    by_path = re.compile(r"(?:python3?|\$\{?PY(?:THON)?\}?)\s+(?:\./)?benchmarks/\S+\.py")
    texts = [*_files((".md", ".py", ".sh")), ROOT / "README.md", ROOT / "Makefile"]
    texts += sorted((ROOT / "docs").rglob("*.md"))
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}"
        for p in texts
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if by_path.search(line)
    ]
    assert not hits, "commands that start a benchmark by its path:\n" + "\n".join(hits)


@pytest.mark.parametrize("script", ["parity", "speed"])
def test_the_suites_say_what_they_would_run(script):
    """`make parity` with no checkout given runs nothing, says so and exits 0; `make bench`'s
    suite lists its benchmarks without running them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFICIAL_SRC_")}
    r = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{script}", "--dry-run"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    if script == "parity":
        for method in ("hipporag", "qasa", "qafd", "catrag", "neuropath"):
            assert re.search(rf"skipped {method}: OFFICIAL_SRC_{method.upper()} ", r.stdout), (
                r.stdout
            )
    else:
        assert "-m benchmarks.speed.report" in r.stdout, r.stdout
