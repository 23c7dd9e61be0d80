"""Synonym edges: entity pairs whose name embeddings are close (HippoRAG 2, KNN with faiss)."""

from __future__ import annotations

import faiss
import numpy as np
import scipy.sparse as sp

from hopbench.kg.text import alnum_count


def synonym_matrix(
    embeddings: np.ndarray,
    names: list[str],
    threshold: float = 0.8,
    max_neighbors: int = 100,
    min_alnum_chars: int = 3,
) -> sp.csr_matrix:
    """Symmetric (E x E) CSR, weight = cosine, for neighbours with cosine >= threshold.

    Only names with at least `min_alnum_chars` alphanumerics take part (HippoRAG: "more than 2").
    Each entity keeps at most `max_neighbors` neighbours (best first); the edge set is the union
    over both endpoints, as in HippoRAG's undirected graph.
    """
    n = len(names)
    eligible = np.array(
        [i for i, name in enumerate(names) if alnum_count(name) >= min_alnum_chars], dtype=np.int64
    )
    if len(eligible) < 2 or max_neighbors < 1:
        return sp.csr_matrix((n, n), dtype=np.float32)
    x = np.ascontiguousarray(embeddings[eligible], dtype=np.float32)
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    k = min(max_neighbors + 1, len(eligible))
    sims, nbrs = index.search(x, k)
    rows = np.repeat(np.arange(len(eligible)), k)
    cols = nbrs.ravel()
    vals = sims.ravel()
    keep = (cols >= 0) & (cols != rows) & (vals >= threshold)
    # at most max_neighbors per row after dropping self (results are sorted best first)
    rank = np.cumsum(keep.reshape(-1, k), axis=1).ravel()
    keep &= rank <= max_neighbors
    r, c, v = eligible[rows[keep]], eligible[cols[keep]], vals[keep]
    a = sp.csr_matrix((v.astype(np.float32), (r, c)), shape=(n, n))
    a = a.maximum(a.T).tocsr()
    a.eliminate_zeros()
    a.sort_indices()
    return a
