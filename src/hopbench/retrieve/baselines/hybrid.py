"""Hybrid baseline: dense and BM25 fused by reciprocal rank (Cormack, Clarke and Büttcher,
SIGIR 2009), one retriever and so one row.

It holds the project's own `DenseRetriever` and a `BM25Retriever` (its settings are this
retriever's too: configs/retriever/hybrid.yaml adds their schema), takes each one's `depth`
best passages and ranks their union by sum over the lists of 1 / (rrf_k + rank), ranks from 1.
Inside each list, passages of exactly equal score are ranked by passage id (`ties_by_id`), so
the fused ranking does not read the corpus order (tests/retrieve/test_order_invariance.py).
The defaults are Pyserini's fusion (rrf_k 60, depth 1000; docs/methods/baselines.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Question
from hopbench.retrieve.base import Retrieval, Retriever, Services
from hopbench.retrieve.baselines.bm25 import BM25Retriever
from hopbench.retrieve.baselines.dense import DenseRetriever


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], rrf_k: float
) -> list[tuple[str, float]]:
    """[(id, fused score)], best first. Equal scores are ordered by the rank in the first list
    (an id absent from it after every id present), then in the second, and so on: distinct ids
    never share all their ranks, so the order is total and needs no other key."""
    absent = max((len(r) for r in rankings), default=0) + 1
    ranks: dict[str, list[int]] = {}
    for j, ranking in enumerate(rankings):
        for rank, pid in enumerate(ranking, start=1):
            ranks.setdefault(pid, [absent] * len(rankings))[j] = rank
    fused = {pid: sum(1.0 / (rrf_k + r) for r in rs if r != absent) for pid, rs in ranks.items()}
    order = sorted(ranks, key=lambda pid: (-fused[pid], *ranks[pid]))
    return [(pid, fused[pid]) for pid in order]


def ties_by_id(ranking: Retrieval) -> list[str]:
    """The list's ids best first, passages of exactly equal score in order of their id. Each
    list breaks such ties by corpus position, and a rank moved by one moves the fused score, so
    fusing them as given made the ranking depend on the corpus order (BM25 ties are common)."""
    pairs = sorted(zip(ranking.scores, ranking.passage_ids), key=lambda t: (-t[0], t[1]))
    return [pid for _, pid in pairs]


class HybridRetriever(Retriever):
    """Dense and BM25 fused by reciprocal rank: one retriever, one row."""

    family = "hybrid"
    needs_descriptions = False

    def __init__(self, *, rrf_k: int = 60, depth: int = 1000, **bm25) -> None:
        """``**bm25``: BM25Retriever's settings (k1, b, method, the term rules)."""
        if not float(rrf_k) >= 0:
            raise HopbenchError(f"retriever.rrf_k must be >= 0, got {rrf_k}")
        if int(depth) < 1:
            raise HopbenchError(f"retriever.depth must be >= 1, got {depth}")
        self.rrf_k, self.depth = rrf_k, int(depth)
        self.dense = DenseRetriever()
        self.bm25 = BM25Retriever(**bm25)

    def prepare(self, kg, services: Services) -> None:
        self.dense.prepare(kg, services)
        self.bm25.prepare(kg, services)

    def retrieve(self, question: Question, k: int) -> Retrieval:
        depth = max(self.depth, k)  # a run's top_k above depth still gets k passages
        dense = ties_by_id(self.dense.retrieve(question, depth))
        lexical = ties_by_id(self.bm25.retrieve(question, depth))
        fused = reciprocal_rank_fusion([dense, lexical], self.rrf_k)[:k]
        dense_rank = {pid: r for r, pid in enumerate(dense, start=1)}
        bm25_rank = {pid: r for r, pid in enumerate(lexical, start=1)}
        return Retrieval(
            [pid for pid, _ in fused],
            [score for _, score in fused],
            {  # each returned passage's rank in the two lists (None: not in the first `depth`)
                "dense_rank": [dense_rank.get(pid) for pid, _ in fused],
                "bm25_rank": [bm25_rank.get(pid) for pid, _ in fused],
            },
        )
