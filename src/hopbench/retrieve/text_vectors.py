"""Vectors of short texts (question mentions, keywords), memoised in memory."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
            vecs = self.encoder.encode(
                missing, desc="queries" if self.query else "mentions", alone=True, query=self.query
            )
            self._memo.update(zip(missing, vecs))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.warm(texts)
        if not texts:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])
