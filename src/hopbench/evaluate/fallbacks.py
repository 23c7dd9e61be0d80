"""How many questions of a run fell back (`trace["fallback"]`, see `hopbench.core.fallback_field`).

A fallback ranks or answers a question by something other than the method (plain dense
retrieval, the method without its LLM step, an empty answer), so a run with many of them
measures the fallback more than the method. metrics.json carries:

  n_fallback       questions with at least one fallback in the retrieval or the reader trace
  fallback_rate    n_fallback / n_questions
  fallback_steps   {step: questions with a fallback at that step}

and the run log and `hopbench report` warn when the rate is above `WARN_RATE`.
"""

from __future__ import annotations

import math
from collections import Counter

from hopbench.core.fallback_field import fallbacks

WARN_RATE = 0.1  # above this share of questions, a run's numbers are flagged


def row_fallbacks(row: dict) -> list[dict]:
    """The fallback entries of one prediction row, retrieval first, then reader."""
    return fallbacks(row.get("trace")) + fallbacks(row.get("reader_trace"))


def fallback_summary(rows: list[dict]) -> dict:
    """n_fallback, fallback_rate (None for no rows) and fallback_steps over prediction rows."""
    n_fallback = 0
    steps: Counter = Counter()
    for row in rows:
        entries = row_fallbacks(row)
        if entries:
            n_fallback += 1
            steps.update({str(e.get("step")) for e in entries})
    return {
        "n_fallback": n_fallback,
        "fallback_rate": n_fallback / len(rows) if rows else None,
        "fallback_steps": dict(sorted(steps.items())),
    }


def is_high(rate) -> bool:
    """True when a fallback rate is known and above WARN_RATE."""
    try:
        rate = float(rate)
    except (TypeError, ValueError):
        return False
    return not math.isnan(rate) and rate > WARN_RATE


def fallback_warning(metrics: dict) -> str | None:
    """One line for the run log when the run's fallback rate is high, else None."""
    rate = metrics.get("fallback_rate")
    if not is_high(rate):
        return None
    steps = ", ".join(f"{s} {n}" for s, n in (metrics.get("fallback_steps") or {}).items())
    return (
        f"{metrics.get('n_fallback')} of {metrics.get('n_questions')} questions ({100 * rate:.0f}%, "
        f"above {100 * WARN_RATE:.0f}%) fell back ({steps}): these numbers are partly the "
        f"fallback's, not the method's; see trace.fallback in predictions.jsonl"
    )
