"""LLM cost per question, from the rows of a run: what metrics.json's `*_per_question` keys hold.

Each row carries its own `llm_cost` (retrieval in `trace`, reading in `reader_trace`), so a
resumed run is summed from every row, not from the last process's counters. The counters and
the keys are named in `hopbench.core.records`.
"""

from __future__ import annotations

from hopbench.core.records import (
    COST_KEYS,
    EVENT_KEYS,
    LLM_CACHED_SECONDS,
    LLM_COMPLETION_TOKENS,
    LLM_PROMPT_TOKENS,
    LLM_SECONDS,
    LLM_SECONDS_UNCACHED,
    LLM_TOKENS,
    QUESTION_CONCURRENCY,
    per_question,
)

_TRACE_OF = {"retrieval": "trace", "reader": "reader_trace"}  # COST_PARTS -> the row's field


def cost_summary(rows: list[dict]) -> dict:
    """Mean LLM cost per question of retrieval and of reading (parts without any cost: absent)."""
    out: dict = {}
    n = max(len(rows), 1)
    for part, key in _TRACE_OF.items():
        costs = [c for c in ((r.get(key) or {}).get("llm_cost") for r in rows) if c]
        if not costs:
            continue
        for k in COST_KEYS:
            out[per_question(part, k)] = sum(c.get(k, 0) for c in costs) / n
        out[per_question(part, LLM_TOKENS)] = (
            out[per_question(part, LLM_PROMPT_TOKENS)]
            + out[per_question(part, LLM_COMPLETION_TOKENS)]
        )
        out[per_question(part, LLM_SECONDS_UNCACHED)] = (
            out[per_question(part, LLM_SECONDS)] + out[per_question(part, LLM_CACHED_SECONDS)]
        )
    return out


def concurrency_counts(rows: list[dict]) -> dict:
    """{"question_concurrency": {"2": 67, "1": 33}}: how many questions were in flight when each
    row's LLM calls were made (rows written before it was recorded: "unrecorded"); nothing
    for a run without an LLM. metrics.json's `concurrency` is only the last process's."""
    counts: dict[str, int] = {}
    for r in rows:
        cost = (r.get("trace") or {}).get("llm_cost")
        if cost is None:
            continue
        c = cost.get(QUESTION_CONCURRENCY)
        key = str(c) if c is not None else "unrecorded"
        counts[key] = counts.get(key, 0) + 1
    return {"question_concurrency": dict(sorted(counts.items()))} if counts else {}


def llm_totals(rows: list[dict]) -> dict:
    """metrics.json's llm_* counters: the sum over every row (retrieval and reading) of its
    `llm_cost`, so a resumed run counts the calls its earlier processes made. Calls made
    outside a question (a graph build) are not a question's cost and are not counted."""
    totals = dict.fromkeys((*COST_KEYS, *EVENT_KEYS), 0)
    for r in rows:
        for key in _TRACE_OF.values():
            cost = (r.get(key) or {}).get("llm_cost") or {}
            for k in totals:
                totals[k] += cost.get(k, 0)
    return {k: round(v, 3) if "seconds" in k else v for k, v in totals.items()}
