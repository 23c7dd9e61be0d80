"""Per-question scores and the run-level aggregate written to metrics.json."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from hopbench.evaluate import token_budget
from hopbench.evaluate.metric_registry import (
    Outcome,
    answer_scored,
    backfilled,
    names,
    retrieval_scored,
    score,
)

TOKEN_BUDGET = "token_budget"
TOKEN_BUDGET_SHORT = "token_budget_short_rankings"


def score_question(
    question, ranked_ids: Sequence[str], answer: str | None, notes_tokens: int = 0
) -> dict:
    """Metrics of one question (every declared metric that applies, hopbench.evaluate.metric_registry);
    keys are absent (not zero) when they do not apply. notes_tokens: what the retriever's notes
    took of the reader's context (R@Nt counts them first)."""
    return score(Outcome.of(question, ranked_ids, answer, notes_tokens))


def _mean(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if key in r]
    return float(np.mean(values)) if values else None


def aggregate(rows: list[dict]) -> dict:
    """Run-level metrics from prediction rows (answer metrics are null when no reader ran)."""
    latencies = np.array([r["latency_ms"] for r in rows], dtype=float)
    out: dict = {
        "n_questions": len(rows),
        "n_retrieval_scored": sum(retrieval_scored(r["metrics"]) for r in rows),
        "n_answer_scored": sum(answer_scored(r["metrics"]) for r in rows),
    }
    scored = [backfilled(r) for r in rows]  # a run resumed across a new metric: scored on every row
    for key in names():
        out[key] = _mean(scored, key)
    out[TOKEN_BUDGET] = token_budget.describe()  # what R@Nt counted with
    out[TOKEN_BUDGET_SHORT] = token_budget.short_rankings(rows)
    if len(latencies):
        out["latency_ms_mean"] = float(latencies.mean())
        out["latency_ms_p50"] = float(np.percentile(latencies, 50))
        out["latency_ms_p95"] = float(np.percentile(latencies, 95))
    else:
        out["latency_ms_mean"] = out["latency_ms_p50"] = out["latency_ms_p95"] = None
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}
