"""Scores to a ranking, as every graph retriever does it: min-max, ties broken by the dense
cosine and then by corpus order, the top k as a `Retrieval`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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


def to_retrieval(
    passage_ids: Sequence[str], order: np.ndarray, scores: np.ndarray, k: int, trace: dict
) -> Retrieval:
    top = order[:k]
    return Retrieval([passage_ids[i] for i in top], [float(scores[i]) for i in top], trace)
