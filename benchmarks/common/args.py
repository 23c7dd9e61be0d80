"""The input flags the benchmarks share (data, cache, output folder or file, the authors'
checkout and venv), declared once so their defaults and help read the same everywhere."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_data_and_cache_args(
    ap: argparse.ArgumentParser, data_default: str = "../shared/datasets"
) -> None:
    """--data-dir (the benchmark files) and --cache-dir (hopbench's cache), both overridable
    from the environment as the harness itself is."""
    ap.add_argument(
        "--data-dir",
        default=os.environ.get("HOPBENCH_DATA_DIR", data_default),
        help="the benchmark files (default $HOPBENCH_DATA_DIR)",
    )
    ap.add_argument(
        "--cache-dir",
        default=os.environ.get("HOPBENCH_CACHE_DIR", str(Path.home() / ".cache" / "hopbench")),
        help="hopbench's cache (graphs, vectors, LLM replies; default $HOPBENCH_CACHE_DIR)",
    )


def add_out_dir_arg(ap: argparse.ArgumentParser, script: str) -> None:
    """--out-dir: where the result files go; by default the room's committed results/ (a suite
    run such as `make bench` points it elsewhere so it does not overwrite the evidence)."""
    from benchmarks.common.paths import results_dir

    ap.add_argument(
        "--out-dir",
        type=Path,
        default=results_dir(script),
        help="folder for the result files (default: this room's results/)",
    )


def add_official_args(
    ap: argparse.ArgumentParser, method: str, checkout_help: str, *, required: bool = True
) -> None:
    """--official-src (the authors' checkout, kept outside the repository) and --venv (their
    virtual environment, `.cache/official-<method>` of the repository by default)."""
    from benchmarks.common.paths import REPO

    ap.add_argument(
        "--official-src", type=Path, required=required, default=None, help=checkout_help
    )
    ap.add_argument(
        "--venv",
        type=Path,
        default=REPO / ".cache" / f"official-{method}",
        help="the official side's virtual environment (made on first use)",
    )


def add_out_arg(ap: argparse.ArgumentParser, script: str, stem: str) -> None:
    """--out: the result pair OUT.json and OUT.md, by default `stem` in the room's results/."""
    from benchmarks.common.paths import results_dir

    ap.add_argument(
        "--out", type=Path, default=results_dir(script) / stem, help="writes OUT.json and OUT.md"
    )
