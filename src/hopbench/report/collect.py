"""`hopbench report`: every complete run (one with metrics.json) becomes a row of the leaderboard.

Writes, under --results-dir (default results/):
  leaderboard.{parquet,csv,md}   one row per dataset x method x config; CIs; paired tests
  leaderboard_long.{parquet,csv} the same as one row per run x metric (leaderboard.long_table)
  paper_tables.md                per dataset, one paper-style table of the same rows (paper_tables)
  breakdown.{parquet,csv,md}     the same per hop count / question type
  sensitivity.csv                rows of methods with depth/decay (for sweeps)
  figures/*.{png,pdf}            recall@k curves, quality vs latency, parameter sensitivity
  published.csv, published_vs_ours.md   the papers' numbers next to ours (different models!)
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from hopbench.core.atomic import atomic_path, write_text
from hopbench.core.errors import HopbenchError
from hopbench.core.locks import exclusive
from hopbench.report.breakdown import breakdown, breakdown_markdown
from hopbench.report.claim_tests import update_claim_tests
from hopbench.report.leaderboard import choose_baseline, finish_table, leaderboard, long_table
from hopbench.report.markdown import LEADERBOARD_HEADER, leaderboard_markdown
from hopbench.report.paper_tables import PAPER_TABLES, write_paper_tables
from hopbench.report.reference import (
    beside,
    check_not_reference,
    concat_rows,
    load_table,
    merge_breakdown,
    merge_rows,
    retire_rows,
)
from hopbench.report.run_reader import load_runs
from hopbench.report.stats import DEFAULT_RESAMPLES

log = logging.getLogger(__name__)


def collect(
    runs_dir: str | Path,
    baseline: str = "dense",
    n_resamples: int = DEFAULT_RESAMPLES,
    dataset: str | None = None,
) -> pd.DataFrame:
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
        if isinstance(flat[col].dtype, pd.api.extensions.ExtensionDtype):
            continue  # nullable integers (Int64) and the like: pyarrow writes them as they are
        kinds = {
            type(v)
            for v in flat[col]
            if v is not None and not (isinstance(v, float) and pd.isna(v))
        }
        if len(kinds) > 1 and not kinds <= {int, float}:
            flat[col] = flat[col].map(
                lambda v: None if v is None or (isinstance(v, float) and pd.isna(v)) else str(v)
            )
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


def write_results(
    df: pd.DataFrame,
    results_dir: str | Path,
    baseline: str = "dense",
    reference: pd.DataFrame | None = None,
) -> list[Path]:
    """leaderboard.{parquet,csv,md} and leaderboard_long.{parquet,csv}: the runs' rows (with
    `source` = runs) and, when given, the reference rows beside them (`source` = reference);
    each of the two is its own table (its own Holm family, see leaderboard.finish_table)."""
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    stem = results_dir / "leaderboard"
    df = finish_table(df)
    table = df.assign(source="runs")
    if reference is not None and not reference.empty:
        reference = finish_table(reference)
        table = concat_rows([table, reference.assign(source="reference")])
    paths = write_table(table, stem)
    paths += write_table(long_table(table), results_dir / "leaderboard_long")
    text = LEADERBOARD_HEADER + leaderboard_markdown(df, baseline)
    if reference is not None and not reference.empty:
        text += (
            "\n## Reference results (committed, `results/reference/`)\n\n"
            "The project's own runs of the same datasets, for comparison; not recomputed here, "
            "and not paired with the runs above.\n\n" + leaderboard_markdown(reference, baseline)
        )
    write_text(stem.with_suffix(".md"), text)
    # the same finished frames as leaderboard.md: no statistic is computed twice
    paper = write_paper_tables(df, results_dir / PAPER_TABLES, baseline, reference)
    return paths + [stem.with_suffix(".md"), paper]


def write_everything(
    runs_dir,
    results_dir,
    baseline: str = "dense",
    n_resamples: int = DEFAULT_RESAMPLES,
    dataset: str | None = None,
    figures: bool = True,
    reference_dir=None,
    update_reference: bool = False,
    retire: list[str] | None = None,
) -> tuple[pd.DataFrame, list[Path]]:
    """Every result file of the runs under runs_dir, into results_dir.

    With `reference_dir`: the reference rows of the same datasets are shown beside the runs
    (results_dir must be another folder); with `update_reference`, the runs are merged into the
    reference instead and every file of the reference folder is rewritten from the merged rows;
    the reference rows whose config hash is in `retire` are dropped in the same step.
    """
    if retire and not update_reference:
        raise HopbenchError("--retire drops rows of the reference: use it with --update-reference")
    runs = load_runs(runs_dir)
    if dataset:
        runs = [r for r in runs if r.dataset == dataset]
    df = leaderboard(runs, baseline=baseline, n_resamples=n_resamples)
    bd = breakdown(runs, baseline=baseline, n_resamples=min(n_resamples, 2_000))
    if reference_dir is not None and update_reference:
        # read, merge and rewrite under one lock: two updates at once must not both merge into
        # the same old reference (the second writer would drop the first one's rows)
        with exclusive(
            results_lock_path(reference_dir), f"the reference results in {reference_dir}"
        ):
            warn_unpaired(runs, baseline, runs_dir)
            old, retired = retire_rows(load_table(reference_dir, "leaderboard"), retire or [])
            for row in retired.itertuples():
                log.warning(
                    "retired from the reference: %s / %s / %s (reader %s, n %s)",
                    row.dataset,
                    row.retriever,
                    row.config_hash,
                    row.reader,
                    row.n_questions,
                )
            merged = merge_rows(old, df)
            bd = merge_breakdown(load_table(reference_dir, "breakdown"), bd, merged, df)
            df = finish_table(merged)  # one table again
            paths = _write_all(df, bd, Path(reference_dir), baseline, None, figures)
            kept = update_claim_tests(reference_dir, df, runs, n_resamples)
            return df, paths + ([kept] if kept else [])
    reference = None
    if reference_dir is not None:
        check_not_reference(results_dir, reference_dir)
        reference = beside(load_table(reference_dir, "leaderboard"), df["dataset"].unique())
    with exclusive(results_lock_path(results_dir), f"the report in {results_dir}"):
        return df, _write_all(df, bd, Path(results_dir), baseline, reference, figures)


def warn_unpaired(runs, baseline: str, runs_dir) -> None:
    """A run is paired only with a baseline run read from the same runs dir; a reference row
    merged without one has no paired test, which the table shows only as dashes: say so."""
    for run in runs:
        if run.retriever != baseline and choose_baseline(run, runs, baseline) is None:
            log.warning(
                "%s / %s / %s: no %s run of %s in %s to pair with, so its reference row has no "
                "paired test (put the %s run folder beside it and update again)",
                run.dataset,
                run.retriever,
                run.config_hash,
                baseline,
                run.dataset,
                runs_dir,
                baseline,
            )


def results_lock_path(results_dir) -> Path:
    """The lock every report writing into `results_dir` holds; beside the folder, not in it
    (nothing untracked appears in the committed reference folder)."""
    results_dir = Path(results_dir).resolve()
    return results_dir.parent / f".{results_dir.name}.lock"


def remove_stale_temp_files(results_dir: Path) -> None:
    """Temporary files of a report that was killed while writing (`atomic_path` names them
    .<name>.<random>.tmp). Called under the folder's lock, so no live writer owns them."""
    for folder in (results_dir, results_dir / "figures"):
        for p in folder.glob(".*.tmp") if folder.is_dir() else ():
            if p.is_file():
                log.info("removing %s (left by a report that was killed)", p)
                p.unlink(missing_ok=True)


def _write_all(
    df: pd.DataFrame,
    bd: pd.DataFrame,
    results_dir: Path,
    baseline: str,
    reference: pd.DataFrame | None,
    figures: bool,
) -> list[Path]:
    from hopbench.report.plots import all_figures
    from hopbench.report.published import write_published, write_published_vs_ours
    from hopbench.report.sweeps import sensitivity_table

    remove_stale_temp_files(results_dir)
    paths = write_results(df, results_dir, baseline, reference)
    paths += write_table(bd, results_dir / "breakdown")
    write_text(results_dir / "breakdown.md", breakdown_markdown(bd, baseline))
    paths.append(results_dir / "breakdown.md")
    paths += write_table(sensitivity_table(df), results_dir / "sensitivity", formats=("csv",))
    paths.append(write_published(results_dir))
    paths.append(write_published_vs_ours(df, results_dir))
    if figures:
        paths += all_figures(df, results_dir / "figures")
    return paths
