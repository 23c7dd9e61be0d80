"""The papers' published numbers (docs/published.md) next to hopbench's own rows.

The published rows come from different LLMs, embedders and (mostly 1,000-question) splits,
so they are a sanity reference, not a target: the view labels every row with its source,
models and split size, and hopbench rows with theirs.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd

from hopbench.core.atomic import atomic_path, write_text
from hopbench.report.markdown import DASH, _table

PUBLISHED_COLUMNS = [
    "method",
    "hopbench_retriever",
    "dataset",
    "metric",
    "value",
    "source",
    "models",
    "split_size",
    "notes",
]
DATASET_ORDER = ["musique", "2wikimultihopqa", "hotpotqa", "hover"]


def load_published() -> pd.DataFrame:
    """The bundled table (src/hopbench/report/published.csv), values in percent."""
    with resources.files("hopbench.report").joinpath("published.csv").open(encoding="utf-8") as fh:
        df = pd.read_csv(fh, keep_default_na=False, na_values=[""])
    missing = [c for c in PUBLISHED_COLUMNS if c not in df]
    if missing:
        raise ValueError(f"published.csv lacks columns {missing}")
    return df


def write_published(results_dir: str | Path) -> Path:
    path = Path(results_dir) / "published.csv"
    with atomic_path(path) as tmp:
        load_published().to_csv(tmp, index=False)
    return path


def base_dataset(name: str) -> str:
    """'musique_sub' compares with the published 'musique' numbers (on a different split)."""
    for d in DATASET_ORDER:
        if name == d or name.startswith(d + "_"):
            return d
    return name


def side_by_side(published: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """Long table: dataset, metric, origin (paper | hopbench), method, value (%), models, split."""
    rows = [
        {
            "dataset": r["dataset"],
            "metric": r["metric"],
            "origin": "paper",
            "method": r["method"],
            "hopbench_retriever": r["hopbench_retriever"]
            if isinstance(r["hopbench_retriever"], str)
            else "",
            "value": float(r["value"]),
            "models": r["models"],
            "split": f"{int(r['split_size'])} questions",
            "source": r["source"],
        }
        for _, r in published.iterrows()
    ]
    metrics = published["metric"].unique()
    for _, r in ours.iterrows():
        for metric in metrics:
            v = r.get(metric)
            if v is None or pd.isna(v):
                continue
            reader = f" + reader {r['reader']}" if r["reader"] != "none" else ""
            diff = (
                r.get("params_diff") if isinstance(r.get("params_diff"), str) else r.get("params")
            )
            params = f" [{diff}]" if diff else ""
            rows.append(
                {
                    "dataset": base_dataset(r["dataset"]),
                    "metric": metric,
                    "origin": "hopbench",
                    "method": f"{r['retriever']}{reader}{params}",
                    "hopbench_retriever": r["retriever"],
                    "value": 100 * float(v),
                    "models": r.get("models", DASH),
                    "split": f"{int(r['n_questions'])} questions of {r['dataset']}",
                    "source": f"runs/{r['dataset']}/{r['retriever']}/{r['config_hash']}",
                }
            )
    return pd.DataFrame(rows)


def published_markdown(table: pd.DataFrame) -> str:
    head = (
        "# Published numbers next to hopbench's\n\n"
        "**Not comparable as-is.** Each paper used its own LLM, embedding model and split "
        "(mostly the 1,000-question HippoRAG splits); hopbench rows use the models and the "
        "questions named in their row. Compare *differences* to each paper's own baseline "
        "(its dense or HippoRAG 2 row), not absolute values. Values in percent; the full "
        "table is `published.csv`.\n\n"
    )
    if table.empty or not (table["origin"] == "hopbench").any():
        return head + "_no hopbench runs yet: only published.csv_\n"
    ours = table[table["origin"] == "hopbench"]
    out = [head]
    order = {d: i for i, d in enumerate(DATASET_ORDER)}
    paper = set(
        table.loc[table["origin"] == "paper", ["dataset", "metric"]].itertuples(index=False)
    )
    keys = sorted(
        (
            k
            for k in ours[["dataset", "metric"]].drop_duplicates().itertuples(index=False)
            if tuple(k) in paper
        ),
        key=lambda k: (order.get(k[0], 99), k[0], k[1]),
    )
    for dataset, metric in keys:
        part = table[(table["dataset"] == dataset) & (table["metric"] == metric)]
        part = part.sort_values(["origin", "source", "value"], ascending=[False, True, False])
        rows = [
            {
                "origin": r["origin"],
                "method": r["method"],
                "hopbench method": r["hopbench_retriever"] or DASH,
                "value": f"{r['value']:.1f}",
                "models": r["models"],
                "split": r["split"],
                "source": r["source"],
            }
            for _, r in part.iterrows()
        ]
        out.append(
            f"## {dataset} — {metric}\n\n"
            + _table(
                rows, ["origin", "method", "hopbench method", "value", "models", "split", "source"]
            )
            + "\n"
        )
    return "".join(out)


def write_published_vs_ours(ours: pd.DataFrame, results_dir: str | Path) -> Path:
    path = Path(results_dir) / "published_vs_ours.md"
    write_text(path, published_markdown(side_by_side(load_published(), ours)))
    return path
