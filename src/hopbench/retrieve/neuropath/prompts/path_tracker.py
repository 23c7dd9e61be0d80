"""NeuroPath's path tracker: question + numbered candidate paths -> which paths hold and what next.

Design after NeuroPath's ``llm_path_track`` (KennyCaty/NeuroPath ``src/neuropath.py``): the
model sees the question and numbered paths (chains of triples); a path whose end can be
followed further is tagged with that phrase. It answers with one JSON object: the reasoning
chain so far, the valid path ids (most helpful first), what the next expansion must find, the
ids of the paths to expand, and whether to continue. The reference runs zero-shot
(``one_shot=False`` in ``rank_docs``) and has an optional one-shot example; here too the
example is optional (``one_shot``), with an example of our own (a bridge question, the
common MuSiQue shape) instead of the reference's comparison question.

Two changes for a small local model that pays per token:

* paths are written ``a -> rel -> b; b -> rel -> c`` with the tag ``[expand: c]``;
* from the second hop on, the previous chain and requirement are shown ("So far" /
  "Looking for"); the reference shows only the paths, but its tracker's earlier answer is
  exactly what decided which paths were expanded, so the context costs a few tokens and keeps
  a 1.5B model on track.

The schema bounds the string lengths and list sizes so a reply fits in about 200 tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from hopbench.llm.prompts import chat

SCHEMA_NAME = "path_tracker"
MAX_IDS = 10
MAX_CHAIN_CHARS = 300
MAX_REQUIREMENT_CHARS = 200
MAX_TOKENS = 200

SCHEMA = {
    "type": "object",
    "properties": {
        "current_chain": {"type": "string", "maxLength": MAX_CHAIN_CHARS},
        "valid_ids": {
            "type": "array",
            "items": {"type": "integer", "minimum": 0},
            "maxItems": MAX_IDS,
        },
        "expansion_requirements": {"type": "string", "maxLength": MAX_REQUIREMENT_CHARS},
        "need_expand_ids": {
            "type": "array",
            "items": {"type": "integer", "minimum": 0},
            "maxItems": MAX_IDS,
        },
        "continue": {"type": "integer", "enum": [0, 1]},
    },
    "required": [
        "current_chain",
        "valid_ids",
        "expansion_requirements",
        "need_expand_ids",
        "continue",
    ],
    "additionalProperties": False,
}

SYSTEM = (
    "You trace reasoning paths in a knowledge graph to answer a multi-hop question. Each "
    "numbered path is a chain of facts 'subject -> relation -> object'. A path ending in "
    "[expand: X] can be extended with more facts about X.\n"
    "1. current_chain: in one or two short sentences, the reasoning the valid paths support so far.\n"
    "2. valid_ids: ids of the paths that give evidence or an intermediate step for the "
    "question, most helpful first; leave out redundant or irrelevant ones.\n"
    "3. If the evidence is not yet enough to answer, expansion_requirements says briefly what "
    "must still be found, need_expand_ids lists the expandable paths to follow, and continue is "
    '1. Otherwise expansion_requirements is "", need_expand_ids is [] and continue is 0.\n'
    "Reply with one JSON object with the keys current_chain, valid_ids, expansion_requirements, "
    "need_expand_ids, continue."
)


EXAMPLE_Q = "In which country was the director of the film Cold Harbour born?"
EXAMPLE_PATHS = (
    "Cold Harbour -> released in -> 2011 [expand: 2011]",
    "Cold Harbour -> directed by -> Anna Berg [expand: Anna Berg]",
    "Cold Harbour -> filmed in -> Oslo [expand: Oslo]",
)
EXAMPLE_A = (
    '{"current_chain": "Cold Harbour was directed by Anna Berg.", "valid_ids": [1], '
    '"expansion_requirements": "Find where Anna Berg was born.", "need_expand_ids": [1], '
    '"continue": 1}'
)


def render_path(triples: Sequence[tuple[str, str, str]], expand: str | None) -> str:
    """``a -> r -> b; b -> r2 -> c [expand: c]`` (the tag only on paths that may grow)."""
    text = "; ".join(f"{s} -> {r} -> {o}" for s, r, o in triples)
    return f"{text} [expand: {expand}]" if expand is not None else text


def _user(question: str, paths: Sequence[str], chain: str, requirement: str) -> str:
    lines = "\n".join(f"{i}: {p}" for i, p in enumerate(paths))
    context = ""
    if chain or requirement:
        context = f"So far: {chain or '-'}\nLooking for: {requirement or '-'}\n"
    return f"Question: {question}\n{context}Paths:\n{lines}"


def messages(
    question: str,
    paths: Sequence[str],
    chain: str = "",
    requirement: str = "",
    one_shot: bool = False,
) -> list[dict]:
    """`paths` are already rendered (`render_path`); they are numbered from 0 as in the reference."""
    example = (_user(EXAMPLE_Q, EXAMPLE_PATHS, "", ""), EXAMPLE_A) if one_shot else ()
    return chat(SYSTEM, *example, _user(question, paths, chain, requirement))


def ids(values, n: int) -> list[int]:
    """In-range ids from a reply list, first occurrence kept, order kept (out-of-range ignored)."""
    out: list[int] = []
    for v in values or []:
        try:
            i = int(v)
        except (TypeError, ValueError):
            continue
        if 0 <= i < n and i not in out:
            out.append(i)
    return out
