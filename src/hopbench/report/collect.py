"""`hopbench report`: every complete run (one with metrics.json) becomes a row of the leaderboard.

Writes, under --results-dir (default results/):
  leaderboard.{parquet,csv,md}   one row per dataset x method x config; CIs; paired tests
  breakdown.{parquet,csv,md}     the same per hop count / question type
  sensitivity.csv                rows of methods with depth/decay (for sweeps)
  figures/*.png                  recall@k curves, quality vs latency, depth/decay sensitivity
  published.csv, published_vs_ours.md   the papers' numbers next to ours (different models!)
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import pandas as pd

from hopbench.atomic import atomic_path, write_text
from hopbench.errors import HopbenchError
from hopbench.report.breakdown import breakdown, breakdown_markdown
from hopbench.report.leaderboard import leaderboard
from hopbench.report.markdown import LEADERBOARD_HEADER, fallback_warning_line, leaderboard_markdown
from hopbench.report.runs import load_runs
from hopbench.report.stats import DEFAULT_RESAMPLES

log = logging.getLogger(__name__)


def collect(runs_dir: str | Path, baseline: str = "dense", n_resamples: int = DEFAULT_RESAMPLES,
            dataset: str | None = None) -> pd.DataFrame:
    """The leaderboard of every complete run under runs_dir (incomplete runs are left out)."""
    runs = load_runs(runs_dir)
    if dataset:
        runs = [r for r in runs if r.dataset == dataset]
    return leaderboard(runs, baseline=baseline, n_resamples=n_resamples)


def _flat(df: pd.DataFrame) -> pd.DataFrame:
    """Nested values (lists, dicts) and mixed-type columns do not fit parquet: JSON-encode them."""
    flat = df.copy()
    for col in flat.columns:
        if flat[col].map(lambda v: isinstance(v, (dict, list))).any():
            flat[col] = flat[col].map(lambda v: json.dumps(v) if isinstance(v, (dict, list)) else v)
        kinds = {type(v) for v in flat[col] if v is not None and not (isinstance(v, float) and pd.isna(v))}
        if len(kinds) > 1 and not kinds <= {int, float}:
            flat[col] = flat[col].map(lambda v: None if v is None or (isinstance(v, float) and pd.isna(v))
                                      else str(v))
    return flat


def write_table(df: pd.DataFrame, stem: Path, formats=("parquet", "csv")) -> list[Path]:
    flat, paths = _flat(df), []
    if "parquet" in formats:
        with atomic_path(stem.with_suffix(".parquet"), suffix=".parquet") as tmp:
            flat.to_parquet(tmp, index=False)
        paths.append(stem.with_suffix(".parquet"))
    if "csv" in formats:
        with atomic_path(stem.with_suffix(".csv")) as tmp:
            flat.to_csv(tmp, index=False)
        paths.append(stem.with_suffix(".csv"))
    return paths


def write_results(df: pd.DataFrame, results_dir: str | Path, baseline: str = "dense") -> list[Path]:
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    stem = results_dir / "leaderboard"
    paths = write_table(df, stem)
    write_text(stem.with_suffix(".md"), LEADERBOARD_HEADER + leaderboard_markdown(df, baseline))
    return paths + [stem.with_suffix(".md")]


def write_everything(runs_dir, results_dir, baseline: str = "dense", n_resamples: int = DEFAULT_RESAMPLES,
                     dataset: str | None = None, figures: bool = True) -> tuple[pd.DataFrame, list[Path]]:
    from hopbench.report.plots import all_figures, sensitivity_table
    from hopbench.report.published import write_published, write_published_vs_ours

    results_dir = Path(results_dir)
    runs = load_runs(runs_dir)
    if dataset:
        runs = [r for r in runs if r.dataset == dataset]
    df = leaderboard(runs, baseline=baseline, n_resamples=n_resamples)
    paths = write_results(df, results_dir, baseline)
    bd = breakdown(runs, baseline=baseline, n_resamples=min(n_resamples, 2_000))
    paths += write_table(bd, results_dir / "breakdown")
    write_text(results_dir / "breakdown.md", breakdown_markdown(bd, baseline))
    paths.append(results_dir / "breakdown.md")
    paths += write_table(sensitivity_table(df), results_dir / "sensitivity", formats=("csv",))
    paths.append(write_published(results_dir))
    paths.append(write_published_vs_ours(df, results_dir))
    if figures:
        paths += all_figures(df, results_dir / "figures")
    return df, paths


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="hopbench report",
        description="Collect complete runs into results/: leaderboard (95%% bootstrap CIs, paired tests "
                    "against a baseline), breakdowns by hops/type, figures, published numbers side by side.")
    parser.add_argument("--runs-dir", default="runs", help="where runs live (default: runs)")
    parser.add_argument("--results-dir", default="results", help="where tables go (default: results)")
    parser.add_argument("--baseline", default="dense",
                        help="retriever every method is tested against, per dataset (default: dense)")
    parser.add_argument("--dataset", help="only this dataset")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                        help=f"bootstrap resamples (default: {DEFAULT_RESAMPLES})")
    parser.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    parser.add_argument("--published", action="store_true",
                        help="also print the published-vs-ours view (always written to "
                             "published_vs_ours.md)")
    args = parser.parse_args(argv)
    try:
        df, paths = write_everything(args.runs_dir, args.results_dir, baseline=args.baseline,
                                     n_resamples=args.resamples, dataset=args.dataset,
                                     figures=not args.no_figures)
    except HopbenchError as exc:
        print(f"hopbench report: error: {exc}", file=sys.stderr)
        return 2
    print(leaderboard_markdown(df, args.baseline))
    if warning := fallback_warning_line(df):
        print(f"hopbench report: warning: {warning}", file=sys.stderr)
    if args.published:
        print((Path(args.results_dir) / "published_vs_ours.md").read_text(encoding="utf-8"))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0
