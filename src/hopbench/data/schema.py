"""The Dataset / Question / Passage contract every loader produces and every retriever reads."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal


def passage_id(title: str, text: str) -> str:
    """Stable id from content, because titles repeat in MuSiQue and order differs between files."""
    digest = hashlib.sha1(f"{title}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"p{digest[:15]}"


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str

    @property
    def content(self) -> str:
        """What gets embedded and shown to readers: 'title\\ntext', as HippoRAG does."""
        return f"{self.title}\n{self.text}"


@dataclass
class Question:
    id: str
    text: str
    answers: list[str]
    gold_passage_ids: list[str] = field(default_factory=list)
    kind: Literal["qa", "claim"] = "qa"
    label: str | None = None
    # False when the gold passages are unknown or only partly mapped onto the corpus:
    # such questions still count for answer metrics but not for retrieval metrics.
    gold_complete: bool = True
    meta: dict = field(default_factory=dict)

    @property
    def retrieval_scorable(self) -> bool:
        return self.gold_complete and bool(self.gold_passage_ids)


@dataclass
class Dataset:
    name: str
    questions: list[Question]
    corpus: list[Passage]
    fingerprint: str = ""
    notes: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_id = {p.id: p for p in self.corpus}

    def passage(self, pid: str) -> Passage:
        return self._by_id[pid]

    @property
    def n_retrieval_scorable(self) -> int:
        return sum(q.retrieval_scorable for q in self.questions)
