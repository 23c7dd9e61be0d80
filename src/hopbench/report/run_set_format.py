"""The layout of a published run set (issue #57): what `hopbench export` writes and `hopbench
import` reads back, named once so the two cannot drift apart.

A run set is a Hugging Face `datasets` dataset on disk, in one folder that serves both readers:

    <out>/dataset_dict.json, <table>/...       `datasets.load_from_disk(out)` (a DatasetDict)
    <out>/data/<table>-00000-of-00001.parquet  `datasets.load_dataset("parquet", data_files=...)`
    <out>/README.md                            the dataset card; its YAML header names the parquet
                                               files per table, so `load_dataset(out, "runs")`
                                               works too (as for a set on the Hub)

The tables have different columns, so they are separate splits (load_from_disk) and separate
configs (parquet), never one frame:

    runs          one row per run: its metrics.json and config.yaml as written, their digests,
                  its protocol card (when metrics.json records one)
    predictions   one row per question per run: the predictions.jsonl line as written, and its
                  id, question, answer, rankings, scores and trace as columns to read
    leaderboard   the leaderboard of these runs, as `hopbench report` computes it

Files are carried as their exact text with a SHA-256 each, so an import rebuilds them byte for
byte and refuses a set whose text no longer matches its digests.
"""

from __future__ import annotations

import hashlib

from hopbench.core.protocol_card import CARD_KEY

FORMAT_NAME = "hopbench-run-set"
FORMAT_VERSION = 1
TABLES = ("runs", "predictions", "leaderboard")
DATA_FOLDER = "data"
CARD_FILE = "README.md"
# what metrics.json calls the run's protocol card (issue #57); absent in older runs
CARD_KEYS = (CARD_KEY,)

RUN_COLUMNS = (
    "dataset",
    "retriever",
    "reader",
    "config_hash",
    "n_lines",
    "metrics_json",
    "metrics_sha256",
    "config_yaml",
    "config_sha256",
    "predictions_sha256",
    "card_json",
)
PREDICTION_COLUMNS = ("config_hash", "line", "id", "record")


def parquet_name(table: str) -> str:
    """The one parquet shard of a table, under DATA_FOLDER (the Hub's naming)."""
    return f"{table}-00000-of-00001.parquet"


def sha256_text(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def predictions_text(lines: list[str]) -> str:
    """predictions.jsonl as an import writes it: the lines in order, each ending in a newline."""
    return "".join(line + "\n" for line in lines)


def card_of(metrics: dict):
    """The protocol card a run's metrics.json records, or None."""
    return next((metrics[k] for k in CARD_KEYS if metrics.get(k) is not None), None)
