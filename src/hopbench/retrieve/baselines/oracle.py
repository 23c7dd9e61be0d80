"""Oracle retriever: the question's gold passages first (hop order), then dense results.

Not a method: it gives the reader's ceiling (reader EM/F1 when retrieval is perfect), so a
reader score can be read against it.
"""

from __future__ import annotations

from hopbench.data.schema import Question
from hopbench.retrieve.base import Retrieval, Retriever, Services
from hopbench.retrieve.baselines.dense import DenseRetriever


class OracleRetriever(Retriever):
    """Gold passages first, then dense: the reader's ceiling, not a method."""

    family = "oracle"

    def __init__(self) -> None:
        self._dense = DenseRetriever()

    def prepare(self, kg, services: Services) -> None:
        self._dense.prepare(kg, services)

    def retrieve(self, question: Question, k: int) -> Retrieval:
        gold = list(dict.fromkeys(question.gold_passage_ids))[:k]
        fill = self._dense.retrieve(question, k + len(gold))
        gold_set = set(gold)
        rest = [
            (pid, s)
            for pid, s in zip(fill.passage_ids, fill.scores, strict=True)
            if pid not in gold_set
        ]
        rest = rest[: k - len(gold)]
        return Retrieval(
            gold + [pid for pid, _ in rest],
            [1.0] * len(gold) + [s for _, s in rest],
            {"n_gold_first": len(gold)},
        )
