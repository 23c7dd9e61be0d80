"""What `make parity` and `make bench` share: their flags (--only, --out-dir, --data-dir,
--dry-run) and running each member's commands from the repository root, one process each."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

from benchmarks.common.paths import REPO


def suite_parser(description: str, out_dir: Path) -> argparse.ArgumentParser:
    """The flags every suite takes; a suite adds its own after."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--only", default="", help="comma-separated names (default: all)")
    ap.add_argument("--out-dir", type=Path, default=out_dir, help="where the outputs go")
    ap.add_argument(
        "--data-dir",
        default=os.environ.get("HOPBENCH_DATA_DIR", "../shared/datasets"),
        help="the benchmark files (default $HOPBENCH_DATA_DIR)",
    )
    ap.add_argument("--dry-run", action="store_true", help="print the commands; run nothing")
    return ap


def chosen(ap: argparse.ArgumentParser, only: str, names: list[str]) -> list[str]:
    """The names --only picks (all when empty); an unknown name is a usage error (exit 2)."""
    picked = [n for n in only.split(",") if n]
    unknown = sorted(set(picked) - set(names))
    if unknown:
        ap.error(f"unknown name(s) {unknown}; known: {names}")
    return [n for n in names if not picked or n in picked]


def suite_env(data_dir: str) -> dict:
    """The members' environment: this one, with HOPBENCH_DATA_DIR made absolute."""
    return {**os.environ, "HOPBENCH_DATA_DIR": str(Path(data_dir).resolve())}


def run_commands(commands: list[list[str]], env: dict, dry_run: bool) -> bool:
    """Runs the commands in order from the repository root, each printed first; stops at the
    first that fails. True when all succeeded (or, with dry_run, were only printed)."""
    for cmd in commands:
        print("   " + " ".join(cmd), flush=True)
        if not dry_run and subprocess.run(cmd, cwd=REPO, env=env).returncode:
            return False
    return True
