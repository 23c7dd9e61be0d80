"""How retrieved passages are shown to a reader: HippoRAG's 'Wikipedia Title: ...' blocks."""

from __future__ import annotations

from typing import Sequence

from hopbench.data.schema import Passage


def format_passages(passages: Sequence[Passage]) -> str:
    return "\n\n".join(f"Wikipedia Title: {p.title}\n{p.text}" for p in passages)
