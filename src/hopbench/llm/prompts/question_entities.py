"""Named entities of a question (query NER), shared by CatRAG's anchors and NeuroPath's seeds.

HippoRAG's ``ner_query`` template (used by CatRAG for symbolic anchoring) and NeuroPath's
``query_ner`` step both ask for the named entities a question mentions, as a JSON list. One
prompt here serves both, so the cached reply is shared between the methods.
"""

from __future__ import annotations

from hopbench.llm.prompts import chat

SCHEMA_NAME = "question_entities"
MAX_ENTITIES = 8

SCHEMA = {
    "type": "object",
    "properties": {
        "named_entities": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 100},
            "maxItems": MAX_ENTITIES,
        }
    },
    "required": ["named_entities"],
    "additionalProperties": False,
}

SYSTEM = (
    "You extract the named entities from a question: people, places, organisations, works "
    "(films, books, songs), events, dates and other proper names. Copy each one exactly as it "
    f"is written in the question; at most {MAX_ENTITIES}; no generic words. Reply with a JSON "
    'object {"named_entities": [...]}.'
)

EXAMPLE_Q = "Which magazine was started first, Arthur's Magazine or First for Women?"
EXAMPLE_A = '{"named_entities": ["Arthur\'s Magazine", "First for Women"]}'


def messages(question: str) -> list[dict]:
    return chat(SYSTEM, f"Question: {EXAMPLE_Q}", EXAMPLE_A, f"Question: {question}")


def entities(reply: dict) -> list[str]:
    """The reply's entities, stripped, de-duplicated (case-insensitive), in order."""
    seen: set[str] = set()
    out: list[str] = []
    for e in reply.get("named_entities", []):
        t = " ".join(str(e).split())
        if t and t.lower() not in seen:
            seen.add(t.lower())
            out.append(t)
    return out
