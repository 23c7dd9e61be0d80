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
DENSE = "dense_fallback"  # step name: the question got the plain dense ranking


def record_fallback(trace: dict, step: str, reason: str) -> None:
    """Append one {"step", "reason"} entry to trace["fallback"]."""
    trace.setdefault(FIELD, []).append({"step": step, "reason": reason})


# How runs written before this field recorded the same events: key -> step.
LEGACY_KEYS = {
    "filter_error": "fact_filter",
    "ner_error": "question_entities",
    "scoring_errors": "neighbour_scores",
    "tracker_error": "path_tracker",
    "keywords_error": "question_keywords",
}


def fallbacks(trace: dict | None) -> list[dict]:
    """The fallback entries of a trace ([] when none).

    Runs written before this field was a list are read too, so the report counts their
    fallbacks from their predictions: a bare string (a dense fallback), `dense_fallback: true`,
    a Neo4j `query_timeout`, and the per-step `*_error` keys."""
    trace = trace or {}
    value = trace.get(FIELD)
    if isinstance(value, list):
        return [e for e in value if isinstance(e, dict)]
    out = []
    for key, step in LEGACY_KEYS.items():
        if trace.get(key):
            out.append({"step": step, "reason": str(trace[key])[:300]})
    if isinstance(value, str) and value:
        out.append({"step": DENSE, "reason": value})
    elif trace.get("dense_fallback") is True or trace.get("query_timeout"):
        out.append(
            {"step": DENSE, "reason": "dense ranking (recorded before fallback reasons were)"}
        )
    return out


def has_fallback(trace: dict | None, step: str) -> bool:
    return any(e.get("step") == step for e in fallbacks(trace))
