"""CatRAG stage II: the LLM scores how useful each neighbour of a seed entity is (0-10).

Follows the design of CatRAG's ``fact_score_with_sum`` template (kwunhang/CatRAG): the
question, the facts the recognition step kept, the seed ("current entity"), then numbered
neighbours, each with the fact(s) linking it to the seed and its context C(v) (its own facts,
or a summary when it has more than tau facts). The rubric is the paper's four bands. The reply
here is one JSON list of integers in neighbour order (the schema fixes its length), so no
fuzzy matching of names is needed and the small local model writes few tokens; the
reference's one-line reasons are left out for the same reason. The reference's two worked
examples are left out too: the 1.5B local model copied the example's scores ([10, 4, 2, 7])
onto unrelated neighbours; the rubric alone is kept, with the bands spelled out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hopbench.llm.prompts import chat

SCHEMA_NAME = "neighbour_scores"

SYSTEM = (
    "You are a knowledge-graph reasoning expert. Score each NEIGHBOR of the CURRENT ENTITY from "
    "0 to 10 by how useful it is for answering the QUERY.\n"
    "10: the neighbor is the answer or directly contains it.\n"
    "7-9: a bridge, a critical next step of the reasoning chain.\n"
    "4-6: a valid but tangential link.\n"
    "0-3: irrelevant, generic, or contradicting the RETRIEVED FACTS.\n"
    'Reply with a JSON object {"scores": [one integer per neighbor, in the order given]}.'
)


@dataclass(frozen=True)
class Neighbour:
    name: str
    links: Sequence[tuple[str, str, str]]  # the fact(s) joining the seed and this neighbour
    context: str  # C(v): its facts, or its summary


def _triple(t: tuple[str, str, str]) -> str:
    return f"({t[0]} | {t[1]} | {t[2]})"


def schema(n: int) -> dict:
    return {
        "type": "object",
        "properties": {
            "scores": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 10},
                "minItems": n,
                "maxItems": n,
            }
        },
        "required": ["scores"],
        "additionalProperties": False,
    }


def messages(
    question: str,
    retrieved: Sequence[tuple[str, str, str]],
    seed: str,
    neighbours: Sequence[Neighbour],
) -> list[dict]:
    facts = "; ".join(_triple(t) for t in retrieved) or "(none)"
    lines = "\n".join(
        f"[{i}] {n.name} | LINK: {'; '.join(_triple(t) for t in n.links)} | CONTEXT: {n.context}"
        for i, n in enumerate(neighbours, start=1)
    )
    user = (
        f"QUERY: {question}\nRETRIEVED FACTS: {facts}\nCURRENT ENTITY: {seed}\nNEIGHBORS:\n{lines}"
    )
    return chat(SYSTEM, user)


def format_facts(triples: Sequence[tuple[str, str, str]]) -> str:
    """C(v) for an entity with at most tau facts: the facts themselves."""
    return "; ".join(_triple(t) for t in triples) or "(no facts)"
