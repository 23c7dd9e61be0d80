"""`hopbench export` and `hopbench import`: runs published as a `datasets` dataset and back
(hopbench.report.run_set_export, hopbench.report.run_set_import)."""

from __future__ import annotations

import argparse
import sys

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import runs_dir_default
from hopbench.report.stats import DEFAULT_RESAMPLES


def export_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="hopbench export",
        description="Write complete runs (every question's prediction and trace, each run's "
        "files and protocol card, their leaderboard) as a Hugging Face `datasets` dataset: "
        "parquet shards, a save_to_disk copy and a dataset card, in one new folder.",
    )
    parser.add_argument("out", help="the folder to write (must not exist)")
    parser.add_argument("--runs-dir", default=runs_dir_default(), help="where runs live")
    parser.add_argument(
        "--dataset", action="append", default=[], help="only this dataset (repeatable)"
    )
    parser.add_argument(
        "--retriever", action="append", default=[], help="only this retriever (repeatable)"
    )
    parser.add_argument(
        "--hash", action="append", default=[], help="only this config hash (repeatable)"
    )
    parser.add_argument(
        "--baseline", default="dense", help="the leaderboard's baseline (default: dense)"
    )
    parser.add_argument(
        "--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples"
    )
    args = parser.parse_args(argv)
    from hopbench.report.run_set_export import export_run_set

    try:
        out, n = export_run_set(
            args.runs_dir,
            args.out,
            dataset_names=args.dataset,
            retrievers=args.retriever,
            hashes=args.hash,
            baseline=args.baseline,
            n_resamples=args.resamples,
        )
    except HopbenchError as exc:
        print(f"hopbench export: error: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {n} run(s) to {out} (datasets.load_from_disk, or the parquet files in {out}/data)"
    )
    return 0


def import_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="hopbench import",
        description="Write the runs of a set `hopbench export` wrote into a runs folder, "
        "byte for byte, after checking all of it; a different run under the same config hash "
        "is never overwritten.",
    )
    parser.add_argument("source", help="the run set's folder")
    parser.add_argument("--runs-dir", default=runs_dir_default(), help="where runs live")
    args = parser.parse_args(argv)
    from hopbench.report.run_set_import import import_run_set

    try:
        result = import_run_set(args.source, args.runs_dir)
    except HopbenchError as exc:
        print(f"hopbench import: error: {exc}", file=sys.stderr)
        return 2
    for folder in result.imported:
        print(f"imported {folder}")
    for folder in result.already_there:
        print(f"already there (same bytes): {folder}")
    return 0
