"""Question entities with a search hint, for QASA's seeding (its query-entity step).

QASA's LLM names the question's entities as ``{name, search_hint}`` pairs: the name is looked
up exactly among the graph's entity names, and the hint (the name plus a word or two of
context from the question) is what is embedded for the vector search when no name matches.
This prompt follows that design in hopbench's own words; ``prompts: official`` in the
retriever reads the authors' text from a user's checkout instead (`official_messages`), and
nothing of theirs ships here.
"""

from __future__ import annotations

import re
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.llm.prompts import chat

SCHEMA_NAME = "qasa_question_entities"
MAX_ENTITIES = 8

SCHEMA = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_ENTITIES,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 100},
                    "search_hint": {"type": "string", "minLength": 1, "maxLength": 160},
                },
                "required": ["name", "search_hint"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["entities"],
    "additionalProperties": False,
}

SYSTEM = (
    "You pick out the proper names in a question so they can be looked up in a knowledge "
    "graph: people, places, organisations, creative works and events; never question words "
    "or common nouns, and at least one. For each give `name`, the name in lower case as the "
    "question writes it, and `search_hint`, that name followed by one or two words from the "
    'question that tell it apart from namesakes (for example "mercury planet" or "heat '
    f'basketball team"). At most {MAX_ENTITIES}. Reply with a JSON object '
    '{"entities": [{"name": ..., "search_hint": ...}]}.'
)


def messages(question: str) -> list[dict]:
    return chat(SYSTEM, f"Question: {question}")


def pairs(reply: dict) -> list[tuple[str, str]]:
    """(name, search hint) pairs of a reply, whitespace-collapsed, first of each name kept."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for ent in reply.get("entities", []):
        name = " ".join(str(ent.get("name", "")).split())
        hint = " ".join(str(ent.get("search_hint", "")).split()) or name
        if name and name.lower() not in seen:
            seen.add(name.lower())
            out.append((name, hint))
    return out


OFFICIAL_FILE = Path("qasa_rag") / "retrieval" / "retriever.py"


def official_template(checkout: str | Path) -> str:
    """The authors' QUERY_ENTITY_PROMPT, read (never imported or run) from their checkout."""
    path = Path(checkout) / OFFICIAL_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise HopbenchError(
            f"prompts: official needs the authors' checkout: cannot read {path} ({exc})"
        ) from exc
    m = re.search(r'QUERY_ENTITY_PROMPT\s*=\s*"""(.*?)"""', text, re.S)
    if not m or "{question}" not in m.group(1):
        raise HopbenchError(f"{path}: no QUERY_ENTITY_PROMPT with a {{question}} field")
    return m.group(1)


def official_messages(template: str, question: str) -> list[dict]:
    """The authors' single-turn prompt (they send it as one user message)."""
    return [{"role": "user", "content": template.replace("{question}", question)}]
