"""How retrieved passages are shown to a reader: HippoRAG's 'Wikipedia Title: ...' blocks, and
the example passages the reader prompts' worked examples share (qa.py, verify.py)."""

from __future__ import annotations

from typing import Sequence

from hopbench.data.schema import Passage


def format_passages(passages: Sequence[Passage]) -> str:
    return "\n\n".join(f"Wikipedia Title: {p.title}\n{p.text}" for p in passages)


_EXAMPLE_TEXT = {
    "Black Drin": "The Black Drin is a river that flows out of Lake Ohrid at the town of Struga and runs "
    "north into Albania, where it joins the White Drin.",
    "Lake Ohrid": "Lake Ohrid straddles the mountainous border between the south-west of North Macedonia "
    "and eastern Albania. It is one of the oldest lakes of Europe.",
    "Struga": "Struga is a town and the seat of Struga Municipality in the south-west of North "
    "Macedonia, on the shore of Lake Ohrid.",
}


def example_passages(*titles: str) -> str:
    """The named example passages as a reader sees passages."""
    return format_passages([Passage(t, t, _EXAMPLE_TEXT[t]) for t in titles])
