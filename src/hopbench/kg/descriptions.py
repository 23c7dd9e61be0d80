"""Entity descriptions: the text the spreading-activation gate compares with the question.

Default: the entity's own facts plus the sentence that first mentions it, cut to a bounded
length (a description is embedded once per entity, so its length drives the build time).
Optional: an LLM summary for entities with enough facts to be worth summarising (CatRAG builds
summaries only for entities with more than 3 facts); others keep the default description.
"""

from __future__ import annotations

import logging

from hopbench.llm.prompts import chat

log = logging.getLogger(__name__)

DESCRIPTION_SCHEMA = {
    "type": "object",
    "properties": {"description": {"type": "string"}},
    "required": ["description"],
    "additionalProperties": False,
}
DESCRIPTION_SYSTEM = (
    "You write a one- or two-sentence description of an entity from the facts given about it. "
    "Use only the given facts. Answer with JSON only."
)


def truncate(text: str, max_chars: int) -> str:
    """Cut at a word boundary so the embedding never sees half a word."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ")
    return cut[:space] if space > max_chars // 2 else cut


def default_description(label: str, facts: list[str], sentence: str | None, max_chars: int) -> str:
    """'Label: fact; fact. First sentence mentioning it.' bounded to max_chars."""
    parts = [label]
    if facts:
        parts[0] += ": " + "; ".join(facts)
    text = parts[0] + ("." if facts else "")
    if sentence:
        text += " " + sentence
    return truncate(text, max_chars)


def description_messages(label: str, facts: list[str], sentence: str | None) -> list[dict]:
    lines = "\n".join(f"- {f}" for f in facts)
    context = f"\nSentence: {sentence}" if sentence else ""
    return chat(DESCRIPTION_SYSTEM, f"Entity: {label}\nFacts:\n{lines}{context}")


def llm_description(llm, label: str, facts: list[str], sentence: str | None, max_chars: int,
                    max_tokens: int = 128) -> str:
    out = llm.chat_json(description_messages(label, facts, sentence), DESCRIPTION_SCHEMA,
                        schema_name="entity_description", max_tokens=max_tokens)
    text = out.get("description") if isinstance(out, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"description answer lacks a 'description' string: {str(out)[:200]}")
    return truncate(f"{label}: {text.strip()}", max_chars)
