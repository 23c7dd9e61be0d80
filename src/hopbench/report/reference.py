"""The project's reference results: committed in results/reference/, never overwritten by a user's run.

`hopbench report` writes the user's own runs into the results folder (default `results/`,
or `HOPBENCH_RESULTS_DIR`) and shows the reference rows of the same datasets beside them,
marked `reference`; it refuses to write into the reference folder. The reference changes only
through `hopbench report --update-reference`, which merges the runs it finds into it: a row
whose run (dataset, method, config hash) is among them is replaced, every other row is kept,
so results computed on earlier machines are never lost because their run folders are gone.
A row that the current code no longer computes (a method changed since) leaves only when named:
`--retire <config hash>` drops it in the same update, and the update says so.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from hopbench.core.errors import HopbenchError

RUN_KEY = ["dataset", "retriever", "config_hash"]


def check_not_reference(results_dir: str | Path, reference_dir: str | Path) -> None:
    if Path(results_dir).resolve() == Path(reference_dir).resolve():
        raise HopbenchError(
            f"{results_dir} holds the committed reference results; write your report "
            "elsewhere (--results-dir) or merge your runs into it with --update-reference"
        )


def load_table(folder: str | Path, stem: str) -> pd.DataFrame:
    """A table written by `write_table` (parquet), or an empty frame when there is none."""
    path = Path(folder) / f"{stem}.parquet"
    return pd.read_parquet(path) if path.exists() else pd.DataFrame()


def concat_rows(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """pd.concat of result tables whose columns differ (a column all empty in one of them takes its
    dtype from the others, as pandas does today and promises to stop doing)."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="The behavior of DataFrame concatenation", category=FutureWarning
        )
        return pd.concat(frames, ignore_index=True)


SETTINGS_KEY = [
    "dataset",
    "retriever",
    "reader",
    "n_questions",
    "models",
]  # limit=100 of 100 is all


def _keys(df: pd.DataFrame, params: list[str]) -> tuple[list[tuple], list[tuple]]:
    """(run keys, settings keys) of each row: the settings key is what the run computed with
    (method, reader, questions scored, models and every hyper-parameter), whatever its hash."""

    def one(v) -> str:
        if v is None or (not isinstance(v, (str, list, dict)) and pd.isna(v)):
            return ""
        if (
            isinstance(v, float) and v.is_integer()
        ):  # 2 and 2.0 (a parquet round trip) are one value
            return str(int(v))
        return str(v)

    def norm(frame: pd.DataFrame, cols: list[str]) -> list[tuple]:
        part = frame.reindex(columns=cols).astype(object)
        return [tuple(one(v) for v in row) for row in part.to_numpy()]

    return norm(df, RUN_KEY), norm(df, SETTINGS_KEY + params)


def _graphs(frame: pd.DataFrame) -> list[str]:
    """Each row's graph label, "" where the row has none (legacy rows, or no `graph` column)."""
    col = frame["graph"] if "graph" in frame else [None] * len(frame)
    return ["" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v) for v in col]


def kept_reference(reference: pd.DataFrame, new: pd.DataFrame) -> list[bool]:
    """Per reference row: not superseded by any of `new`.

    A reference row is superseded by a new row of the same run (dataset, method, config hash)
    or of the same settings under another hash (a config key added since, with its default,
    changes every hash: the rerun replaces the stale row instead of standing beside it). Two
    runs of the same settings on different graphs (spaCy, OpenIE) are different rows: a row
    supersedes another only on the same graph, or when one of them predates the `graph`
    column (the legacy rows' graph is unknown)."""
    if reference.empty:
        return []
    if new.empty:
        return [True] * len(reference)
    params = sorted({c for c in [*reference.columns, *new.columns] if c.startswith("param.")})
    new_runs, new_settings = _keys(new, params)
    new_graphs: dict[tuple, set[str]] = {}
    for s, g in zip(new_settings, _graphs(new)):
        new_graphs.setdefault(s, set()).add(g)
    new_runs = set(new_runs)
    ref_runs, ref_settings = _keys(reference, params)

    def superseded(run, settings, graph) -> bool:
        if run in new_runs:
            return True
        graphs = new_graphs.get(settings)
        return bool(graphs) and (not graph or "" in graphs or graph in graphs)

    return [not superseded(r, s, g) for r, s, g in zip(ref_runs, ref_settings, _graphs(reference))]


def merge_rows(reference: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Reference rows superseded by none of `new` (`kept_reference`), then `new`; sorted by run key."""
    if reference.empty:
        return new.reset_index(drop=True)
    if new.empty:
        return reference.reset_index(drop=True)
    out = concat_rows([reference[kept_reference(reference, new)], new])
    return out.sort_values(
        [c for c in RUN_KEY + ["reader"] if c in out], kind="stable"
    ).reset_index(drop=True)


def merge_breakdown(
    reference_bd: pd.DataFrame, new_bd: pd.DataFrame, merged: pd.DataFrame, new: pd.DataFrame
) -> pd.DataFrame:
    """The breakdown rows of the reference runs the leaderboard merge kept, then the new runs'.

    A breakdown row has no settings of its own (no parameters, no graph): it follows its run's
    leaderboard row, so it stays exactly while that row is in `merged` and was not rerun (`new`)."""

    def hashes(frame: pd.DataFrame) -> set:
        return set(frame["config_hash"]) if "config_hash" in frame else set()

    keep = hashes(merged) - hashes(new)
    old = (
        reference_bd[reference_bd["config_hash"].isin(keep)]
        if not reference_bd.empty
        else reference_bd
    )
    if old.empty:
        return new_bd.reset_index(drop=True)
    if new_bd.empty:
        return old.reset_index(drop=True)
    return concat_rows([old, new_bd]).reset_index(drop=True)


def beside(reference: pd.DataFrame, datasets) -> pd.DataFrame:
    """The reference rows to show next to a user's runs: those of the datasets they ran (all of
    them when they ran none yet)."""
    if reference.empty:
        return reference
    datasets = set(datasets)
    return reference[reference["dataset"].isin(datasets)] if datasets else reference


def retire_rows(reference: pd.DataFrame, hashes: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows kept, rows retired): the reference rows whose config hash is in `hashes`. A hash that
    names no row is refused, so a typo never passes for a retired row."""
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return reference, reference.iloc[0:0]
    present = set(reference["config_hash"]) if "config_hash" in reference else set()
    missing = [h for h in wanted if h not in present]
    if missing:
        raise HopbenchError(f"--retire {missing[0]}: no reference row has this config hash")
    gone = reference["config_hash"].isin(wanted)
    return reference[~gone].reset_index(drop=True), reference[gone].reset_index(drop=True)
