"""Read finished run folders (`runs/<dataset>/<retriever>/<hash>/`) into memory for the report.

A run is complete when metrics.json exists (written last, atomically). Per-question scores
come from predictions.jsonl, because confidence intervals and paired tests need them.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from hopbench.errors import DataError

log = logging.getLogger(__name__)

# The per-question metric keys the report knows, in display order.
METRICS = ["recall@1", "recall@2", "recall@5", "recall@10", "fcr@2", "fcr@5", "fcr@10",
           "em", "f1", "jsr@5", "jsr_contain@5", "accuracy"]
# Config keys that say where things live, not what was computed: never shown as "params".
_RETRIEVER_SKIP = {"name", "_target_"}


@dataclass
class Run:
    dir: Path
    metrics: dict
    config: dict
    predictions: list[dict] = field(repr=False)

    @property
    def dataset(self) -> str:
        return self.metrics.get("dataset") or self.dir.parent.parent.name

    @property
    def retriever(self) -> str:
        return self.metrics.get("retriever") or self.dir.parent.name

    @property
    def reader(self) -> str:
        return self.metrics.get("reader") or "none"

    @property
    def config_hash(self) -> str:
        return self.metrics.get("config_hash") or self.dir.name

    @property
    def params(self) -> dict:
        """The retriever's hyper-parameters from config.yaml (what distinguishes two configs)."""
        r = self.config.get("retriever") or {}
        return {k: v for k, v in r.items() if k not in _RETRIEVER_SKIP}

    @property
    def limit(self):
        return (self.config.get("dataset") or {}).get("limit")

    @property
    def models(self) -> str:
        """'all-MiniLM-L6-v2; LLM qwen...' — which models produced the numbers."""
        emb = (self.config.get("embedding") or {}).get("model") or "?"
        llm = self.config.get("llm") or {}
        if llm.get("name", "none") == "none":
            return f"embedding {emb}; no LLM"
        return f"embedding {emb}; LLM {llm.get('model') or llm.get('name')}"

    def scores(self, metric: str) -> dict[str, float]:
        """question id -> score, for the questions where the metric applies."""
        return {p["id"]: float(p["metrics"][metric]) for p in self.predictions if metric in p["metrics"]}

    def latencies(self) -> np.ndarray:
        return np.array([p["latency_ms"] for p in self.predictions if p.get("latency_ms") is not None],
                        dtype=float)


def read_predictions(path: Path) -> list[dict]:
    """Rows of predictions.jsonl, checked for the fields the report needs."""
    rows, seen, dupes = [], set(), 0
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(path, f"line {i}", None, f"not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise DataError(path, f"line {i}", None, "expected a JSON object")
            if "id" not in row:
                raise DataError(path, f"line {i}", "id", "missing")
            metrics = row.get("metrics")
            if not isinstance(metrics, dict):
                raise DataError(path, f"line {i} (id {row['id']})", "metrics", "missing or not an object")
            for k, v in metrics.items():
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise DataError(path, f"line {i} (id {row['id']})", f"metrics.{k}",
                                    f"expected a number, got {v!r}")
            if row["id"] in seen:  # a doubled row (two processes raced before runs were locked)
                dupes += 1
                continue
            seen.add(row["id"])
            rows.append(row)
    if dupes:
        log.warning("%s: %d duplicate question id(s) ignored (the first row of each is kept)", path, dupes)
    return rows


def load_run(run_dir: str | Path) -> Run:
    run_dir = Path(run_dir)
    metrics_path = run_dir / "metrics.json"
    try:
        metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(metrics_path, "file", None, f"not valid JSON ({exc.msg})") from exc
    config_path = run_dir / "config.yaml"
    config = {}
    if config_path.exists():
        config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    pred_path = run_dir / "predictions.jsonl"
    if not pred_path.exists():
        raise DataError(pred_path, "file", None, "missing: a complete run needs its predictions")
    return Run(dir=run_dir, metrics=metrics, config=config, predictions=read_predictions(pred_path))


def load_runs(runs_dir: str | Path) -> list[Run]:
    """Every complete run under runs_dir, sorted by dataset, retriever, reader, hash."""
    runs = []
    for p in sorted(Path(runs_dir).glob("*/*/*/metrics.json")):
        if any(part.startswith(".") for part in p.relative_to(runs_dir).parts):
            continue  # staging and lock siblings (.<hash>.rerun/), Hydra's .hydra/
        run = load_run(p.parent)
        if not run.predictions:
            log.warning("%s: complete but without predictions; left out of the report", p.parent)
            continue
        runs.append(run)
    return sorted(runs, key=lambda r: (r.dataset, r.retriever, r.reader, r.config_hash))


def params_label(params: dict) -> str:
    """'decay=0.5 depth=2' — short, sorted, for tables and legends."""
    def fmt(v):
        if isinstance(v, (dict, list)):
            return json.dumps(v, sort_keys=True, separators=(",", ":"))
        return str(v)
    return " ".join(f"{k}={fmt(v)}" for k, v in sorted(params.items()))
