"""Question keywords for QAFD's seed selection (its Algorithm 1 asks the LLM for keywords K_q)."""

from __future__ import annotations

from hopbench.llm.prompts import chat

SCHEMA_NAME = "question_keywords"
MAX_KEYWORDS = 10

SCHEMA = {
    "type": "object",
    "properties": {
        "keywords": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 80},
            "minItems": 1,
            "maxItems": MAX_KEYWORDS,
        }
    },
    "required": ["keywords"],
    "additionalProperties": False,
}

SYSTEM = (
    "You extract search keywords from a question for a knowledge-graph lookup. List the named "
    "entities (people, places, works, organisations, dates) and the key concepts the question "
    f"mentions, at most {MAX_KEYWORDS}, most important first, each copied as written in the "
    'question. Reply with a JSON object {"keywords": [...]}.'
)


def messages(question: str) -> list[dict]:
    return chat(SYSTEM, f"Question: {question}")
