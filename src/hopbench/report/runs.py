"""Read finished run folders (`runs/<dataset>/<retriever>/<hash>/`) into memory for the report.

A run is complete when metrics.json exists (written last, atomically). Per-question scores
come from predictions.jsonl, because confidence intervals and paired tests need them.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import logging
import math
import numbers
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from hopbench.errors import DataError
from hopbench.evaluate.metric_registry import backfilled
from hopbench.metrics_file import read_metrics
from hopbench.paths import RETRIEVER_CONFIGS  # a method's defaults are its YAML there
from hopbench.records import LLM_CACHED_SECONDS, BadLine, read_rows
from hopbench.report.legacy import current_name

log = logging.getLogger(__name__)

DENSE_ONLY = {"dense", "oracle"}   # retrievers that read no knowledge graph
DEFAULT_GRAPH = "spacy"

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
        """The method's name today (`legacy`: a pre-#15 ``hipporag`` run is ``hipporag_hb``)."""
        return current_name(self.metrics.get("retriever") or self.dir.parent.name, self._params)[0]

    @property
    def reader(self) -> str:
        return self.metrics.get("reader") or "none"

    @property
    def config_hash(self) -> str:
        return self.metrics.get("config_hash") or self.dir.name

    @property
    def _params(self) -> dict:
        r = self.config.get("retriever") or {}
        return {k: v for k, v in r.items() if k not in _RETRIEVER_SKIP}

    @property
    def params(self) -> dict:
        """The retriever's hyper-parameters from config.yaml (what distinguishes two configs)."""
        return current_name(self.metrics.get("retriever") or self.dir.parent.name, self._params)[1]

    @property
    def graph(self) -> str | None:
        """The knowledge graph a graph retriever read (`graph.extractor`: spacy, openie, llm, with
        `/hipporag2` when `graph.construction` is not hopbench's), None for retrievers that read
        none. metrics.json says so since it recorded it; for older runs the dense-only methods
        are known by name."""
        if "graph" in self.metrics:
            return self.metrics["graph"]
        if self.retriever in DENSE_ONLY:
            return None
        from hopbench.kg.settings import graph_label

        return graph_label(self.config.get("graph") or {})

    @property
    def params_diff(self) -> dict:
        """The hyper-parameters that differ from the method's defaults (`params_diff`), and the
        graph when it is not the default spaCy one (two runs that differ only by graph)."""
        diff = params_diff(self.params, self.retriever, self.config)
        if self.graph not in (None, DEFAULT_GRAPH):
            diff = {"graph": self.graph, **diff}
        return diff

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
        """Retrieval latency per question as first computed: a row whose LLM replies came from
        the response cache measured cache lookups, so the seconds those replies cost when they
        were made (its retrieval `llm_cost`'s `llm_cached_seconds`) are added back."""
        return np.array([p["latency_ms"] + 1000 * cached_seconds(p) for p in self.predictions
                         if p.get("latency_ms") is not None], dtype=float)


def cached_seconds(row: dict) -> float:
    """The retrieval LLM seconds a row got from the cache (0 without an LLM or a cost record)."""
    cost = (row.get("trace") or {}).get("llm_cost") or {}
    v = cost.get(LLM_CACHED_SECONDS, 0)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def read_predictions(path: Path) -> list[dict]:
    """Rows of predictions.jsonl (`hopbench.records.read_rows`, strictly: a bad line is an
    error here, not a question to recompute), checked for the fields the report needs."""
    def check(i: int, row: dict) -> None:
        metrics = row.get("metrics")
        if not isinstance(metrics, dict):
            raise DataError(path, f"line {i} (id {row['id']})", "metrics", "missing or not an object")
        for k, v in metrics.items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise DataError(path, f"line {i} (id {row['id']})", f"metrics.{k}",
                                f"expected a number, got {v!r}")

    try:
        rows, _, dupes = read_rows(path, strict=True, check=check)
    except BadLine as exc:
        raise DataError(path, f"line {exc.line}", exc.field, exc.problem) from exc
    if dupes:  # a doubled row (two processes raced before runs were locked)
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
    predictions = read_predictions(pred_path)
    for p in predictions:  # metrics declared since the run was written, from its rankings and answers
        p["metrics"] = backfilled(p)
    return Run(dir=run_dir, metrics=metrics, config=config, predictions=predictions)


def load_runs(runs_dir: str | Path) -> list[Run]:
    """Every complete run under runs_dir, sorted by dataset, retriever, reader, hash."""
    runs = []
    for p in sorted(Path(runs_dir).glob("*/*/*/metrics.json")):
        if any(part.startswith(".") for part in p.relative_to(runs_dir).parts):
            continue  # staging and lock siblings (.<hash>.rerun/), Hydra's .hydra/
        if read_metrics(p) is None:  # empty or cut short: incomplete, warned; a relaunch redoes it
            log.warning("%s: left out of the report until the run is finished again", p.parent)
            continue
        run = load_run(p.parent)
        if not run.predictions:
            log.warning("%s: complete but without predictions; left out of the report", p.parent)
            continue
        runs.append(run)
    return sorted(runs, key=lambda r: (r.dataset, r.retriever, r.reader, r.config_hash))


def _fmt_value(v) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return str(v)


def params_label(params: dict) -> str:
    """'decay=0.5 depth=2' — every parameter, sorted (the csv's `params`; see `diff_label`)."""
    return " ".join(f"{k}={_fmt_value(v)}" for k, v in sorted(params.items()))


# ---- a method's defaults, and the parameters of a run that differ from them ----------------
_INTERPOLATION = re.compile(r"^\$\{([A-Za-z0-9_.]+)\}$")


def _read_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def _merged_yaml(name: str, config_dir: Path, seen: tuple[str, ...] = ()) -> dict | None:
    """configs/retriever/<name>.yaml with the files of its `defaults:` list merged under it, in
    the list's order (`_self_` where listed, else last: Hydra's rule); None when there is no file."""
    path = config_dir / f"{name}.yaml"
    if name in seen or not path.is_file():
        return None
    own = _read_yaml(path)
    entries = own.pop("defaults", None) or []
    if "_self_" not in entries:
        entries = [*entries, "_self_"]
    out: dict = {}
    for entry in entries:
        if entry == "_self_":
            out.update(own)
        elif isinstance(entry, str) and entry.startswith("schema/"):
            out.update(_schema_settings(entry.split("@", 1)[0].split("/", 1)[1]))
        elif isinstance(entry, str):
            out.update(_merged_yaml(entry.rsplit("/", 1)[-1], config_dir, (*seen, name)) or {})
    return out


@functools.lru_cache(maxsize=None)
def _schema_settings(class_name: str) -> dict:
    """`schema/<Class>` in a defaults list: that class's settings with their defaults, read from
    its constructor as Hydra's structured config is (hopbench.retrieve.registry); {} if unknown."""
    from hopbench.retrieve.registry import configurable_classes, settings

    cls = next((c for c in configurable_classes() if c.__name__ == class_name), None)
    return dict(settings(cls)) if cls is not None else {}


@functools.lru_cache(maxsize=None)
def _method_yaml(retriever: str, config_dir: str) -> dict | None:
    return _merged_yaml(retriever, Path(config_dir))


@functools.lru_cache(maxsize=None)
def _class_defaults(target: str) -> dict:
    """Keyword defaults of the retriever class's __init__ ({} when it cannot be imported)."""
    module, _, name = target.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
        sig = inspect.signature(cls.__init__)
    except Exception:  # noqa: BLE001 - a label must not fail because a module does not import
        return {}
    return {k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}


def method_defaults(retriever: str, config_dir: str | Path | None = None) -> dict | None:
    """The method's default hyper-parameters: its retriever YAML (with the YAMLs it inherits),
    without `name` / `_target_`; None when there is no YAML for it (a user's own retriever).
    A value may be an interpolation such as '${llm.name}' (see `params_diff`)."""
    merged = _method_yaml(retriever, str(config_dir or RETRIEVER_CONFIGS))
    if merged is None:
        return None
    return {k: v for k, v in merged.items() if k not in _RETRIEVER_SKIP}


def _default_for(retriever: str, key: str, config_dir=None):
    """(found, value): the YAML default, else the class's __init__ default."""
    defaults = method_defaults(retriever, config_dir)
    if defaults is None:
        return False, None
    if key in defaults:
        return True, defaults[key]
    target = (_method_yaml(retriever, str(config_dir or RETRIEVER_CONFIGS)) or {}).get("_target_")
    cls = _class_defaults(target) if isinstance(target, str) else {}
    return (key in cls), cls.get(key)


def _resolve(value, config: dict | None):
    """'${llm.name}' looked up in the run's config; (resolved, value)."""
    m = _INTERPOLATION.match(value) if isinstance(value, str) else None
    if not m:
        return (not (isinstance(value, str) and "${" in value)), value
    node = config
    for part in m.group(1).split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def same_value(a, b) -> bool:
    """Equal as hyper-parameters: 3 == 3.0, '1e-10' == 1e-10, 'False' == False (a table column
    of mixed types stores text), but True != 1."""
    if _is_bool(a) and isinstance(b, str) or _is_bool(b) and isinstance(a, str):
        return str(a).lower() == str(b).lower()
    if _is_bool(a) or _is_bool(b):
        return _is_bool(a) and _is_bool(b) and bool(a) == bool(b)
    if isinstance(a, str) and isinstance(b, numbers.Number) or isinstance(b, str) and isinstance(a, numbers.Number):
        try:
            a, b = float(a), float(b)
        except ValueError:
            return False
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return a == b


def params_diff(params: dict, retriever: str, config: dict | None = None, config_dir=None) -> dict:
    """The parameters of a run whose value differs from its method's default (its retriever
    YAML, then the class's __init__ defaults for keys the YAML does not set).

    A default that interpolates another config group ('${llm.name}') is compared with the value
    it resolves to in the run's `config`; without a config it is never shown (it follows the
    run's LLM, which the table names elsewhere). A method without a YAML (a user's own
    retriever) has no known defaults: every parameter is returned.
    """
    if method_defaults(retriever, config_dir) is None:
        return dict(params)
    out = {}
    for key, value in params.items():
        found, default = _default_for(retriever, key, config_dir)
        if not found:
            out[key] = value
            continue
        resolved, default = _resolve(default, config)
        if resolved and not same_value(value, default):
            out[key] = value
    return out


def _plain(v):
    """numpy scalars as Python values (so 3 prints '3', not 'np.int64(3)')."""
    return v.item() if isinstance(v, np.generic) else v


def typed_value(retriever: str, key: str, value, config_dir=None):
    """A parameter value as its method declares it: an integral float of an integer parameter
    (a table column with gaps made it a float) back to int."""
    value = _plain(value)
    if isinstance(value, float) and value.is_integer():
        found, default = _default_for(retriever, key, config_dir)
        if found and isinstance(default, int) and not isinstance(default, bool):
            return int(value)
    return value


def diff_label(diff: dict) -> str:
    """'decay=0.3 depth=1' for the differences from the defaults; '' when there are none."""
    return params_label(diff)
