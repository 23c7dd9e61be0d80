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
    exact_batches = True

    def __init__(self) -> None:
        self._index = None
        self._ids: list[str] = []
        self._services: Services | None = None

    def prepare(self, kg, services: Services) -> None:
        self._services = services
        self._ids = services.passage_ids
        self._index = build_ip_index(services.passage_embeddings)

    def retrieve(self, question: Question, k: int) -> Retrieval:
        return self.retrieve_batch([question], k)[0]

    def retrieve_batch(self, questions: list[Question], k: int) -> list[Retrieval]:
        """One faiss search for the block. Below faiss's BLAS threshold
        (`faiss.cvar.distance_compute_blas_threshold` queries) each query's scores come from the
        same per-query inner products as a search of it alone, so the rows are equal to the last
        bit (tests/retrieve/test_batched_rows.py); blocks are cut below that threshold."""
        most = max(1, int(faiss.cvar.distance_compute_blas_threshold) - 1)
        out: list[Retrieval] = []
        for s in range(0, len(questions), most):
            block = questions[s : s + most]
            q = np.stack([self._services.query_embedding(x) for x in block]).astype(np.float32)
            scores, idx = self._index.search(q, min(k, len(self._ids)))
            for row_s, row_i in zip(scores, idx, strict=True):
                keep = row_i >= 0
                out.append(
                    Retrieval([self._ids[i] for i in row_i[keep]], [float(x) for x in row_s[keep]])
                )
        return out
