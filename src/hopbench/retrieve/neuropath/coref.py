"""NeuroPath's coreference sets: each entity with its near-duplicate names (docs/methods/neuropath.md).

coref[e] = [e] + the other entities among e's `top_k` nearest by name-embedding cosine (self
counted, as the reference's faiss search finds it) whose cosine is at least `threshold`.
"""

from __future__ import annotations

import numpy as np


def coreference_sets(
    embeddings: np.ndarray, top_k: int = 5, threshold: float = 0.8, block: int = 2048
) -> list[list[int]]:
    """coref[e] = [e] + the other entities among e's top_k by cosine (self counted) with
    cosine >= threshold, best first (ties by index). Rows must be L2-normalised."""
    emb = np.asarray(embeddings, dtype=np.float32)
    n = len(emb)
    out: list[list[int]] = []
    k = min(top_k, n)
    for start in range(0, n, block):
        sims = emb[start : start + block] @ emb.T
        for r in range(sims.shape[0]):
            e = start + r
            row = sims[r].astype(np.float64)
            row[e] = np.inf  # self is always one of the top_k (faiss finds it at cosine 1)
            if k < n:
                cand = np.argpartition(-row, k - 1)[:k]
            else:
                cand = np.arange(n)
            cand = cand[np.lexsort((cand, -row[cand]))][:k]
            out.append([e] + [int(j) for j in cand if j != e and row[j] >= threshold])
    return out


def expand_with_coref(entities, coref: list[list[int]]) -> list[int]:
    """The entities and their coreference sets, first occurrence kept."""
    out: list[int] = []
    for e in entities:
        for c in coref[e]:
            if c not in out:
                out.append(c)
    return out
