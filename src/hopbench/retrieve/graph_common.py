"""Small pieces every graph retriever shares: dense scores, min-max, ranking, memoised text vectors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hopbench.errors import HopbenchError
from hopbench.retrieve.base import Retrieval


def min_max(x: np.ndarray) -> np.ndarray:
    """(x - min) / (max - min); all ones when x is constant (HippoRAG's `min_max_normalize`)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    lo, hi = x.min(), x.max()
    if hi - lo == 0:
        return np.ones_like(x)
    return (x - lo) / (hi - lo)


def order_by(scores: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """Indices by score descending, ties by dense cosine descending, then by index."""
    idx = np.arange(len(scores))
    return np.lexsort((idx, -np.asarray(dense), -np.asarray(scores)))


def to_retrieval(passage_ids: Sequence[str], order: np.ndarray, scores: np.ndarray, k: int,
                 trace: dict) -> Retrieval:
    top = order[:k]
    return Retrieval([passage_ids[i] for i in top], [float(scores[i]) for i in top], trace)


def check_graph_matches(kg, services) -> None:
    """The graph's passages must be the run's corpus, in order (scores are read by position)."""
    ids = services.passage_ids
    if list(kg.passage_ids) != ids:
        raise HopbenchError(f"knowledge graph passages ({kg.n_passages}) do not match the corpus of "
                            f"dataset '{services.dataset.name}' ({len(ids)}); rebuild the graph")


def resolve_llm_switch(setting, llm_name: str | None, key: str, retriever: str) -> bool:
    """`auto` (on when an llm= is configured), true (an LLM is required) or false."""
    has_llm = bool(llm_name) and llm_name != "none"
    if setting in ("auto", None):
        return has_llm
    if isinstance(setting, bool):
        if setting and not has_llm:
            raise HopbenchError(f"retriever.{key}=true ({retriever}) needs an LLM: add llm=local "
                                f"(offline model), llm=openai or llm=server, or set retriever.{key}=false")
        return setting
    raise HopbenchError(f"retriever.{key} must be auto, true or false, got {setting!r}")


class TextVectors:
    """Embeddings of short texts (question mentions, keywords), memoised in memory.

    Encoder.encode caches every call on disk; mentions repeat across questions, so this
    keeps one in-memory copy and sends the encoder only texts it has not seen. `query=True` for
    texts that search passages as a question does (the encoder's query instruction, if any).
    """

    def __init__(self, encoder, query: bool = False) -> None:
        self.encoder = encoder
        self.query = query
        self._memo: dict[str, np.ndarray] = {}

    def load_model(self) -> None:
        """Load the encoder now, so the first timed retrieval does not pay for it."""
        _ = self.encoder.model

    def warm(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            # alone: which texts are missing depends on the questions before (a resumed run)
            vecs = self.encoder.encode(missing, desc="queries" if self.query else "mentions", alone=True,
                                       query=self.query)
            self._memo.update(zip(missing, vecs))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.warm(texts)
        if not texts:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])
