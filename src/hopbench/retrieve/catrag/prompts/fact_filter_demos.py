"""The recognition filter as HippoRAG 2 and CatRAG run it: demonstrations, facts in, facts out.

CatRAG's code (``rerank.py`` ``DSPyFilter``, inherited from HippoRAG 2) sends a system
instruction and worked demonstrations (question + candidate facts as ``{"fact": [[s, r, o],
...]}`` -> the facts worth keeping, same format), then the question; the reply's facts are
mapped back to the candidates with difflib (closest string, no cutoff), in the reply's order,
at most `linking_top_k` (`selected_positions`). Here the instruction and the four
demonstrations are hopbench's own (the authors' DSPy file is read only by ``prompts:
official``); the reply is constrained to the same JSON shape by `SCHEMA`.
"""

from __future__ import annotations

import ast
import difflib
import json
from collections.abc import Sequence

from hopbench.llm.prompts import chat

SCHEMA_NAME = "fact_filter_demos"
MAX_SELECTED = 4

SCHEMA = {
    "type": "object",
    "properties": {
        "fact": {
            "type": "array",
            "maxItems": MAX_SELECTED,
            "items": {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "string"}},
        }
    },
    "required": ["fact"],
    "additionalProperties": False,
}

SYSTEM = (
    "You choose evidence for a multi-hop question. You get the question and candidate facts "
    "from a knowledge graph, each [subject, relation, object]. Keep the facts, at most "
    f"{MAX_SELECTED}, that help to answer the question or to reach the next hop; keep none "
    "when nothing helps. Copy each kept fact unchanged and reply with JSON: "
    '{"fact": [[subject, relation, object], ...]}.'
)

DEMOS = [
    (
        "Which river flows through the birthplace of the author of The Tin Drum?",
        [
            ["the tin drum", "written by", "gunter grass"],
            ["the tin drum", "adapted into", "film"],
            ["gunter grass", "born in", "danzig"],
            ["danzig", "renamed", "gdansk"],
            ["the tin drum", "published in", "1959"],
        ],
        [["the tin drum", "written by", "gunter grass"], ["gunter grass", "born in", "danzig"]],
    ),
    (
        "Who founded the company that operates the Kiruna mine?",
        [
            ["kiruna mine", "operated by", "lkab"],
            ["kiruna mine", "located in", "sweden"],
            ["lkab", "founded by", "hjalmar lundbohm"],
            ["kiruna", "is a", "town"],
            ["lkab", "produces", "iron ore pellets"],
        ],
        [["kiruna mine", "operated by", "lkab"], ["lkab", "founded by", "hjalmar lundbohm"]],
    ),
    (
        "Are the Vasa Museum and the Nobel Prize Museum in the same city?",
        [
            ["vasa museum", "located in", "stockholm"],
            ["vasa museum", "displays", "vasa ship"],
            ["nobel prize museum", "located in", "stockholm"],
            ["nobel prize", "awarded in", "december"],
            ["stockholm", "capital of", "sweden"],
        ],
        [
            ["vasa museum", "located in", "stockholm"],
            ["nobel prize museum", "located in", "stockholm"],
        ],
    ),
    (
        "What instrument did the composer of the Moonlight Sonata's teacher play?",
        [
            ["moon", "orbits", "earth"],
            ["sonata", "is a", "musical form"],
            ["moonlight", "is a", "2016 film"],
            ["piano", "has", "88 keys"],
            ["bonn", "located in", "germany"],
        ],
        [],
    ),
]


def _facts_json(facts) -> str:
    return json.dumps({"fact": [list(f) for f in facts]})


def user_turn(question: str, facts) -> str:
    return f"Question: {question}\nCandidate facts: {_facts_json(facts)}"


def messages(question: str, facts: Sequence[tuple[str, str, str]]) -> list[dict]:
    turns: list[str] = []
    for q, cand, kept in DEMOS:
        turns += [user_turn(q, cand), _facts_json(kept)]
    return chat(SYSTEM, *turns, user_turn(question, facts))


def selected_positions(
    generated: Sequence, candidates: Sequence[tuple[str, str, str]], limit: int
) -> list[int]:
    """The code's mapping: each generated fact -> the candidate whose str() is closest
    (difflib, cutoff 0), in the reply's order (repeats kept), the first `limit` of them."""
    strings = [str(tuple(c)) for c in candidates]
    out: list[int] = []
    for g in generated:
        best = difflib.get_close_matches(str(list(g)), strings, n=1, cutoff=0.0)
        if best:
            out.append(strings.index(best[0]))
    return out[:limit]


def parse_official(text: str) -> list:
    """The facts of a reply in the DSPy field format (``[[ ## fact_after_filter ## ]]``), as
    the code's ``parse_filter`` reads it: JSON, else a Python literal; [] when neither."""
    import re

    header = re.compile(r"\[\[ ## (\w+) ## \]\]")
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        m = header.match(line.strip())
        if m:
            sections.append((m.group(1), []))
        else:
            sections[-1][1].append(line)
    parsed: list = []
    for key, lines in sections:
        if key != "fact_after_filter":
            continue
        value = "\n".join(lines).strip()
        try:
            obj = json.loads(value)
        except json.JSONDecodeError:
            try:
                obj = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                obj = None
        facts = obj.get("fact") if isinstance(obj, dict) else None
        if isinstance(facts, list) and all(
            isinstance(f, list) and all(isinstance(x, str) for x in f) for f in facts
        ):
            parsed = facts
    return parsed
