"""Claim verification prompt (HoVer): passages, claim -> SUPPORTED / NOT_SUPPORTED.

Same shape as the QA prompt (system rule, one worked example, 'Wikipedia Title:' passages,
reasoning before the verdict); the label is an enum in the schema, so it cannot come back
in any other spelling. HoVer's NOT_SUPPORTED covers both refuted and unverifiable claims.
"""

from __future__ import annotations

from typing import Sequence

from hopbench.data.schema import Passage
from hopbench.llm.prompts.passages import format_passages

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
    "different passages. Reply with a JSON object: \"reasoning\" checks each part of the "
    "claim against the passages in one or two short sentences; \"label\" is SUPPORTED only if "
    "the passages confirm every part of the claim, otherwise NOT_SUPPORTED (a part is "
    "contradicted or not stated)."
)

_EXAMPLE_PASSAGES = (
    "Wikipedia Title: Black Drin\n"
    "The Black Drin is a river that flows out of Lake Ohrid at the town of Struga and runs "
    "north into Albania, where it joins the White Drin.\n\n"
    "Wikipedia Title: Struga\n"
    "Struga is a town and the seat of Struga Municipality in the south-west of North "
    "Macedonia, on the shore of Lake Ohrid."
)
_EXAMPLE_CLAIM = "The river that leaves Lake Ohrid at Struga flows south into Greece."
_EXAMPLE_REPLY = ('{"reasoning": "The Black Drin leaves Lake Ohrid at Struga, but it runs north '
                  'into Albania, not south into Greece.", "label": "NOT_SUPPORTED"}')


def user_turn(passages_text: str, claim: str) -> str:
    return f"{passages_text}\n\nClaim: {claim}"


def messages(claim: str, passages: Sequence[Passage]) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_turn(_EXAMPLE_PASSAGES, _EXAMPLE_CLAIM)},
        {"role": "assistant", "content": _EXAMPLE_REPLY},
        {"role": "user", "content": user_turn(format_passages(passages), claim)},
    ]
