"""`hopbench export`: runs published as a Hugging Face `datasets` dataset (issue #57).

Other harnesses (Rankify, GFM-RAG, PropRAG) publish pre-retrieved results as datasets; this
writes a run set in that form (layout: hopbench.report.run_set_format), so a reader loads it
with `datasets` alone and `hopbench import` turns it back into run folders. Only complete runs
that pass the report's checks are exported: what is published is what the report would read.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import yaml

from hopbench.core.errors import HopbenchError
from hopbench.report.collect import _flat
from hopbench.report.leaderboard import finish_table, leaderboard
from hopbench.report.run_reader import Run, load_runs
from hopbench.report.run_set_format import (
    CARD_FILE,
    DATA_FOLDER,
    FORMAT_NAME,
    FORMAT_VERSION,
    TABLES,
    card_of,
    parquet_name,
    predictions_text,
    sha256_text,
)
from hopbench.report.stats import DEFAULT_RESAMPLES

SUMMARY_METRICS = ("recall@5", "fcr@5", "em", "f1")


def select_runs(runs: list[Run], dataset_names=(), retrievers=(), hashes=()) -> list[Run]:
    """The runs a filter keeps (an empty filter keeps all)."""
    return [
        r
        for r in runs
        if (not dataset_names or r.dataset in dataset_names)
        and (not retrievers or r.retriever in retrievers)
        and (not hashes or r.config_hash in hashes)
    ]


def prediction_lines(run: Run) -> list[str]:
    """The lines of a run's predictions.jsonl as written (blank lines dropped)."""
    text = (run.dir / "predictions.jsonl").read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line.strip()]


def run_record(run: Run, lines: list[str]) -> dict:
    """The `runs` row of one run: its files' text and digests, and its card."""
    metrics_text = (run.dir / "metrics.json").read_text(encoding="utf-8")
    config_path = run.dir / "config.yaml"
    config_text = config_path.read_text(encoding="utf-8") if config_path.exists() else None
    card = card_of(run.metrics)
    return {
        "dataset": run.dataset,
        "retriever": run.retriever,
        "reader": run.reader,
        "config_hash": run.config_hash,
        "n_lines": len(lines),
        "metrics_json": metrics_text,
        "metrics_sha256": sha256_text(metrics_text),
        "config_yaml": config_text,
        "config_sha256": None if config_text is None else sha256_text(config_text),
        "predictions_sha256": sha256_text(predictions_text(lines)),
        "card_json": None if card is None else json.dumps(card, sort_keys=True),
    }


def _text(value) -> str | None:
    """A value as a string column holds it (a non-string answer, e.g. a label, as JSON)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def prediction_record(run: Run, number: int, line: str) -> dict:
    """One `predictions` row: the line as written, and its parts as columns to read."""
    row = json.loads(line)
    return {
        "config_hash": run.config_hash,
        "dataset": run.dataset,
        "retriever": run.retriever,
        "line": number,
        "id": str(row.get("id")),
        "question": _text(row.get("question")),
        "answer": _text(row.get("answer")),
        "gold_answers": [str(a) for a in row.get("gold_answers") or []],
        "gold_passage_ids": [str(p) for p in row.get("gold_passage_ids") or []],
        "ranked_passage_ids": [str(p) for p in row.get("ranked_passage_ids") or []],
        "scores": [float(s) for s in row.get("scores") or []],
        "latency_ms": row.get("latency_ms"),
        "metrics_json": json.dumps(row.get("metrics") or {}, sort_keys=True),
        "trace_json": json.dumps(row.get("trace") or {}, sort_keys=True),
        "record": line,
    }


def _features():
    """Explicit column types, so an empty or all-null column keeps its type across sets."""
    from datasets import Features, Sequence, Value

    s, i, f = Value("string"), Value("int64"), Value("float64")
    runs = dict.fromkeys(
        ["dataset", "retriever", "reader", "config_hash", "metrics_json", "metrics_sha256"], s
    )
    runs.update(n_lines=i, config_yaml=s, config_sha256=s, predictions_sha256=s, card_json=s)
    preds = {
        "config_hash": s,
        "dataset": s,
        "retriever": s,
        "line": i,
        "id": s,
        "question": s,
        "answer": s,
        "gold_answers": Sequence(s),
        "gold_passage_ids": Sequence(s),
        "ranked_passage_ids": Sequence(s),
        "scores": Sequence(f),
        "latency_ms": f,
        "metrics_json": s,
        "trace_json": s,
        "record": s,
    }
    return Features(runs), Features(preds)


def build_tables(
    runs: list[Run], baseline: str = "dense", n_resamples: int = DEFAULT_RESAMPLES
) -> dict:
    """The three tables of a run set as `datasets.Dataset`s."""
    from datasets import Dataset

    run_rows, pred_rows = [], []
    for run in runs:
        lines = prediction_lines(run)
        run_rows.append(run_record(run, lines))
        pred_rows += [prediction_record(run, i, line) for i, line in enumerate(lines)]
    run_features, pred_features = _features()
    board = _flat(finish_table(leaderboard(runs, baseline=baseline, n_resamples=n_resamples)))
    return {
        "runs": Dataset.from_list(run_rows, features=run_features),
        "predictions": Dataset.from_list(pred_rows, features=pred_features),
        "leaderboard": Dataset.from_pandas(board, preserve_index=False),
    }


def dataset_card(tables: dict, board: pd.DataFrame, baseline: str) -> str:
    """README.md of the set: a YAML header (the parquet files per table, the format) and a
    short description with the leaderboard's headline numbers."""
    header = {
        "pretty_name": "hopbench run set",
        "tags": ["hopbench", "retrieval", "multi-hop-qa", "graph-rag"],
        "configs": [
            {
                "config_name": t,
                "data_files": [{"split": "train", "path": f"{DATA_FOLDER}/{t}-*.parquet"}],
            }
            for t in TABLES
        ],
        "hopbench_run_set": {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "runs": tables["runs"].num_rows,
            "predictions": tables["predictions"].num_rows,
            "baseline": baseline,
        },
    }
    cols = ["dataset", "retriever", "reader", "config_hash", "n_questions"]
    cols += [m for m in SUMMARY_METRICS if m in board and board[m].notna().any()]
    summary = board[cols].to_markdown(index=False, floatfmt=".4f") if len(board) else "(no runs)"
    body = f"""# hopbench run set

{tables["runs"].num_rows} run(s) of hopbench (graph-RAG retrievers on one shared knowledge
graph), with every question's prediction and trace. Tables: `runs` (each run's metrics.json and
config.yaml as written, with SHA-256 digests and its protocol card when it records one),
`predictions` (one row per question per run; `record` is the predictions.jsonl line as
written), `leaderboard` (as `hopbench report` computes it; paired tests against `{baseline}`).

{summary}

Read it with `datasets.load_from_disk(<folder>)` (all three tables as splits), or one table
with `datasets.load_dataset("parquet", data_files="<folder>/{DATA_FOLDER}/runs-*.parquet")`.
`hopbench import <folder>` writes the runs back into a runs folder for `hopbench report`.
"""
    return "---\n" + yaml.safe_dump(header, sort_keys=False) + "---\n\n" + body


def export_run_set(
    runs_dir,
    out,
    *,
    dataset_names=(),
    retrievers=(),
    hashes=(),
    baseline: str = "dense",
    n_resamples: int = DEFAULT_RESAMPLES,
) -> tuple[Path, int]:
    """Write the selected complete runs under runs_dir as a run set at `out` (which must not
    exist; written beside it, then renamed into place). Returns (out, number of runs)."""
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()
    out = Path(out)
    if out.exists():
        raise HopbenchError(f"{out} exists: export writes a new folder, it never overwrites one")
    runs = select_runs(load_runs(runs_dir), dataset_names, retrievers, hashes)
    if not runs:
        raise HopbenchError(f"no complete runs under {runs_dir} match the selection")
    tables = build_tables(runs, baseline, n_resamples)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        from datasets import DatasetDict

        DatasetDict(tables).save_to_disk(str(staging))
        (staging / DATA_FOLDER).mkdir()
        for name, table in tables.items():
            table.to_parquet(str(staging / DATA_FOLDER / parquet_name(name)))
        board = tables["leaderboard"].to_pandas()
        (staging / CARD_FILE).write_text(dataset_card(tables, board, baseline), encoding="utf-8")
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out, len(runs)
