"""CatRAG's context summaries: C(v) = Summary(F(v)) for an entity with more than tau facts.

Follows the design of CatRAG's ``node_summarize`` template: the target entity and its fact
triples in, a short entity-focused summary out (what the entity is, what it connects to).
The summary depends only on the entity, so it is computed once and served from the cache
for every question that meets the entity. Plain text out (no schema): it is prose.
"""

from __future__ import annotations

from collections.abc import Sequence

from hopbench.llm.prompts import chat

STEP = "entity_summary"  # this step's name in traces (plain text: no schema name)

SYSTEM = (
    "Summarise an entity of a knowledge graph from its fact triples, in at most three short "
    "sentences: start with what the entity is, then its most important relations to other "
    "entities. Use only the given facts. Reply with the summary only."
)

EXAMPLE_USER = (
    "ENTITY: alex o loughlin\nFACTS:\n(alex o loughlin | is | australian actor and director)\n"
    "(alex o loughlin | was born on | 24 august 1976)\n(alex o loughlin | plays | lieutenant "
    "commander steve mcgarrett)\n(alex o loughlin | works for | cbs)\n(alex o loughlin | starred "
    "in | moonlight)\n(alex o loughlin | appeared in | oyster farmer)"
)
EXAMPLE_REPLY = (
    "Alex O'Loughlin is an Australian actor and director, born on 24 August 1976. He works for "
    "CBS, where he plays Lieutenant Commander Steve McGarrett, and starred in Moonlight and "
    "Oyster Farmer."
)


def messages(entity: str, triples: Sequence[tuple[str, str, str]]) -> list[dict]:
    facts = "\n".join(f"({s} | {r} | {o})" for s, r, o in triples)
    return chat(SYSTEM, EXAMPLE_USER, EXAMPLE_REPLY, f"ENTITY: {entity}\nFACTS:\n{facts}")


def clean(text: str) -> str:
    """One line, no surrounding quotes or 'Summary:' label."""
    t = " ".join(text.split())
    for label in ("Summary:", "SUMMARY:"):
        if t.startswith(label):
            t = t[len(label) :].strip()
    return t.strip('"')
