"""Read finished run folders (`runs/<dataset>/<retriever>/<hash>/`) into memory for the report.

A run is complete when metrics.json exists (written last, atomically). Per-question scores
come from predictions.jsonl, because confidence intervals and paired tests need them. What the
report says about a run's method (its graph, its settings that differ from the defaults, its
family) is what the run recorded in metrics.json (`graph`, `method`: hopbench.harness.method_info); a
run written before it recorded them is upgraded by `hopbench migrate` (hopbench.harness.run_migration).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from hopbench.core.errors import DataError
from hopbench.core.param_values import diff_label, flat_params, params_label  # noqa: F401
from hopbench.core.records import LLM_CACHED_SECONDS, BadLine, read_rows
from hopbench.core.run_folders import run_folders
from hopbench.evaluate.metric_registry import backfilled
from hopbench.report.run_check import check_run
from hopbench.report.run_corpus import register_run_corpus

log = logging.getLogger(__name__)

_WARNED: set[Path] = set()  # runs whose missing `method` record was reported
DENSE_ONLY = {"dense", "oracle"}  # retrievers that read no knowledge graph
DEFAULT_GRAPH = "spacy"
UNKNOWN_GRAPH = "?"  # a run from before metrics.json recorded its graph

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
        return flat_params({k: v for k, v in r.items() if k not in _RETRIEVER_SKIP})

    @property
    def family(self) -> str:
        """The method family the run recorded (one colour in the figures), else its name."""
        return (self.metrics.get("method") or {}).get("family") or self.retriever

    @property
    def graph(self) -> str | None:
        """The knowledge graph a graph retriever read (`graph.extractor`: spacy, openie, llm, with
        `/hipporag2` when `graph.construction` is not hopbench's), None for retrievers that read
        none, as metrics.json records it ("?" for a graph retriever's run from before it did:
        `hopbench migrate` fills it in)."""
        if "graph" in self.metrics:
            return self.metrics["graph"]
        return None if self.retriever in DENSE_ONLY else UNKNOWN_GRAPH

    @property
    def params_diff(self) -> dict:
        """The hyper-parameters that differ from the method's defaults (`params_diff`), and the
        graph when it is not the default spaCy one (two runs that differ only by graph). A run
        from before metrics.json recorded its `method` shows every setting."""
        diff = self.method_params_diff
        if self.graph not in (None, DEFAULT_GRAPH, UNKNOWN_GRAPH):
            diff = {"graph": self.graph, **diff}
        return diff

    @property
    def method_params_diff(self) -> dict:
        """The settings that differ from the method's defaults, as the run recorded them."""
        recorded = (self.metrics.get("method") or {}).get("params_diff")
        if recorded is None:
            if self.dir not in _WARNED:
                _WARNED.add(self.dir)
                log.warning(
                    "%s: written before runs recorded their method's defaults; every setting "
                    "is shown (`hopbench migrate --runs-dir ...` upgrades it)",
                    self.dir,
                )
            return dict(self.params)
        return dict(recorded)

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
        return {
            p["id"]: float(p["metrics"][metric]) for p in self.predictions if metric in p["metrics"]
        }

    def latencies(self) -> np.ndarray:
        """Retrieval latency per question as first computed: a row whose LLM replies came from
        the response cache measured cache lookups, so the seconds those replies cost when they
        were made (its retrieval `llm_cost`'s `llm_cached_seconds`) are added back."""
        return np.array(
            [
                p["latency_ms"] + 1000 * cached_seconds(p)
                for p in self.predictions
                if p.get("latency_ms") is not None
            ],
            dtype=float,
        )


def cached_seconds(row: dict) -> float:
    """The retrieval LLM seconds a row got from the cache (0 without an LLM or a cost record)."""
    cost = (row.get("trace") or {}).get("llm_cost") or {}
    v = cost.get(LLM_CACHED_SECONDS, 0)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def read_predictions(path: Path) -> list[dict]:
    """Rows of predictions.jsonl (`hopbench.core.records.read_rows`, strictly: a bad line is an
    error here, not a question to recompute), checked for the fields the report needs."""

    def check(i: int, row: dict) -> None:
        metrics = row.get("metrics")
        if not isinstance(metrics, dict):
            raise DataError(
                path, f"line {i} (id {row['id']})", "metrics", "missing or not an object"
            )
        for k, v in metrics.items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise DataError(
                    path,
                    f"line {i} (id {row['id']})",
                    f"metrics.{k}",
                    f"expected a number, got {v!r}",
                )

    try:
        rows, _, dupes = read_rows(path, strict=True, check=check)
    except BadLine as exc:
        raise DataError(path, f"line {exc.line}", exc.field, exc.problem) from exc
    if dupes:  # a doubled row (two processes raced before runs were locked)
        log.warning(
            "%s: %d duplicate question id(s) ignored (the first row of each is kept)", path, dupes
        )
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
    predictions = read_predictions(pred_path)
    register_run_corpus(config)  # R@Nt needs its passages' token counts
    for (
        p
    ) in predictions:  # metrics declared since the run was written, from its rankings and answers
        p["metrics"] = backfilled(p)
    return Run(dir=run_dir, metrics=metrics, config=config, predictions=predictions)


def load_runs(runs_dir: str | Path) -> list[Run]:
    """Every complete run under runs_dir, sorted by dataset, retriever, reader, hash."""
    runs = []
    for folder in run_folders(runs_dir):  # inside runs_dir, named by their hash, each once
        run = load_run(folder)
        if not run.predictions:
            log.warning("%s: complete but without predictions; left out of the report", folder)
            continue
        check_run(run.dir, run.metrics, run.predictions)  # rows that disagree: refused
        runs.append(run)
    return sorted(runs, key=lambda r: (r.dataset, r.retriever, r.reader, r.config_hash))
