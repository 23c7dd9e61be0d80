"""The trace field that says a question did not get the method as described: ``fallback``.

One field for every retriever and reader, so metrics.json, the leaderboard and `hopbench
show` can count and print fallbacks without knowing each method's trace:

    trace["fallback"] = [{"step": "fact_filter", "reason": "LLM answer ... did not match ..."},
                         {"step": "dense_fallback", "reason": "no fact survived the filter"}]

absent when nothing fell back. `step` is the prompt's schema name for an LLM step that fell
back on a bad reply (`hopbench.llm.policy`), and `DENSE` when the whole ranking is the plain
dense one. Kept free of heavy imports: non-LLM retrievers write it too.
"""

from __future__ import annotations

FIELD = "fallback"
DENSE = "dense_fallback"   # step name: the question got the plain dense ranking


def record_fallback(trace: dict, step: str, reason: str) -> None:
    """Append one {"step", "reason"} entry to trace["fallback"]."""
    trace.setdefault(FIELD, []).append({"step": step, "reason": reason})


def fallbacks(trace: dict | None) -> list[dict]:
    """The fallback entries of a trace ([] when none). A bare string, as runs written before
    this field was a list stored a dense fallback, reads as one `DENSE` entry."""
    value = (trace or {}).get(FIELD)
    if not value:
        return []
    if isinstance(value, str):
        return [{"step": DENSE, "reason": value}]
    return [e for e in value if isinstance(e, dict)]


def has_fallback(trace: dict | None, step: str) -> bool:
    return any(e.get("step") == step for e in fallbacks(trace))
