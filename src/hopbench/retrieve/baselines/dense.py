"""Dense retrieval baseline: faiss inner-product search over normalised passage embeddings."""

from __future__ import annotations

import faiss
import numpy as np

from hopbench.data.schema import Question
from hopbench.retrieve.base import Retrieval, Retriever, Services


def build_ip_index(embeddings: np.ndarray) -> faiss.Index:
    index = faiss.IndexFlatIP(embeddings.shape[1])
    index.add(np.ascontiguousarray(embeddings, dtype=np.float32))
    return index


class DenseRetriever(Retriever):
    """Cosine similarity between question and 'title\\ntext' passage embeddings (exact search)."""

    family = "dense"

    def __init__(self) -> None:
        self._index = None
        self._ids: list[str] = []
        self._services: Services | None = None

    def prepare(self, kg, services: Services) -> None:
        self._services = services
        self._ids = services.passage_ids
        self._index = build_ip_index(services.passage_embeddings)

    def retrieve(self, question: Question, k: int) -> Retrieval:
        q = self._services.query_embedding(question).reshape(1, -1).astype(np.float32)
        scores, idx = self._index.search(q, min(k, len(self._ids)))
        keep = idx[0] >= 0
        return Retrieval([self._ids[i] for i in idx[0][keep]], [float(s) for s in scores[0][keep]])
