"""What a run records per question: a `Row` (one line of predictions.jsonl) and its `Trace`s.

A row is written by the question loop (`hopbench.harness.runner`) and read by the report and
`hopbench show`; its fields and their order are fixed here, so rows written by any version
stay comparable byte for byte. A trace is what a retriever (or reader) says about how it got
its ranking (its answer). Every method's trace shares five fields; the rest is the method's own:

  seeds      the graph nodes the method started from, as `Seed(node, weight, extra)`; methods
             have written three shapes ([node, weight] pairs, bare names, records with an
             `entity` and an `activation`), which `Trace.from_dict` reads into one
  fallback   [{"step", "reason"}] where the question did not get the method as described
             (`hopbench.core.fallback_field`; the older ways of flagging it are read too)
  llm_cost   the question's LLM calls, tokens and seconds (`COST_KEYS`), added by the loop
  llm_keys   the response cache keys of those calls (`LLM_KEYS`), added by the loop when
             there were any: the replies the row depends on (`hopbench replies export`)
  timings    seconds of the method's parts, when it records them
  extra      everything else, in the order the method wrote it

Retrievers still return plain dicts (`Retrieval.trace`); the row keeps that dict as written,
and readers take `Trace.from_dict(row.trace)` for the common fields.

Also here, once: the names of the LLM cost counters (the client's, a trace's `llm_cost`,
metrics.json's, the leaderboard's), and the one reader of a predictions file.
Standard library only: every layer reads it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from numbers import Number
from pathlib import Path
from typing import Any, Callable, Iterator

from hopbench.core.fallback_field import DENSE, FIELD, LEGACY_KEYS, fallbacks

# ---- LLM cost counters ---------------------------------------------------------------------
LLM_CALLS = "llm_calls"
LLM_CACHE_HITS = "llm_cache_hits"
LLM_PROMPT_TOKENS = "llm_prompt_tokens"
LLM_COMPLETION_TOKENS = "llm_completion_tokens"
LLM_SECONDS = "llm_seconds"  # waiting for the server (0 for cache hits)
LLM_CACHED_SECONDS = "llm_cached_seconds"  # what the cache hits had cost when first computed
LLM_KEYS = "llm_keys"  # a trace's list of the request keys of its LLM calls (not a counter)
# the counters of one question's `llm_cost`, in the order a row writes them
COST_KEYS = (
    LLM_CALLS,
    LLM_CACHE_HITS,
    LLM_PROMPT_TOKENS,
    LLM_COMPLETION_TOKENS,
    LLM_SECONDS,
    LLM_CACHED_SECONDS,
)
# the failure counters (`hopbench.llm.client`): a row's `llm_cost` holds those that are not 0
EVENT_KEYS = (
    "llm_failures",
    "llm_format_retries",
    "llm_timeouts",
    "llm_rate_limited",
    "llm_context_overflows",
    "llm_bad_responses",
    "llm_server_errors",
)
# a retrieval `llm_cost` also holds the questions in flight when it was made
QUESTION_CONCURRENCY = "concurrency"
# derived in metrics.json's per-question summary
LLM_TOKENS = "llm_tokens"  # prompt + completion
LLM_SECONDS_UNCACHED = "llm_seconds_uncached"  # seconds + cached seconds: an uncached run's cost


def per_question(part: str, key: str) -> str:
    """metrics.json's key of the mean per question of one counter: 'retrieval_llm_calls_per_question'."""
    return f"{part}_{key}_per_question"


# ---- traces --------------------------------------------------------------------------------
_SEED_NODE_KEYS = ("entity", "node", "name", "id")
_SEED_WEIGHT_KEYS = ("weight", "activation", "score")


def _is_num(v) -> bool:
    return isinstance(v, Number) and not isinstance(v, bool)


@dataclass
class Seed:
    node: str
    weight: float | None = None  # None: the method records seeds without weights
    extra: dict = field(default_factory=dict)  # e.g. spreading activation's mention and match

    @classmethod
    def read(cls, value) -> "Seed":
        """One seed in any of the shapes methods have written."""
        if isinstance(value, (list, tuple)) and len(value) == 2 and _is_num(value[1]):
            return cls(str(value[0]), float(value[1]))
        if isinstance(value, dict):
            node_key = next((k for k in _SEED_NODE_KEYS if k in value), None)
            weight_key = next((k for k in _SEED_WEIGHT_KEYS if _is_num(value.get(k))), None)
            rest = {k: v for k, v in value.items() if k not in (node_key, weight_key)}
            return cls(
                str(value[node_key]) if node_key else "?",
                float(value[weight_key]) if weight_key else None,
                rest,
            )
        return cls(str(value))

    def to_dict(self) -> dict:
        return {"node": self.node, "weight": self.weight, **self.extra}


@dataclass
class Trace:
    seeds: list[Seed] | None = None  # None: the method records no seeds
    fallback: list[dict] = field(default_factory=list)
    llm_cost: dict | None = None
    timings: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    llm_keys: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: dict | None) -> "Trace":
        """A trace as any version wrote it; the legacy fallback flags become `fallback` entries."""
        d = dict(d or {})
        seeds = d.pop("seeds", None)
        seeds = [Seed.read(s) for s in seeds] if isinstance(seeds, list) else None
        entries = fallbacks(d)
        for key in (FIELD, DENSE, *LEGACY_KEYS):
            d.pop(key, None)
        llm_cost = d.pop("llm_cost", None)
        timings = d.pop("timings", None)
        keys = d.pop(LLM_KEYS, None)
        return cls(
            seeds=seeds,
            fallback=entries,
            llm_cost=llm_cost if isinstance(llm_cost, dict) else None,
            timings=timings if isinstance(timings, dict) else {},
            extra=d,
            llm_keys=[k for k in keys if isinstance(k, str)] if isinstance(keys, list) else [],
        )

    def to_dict(self) -> dict:
        out: dict[str, Any] = {}
        if self.seeds is not None:
            out["seeds"] = [s.to_dict() for s in self.seeds]
        if self.fallback:
            out[FIELD] = list(self.fallback)
        if self.llm_cost is not None:
            out["llm_cost"] = dict(self.llm_cost)
        if self.llm_keys:
            out[LLM_KEYS] = list(self.llm_keys)
        if self.timings:
            out["timings"] = dict(self.timings)
        return {**out, **self.extra}


# ---- rows ----------------------------------------------------------------------------------
@dataclass
class Row:
    """One question of a run; `to_dict` is the predictions.jsonl line (fields in this order)."""

    id: str
    question: str
    gold_answers: list
    gold_passage_ids: list
    gold_complete: bool
    kind: str
    label: str | None
    meta: dict
    ranked_passage_ids: list
    scores: list
    answer: str | None
    metrics: dict
    latency_ms: float | None
    trace: dict  # as the retriever returned it (+ llm_cost); see Trace
    reader_trace: dict | None = None  # written only when a reader ran

    @classmethod
    def of(cls, question, retrieval, *, answer, metrics, latency_ms, reader_trace=None) -> "Row":
        """The row of a `Question` and its `Retrieval`."""
        q = question
        return cls(
            q.id,
            q.text,
            q.answers,
            q.gold_passage_ids,
            q.gold_complete,
            q.kind,
            q.label,
            q.meta,
            retrieval.passage_ids,
            retrieval.scores,
            answer,
            metrics,
            latency_ms,
            retrieval.trace,
            reader_trace,
        )

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if out["reader_trace"] is None:
            del out["reader_trace"]
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Row":
        """A row as any version wrote it (fields added since get their defaults)."""
        return cls(
            id=d["id"],
            question=d.get("question", ""),
            gold_answers=d.get("gold_answers") or [],
            gold_passage_ids=d.get("gold_passage_ids") or [],
            gold_complete=d.get("gold_complete", True),
            kind=d.get("kind", "qa"),
            label=d.get("label"),
            meta=d.get("meta") or {},
            ranked_passage_ids=d.get("ranked_passage_ids") or [],
            scores=d.get("scores") or [],
            answer=d.get("answer"),
            metrics=d.get("metrics") or {},
            latency_ms=d.get("latency_ms"),
            trace=d.get("trace") or {},
            reader_trace=d.get("reader_trace"),
        )

    @property
    def retrieval(self) -> Trace:
        return Trace.from_dict(self.trace)

    @property
    def reading(self) -> Trace | None:
        return None if self.reader_trace is None else Trace.from_dict(self.reader_trace)


def row_line(row: Row | dict) -> str:
    """A row as predictions.jsonl holds it: one JSON line."""
    return json.dumps(row.to_dict() if isinstance(row, Row) else row, ensure_ascii=False) + "\n"


# ---- reading predictions.jsonl -------------------------------------------------------------
class BadLine(ValueError):
    """A line of a predictions file that is not a row: its number, the field, what is wrong."""

    def __init__(self, line: int, problem: str, field: str | None = None):
        super().__init__(f"line {line}: {field + ' ' if field else ''}{problem}")
        self.line, self.problem, self.field = line, problem, field


def _parse(i: int, line: bytes) -> dict:
    try:
        row = json.loads(line)
    except UnicodeDecodeError as exc:
        raise BadLine(i, "not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise BadLine(i, f"not valid JSON ({exc.msg})") from exc
    if not isinstance(row, dict):
        raise BadLine(i, "expected a JSON object")
    if "id" not in row:
        raise BadLine(i, "missing", "id")
    return row


def iter_rows(path: str | Path, *, strict: bool) -> Iterator[tuple[int, dict | None]]:
    """(line number, row) of each non-blank line of a predictions file; a line that is not a row
    with an `id` raises `BadLine` when `strict`, else comes as (line number, None)."""
    with open(path, "rb") as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield i, _parse(i, line)
            except BadLine:
                if strict:
                    raise
                yield i, None


def read_rows(
    path: str | Path, *, strict: bool = False, check: Callable[[int, dict], None] | None = None
) -> tuple[list[dict], int, int]:
    """(rows, corrupt lines skipped, duplicate ids dropped) of a predictions file.

    A line that is not a JSON object with an `id` is skipped, not the end of the file: rows
    after it are still good (`strict`: it raises `BadLine` instead). Of several rows with one
    id (two processes that raced before runs were locked) the first is kept. `check(line
    number, row)` is called on every row read, to raise on what the caller cannot use.
    """
    rows, seen, corrupt, dupes = [], set(), 0, 0
    for i, row in iter_rows(path, strict=strict):
        if row is None:
            corrupt += 1
            continue
        if check is not None:
            check(i, row)
        if row["id"] in seen:
            dupes += 1
        else:
            seen.add(row["id"])
            rows.append(row)
    return rows, corrupt, dupes
