"""Claim verification prompt (HoVer): passages, claim -> SUPPORTED / NOT_SUPPORTED.

Same shape as the QA prompt (system rule, one worked example, 'Wikipedia Title:' passages,
reasoning before the verdict); the label is an enum in the schema, so it cannot come back
in any other spelling. HoVer's NOT_SUPPORTED covers both refuted and unverifiable claims.
"""

from __future__ import annotations

from typing import Sequence

from hopbench.data.schema import Passage
from hopbench.llm.prompts import chat
from hopbench.llm.prompts.passages import example_passages, format_passages

SCHEMA_NAME = "claim_label"
LABELS = ("SUPPORTED", "NOT_SUPPORTED")

SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 400},
        "label": {"type": "string", "enum": list(LABELS)},
    },
    "required": ["reasoning", "label"],
    "additionalProperties": False,
}

SYSTEM = (
    "You check claims against Wikipedia passages. A claim may combine several facts from "
    'different passages. Reply with a JSON object: "reasoning" checks each part of the '
    'claim against the passages in one or two short sentences; "label" is SUPPORTED only if '
    "the passages confirm every part of the claim, otherwise NOT_SUPPORTED (a part is "
    "contradicted or not stated)."
)

_EXAMPLE_PASSAGES = example_passages("Black Drin", "Struga")
_EXAMPLE_CLAIM = "The river that leaves Lake Ohrid at Struga flows south into Greece."
_EXAMPLE_REPLY = (
    '{"reasoning": "The Black Drin leaves Lake Ohrid at Struga, but it runs north '
    'into Albania, not south into Greece.", "label": "NOT_SUPPORTED"}'
)


def user_turn(passages_text: str, claim: str) -> str:
    return f"{passages_text}\n\nClaim: {claim}"


def messages(claim: str, passages: Sequence[Passage]) -> list[dict]:
    return chat(
        SYSTEM,
        user_turn(_EXAMPLE_PASSAGES, _EXAMPLE_CLAIM),
        _EXAMPLE_REPLY,
        user_turn(format_passages(passages), claim),
    )
