"""Per-question scores and the run-level aggregate written to metrics.json."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from hopbench.data.schema import Question
from hopbench.evaluate.metrics import (
    JSR_K,
    METRIC_KEYS,
    answer_metrics,
    answer_scored,
    claim_accuracy,
    joint_success,
    retrieval_metrics,
    retrieval_scored,
)


def score_question(question: Question, ranked_ids: Sequence[str], answer: str | None) -> dict:
    """Metrics of one question; keys are absent (not zero) when they do not apply."""
    out: dict[str, float] = {}
    if question.retrieval_scorable:
        out.update(retrieval_metrics(list(ranked_ids), question.gold_passage_ids))
    if answer is not None:
        if question.kind == "claim":
            if question.label is not None:
                out["accuracy"] = claim_accuracy(answer, question.label)
                if question.retrieval_scorable:  # CatRAG's HoVer JSR: full chain and the right label
                    ok = joint_success(out[f"fcr@{JSR_K}"], out["accuracy"])
                    out[f"jsr@{JSR_K}"] = out[f"jsr_contain@{JSR_K}"] = ok
        else:
            a = answer_metrics(answer, question.answers)
            out["em"], out["f1"] = a["em"], a["f1"]
            if question.retrieval_scorable:
                out[f"jsr@{JSR_K}"] = joint_success(out[f"fcr@{JSR_K}"], a["em"])
                out[f"jsr_contain@{JSR_K}"] = joint_success(out[f"fcr@{JSR_K}"], a["contain"])
    return out


def _mean(rows: list[dict], key: str) -> float | None:
    values = [r["metrics"][key] for r in rows if key in r["metrics"]]
    return float(np.mean(values)) if values else None


def aggregate(rows: list[dict]) -> dict:
    """Run-level metrics from prediction rows (answer metrics are null when no reader ran)."""
    latencies = np.array([r["latency_ms"] for r in rows], dtype=float)
    out: dict = {
        "n_questions": len(rows),
        "n_retrieval_scored": sum(retrieval_scored(r["metrics"]) for r in rows),
        "n_answer_scored": sum(answer_scored(r["metrics"]) for r in rows),
    }
    for key in METRIC_KEYS:
        out[key] = _mean(rows, key)
    if len(latencies):
        out["latency_ms_mean"] = float(latencies.mean())
        out["latency_ms_p50"] = float(np.percentile(latencies, 50))
        out["latency_ms_p95"] = float(np.percentile(latencies, 95))
    else:
        out["latency_ms_mean"] = out["latency_ms_p50"] = out["latency_ms_p95"] = None
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}
