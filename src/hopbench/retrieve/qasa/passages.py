"""Passage scores from entity activations, and the passage order every activation method uses.

score(p) = the sum of the activations of the activated entities passage p contains
(``kg.context``, P x E). Passages with score > 0 come first, by score descending, ties by
dense cosine descending; then every other passage by dense cosine descending (ties by corpus
order): `rank_passages`. The other functions give the same numbers with less work.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from hopbench.retrieve.kernels._csr import gather_rows


def passage_activation_scores(
    context: sp.csr_matrix, activation: np.ndarray, activated: np.ndarray
) -> np.ndarray:
    """score(p) = Σ_{e in p, e activated} activation_e, for every passage (context is P x E)."""
    a = np.where(activated, activation, 0.0)
    return np.asarray(context.astype(bool).astype(np.float64) @ a).ravel()


def entity_passages(context: sp.spmatrix) -> sp.csr_matrix:
    """E x P 0/1 float64 CSR (context transposed): which passages hold each entity. Built once
    per graph so a query scores passages from its activated entities' rows only."""
    m = sp.csr_matrix(context).astype(bool).astype(np.float64).T.tocsr()
    m.sort_indices()
    return m


def passage_scores_from_entities(
    ent_passages: sp.csr_matrix, activation: np.ndarray, activated: np.ndarray
) -> np.ndarray:
    """`passage_activation_scores` from the activated entities' rows of `entity_passages`.

    Each passage sums its entities in ascending entity order, as the P x E product does, so
    the scores are the same floats, at a cost proportional to the activated region.
    """
    hot = np.flatnonzero(activated)
    owner, passage, w = gather_rows(ent_passages, hot)
    return np.bincount(passage, weights=w * activation[hot][owner], minlength=ent_passages.shape[1])


def top_passages(
    scores: np.ndarray, dense_of: Callable[[np.ndarray | None], np.ndarray], k: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """`rank_passages(scores, dense)[:k]`, asking `dense_of` only for the cosines that decide it.

    dense_of(indices) gives those passages' dense cosines, dense_of(None) all of them. Returns
    (top k, the full dense vector if it was needed, else None). When k passages have a
    score, only the cosines of those scoring at least the k-th score matter (ties);
    otherwise the rest are ranked by cosine.
    """
    first = np.flatnonzero(np.asarray(scores) > 0)
    if first.size >= k:
        s = scores[first]
        kth = np.partition(s, s.size - k)[s.size - k] if k > 0 else np.inf
        first = first[s >= kth]
        d = dense_of(first)
        return first[np.lexsort((first, -d, -scores[first]))][:k], None
    dense = dense_of(None)
    return rank_passages(scores, dense)[:k], dense


def rank_passages(scores: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """Passage order: score > 0 by (score desc, dense desc), then the rest by dense desc."""
    n = len(scores)
    pos = np.asarray(scores) > 0
    # lexsort sorts by the last key first; corpus order breaks any remaining tie
    first = np.flatnonzero(pos)
    first = first[np.lexsort((first, -dense[first], -scores[first]))]
    rest = np.flatnonzero(~pos)
    rest = rest[np.lexsort((rest, -dense[rest]))]
    out = np.concatenate([first, rest])
    assert out.size == n
    return out
