"""High- and low-level question keywords for the QAFD answering pipeline (retriever flow_diffusion).

Design from QAFD-RAG's keyword step (``kg_query`` in ``src/answering/handler.py``, the
LightRAG-style ``keywords_extraction`` prompt of ``src/prompts/prompts_qa.py``): the model
names the question's high-level keywords (themes, concepts) and low-level keywords (the
specific entities and details) as a JSON object with the keys ``high_level_keywords`` and
``low_level_keywords``; worked examples precede the question. The wording and the examples
here are hopbench's own (multi-hop questions); ``prompts: official`` sends the authors' text,
read from the user's checkout (`official_qafd`).
"""

from __future__ import annotations

from hopbench.llm.prompts import chat

SCHEMA_NAME = "qafd_keywords"
MAX_KEYWORDS = 10
HIGH, LOW = "high_level_keywords", "low_level_keywords"

_LIST = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 80},
    "maxItems": MAX_KEYWORDS,
}
SCHEMA = {
    "type": "object",
    "properties": {HIGH: _LIST, LOW: _LIST},
    "required": [HIGH, LOW],
    "additionalProperties": False,
}

SYSTEM = (
    "You pick search keywords from a question for a lookup in a knowledge graph of entities. "
    'Give two lists. "high_level_keywords": the broad themes or kinds of thing the question '
    "is about (for example a relation such as birthplace or membership, or a category such as "
    'river or album). "low_level_keywords": the concrete entities and details it names '
    "(people, places, works, organisations, dates, numbers), as written in the question. "
    f"At most {MAX_KEYWORDS} in each list, most important first. Reply with a JSON object "
    "with exactly these two keys."
)

EXAMPLES = (
    (
        "Which river flows through the capital of the country where the Moselle wine region lies?",
        '{"high_level_keywords": ["River", "Capital city", "Wine region", "Country"], '
        '"low_level_keywords": ["Moselle", "Moselle wine region"]}',
    ),
    (
        "Who founded the record label that released the debut album of the band Portishead?",
        '{"high_level_keywords": ["Record label", "Founder", "Debut album"], '
        '"low_level_keywords": ["Portishead", "band"]}',
    ),
)


def user_turn(question: str) -> str:
    return f"Question: {question}"


def messages(question: str) -> list[dict]:
    turns: list[str] = []
    for q, reply in EXAMPLES:
        turns += [user_turn(q), reply]
    return chat(SYSTEM, *turns, user_turn(question))


def clean(words) -> list[str]:
    """Stripped, non-empty, first occurrence kept."""
    return list(dict.fromkeys(w.strip() for w in words or [] if isinstance(w, str) and w.strip()))


def parse(reply: dict) -> tuple[list[str], list[str]]:
    """(high-level, low-level) keywords of a reply that matched SCHEMA."""
    return clean(reply.get(HIGH)), clean(reply.get(LOW))
