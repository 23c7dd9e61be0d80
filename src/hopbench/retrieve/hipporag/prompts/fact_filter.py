"""HippoRAG 2's recognition-memory filter: question + candidate facts -> the relevant ones.

HippoRAG 2 asks the LLM (DSPy prompt ``filter_llama3.3-70B-Instruct.json``) to "select up to 4
relevant facts" from the top-5 candidates and maps the reply back with difflib. Here the
candidates are numbered and the reply is a JSON list of numbers, so no fuzzy matching is needed.
"""

from __future__ import annotations

from collections.abc import Sequence

from hopbench.llm.prompts import chat

SCHEMA_NAME = "fact_filter"
MAX_SELECTED = 4

SCHEMA = {
    "type": "object",
    "properties": {
        "selected": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1},
            "maxItems": MAX_SELECTED,
        }
    },
    "required": ["selected"],
    "additionalProperties": False,
}

SYSTEM = (
    "You filter facts for multi-hop question answering. You get a question and numbered "
    "candidate facts (subject | relation | object) taken from a knowledge graph. Select the "
    f"facts, at most {MAX_SELECTED}, that are useful for answering the question or for finding "
    "the next step of the reasoning; select none if no fact is relevant. Reply with a JSON "
    'object {"selected": [numbers of the useful facts]}.'
)


def messages(question: str, facts: Sequence[tuple[str, str, str]]) -> list[dict]:
    lines = "\n".join(f"{i}. {s} | {r} | {o}" for i, (s, r, o) in enumerate(facts, start=1))
    return chat(SYSTEM, f"Question: {question}\n\nCandidate facts:\n{lines}")


def selected_positions(reply: dict, n_candidates: int) -> list[int]:
    """0-based candidate positions named in the reply, in candidate order, out-of-range ignored."""
    picked = {int(i) - 1 for i in reply.get("selected", []) if 1 <= int(i) <= n_candidates}
    return sorted(picked)
