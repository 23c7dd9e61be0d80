"""`hopbench report`: every complete run (one with metrics.json) becomes a row of results/leaderboard.*."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pandas as pd

from hopbench.atomic import atomic_path, write_text

log = logging.getLogger(__name__)

TABLE_COLUMNS = ["dataset", "retriever", "reader", "config_hash", "n_questions", "n_retrieval_scored",
                 "recall@1", "recall@2", "recall@5", "recall@10", "fcr@2", "fcr@5", "fcr@10",
                 "em", "f1", "jsr@5", "jsr_contain@5", "accuracy", "latency_ms_p50", "latency_ms_p95"]
# What the printed markdown table shows (the csv/parquet keep everything).
SUMMARY_COLUMNS = ["dataset", "retriever", "reader", "n_questions", "n_retrieval_scored", "recall@2",
                   "recall@5", "fcr@5", "em", "f1", "jsr@5", "latency_ms_p50", "config_hash"]


def collect(runs_dir: str | Path) -> pd.DataFrame:
    """One row per complete run; incomplete runs (no metrics.json) are left out."""
    rows = []
    for metrics_path in sorted(Path(runs_dir).glob("*/*/*/metrics.json")):
        try:
            m = json.loads(metrics_path.read_text())
        except json.JSONDecodeError as exc:
            log.warning("skipping %s: %s", metrics_path, exc)
            continue
        m.setdefault("config_hash", metrics_path.parent.name)
        m["run_dir"] = str(metrics_path.parent)
        rows.append(m)
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    for col in TABLE_COLUMNS:
        if col not in df:
            df[col] = None
    rest = [c for c in df.columns if c not in TABLE_COLUMNS]
    df = df[TABLE_COLUMNS + rest]
    return df.sort_values(["dataset", "retriever", "reader", "config_hash"]).reset_index(drop=True)


def to_markdown(df: pd.DataFrame, columns: list[str] = SUMMARY_COLUMNS) -> str:
    if df.empty:
        return "_no complete runs yet_\n"
    view = df[[c for c in columns if c in df]].copy()
    for col in view.columns:
        if col.startswith(("recall", "fcr", "jsr")) or col in ("em", "f1", "accuracy"):
            view[col] = view[col].map(lambda v: "–" if v is None or pd.isna(v) else f"{100 * v:.1f}")
        elif col.startswith("latency"):
            view[col] = view[col].map(lambda v: "–" if v is None or pd.isna(v) else f"{v:.2f}")
    return view.to_markdown(index=False, disable_numparse=True) + "\n"


def write_results(df: pd.DataFrame, results_dir: str | Path) -> list[Path]:
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    out = results_dir / "leaderboard"
    flat = df.copy()
    for col in flat.columns:  # nested values (lists, dicts) do not fit parquet/csv columns
        if flat[col].map(lambda v: isinstance(v, (dict, list))).any():
            flat[col] = flat[col].map(lambda v: json.dumps(v) if isinstance(v, (dict, list)) else v)
    with atomic_path(out.with_suffix(".parquet"), suffix=".parquet") as tmp:
        flat.to_parquet(tmp, index=False)
    with atomic_path(out.with_suffix(".csv")) as tmp:
        flat.to_csv(tmp, index=False)
    header = ("# hopbench leaderboard\n\nPercentages; latency in ms per question (retrieval only). "
              "Numbers on the bundled subsets are subset numbers.\n\n")
    write_text(out.with_suffix(".md"), header + to_markdown(df))
    return [out.with_suffix(s) for s in (".parquet", ".csv", ".md")]


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hopbench report",
                                     description="Collect complete runs into results/leaderboard.{parquet,csv,md}.")
    parser.add_argument("--runs-dir", default="runs", help="where runs live (default: runs)")
    parser.add_argument("--results-dir", default="results", help="where tables go (default: results)")
    parser.add_argument("--dataset", help="only this dataset")
    args = parser.parse_args(argv)
    df = collect(args.runs_dir)
    if args.dataset:
        df = df[df["dataset"] == args.dataset]
    paths = write_results(df, args.results_dir)
    print(to_markdown(df))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0
